"""`zcube migrate`: read both plans, plan the migration, check its invariants, write DIR (the edges).

DIR/stage-NN/ holds each stage's moves (moves.csv, moves.xlsx), labels.csv and report (stagefiles.py);
DIR/migrate.json the summary (report.py), written last, so a DIR with migrate.json is complete. A
migration whose invariants do not hold is a bug in the planner: it is refused (exit 1), never written.
"""

from __future__ import annotations

from pathlib import Path

import shutil

from zcube_deploy.cabling.sheets import CableRows
from zcube_deploy.catalog.cabling import plan_catalog
from zcube_deploy.errors import InputErrors, InvariantViolation, Problem
from zcube_deploy.ipv4 import dotted_mask
from zcube_deploy.migrate.invariants import check_migration
from zcube_deploy.migrate.parts import CageParts
from zcube_deploy.migrate.planner import Migration, Options, plan_migration
from zcube_deploy.migrate.report import summary
from zcube_deploy.migrate.stagefiles import Labels, walking_rows, write_labels_csv, write_move_workbook, write_moves_csv, write_report
from zcube_deploy.migrate.stageplan import stage_plan, stage_plans_blocked
from zcube_deploy.plan.io import read_plan, write_canonical, write_plan
from zcube_deploy.platforms import platform_module
from zcube_deploy.render import render_all


def plan_and_check(plan_from: dict, plan_to: dict, from_path: str, to_path: str, opts: Options, catalog=None) -> tuple[Migration, dict]:
    """The migration between two plans, its invariants checked; (migration, migrate.json). ``catalog``: TO's cabling
    catalog (the bundled one when None), for the cables of temporary places."""
    if catalog is None:
        catalog = plan_catalog(plan_to, None, accept_changed=True)[0]
    mig = plan_migration(plan_from, plan_to, opts, from_path, to_path, catalog)
    if mig.rack_conflicts:
        raise InputErrors([Problem(f"{to_path}: switches", c) for c in mig.rack_conflicts[:10]]
                          + [Problem(to_path, f"{len(mig.rack_conflicts)} role(s) would be racked where a switch still serves",
                                     "give TO's switches places the as-built fabric leaves free during the migration (e.g. "
                                     "allow_switches: false on the racks FROM fills; inventories/glm-1k-beside-roft.yaml)")],
                          "the racks cannot hold both fabrics")
    broken = [Problem(f"{name}: {p.path}", p.message) for name, problems in check_migration(mig).items() for p in problems]
    if broken:
        raise InvariantViolation(broken[:20], "the migration breaks its own invariants (a bug in the planner)")
    return mig, summary(mig, from_path, to_path, stage_plans_blocked(plan_from, plan_to))


def _all_ports(plan: dict) -> dict:
    """``plan`` with every role's ports in ``port_map.cage_of`` (a ROFT's spines have their own port map), so every
    port has its short name on labels."""
    maps = plan.get("port_maps") or {}
    if not maps:
        return plan
    cage_of = dict(plan["port_map"]["cage_of"])
    for pm in maps.values():
        cage_of.update(pm["cage_of"])
    return {**plan, "port_map": {**plan["port_map"], "cage_of": cage_of}}


def write_consoles(plan: dict, roles: list[str], d: Path) -> None:
    """DIR/stage-NN/console/ROLE.txt for each role taken in the stage: the lines a technician pastes at the console of
    the switch taking it, before the stage's push (the platform's console bootstrap: the role's hostname and
    management address, the management gateway; no access line: the switch keeps its site lines). From then on the
    switch answers at the role's management address, the one the stage plan gives it."""
    shutil.rmtree(d / "console", ignore_errors=True)
    if not roles:
        return
    (d / "console").mkdir()
    pm = platform_module(plan["cluster"]["platform"])
    settings = plan["settings"]
    by_name = {s["name"]: s for s in plan["switches"]}
    for role in roles:
        lines = pm.console_bootstrap(role, plan["models"]["switch"]["mgmt_interface"], by_name[role]["mgmt_address"],
                                     dotted_mask(settings["mgmt_prefix_len"]), settings.get("mgmt_gateway"), [])
        (d / "console" / f"{role}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def stage_dir(out: Path, t: int) -> Path:
    return out / f"stage-{t:02d}"


def write_migration(from_path: str, to_path: str, out_dir: str | Path, opts: Options) -> dict:
    """Plan, check and write every stage's folder, then DIR/migrate.json; returns migrate.json."""
    plan_from, plan_to = read_plan(from_path), read_plan(to_path)
    cat, _ = plan_catalog(plan_to, None, accept_changed=True)
    mig, doc = plan_and_check(plan_from, plan_to, from_path, to_path, opts, cat)
    cat_from, _ = plan_catalog(plan_from, None, accept_changed=True)
    old = Labels(CableRows(_all_ports(plan_from), cat_from), CageParts.of_plan(plan_from, cat_from))
    new = Labels(CableRows(plan_to, cat), CageParts.of_plan(plan_to, cat))
    form_factor = plan_to["models"]["switch"]["cage_form_factor"]
    rank = {r["name"]: i for i, r in enumerate(plan_to["layout"]["racks"])}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "migrate.json").unlink(missing_ok=True)  # a DIR holding migrate.json is complete: it is written last
    blocked = doc["stage_plans"]["why_not"]
    prev = new
    for t in range(1, len(mig.batches) + 1):
        d = stage_dir(out, t)
        d.mkdir(exist_ok=True)
        here = new.staged(None, CageParts(mig.cages[t - 1], form_factor, cat))  # what the cages hold after the stage
        if blocked is None:
            plan = stage_plan(plan_from, plan_to, mig, t)
            write_plan(plan, d)
            render_all(plan, d, jobs=1)
            write_consoles(plan, sorted(r for r, s in mig.need_stage.items() if s == t), d)
            if mig.temp:  # labels name where the far end stands in this stage (a temporary place while a role is in one)
                here = new.staged(CableRows(plan, cat), here.cages)
        rows = walking_rows(mig.moves[t - 1], mig.work[t - 1], old, here, rank, mig.bind, prev)
        prev = here
        write_moves_csv(rows, d / "moves.csv")
        write_labels_csv(rows, cat, d / "labels.csv")
        write_move_workbook(rows, cat, plan_to["cluster"]["name"], t, d / "moves.xlsx")
        write_report(doc["stage_reports"][t - 1], d / "report.json", d / "report.txt")
    t = len(mig.batches) + 1
    while stage_dir(out, t).is_dir():  # a stage of an earlier, longer run
        shutil.rmtree(stage_dir(out, t))
        t += 1
    write_canonical(doc, out / "migrate.json")
    return doc


__all__ = ["plan_and_check", "write_migration"]
