"""Routing (zcube.md section 6): always send across groups, one fabric link per destination.

On O_r, for every E_j: E_j's host block via the even side of the O_r-E_j link. With m > 1 the
block is split into P = next_pow2(m) equal sub-blocks (prefixes must be powers of two); sub-block
i goes over link i mod m, so each destination port has exactly one link and no hashing. When m
is a power of two this is exactly m sub-blocks, one per link. Symmetrically on E_j.
"""

from __future__ import annotations

from zcube_deploy.inventory import ResolvedInventory
from zcube_deploy.plan.addressing import plane_layout
from zcube_deploy.plan.ipam import aton, cidr, next_pow2, ntoa


def assign_routes(inv: ResolvedInventory, acc: dict) -> dict:
    sz = acc["sizing"]
    S, K, m = sz.S, sz.K, sz.m
    lay = plane_layout(S, K, m)
    block = lay["block"]
    pieces = next_pow2(m)
    piece = block // pieces
    info = acc["addressing"]
    fab_base = aton(info["fabric_pool"].split("/")[0])
    topo = inv.spec.topology
    P = inv.nic_model.ports
    agg_by_plane = {a["plane"]: a for a in info["aggregates"]}
    switches = []
    for sw in acc["switches"]:
        plane, me, odd = sw["plane"], sw["index"], sw["group"] == "odd"
        agg = agg_by_plane[plane]
        other_base = aton((agg["even"] if odd else agg["odd"]).split("/")[0])
        fab_plane = fab_base + plane * lay["fabric_per_plane"]
        routes = []
        for peer in range(S):
            start = other_base + peer * block
            r, j = (me, peer) if odd else (peer, me)
            for i in range(pieces):
                link = (r * S + j) * m + (i % m)
                nh = fab_plane + 2 * link + (1 if odd else 0)
                routes.append({"prefix": cidr(start + i * piece, piece), "next_hop": ntoa(nh)})
        if topo.same_group_fallback:
            own = agg["odd"] if odd else agg["even"]
            for k in range(min(topo.fallback_paths, S)):
                peer = (me + k) % S
                r, j = (me, peer) if odd else (peer, me)
                link = (r * S + j) * m
                routes.append({"prefix": own, "next_hop": ntoa(fab_plane + 2 * link + (1 if odd else 0)), "fallback": True})
        switches.append({**sw, "routes": routes})
    for entries in acc["nics"].values():
        for nic in entries:
            agg = agg_by_plane[nic["plane"]]
            other = agg["even"] if nic["group"] == "odd" else agg["odd"]
            nic["routes"] = [{"to": other, "via": nic["gateway"]}]
            nic["table"] = 100 + nic["gpu"] * P + nic["nic_port"]
    return {"switches": switches, "route_split": {"pieces_per_peer": pieces, "piece_size": piece}}
