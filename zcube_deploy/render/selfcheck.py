"""Self-check after rendering: read each switch config back through its platform's neutral parse
(``platforms/<name>``: ``config_facts``) and compare it with the plan.

A mismatch is an error: the rendered file must carry exactly the plan's interfaces, addresses
and routes (nothing missing, nothing extra), and in mode bgp its sessions, BFD and networks.
No platform syntax here: the comparison is between neutral facts and the plan.
"""

from __future__ import annotations

from zcube_deploy.platforms import DEFAULT_PLATFORM, platform_module


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
    expected = {i["name"]: f"{i['address']}/{i['prefix_len']}" for i in sw["interfaces"]}
    expected[mgmt_interface] = f"{sw['mgmt_address']}/{mgmt_prefix_len}"
    expected[plat.LOOPBACK] = f"{sw['loopback']}/32"
    interfaces = facts["interfaces"]
    routed = {i["name"] for i in sw["interfaces"]}
    for iname in routed:
        itf = interfaces.get(iname)
        if itf is not None and not itf["routed"]:
            problems.append(f"{name} {iname}: not a routed port")
    for iname, want in expected.items():
        itf = interfaces.get(iname)
        have = itf["addresses"] if itf is not None else "no such interface"
        if have != [want]:
            problems.append(f"{name} {iname}: expected address {want}, found {have}")
    for iname, itf in interfaces.items():
        if iname not in expected and itf["addresses"]:
            problems.append(f"{name} {iname}: address {itf['addresses']} not in the plan")
    for iname in sorted(routed):
        itf = interfaces.get(iname)
        if itf is not None and itf["shutdown"]:
            problems.append(f"{name} {iname}: planned link is shut down")
    missing_shut = [u for u in unused if not (u in interfaces and interfaces[u]["shutdown"])]
    if missing_shut:
        problems.append(f"{name}: {len(missing_shut)} unused ports not shut, e.g. {missing_shut[0]}")
    want = {(r["prefix"], r["next_hop"]) for r in sw["routes"]}
    if bgp is not None:
        want |= {(p, None) for p in bgp["discard_prefixes"]}
        problems += _check_bgp(facts, sw, bgp)
    have = facts["routes"]
    if len(have) != len(set(have)):
        problems.append(f"{name}: duplicate static routes")
    for r in sorted(want - set(have), key=str)[:5]:
        problems.append(f"{name}: missing {_route(r)}")
    for r in sorted(set(have) - want, key=str)[:5]:
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
    for iname, itf in facts["interfaces"].items():
        if (iname in fabric) != itf["bfd"]:
            problems.append(f"{name} {iname}: {'no BFD on a fabric port' if iname in fabric else 'BFD on a non-fabric port'}")
    return problems
