"""A ROFT's addresses and routing (docs/roft.md), in the forms ZCube's mode bgp uses (docs/routing.md).

Addresses: every leaf owns an aligned block of B = next_pow2(2 x its host ports); the leaves of a
plane (in plan order) fill that plane's aggregate, next_pow2(leaves) x B, planes one after another
in the host pool. Host port t of a leaf: switch side block + 2t, NIC side block + 2t + 1. Fabric
link L of a plane ((leaf x spines + spine) x links + x): leaf side 2L, spine side 2L + 1. One /32
loopback per switch; management from the inventory (as ZCube). A spine has no host block.

Routing: eBGP on every leaf-spine /31 with BFD; a private ASN per leaf (asn_base + its position
among the leaves), one ASN shared by the spines of a plane (after the leaves'), so a path never
crosses two spines (RFC 7938). A leaf originates its host block and loopback, a spine its loopback.
A NIC port's policy table: the plane's aggregate via its own leaf (metric 100) and, where the
GPU has another port on the same plane, via that port (metric 200).
"""

from __future__ import annotations

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.inventory import ResolvedInventory
from zcube_deploy.ipv4 import cidr, ntoa
from zcube_deploy.plan.addressing import addressed_interfaces, addressed_nics, management_addresses, pool_problems
from zcube_deploy.plan.ipam import net_bounds, next_pow2
from zcube_deploy.plan.routing import METRIC_OTHER_PORT, METRIC_PRIMARY, PRIVATE_ASNS


def layout(sz: dict) -> dict:
    block = next_pow2(2 * sz["host_ports_per_leaf"])
    agg = next_pow2(sz["leaves_per_plane"]) * block
    return {"block": block, "aggregate": agg, "fabric_per_plane": 2 * sz["leaves_per_plane"] * sz["spines_per_plane"] * sz["links_per_pair"]}


def _asns(inv: ResolvedInventory, switches: list[dict], problems: list[Problem]) -> dict[str, int]:
    base = inv.spec.routing.asn_base
    leaves = [s for s in switches if s["group"] == "leaf"]
    out = {s["name"]: base + i for i, s in enumerate(leaves)}
    for s in switches:
        if s["group"] == "spine":
            out[s["name"]] = base + len(leaves) + s["plane"]
    last = max(out.values())
    if not any(lo <= base and last <= hi for lo, hi in PRIVATE_ASNS):
        problems.append(Problem("routing.asn_base", f"{len(leaves)} leaves and their planes' spines need ASNs {base}-{last}, outside the "
                                "private ranges 64512-65534 and 4200000000-4294967294 (RFC 6996)", "use the default 4200000000"))
    return out


def address_and_route(inv: ResolvedInventory, acc: dict) -> dict:
    """Switch rows with addresses, ASN and (no) static routes; NIC rows with addresses and policy tables; the
    addressing and routing sections."""
    sz = acc["sizing"]
    a, rt = inv.spec.addressing, inv.spec.routing
    lay = layout(sz)
    block, agg, planes = lay["block"], lay["aggregate"], sz["planes"]
    switches = acc["switches"]
    host_base, host_size = net_bounds(a.host_pool)
    fab_base, fab_size = net_bounds(a.fabric_pool)
    lo_base, lo_size = net_bounds(a.loopback_pool)
    problems: list[Problem] = []
    pool_problems([
        ("addressing.host_pool", host_size, planes * agg, f"{planes} plane(s) x {next_pow2(sz['leaves_per_plane'])} leaf blocks of {block}"),
        ("addressing.fabric_pool", fab_size, planes * lay["fabric_per_plane"], f"{planes * lay['fabric_per_plane'] // 2} fabric /31s"),
        ("addressing.loopback_pool", lo_size, len(switches) + 1, f"{len(switches)} loopback /32s after the network address"),
    ], problems)
    mgmt = management_addresses(inv, switches, problems)
    asn = _asns(inv, switches, problems)
    if problems:
        raise InputErrors(problems, "address pools and ASNs do not fit the plan")
    block_start: dict[str, int] = {}
    in_plane: dict[int, int] = {}  # leaves of each plane seen so far: a leaf's position in its plane
    for sw in switches:
        if sw["group"] == "leaf":
            k = in_plane[sw["plane"]] = in_plane.get(sw["plane"], -1) + 1
            block_start[sw["name"]] = host_base + sw["plane"] * agg + k * block
    out_switches = []
    for seq, sw in enumerate(switches):
        fab_plane = fab_base + sw["plane"] * lay["fabric_per_plane"]
        leaf = sw["group"] == "leaf"
        interfaces = addressed_interfaces(acc["interfaces"][sw["name"]], block_start.get(sw["name"]), fab_plane, leaf)
        out_switches.append({**sw, "host_block": cidr(block_start[sw["name"]], block) if leaf else None, "loopback": ntoa(lo_base + 1 + seq),
                             "mgmt_address": mgmt[sw["name"]], "interfaces": interfaces, "asn": asn[sw["name"]], "routes": []})
    aggregates = [{"plane": p, "hosts": cidr(host_base + p * agg, agg)} for p in range(planes)]
    nics = addressed_nics(acc["nics"], block_start)
    for rows in nics.values():
        for nic in rows:
            to = aggregates[nic["plane"]]["hosts"]
            routes = [{"to": to, "via": nic["gateway"], "dev": nic["port"], "metric": METRIC_PRIMARY, "role": "plane"}]
            routes += [{"to": to, "via": o["gateway"], "dev": o["port"], "metric": METRIC_OTHER_PORT, "role": "other-port"}
                       for o in rows if o["gpu"] == nic["gpu"] and o["plane"] == nic["plane"] and o is not nic]
            nic["routes"] = routes
            nic["table"] = 100 + nic["gpu"] * inv.nic_model.ports + nic["nic_port"]
    paths = rt.maximum_paths if rt.maximum_paths is not None else inv.switch_model.bgp.max_paths
    routing = {"mode": "bgp", "asn_base": rt.asn_base, "asn_last": max(asn.values()), "bfd": rt.bfd.model_dump(mode="json"),
               "same_group_fallback": False, "fallback_paths": None, "maximum_paths": paths}
    info = {
        "host_pool": str(a.host_pool), "fabric_pool": str(a.fabric_pool), "loopback_pool": str(a.loopback_pool),
        "management_network": str(a.management.network), "block_size": block, "aggregate_size": agg, "aggregates": aggregates,
        "used": {"host_pool": planes * agg, "fabric_pool": planes * lay["fabric_per_plane"], "loopback_pool": len(switches),
                 "management": len(switches)},
        "size": {"host_pool": host_size, "fabric_pool": fab_size, "loopback_pool": lo_size, "management": net_bounds(a.management.network)[1]},
    }
    return {"switches": out_switches, "nics": nics, "addressing": info, "routing": routing}
