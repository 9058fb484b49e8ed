"""BGP best paths of a ZCube fabric (or a ROFT's), after convergence (pure; no I/O).

One AS per switch (a ROFT's spines of a plane share one), eBGP on every fabric /31, each switch originating
its host block and loopback: the AS-path length of a prefix is the number of switch hops to its originator, and
the best paths are the shortest ones, ECMP across every neighbour on one (multipath relax) and
across the parallel links of a pair. Used by the planner's checks (from the plan) and by the
routing proof (from the rendered configs alone).
"""

from __future__ import annotations

from collections import deque

from zcube_deploy.ipv4 import aton


def best_routes(sessions: dict[str, list[tuple[int, str]]], originated: dict[str, list[tuple[int, int]]],
                max_as_path: int | None = None, shared_asn: dict[str, int] | None = None) -> dict[str, list[tuple[int, int, list[int]]]]:
    """Per switch: [(network, prefix len, [next-hop addresses])] for every prefix another switch
    originates within ``max_as_path`` AS hops.

    ``sessions[sw]``: (neighbour address, neighbour switch) of every established session;
    ``originated[sw]``: (network, prefix len) the switch announces; ``shared_asn``: switch -> its ASN for the
    switches that share one (the spines of a ROFT plane): a path never holds a shared ASN twice (a switch refuses a
    path with its own ASN), so no path crosses two of them.
    """
    shared = shared_asn or {}
    out: dict[str, list[tuple[int, int, list[int]]]] = {sw: [] for sw in sessions}
    for origin, prefixes in sorted(originated.items()):
        if not prefixes or origin not in sessions:
            continue
        states = asn_walk(origin, lambda u: (v for _, v in sessions[u] if v in sessions), shared, max_as_path)
        dist = {v: min(x for x, _ in st) for v, st in states.items()}
        for sw, d in dist.items():
            if d == 0:
                continue
            mine = shared.get(sw)
            hops = sorted(addr for addr, peer in sessions[sw]
                          if any(x == d - 1 and mine not in asns for x, asns in states.get(peer, ())))
            for net, plen in prefixes:
                out[sw].append((net, plen, hops))
    return out


def asn_walk(origin: str, neighbours, shared: dict[str, int], max_hops: int | None = None) -> dict[str, list[tuple[int, frozenset]]]:
    """Breadth-first from ``origin`` over ``neighbours(switch)``: per switch reached, (hops, the shared ASNs on the
    path) of each way it is reached. A path never holds a shared ASN twice (``shared``: switch -> ASN for the
    switches sharing one), as a switch refuses an update carrying its own AS; with none shared, the plain BFS."""
    start = frozenset({shared[origin]}) if origin in shared else frozenset()
    states: dict[str, list[tuple[int, frozenset]]] = {origin: [(0, start)]}
    seen = {(origin, start)}
    q = deque([(origin, start, 0)])
    while q:
        u, asns, du = q.popleft()
        if max_hops is not None and du >= max_hops:
            continue
        for v in neighbours(u):
            if v == origin or shared.get(v) in asns:
                continue
            nxt = asns | {shared[v]} if v in shared else asns
            if (v, nxt) not in seen:
                seen.add((v, nxt))
                states.setdefault(v, []).append((du + 1, nxt))
                q.append((v, nxt, du + 1))
    return states


def shared_asns(switches: list[dict]) -> dict[str, int]:
    """Switch -> ASN for the switches whose ASN another switch also has (the spines of a ROFT plane)."""
    count: dict[int, int] = {}
    for sw in switches:
        if sw.get("asn") is not None:
            count[sw["asn"]] = count.get(sw["asn"], 0) + 1
    return {sw["name"]: sw["asn"] for sw in switches if sw.get("asn") is not None and count[sw["asn"]] > 1}


def plan_sessions(switches: list[dict]) -> tuple[dict, dict]:
    """(sessions, originated) of a plan's switches in mode bgp, with addresses as integers."""
    sessions, originated = {}, {}
    for sw in switches:
        sessions[sw["name"]] = [(aton(i["peer"]["address"]), i["peer"]["device"]) for i in sw["interfaces"] if i["kind"] == "fabric"]
        own = [(aton(sw["loopback"]), 32)]
        if sw["host_block"]:  # a switch without hosts (a ROFT spine) originates its loopback only
            block, plen = sw["host_block"].split("/")
            own.insert(0, (aton(block), int(plen)))
        originated[sw["name"]] = own
    return sessions, originated
