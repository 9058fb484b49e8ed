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
        if action not in ("move", "remove", "install"):
            problems.append(Problem(f"{where}:{n}", f"action {action!r} is not move, remove or install"))
            continue
        if action in ("move", "remove"):
            if not (r["unplug_device"] and r["unplug_port"]):
                problems.append(Problem(f"{where}:{n}", f"a {action} with no end to unplug"))
                continue
            unplug.append({"op": "unplug", "device": _physical(r["unplug_device"], roles), "port": r["unplug_port"]})
        if action in ("move", "install"):
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


__all__ = ["MOVE_FIELDS", "role_aliases", "stage_operations"]
