"""Routing (zcube.md section 6, docs/routing.md): switch routes per routing mode, host routes.

Mode static (the default): switch static routes, always across groups, one fabric link per
destination, as below. Mode bgp: no fabric static routes; eBGP on every fabric /31 with one
private ASN per switch (routing.asn_base + the switch's position in the plan), BFD on every
session, each switch originating its host block and loopback (rendered from the plan, see
render/views.py).

On O_r, for every E_j: E_j's host block via the even side of the O_r-E_j link. With m > 1 the
block is split into P = next_pow2(m) equal sub-blocks (prefixes must be powers of two); sub-block
i goes over link i mod m, so each destination port has exactly one link and no hashing. When m
is a power of two this is exactly m sub-blocks, one per link. Symmetrically on E_j.
"""

from __future__ import annotations

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.inventory import ResolvedInventory
from zcube_deploy.ipv4 import aton, cidr, ntoa
from zcube_deploy.plan.addressing import plane_layout
from zcube_deploy.plan.ipam import next_pow2


PRIVATE_ASNS = ((64512, 65534), (4200000000, 4294967294))  # RFC 6996
SAME_GROUP_FALLBACK_DEFAULT = True
# host policy-table metrics (docs/routing.md)
METRIC_PRIMARY, METRIC_OTHER_PORT, METRIC_SAME_GROUP = 100, 200, 300


def routing_settings(inv: ResolvedInventory, n_switches: int) -> dict:
    """plan["routing"]: the mode and its parameters with defaults filled in (ASN range checked)."""
    rt, topo = inv.spec.routing, inv.spec.topology
    if rt.mode == "static":
        if rt.same_group_fallback is not None:
            sgf = rt.same_group_fallback
        elif "same_group_fallback" in topo.model_fields_set:
            sgf = topo.same_group_fallback
        else:  # measured with `zcube analyze` (docs/routing.md): one switch down cuts 0 GPU pairs with it, 7,168 without (glm-1k)
            sgf = SAME_GROUP_FALLBACK_DEFAULT
        return {"mode": "static", "asn_base": rt.asn_base, "asn_last": None,
                "bfd": rt.bfd.model_dump(mode="json"), "same_group_fallback": sgf,
                "fallback_paths": topo.fallback_paths, "maximum_paths": None}
    last = rt.asn_base + n_switches - 1
    if not any(lo <= rt.asn_base and last <= hi for lo, hi in PRIVATE_ASNS):
        raise InputErrors(Problem("routing.asn_base", f"{n_switches} switches need ASNs {rt.asn_base}-{last}, outside the private ranges "
                                  "64512-65534 and 4200000000-4294967294 (RFC 6996)",
                                  "use the default 4200000000 (room for 94,967,295 switches)"), "invalid routing")
    paths = rt.maximum_paths if rt.maximum_paths is not None else inv.switch_model.bgp.max_paths
    return {"mode": "bgp", "asn_base": rt.asn_base, "asn_last": last, "bfd": rt.bfd.model_dump(mode="json"),
            "same_group_fallback": False, "fallback_paths": None, "maximum_paths": paths}


def host_routes(nic: dict, other: dict, own_block: str, own_agg: str, other_agg: str, same_group: bool) -> list[dict]:
    """The routes of one NIC port's policy table (docs/routing.md, "Hosts").

    - the other group's aggregate via this port's switch: the direct 2-switch path (today's route);
    - this port's switch block via this port: GPUs on the same switch, 1 switch;
    - the own group's aggregate through the OTHER port (higher metric): its switch is in the other
      group and reaches every switch of this port's group directly, 2 switches;
    - when the switches route within a group (mode bgp, or static with same_group_fallback): the
      own group's aggregate via this port, used when the other port has no carrier.
    """
    routes = [
        {"to": other_agg, "via": nic["gateway"], "dev": nic["port"], "metric": METRIC_PRIMARY, "role": "cross-group"},
        {"to": own_block, "via": nic["gateway"], "dev": nic["port"], "metric": METRIC_PRIMARY, "role": "same-switch"},
        {"to": own_agg, "via": other["gateway"], "dev": other["port"], "metric": METRIC_OTHER_PORT, "role": "other-port"},
    ]
    if same_group:
        routes.append({"to": own_agg, "via": nic["gateway"], "dev": nic["port"], "metric": METRIC_SAME_GROUP, "role": "same-group"})
    return routes


def route_fabric(inv: ResolvedInventory, acc: dict) -> dict:
    """The routing section (mode and parameters), switch routes and NIC-port policy tables, as new rows."""
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
    settings = routing_settings(inv, len(acc["switches"]))
    bgp = settings["mode"] == "bgp"
    switches = []
    block_of = {sw["name"]: sw["host_block"] for sw in acc["switches"]}
    for seq, sw in enumerate(acc["switches"]):
        if bgp:
            switches.append({**sw, "asn": settings["asn_base"] + seq, "routes": []})
            continue
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
        if settings["same_group_fallback"]:
            own = agg["odd"] if odd else agg["even"]
            for k in range(min(topo.fallback_paths, S)):
                peer = (me + k) % S
                r, j = (me, peer) if odd else (peer, me)
                link = (r * S + j) * m
                routes.append({"prefix": own, "next_hop": ntoa(fab_plane + 2 * link + (1 if odd else 0)), "fallback": True})
        switches.append({**sw, "asn": None, "routes": routes})
    same_group = bgp or settings["same_group_fallback"]
    nics = {}
    for server, entries in acc["nics"].items():
        by_key = {(n["gpu"], n["plane"], n["group"]): n for n in entries}
        rows = nics[server] = []
        for nic in entries:
            agg = agg_by_plane[nic["plane"]]
            odd = nic["group"] == "odd"
            partner = by_key[(nic["gpu"], nic["plane"], "even" if odd else "odd")]
            rows.append({**nic, "routes": host_routes(nic, partner, block_of[nic["switch"]], agg["odd"] if odd else agg["even"],
                                                      agg["even"] if odd else agg["odd"], same_group),
                         "table": 100 + nic["gpu"] * P + nic["nic_port"]})
    return {"switches": switches, "nics": nics, "routing": settings,
            "route_split": {"pieces_per_peer": pieces, "piece_size": piece}}
