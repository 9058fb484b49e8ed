"""`zcube migrate`: read both plans, plan the migration, check its invariants, write DIR (the edges).

DIR/migrate.json holds the summary (report.py); every stage's own folder (plan.json, configs,
workbook, CSVs, report) is written by stage_files once stage plans exist. A migration whose
invariants do not hold is a bug in the planner: it is refused (exit 1), never written.
"""

from __future__ import annotations

from pathlib import Path

from zcube_deploy.errors import InvariantViolation, Problem
from zcube_deploy.migrate.invariants import check_migration
from zcube_deploy.migrate.planner import Migration, Options, plan_migration
from zcube_deploy.migrate.report import summary
from zcube_deploy.plan.io import read_plan, write_canonical


def plan_and_check(from_path: str, to_path: str, opts: Options) -> tuple[Migration, dict]:
    """The migration between two plan files, its invariants checked; (migration, migrate.json)."""
    plan_from, plan_to = read_plan(from_path), read_plan(to_path)
    mig = plan_migration(plan_from, plan_to, opts, from_path, to_path)
    broken = [Problem(f"{name}: {p.path}", p.message) for name, problems in check_migration(mig).items() for p in problems]
    if broken:
        raise InvariantViolation(broken[:20], "the migration breaks its own invariants (a bug in the planner)")
    return mig, summary(mig, from_path, to_path)


def write_migration(from_path: str, to_path: str, out_dir: str | Path, opts: Options) -> dict:
    """Plan, check and write DIR/migrate.json; returns it."""
    _, doc = plan_and_check(from_path, to_path, opts)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_canonical(doc, out / "migrate.json")
    return doc


__all__ = ["plan_and_check", "write_migration"]
