"""BGP best paths of a ZCube fabric, after convergence (pure; no I/O).

One AS per switch, eBGP on every fabric /31, each switch originating its host block and
loopback: the AS-path length of a prefix is the number of switch hops to its originator, and
the best paths are the shortest ones, ECMP across every neighbour on one (multipath relax) and
across the parallel links of a pair. Used by the planner's checks (from the plan) and by the
routing proof (from the rendered configs alone).
"""

from __future__ import annotations

from collections import deque

from zcube_deploy.ipv4 import aton


def best_routes(sessions: dict[str, list[tuple[int, str]]], originated: dict[str, list[tuple[int, int]]],
                max_as_path: int | None = None) -> dict[str, list[tuple[int, int, list[int]]]]:
    """Per switch: [(network, prefix len, [next-hop addresses])] for every prefix another switch
    originates within ``max_as_path`` AS hops.

    ``sessions[sw]``: (neighbour address, neighbour switch) of every established session;
    ``originated[sw]``: (network, prefix len) the switch announces.
    """
    out: dict[str, list[tuple[int, int, list[int]]]] = {sw: [] for sw in sessions}
    for origin, prefixes in sorted(originated.items()):
        if not prefixes or origin not in sessions:
            continue
        dist = {origin: 0}
        q = deque([origin])
        while q:
            u = q.popleft()
            if max_as_path is not None and dist[u] >= max_as_path:
                continue
            for _, v in sessions[u]:
                if v not in dist and v in sessions:
                    dist[v] = dist[u] + 1
                    q.append(v)
        for sw, d in dist.items():
            if d == 0:
                continue
            hops = sorted(addr for addr, peer in sessions[sw] if dist.get(peer) == d - 1)
            for net, plen in prefixes:
                out[sw].append((net, plen, hops))
    return out


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
