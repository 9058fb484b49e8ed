"""A migration stage's plan (docs/migrate.md) as its islands: the switches of one design (the ROFT side, the ZCube
side), the cables among them and to them, and the NIC ports on them, as a plan of that design that the one-design
analyses take. The two islands carry no traffic between them by design: a pair of GPUs on different islands is not
expected to reach. Pure.
"""

from __future__ import annotations

from zcube_deploy.plan.roles import ROLES


def island_designs(plan: dict) -> list[str]:
    """The designs of the plan's switches' roles, sorted: one for a plan of one design, two for a migration stage."""
    return sorted({ROLES[s["group"]][0] for s in plan["switches"] if s["group"] in ROLES})


def _roft_sizing(switches: list[dict]) -> dict:
    """The shape of a ROFT island as the ROFT analysis reports it: planes, leaves and spines per plane in service."""
    planes = sorted({int(s["plane"]) for s in switches}) or [0]
    return {"planes": len(planes), "leaves_per_plane": sum(s["group"] == "leaf" for s in switches) // len(planes),
            "spines_per_plane": sum(s["group"] == "spine" for s in switches) // len(planes)}


def island_plan(plan: dict, design: str) -> dict:
    """The island of ``design`` in ``plan`` as a plan of that design: its switches, every cable with an end on one of
    them, each server with its NIC ports on them (a server with none is left out). A ZCube island keeps the stage's
    sizing (TO's); a ROFT island's shape is counted from its switches."""
    switches = [s for s in plan["switches"] if ROLES.get(s["group"], ("",))[0] == design]
    names = {s["name"] for s in switches}
    servers = []
    for srv in plan["servers"]:
        nics = [n for n in srv.get("nics", ()) if n["switch"] in names]
        if nics:
            servers.append({**srv, "nics": nics})
    cables = [c for c in plan["cables"] if c["a"]["device"] in names or c["b"]["device"] in names]
    sub = {**plan, "design": design, "switches": switches, "servers": servers, "cables": cables}
    if design == "roft":
        sub["sizing"] = _roft_sizing(switches)
    return sub


def gpus_by_ports(plan: dict) -> tuple[int, int]:
    """(GPUs with both NIC ports in the plan, GPUs with one only): the second are in no GPU pair the analyses count."""
    ports: dict[tuple[str, int], int] = {}
    for srv in plan["servers"]:
        for nic in srv.get("nics", ()):
            ports[(srv["name"], nic["gpu"])] = ports.get((srv["name"], nic["gpu"]), 0) + 1
    both = sum(1 for n in ports.values() if n >= 2)
    return both, len(ports) - both


__all__ = ["gpus_by_ports", "island_designs", "island_plan"]
