"""Self-check after rendering: read each switch config back through its platform's neutral parse
(``platforms/<name>``: ``config_facts``) and compare it with the plan.

A mismatch is an error: the rendered file must carry exactly the plan's interfaces, addresses
and routes (nothing missing, nothing extra), and in mode bgp its sessions, BFD and networks.
No platform syntax here: the comparison is between neutral facts and the plan.
"""

from __future__ import annotations

from zcube_deploy.platforms import DEFAULT_PLATFORM, platform_module


_LEN = tuple(f"/{n}" for n in range(33))  # prefix length -> "/len"


def _route(r: tuple[str, str | None]) -> str:
    return f"route {r[0]} " + (f"via {r[1]}" if r[1] else "discard")


def check_switch_config(text: str, sw: dict, unused: list[str], mgmt_interface: str, mgmt_prefix_len: int,
                        bgp: dict | None = None, platform: str = DEFAULT_PLATFORM) -> list[str]:
    plat = platform_module(platform)
    facts = plat.config_facts(text)
    problems: list[str] = []
    name = sw["name"]
    if facts["hostnames"] != [name]:
        problems.append(f"{name}: hostname {facts['hostnames']}, expected [{name!r}]")
    planned = sw["interfaces"]
    expected = {(i["name"], i["address"] + _LEN[i["prefix_len"]]) for i in planned}
    expected.add((mgmt_interface, f"{sw['mgmt_address']}/{mgmt_prefix_len}"))
    expected.add((plat.LOOPBACK, f"{sw['loopback']}/32"))
    have = facts["addresses"]
    have_set = set(have)
    if have_set != expected or len(have) != len(have_set):  # say which interface differs, and how
        found: dict[str, list[str]] = {}
        for iname, addr in have:
            found.setdefault(iname, []).append(addr)
        sections = set(facts["interfaces"])
        want: dict[str, str] = dict(expected)
        for iname, addr in want.items():
            if found.get(iname) != [addr]:
                problems.append(f"{name} {iname}: expected address {addr}, found "
                                f"{found.get(iname, []) if iname in sections else 'no such interface'}")
        for iname, addrs in found.items():
            if iname not in want:
                problems.append(f"{name} {iname}: address {addrs} not in the plan")
    routed = {i["name"] for i in planned}
    if not routed <= set(facts["routed"]):
        for iname in sorted(routed & set(facts["interfaces"]) - set(facts["routed"])):
            problems.append(f"{name} {iname}: not a routed port")
    shut = set(facts["shutdown"])
    for iname in sorted(routed & shut):
        problems.append(f"{name} {iname}: planned link is shut down")
    missing_shut = [u for u in unused if u not in shut]
    if missing_shut:
        problems.append(f"{name}: {len(missing_shut)} unused ports not shut, e.g. {missing_shut[0]}")
    want_routes = {(r["prefix"], r["next_hop"]) for r in sw["routes"]}
    if bgp is not None:
        want_routes |= {(p, None) for p in bgp["discard_prefixes"]}
        problems += _check_bgp(facts, sw, bgp)
    have_routes = facts["routes"]
    have_set = set(have_routes)
    if len(have_routes) != len(have_set):
        problems.append(f"{name}: duplicate static routes")
    if have_set != want_routes:
        for r in sorted(want_routes - have_set, key=str)[:5]:
            problems.append(f"{name}: missing {_route(r)}")
        for r in sorted(have_set - want_routes, key=str)[:5]:
            problems.append(f"{name}: unexpected {_route(r)}")
    return problems


def _check_bgp(facts: dict, sw: dict, bgp: dict) -> list[str]:
    """Mode bgp: one BGP instance with the switch's ASN, exactly one neighbour per fabric /31 peer
    with the peer's ASN and BFD fall-over, BFD on every fabric port (and only there), the host
    block and the loopback announced."""
    name = sw["name"]
    problems = []
    found = facts["bgp"]
    if [b["asn"] for b in found] != [sw["asn"]]:
        return [f"{name}: expected one BGP instance with AS {sw['asn']}, found {[b['asn'] for b in found]}"]
    b = found[0]
    want = {(n["address"], n["remote_as"]) for n in bgp["neighbors"]}
    have = b["neighbors"]
    for addr, asn in sorted(want - set(have))[:5]:
        problems.append(f"{name}: missing BGP neighbour {addr} remote AS {asn}")
    for addr, asn in sorted(set(have) - want, key=str)[:5]:
        problems.append(f"{name}: unexpected BGP neighbour {addr} remote AS {asn}")
    if len(have) != len(set(have)):
        problems.append(f"{name}: a BGP neighbour is configured twice")
    want_bfd = set(bgp["neighbor_addresses"])
    for addr in sorted(want_bfd - set(b["bfd_neighbors"]))[:5]:
        problems.append(f"{name}: BGP neighbour {addr} without BFD fall-over")
    for addr in sorted(set(b["bfd_neighbors"]) - want_bfd)[:5]:
        problems.append(f"{name}: unexpected BFD fall-over for {addr}")
    peers = {i["peer"]["address"] for i in sw["interfaces"] if i["kind"] == "fabric"}
    if want_bfd != peers:
        problems.append(f"{name}: BGP neighbours differ from the fabric /31 peers")
    for p in bgp["prefixes"]:
        if p not in b["networks"]:
            problems.append(f"{name}: network {p} not announced")
    fabric = {i["name"] for i in sw["interfaces"] if i["kind"] == "fabric"}
    with_bfd = set(facts["bfd"])
    for iname in facts["interfaces"]:
        if (iname in fabric) != (iname in with_bfd):
            problems.append(f"{name} {iname}: {'no BFD on a fabric port' if iname in fabric else 'BFD on a non-fabric port'}")
    return problems
