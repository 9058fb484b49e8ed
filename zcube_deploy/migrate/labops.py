"""A stage's moves as the lab's wiring operations (what `zcube lab fix --stage` sends to a running lab).

The lab was started from FROM's plan: its switches carry their FROM names for good (a switch is a
process with an SSH endpoint; its hostname changes when a stage's config is pushed). A move row names a
switch as it is called at that moment, a role name once the switch plays a role; :func:`stage_operations`
maps every name back to the physical switch (migrate.json's ``roles``), unplugs every end the stage
unplugs, then connects every cable the stage plugs (a moved cable: its end that stays and the end it goes
to; a re-laid or new one: its two plugged ends), under the cable's new id. The lab's lab.json then names
each role as the endpoint of the switch playing it (:func:`role_aliases`). Pure.
"""

from __future__ import annotations

from zcube_deploy.errors import Problem
from zcube_deploy.plan.roles import port_map_for

CABLE_ACTIONS = ("remove", "move", "unplug", "plug", "install")
SWITCH_ACTIONS = ("unrack", "rack", "rebreak", "console", "relabel")  # the lab has no labels: a relabel row changes no wiring
MOVE_FIELDS = ("step", "action", "cable", "unplug_device", "unplug_port", "plug_device", "plug_port", "stays_device", "stays_port")


def _physical(name: str, roles: dict[str, str]) -> str:
    return roles.get(name, name)


def stage_operations(rows: list[dict], roles: dict[str, str], where: str) -> tuple[list[dict], list[Problem]]:
    """(wiring operations, problems) for the move rows of one stage (moves.csv as dicts); ``roles``: role -> the
    switch playing it. A problem names the row (``where``:line) and says what is wrong; with problems, no operation."""
    problems: list[Problem] = []
    unplug: list[dict] = []
    plugged: dict[str, list[tuple[str, str]]] = {}
    stays: dict[str, tuple[str, str]] = {}
    order: list[str] = []
    for n, r in enumerate(rows, start=2):
        missing = [k for k in MOVE_FIELDS if k not in r]
        if missing:
            problems.append(Problem(f"{where}:{n}", f"no column(s) {', '.join(missing)}", "give the moves.csv zcube migrate wrote"))
            continue
        action = r["action"]
        if action in SWITCH_ACTIONS:  # the switch's own work: the lab takes it from the stage's plan and console files
            continue
        if action not in CABLE_ACTIONS:
            problems.append(Problem(f"{where}:{n}", f"action {action!r} is not one of {', '.join(CABLE_ACTIONS + SWITCH_ACTIONS)}"))
            continue
        if action in ("move", "remove", "unplug"):
            if not (r["unplug_device"] and r["unplug_port"]):
                problems.append(Problem(f"{where}:{n}", f"a {action} with no end to unplug"))
                continue
            unplug.append({"op": "unplug", "device": _physical(r["unplug_device"], roles), "port": r["unplug_port"]})
        if action in ("move", "install", "plug"):
            if not (r["cable"] and r["plug_device"] and r["plug_port"]):
                problems.append(Problem(f"{where}:{n}", f"a {action} with no cable id or no end to plug"))
                continue
            if r["cable"] not in plugged:
                order.append(r["cable"])
            plugged.setdefault(r["cable"], []).append((_physical(r["plug_device"], roles), r["plug_port"]))
            if r["stays_device"]:
                stays[r["cable"]] = (_physical(r["stays_device"], roles), r["stays_port"])
    connect: list[dict] = []
    for cid in order:
        ends = ([stays[cid]] if cid in stays else []) + plugged[cid]
        if len(ends) != 2:
            problems.append(Problem(where, f"cable {cid}: {len(ends)} end(s) to connect, not 2"))
            continue
        (ad, ap), (bd, bp) = ends
        connect.append({"op": "connect", "cable": cid, "a": {"device": ad, "port": ap}, "b": {"device": bd, "port": bp}})
    return ([] if problems else unplug + connect), problems


def physical_ops(ops: list[dict], roles: dict[str, str]) -> list[dict]:
    """Wiring operations (a verify.json's fixes on a stage plan) with every device named by a role mapped to the
    switch playing it (``roles``: role -> switch), as the lab's wiring knows them."""
    def end(e: dict) -> dict:
        return {**e, "device": _physical(e["device"], roles)} if isinstance(e, dict) and "device" in e else e

    return [{k: end(v) if k in ("to", "a", "b") else _physical(v, roles) if k == "device" else v for k, v in op.items()}
            for op in ops]


def next_stage(record: dict, migration: str, stage: int, where: str, stages: int | None = None) -> Problem | None:
    """Why ``stage`` of ``migration`` may not be applied to a lab whose stage record (LABDIR/migration.json:
    {"migration", "applied": [stage, ...]}) is ``record`` (None: it is the next one). Stages go in order, each once,
    all of one migration; ``stages``: how many the migration has (when known, no stage past the last is hinted)."""
    applied = record.get("applied") or []
    done = f"stages {applied[0]:02d}..{applied[-1]:02d}" if len(applied) > 1 else f"stage {applied[0]:02d}" if applied else "no stage"
    if applied and record.get("migration") != migration:
        return Problem(where, f"the lab carries {done} of another migration ({record.get('migration')})",
                       "start a new lab from FROM's plan for this one")
    want = len(applied) + 1
    if stage != want:
        hint = (f"every stage of {migration} is applied ({stages} of {stages}): none is left to apply" if stages is not None
                and want > stages else f"apply {migration}/stage-{want:02d} next")
        return Problem(where, f"stage {stage:02d} is not next: the lab has {done} of {migration} applied", hint)
    return None


def rerole_requests(plan: dict, roles: dict[str, str], new_roles: list[str], consoles: dict[str, list[str]]) -> list[dict]:
    """For each role taken in this stage, what the lab does to the switch playing it (``roles``: role -> switch):
    its cages broken out as the role's port map says (``plan``: the stage's plan) and its console lines pasted
    (``consoles``: role -> the stage's console file, hostname and management address)."""
    group = {s["name"]: s["group"] for s in plan["switches"]}
    out = []
    for role in new_roles:
        pm = port_map_for(plan, group[role])
        out.append({"switch": roles[role], "role": role, "ports": pm["host_ports"] + pm["fabric_ports"] + pm["unused_ports"],
                    "console": consoles[role]})
    return out


def role_aliases(endpoints: dict[str, dict], roles: dict[str, str], taken: list[str]) -> tuple[dict[str, dict], list[Problem]]:
    """lab.json's switches with each role in ``taken`` named as the endpoint of the switch playing it."""
    out = dict(endpoints)
    problems = []
    for role in taken:
        switch = roles.get(role, "")
        if switch not in endpoints:
            problems.append(Problem(f"roles.{role}", f"played by {switch or 'no switch'}, which the lab does not run",
                                    "a spare bought for the migration is not in a lab started from FROM's plan"))
            continue
        out[role] = endpoints[switch]
    return out, problems


__all__ = ["MOVE_FIELDS", "next_stage", "physical_ops", "rerole_requests", "role_aliases", "stage_operations"]
