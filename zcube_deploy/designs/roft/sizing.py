"""A ROFT's shape (docs/roft.md): pods of rail leaves, spines, and the leaf-spine links.

The arithmetic is `zcube compare`'s (analysis/designs.py ``roft``), written for any NIC port layout:
per plane a GPU brings ``b_plane`` = (its NIC ports on the plane) x the port speed; a leaf gives half
of its capacity to hosts and half to spines (non-blocking; ``topology.oversubscription`` divides the
uplinks), so a pod is as many servers as the leaf's host half holds; rail r of a pod is one leaf.
Uplinks per leaf U = the pod's host bandwidth / the fabric link speed; spines per plane = the fewest
that take every uplink (ceil(leaves x U / spine ports)), raised to a divisor of U so that every leaf
has the same number of links to every spine. 2-tier only: more leaves than a spine has ports would
need a third tier, which is not planned (an input problem). For glm-1k (51.2T, 2 x 200G per GPU,
400G links): 64 servers per pod, 16 leaves, U = 64, 8 spines, 8 links per pair: compare's 16 + 8.
"""

from __future__ import annotations

from math import ceil

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.inventory import ResolvedInventory
from zcube_deploy.inventory.checks import double_speed


def gbps(speed: str) -> int:
    """'200G' -> 200, '1.6T' -> 1600."""
    s = speed.strip().upper()
    return round(float(s[:-1]) * 1000) if s.endswith("T") else int(float(s[:-1]))


def _cages(ports: int, lanes: int) -> int:
    return ceil(ports / lanes)


def size_roft(inv: ResolvedInventory) -> dict:
    """The RoftSizing section (plan/model.py) of ``inv``; InputErrors (exit 2, every problem at once) when the
    switch cannot hold the asked pod, spine count or tier."""
    r = inv.roft
    spec, sw = inv.spec, inv.switch_model
    G, planes = inv.server_model.gpus, r.planes
    per_plane = inv.nic_model.ports // planes  # NIC ports of one GPU on one plane (on its rail leaf)
    host_speed = spec.topology.nic_port_speed
    fabric_speed = r.fabric_speed or double_speed(host_speed)
    lh, lf = sw.speeds[host_speed].lanes, sw.speeds[fabric_speed].lanes
    b, f, cages = gbps(host_speed), gbps(fabric_speed), sw.cages
    over = spec.topology.oversubscription
    problems: list[Problem] = []

    def uplinks(servers: int) -> int:
        return ceil(servers * per_plane * b / over / f)

    def fits(servers: int) -> bool:
        return _cages(servers * per_plane, lh) + _cages(uplinks(servers), lf) <= cages

    most = 0
    while fits(most + 1):
        most += 1
    pod = r.servers_per_pod or most
    reasons = [f"a leaf holds at most {most} servers ({per_plane} x {host_speed} each down, {fabric_speed} links up, {cages} cages)"]
    if most == 0 or pod > most:
        problems.append(Problem("roft.servers_per_pod" if r.servers_per_pod else "roft",
                                f"a leaf of {spec.switch_model} holds at most {most} servers of {per_plane} x {host_speed} ports "
                                f"with their {fabric_speed} uplinks", f"use servers_per_pod <= {most}" if most else "a larger switch"))
        if most == 0:
            raise InputErrors(problems, "the ROFT does not fit the switch")
        pod = most  # to check the rest of the inventory's shape with: every problem at once
    if r.servers_per_pod:
        reasons.append(f"servers_per_pod = {pod} (inventory)")
    pods = ceil(inv.capacity_servers / pod)
    leaves = G * pods
    U = uplinks(pod)
    spine_ports = cages * lf
    least = ceil(leaves * U / spine_ports)
    divisors = [d for d in range(1, U + 1) if U % d == 0]
    spines = next((d for d in divisors if d >= least), 0)  # 0: more leaves than a spine has ports
    if not spines:
        problems.append(Problem("topology.capacity_servers" if spec.topology.capacity_servers else "servers",
                                f"{leaves} leaves per plane need more spine ports than a 2-tier ROFT of {spec.switch_model} has "
                                f"({spine_ports}): a third tier would be needed, which zcube does not plan", "fewer servers, or design zcube"))
    elif r.spines is not None:
        if r.spines < least or U % r.spines:
            fit = [d for d in divisors if d >= least]
            problems.append(Problem("roft.spines", f"{r.spines} spines per plane: each of {leaves} leaves has {U} uplinks, "
                                    f"a spine {spine_ports} ports; the spines must take every uplink (>= {least}) and divide {U}",
                                    "use one of " + ", ".join(map(str, fit))))
        spines = r.spines
        reasons.append(f"spines = {spines} per plane (inventory)")
    else:
        reasons.append(f"spines = {spines}: the fewest dividing U = {U} that take {leaves} x {U} uplinks on {spine_ports}-port spines")
    if problems:
        raise InputErrors(problems, "the ROFT does not fit the switch")
    installed = len(inv.servers)
    return {
        "planes": planes, "gpus_per_server": G, "servers_per_pod": pod, "pods": pods, "leaves_per_plane": leaves,
        "spines_per_plane": spines, "uplinks_per_leaf": U, "links_per_pair": U // spines, "host_ports_per_leaf": pod * per_plane,
        "fabric_speed": fabric_speed, "spine_ports": spine_ports, "logical_ports": cages * lh, "oversubscription": over,
        "capacity_servers": inv.capacity_servers, "capacity_gpus": inv.capacity_servers * G,
        "installed_servers": installed, "installed_gpus": installed * G, "reasons": reasons,
    }
