"""Addressing (zcube.md section 5).

Per plane, every switch owns an aligned block of B = next_pow2(2K) host addresses; the S odd
blocks form one aggregate (ODD_BLOCK) and the S even blocks another (EVEN_BLOCK). Host port t of
a switch: switch side block + 2t, NIC side block + 2t + 1. Fabric link L = (r*S + j)*m + x: odd
side 2L, even side 2L + 1. One /32 loopback per switch. Management from the inventory.
"""

from __future__ import annotations

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.inventory import ResolvedInventory
from zcube_deploy.ipv4 import cidr, ntoa
from zcube_deploy.plan.ipam import net_bounds, next_pow2, prefix_for


def plane_layout(S: int, K: int, m: int) -> dict:
    block = next_pow2(2 * K)
    agg = next_pow2(S) * block
    return {"block": block, "aggregate": agg, "host_per_plane": 2 * agg, "fabric_per_plane": 2 * S * S * m}


def pool_problems(needs: list[tuple[str, int, int, str]], problems: list[Problem]) -> None:
    """(pool path, addresses it holds, addresses needed, what for): a problem for each pool too small."""
    for path, have, need, what in needs:
        if have < need:
            problems.append(Problem(path, f"holds {have} addresses; this plan needs {need} ({what})", f"use {prefix_for(need)} or larger"))


def management_addresses(inv: ResolvedInventory, switches: list[dict], problems: list[Problem]) -> dict[str, str]:
    """Switch name -> management address: the inventory's explicit ones, the others from the pool in switch
    order (skipping the gateway and the explicit ones); problems when the pool runs out or a name is unknown."""
    a = inv.spec.addressing
    mg = a.management
    explicit = {name: int(ip) for name, ip in mg.addresses.items()}
    names = {s["name"] for s in switches}
    for name in explicit:
        if name not in names:
            problems.append(Problem(f"addressing.management.addresses.{name}", f"no switch is named {name!r}",
                                    f"switches are named like {switches[0]['name']!r}"))
    mnet, msize = net_bounds(mg.network)
    taken = set(explicit.values())
    if mg.gateway is not None:
        taken.add(int(mg.gateway))
    first = int(mg.first) if mg.first is not None else mnet + (1 if msize > 2 else 0)
    pool_iter = iter(range(first, mnet + msize - (1 if msize > 2 else 0)))
    mgmt: dict[str, str] = {}
    for sw in switches:
        if sw["name"] in explicit:
            mgmt[sw["name"]] = ntoa(explicit[sw["name"]])
            continue
        for ip in pool_iter:
            if ip not in taken:
                mgmt[sw["name"]] = ntoa(ip)
                taken.add(ip)
                break
        else:
            missing = sum(1 for s in switches if s["name"] not in explicit) - len([n for n in mgmt if n not in explicit])
            problems.append(Problem("addressing.management.network", f"{mg.network} runs out: {missing} more switch address(es) needed",
                                    "use a larger management network or give addresses explicitly"))
            break
    return mgmt


def addressed_interfaces(rows: list[dict], block: int | None, fabric_base: int, low_end: bool) -> list[dict]:
    """A switch's interfaces as new rows with their /31s: host port t at ``block`` + 2t (the NIC side + 1), fabric link
    L at ``fabric_base`` + 2L, this switch on the low address when ``low_end`` (ZCube's odd switch, a ROFT leaf)."""
    out = []
    for itf in rows:
        if itf["kind"] == "host":
            mine = block + 2 * itf["port_index"]
            peer = mine + 1
        else:
            lo = fabric_base + 2 * itf["link"]
            mine, peer = (lo, lo + 1) if low_end else (lo + 1, lo)
        out.append({**itf, "address": ntoa(mine), "prefix_len": 31, "peer": {**itf["peer"], "address": ntoa(peer)}})
    return out


def addressed_nics(nics: dict[str, list[dict]], block_start: dict[str, int]) -> dict[str, list[dict]]:
    """Server -> its NIC ports as new rows with their /31: the NIC side of its switch's host port (the gateway)."""
    out = {}
    for server, entries in nics.items():
        rows = out[server] = []
        for nic in entries:
            gw = block_start[nic["switch"]] + 2 * nic["host_port_index"]
            rows.append({**nic, "address": ntoa(gw + 1), "prefix_len": 31, "gateway": ntoa(gw)})
    return out


def address_fabric(inv: ResolvedInventory, acc: dict) -> dict:
    """Addresses of every switch (with its wired interfaces) and NIC port, as new rows; the pools' use."""
    sz = acc["sizing"]
    S, K, m = sz.S, sz.K, sz.m
    a = inv.spec.addressing
    lay = plane_layout(S, K, m)
    block, agg = lay["block"], lay["aggregate"]
    planes = inv.planes
    switches = acc["switches"]
    host_base, host_size = net_bounds(a.host_pool)
    fab_base, fab_size = net_bounds(a.fabric_pool)
    lo_base, lo_size = net_bounds(a.loopback_pool)
    problems: list[Problem] = []
    need_host = planes * lay["host_per_plane"]
    need_fab = planes * lay["fabric_per_plane"]
    need_lo = len(switches) + 1
    pool_problems([
        ("addressing.host_pool", host_size, need_host, f"{planes} plane(s) x 2 groups x {next_pow2(S)} blocks of {block} addresses"),
        ("addressing.fabric_pool", fab_size, need_fab, f"{planes * S * S * m} fabric /31s"),
        ("addressing.loopback_pool", lo_size, need_lo, f"{len(switches)} loopback /32s after the network address"),
    ], problems)
    mgmt = management_addresses(inv, switches, problems)
    if problems:
        raise InputErrors(problems, "address pools do not fit the plan")

    aggregates = []
    for plane in range(planes):
        base = host_base + plane * lay["host_per_plane"]
        aggregates.append({"plane": plane, "odd": cidr(base, agg), "even": cidr(base + agg, agg)})
    out_switches = []
    block_start: dict[str, int] = {}
    for seq, sw in enumerate(switches):
        plane = sw["plane"]
        base = host_base + plane * lay["host_per_plane"] + (agg if sw["group"] == "even" else 0)
        blk = base + sw["index"] * block
        block_start[sw["name"]] = blk
        fab_plane = fab_base + plane * lay["fabric_per_plane"]
        odd = sw["group"] == "odd"
        interfaces = addressed_interfaces(acc["interfaces"][sw["name"]], blk, fab_plane, odd)
        out_switches.append({**sw, "host_block": cidr(blk, block), "loopback": ntoa(lo_base + 1 + seq),
                             "mgmt_address": mgmt[sw["name"]], "interfaces": interfaces})
    nics = addressed_nics(acc["nics"], block_start)
    info = {
        "host_pool": str(a.host_pool), "fabric_pool": str(a.fabric_pool), "loopback_pool": str(a.loopback_pool),
        "management_network": str(a.management.network),
        "block_size": block, "aggregate_size": agg,
        "aggregates": aggregates,
        "used": {"host_pool": need_host, "fabric_pool": need_fab, "loopback_pool": len(switches), "management": len(switches)},
        "size": {"host_pool": host_size, "fabric_pool": fab_size, "loopback_pool": lo_size, "management": net_bounds(a.management.network)[1]},
    }
    return {"switches": out_switches, "nics": nics, "addressing": info}
