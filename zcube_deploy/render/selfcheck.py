"""Self-check after rendering: read each switch config back through its platform's neutral parse
(``platforms/<name>``: ``config_facts``) and compare it with the plan.

A mismatch is an error: the rendered file must carry exactly the plan's interfaces, addresses
and routes (nothing missing, nothing extra), and in mode bgp its sessions, BFD and networks.
No platform syntax here: the comparison is between neutral facts and the plan.
"""

from __future__ import annotations

from operator import itemgetter

from zcube_deploy.platforms import DEFAULT_PLATFORM, platform_module
from zcube_deploy.platforms.facts import ConfigFacts


_NAME, _ADDRESS, _PREFIX_LEN, _PREFIX, _NEXT_HOP = map(itemgetter, ("name", "address", "prefix_len", "prefix", "next_hop"))


def _route(r: tuple[str, str | None]) -> str:
    return f"route {r[0]} " + (f"via {r[1]}" if r[1] else "discard")


def check_switch_config(text: str, sw: dict, unused: list[str], mgmt_interface: str, mgmt_prefix_len: int,
                        bgp: dict | None = None, platform: str = DEFAULT_PLATFORM) -> list[str]:
    """Problems of one rendered switch config against the plan ([] when it carries exactly the plan).

    The expected facts are built as columns in the order render writes them (the management port,
    the loopback, the planned ports; the static routes, then BGP's discard routes): when the
    config's columns are equal to them, as lists, they are equal as sets too and the comparison is
    done. Otherwise (another order, something missing or extra) the facts are compared as sets,
    which also says what differs.
    """
    plat = platform_module(platform)
    name = sw["name"]
    planned = sw["interfaces"]
    want_names = [mgmt_interface, plat.LOOPBACK]
    want_names += map(_NAME, planned)
    want_ips = [sw["mgmt_address"], sw["loopback"]]
    want_ips += map(_ADDRESS, planned)
    want_lens = [mgmt_prefix_len, 32]
    want_lens += map(_PREFIX_LEN, planned)
    want_prefixes = list(map(_PREFIX, sw["routes"]))
    want_hops = list(map(_NEXT_HOP, sw["routes"]))
    if bgp is None:  # what render writes, as facts: the platform may confirm them instead of building its own
        expected = ConfigFacts(hostnames=[name], interfaces=want_names + unused, address_interfaces=want_names, address_ips=want_ips,
                               address_lens=want_lens, shutdown=list(unused), routed=want_names, bfd=[],
                               route_prefixes=want_prefixes, route_next_hops=want_hops, bgp=[])
        facts = plat.config_facts(text, expect=expected)
    else:
        facts = plat.config_facts(text)
    problems: list[str] = []
    if facts.hostnames != [name]:
        problems.append(f"{name}: hostname {facts.hostnames}, expected [{name!r}]")
    if not (facts.address_interfaces == want_names and facts.address_ips == want_ips and facts.address_lens == want_lens
            and len(set(want_names)) == len(want_names)):
        problems += _address_problems(facts, name, want_names, want_ips, want_lens)
    if facts.routed != want_names:  # in the order render writes them, every address holder is routed
        routed = set(want_names[2:])
        if not routed <= set(facts.routed):
            for iname in sorted(routed & set(facts.interfaces) - set(facts.routed)):
                problems.append(f"{name} {iname}: not a routed port")
    shut = set(facts.shutdown)
    if shut:
        for iname in sorted(shut.intersection(want_names[2:])):
            problems.append(f"{name} {iname}: planned link is shut down")
    missing_shut = [u for u in unused if u not in shut]
    if missing_shut:
        problems.append(f"{name}: {len(missing_shut)} unused ports not shut, e.g. {missing_shut[0]}")
    if bgp is not None:
        want_prefixes += bgp["discard_prefixes"]
        want_hops += [None] * len(bgp["discard_prefixes"])
        problems += _check_bgp(facts, sw, bgp)
    if not (facts.route_prefixes == want_prefixes and facts.route_next_hops == want_hops
            and len(set(zip(want_prefixes, want_hops))) == len(want_prefixes)):
        have_routes = facts.routes
        have_set = set(have_routes)
        want_routes = set(zip(want_prefixes, want_hops))
        if len(have_routes) != len(have_set):
            problems.append(f"{name}: duplicate static routes")
        for r in sorted(want_routes - have_set, key=str)[:5]:
            problems.append(f"{name}: missing {_route(r)}")
        for r in sorted(have_set - want_routes, key=str)[:5]:
            problems.append(f"{name}: unexpected {_route(r)}")
    return problems


def _address_problems(facts: ConfigFacts, name: str, want_names: list[str], want_ips: list[str], want_lens: list[int]) -> list[str]:
    """Say which interface's address differs, and how (the facts compared as sets)."""
    have = facts.addresses
    expected = {(n, f"{a}/{plen}") for n, a, plen in zip(want_names, want_ips, want_lens)}
    if set(have) == expected and len(have) == len(set(have)):
        return []
    problems = []
    found: dict[str, list[str]] = {}
    for iname, addr in have:
        found.setdefault(iname, []).append(addr)
    sections = set(facts.interfaces)
    want: dict[str, str] = dict(expected)
    for iname, addr in want.items():
        if found.get(iname) != [addr]:
            problems.append(f"{name} {iname}: expected address {addr}, found "
                            f"{found.get(iname, []) if iname in sections else 'no such interface'}")
    for iname, addrs in found.items():
        if iname not in want:
            problems.append(f"{name} {iname}: address {addrs} not in the plan")
    return problems


def _check_bgp(facts: ConfigFacts, sw: dict, bgp: dict) -> list[str]:
    """Mode bgp: one BGP instance with the switch's ASN, exactly one neighbour per fabric /31 peer
    with the peer's ASN and BFD fall-over, BFD on every fabric port (and only there), the host
    block and the loopback announced."""
    name = sw["name"]
    problems = []
    found = facts.bgp
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
    with_bfd = set(facts.bfd)
    for iname in facts.interfaces:
        if (iname in fabric) != (iname in with_bfd):
            problems.append(f"{name} {iname}: {'no BFD on a fabric port' if iname in fabric else 'BFD on a non-fabric port'}")
    return problems
