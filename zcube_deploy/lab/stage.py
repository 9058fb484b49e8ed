"""`zcube lab fix LABDIR --stage DIR/stage-NN`: do a migration stage's work to a running lab, as technicians would.

Reads DIR/migrate.json (which switch plays each role) and DIR/stage-NN/moves.csv (the technicians' list),
refuses a stage that is not the lab's next one (LABDIR/migration.json records the stages applied), turns the
moves into wiring operations (migrate/labops.py) and, for each switch taking a role in the stage, its cages
broken out for the role (the stage plan's port map) and its console file (DIR/stage-NN/console/ROLE.txt:
hostname and management address) pasted; sends all of it through the lab's control file (lab/control.py:
the wiring all applied or none), then rewrites LABDIR/lab.json so each role taken so far is reachable under
its name at the endpoint of the switch playing it. Then push and verify the stage's plan against the lab as
against any plan.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from zcube_deploy.access import read_lab
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.lab.control import STAGE_RECORD, console_lines, read_stage_record, request, write_lab_json
from zcube_deploy.migrate.doc import read_roles
from zcube_deploy.migrate.labops import next_stage, rerole_requests, role_aliases, stage_operations
from zcube_deploy.plan.io import read_plan, wiring_identity

RECORD = STAGE_RECORD  # LABDIR/migration.json: the migration whose stages the lab carries, which ones, who plays each role


def stage_inputs(stage_dir: str) -> tuple[list[dict], dict[str, str], list[str], int]:
    """(move rows, role -> switch, roles taken by the end of this stage, stage number) of DIR/stage-NN."""
    d = Path(stage_dir)
    name = d.name
    if not (name.startswith("stage-") and name[6:].isdigit()):
        raise InputErrors(Problem(stage_dir, "not a stage folder (DIR/stage-NN from `zcube migrate`)"))
    stage = int(name[6:])
    doc = read_roles(d.parent / "migrate.json")
    roles = {r["role"]: r["switch"] for r in doc["roles"]}
    taken = sorted(r["role"] for r in doc["roles"] if r["first_stage"] <= stage)
    moves = d / "moves.csv"
    try:
        with open(moves, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as exc:
        raise InputErrors(Problem(str(moves), f"cannot read it: {exc.strerror}")) from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputErrors(Problem(str(moves), f"not a CSV file: {exc}")) from None
    return [{k: v.lstrip("'") if isinstance(v, str) else v for k, v in r.items()} for r in rows], roles, taken, stage


def apply_stage(lab_dir: str, stage_dir: str, wait: float) -> dict:
    """Apply the stage's work to the lab in ``lab_dir`` and name its roles in lab.json. Returns {"operations",
    "roles": roles named, "rerole": [{"switch", "role", "added", "removed", "rejected"}, ...]}."""
    rows, roles, taken, stage = stage_inputs(stage_dir)
    d = Path(stage_dir)
    migration = str(d.parent.resolve())
    record_path = Path(lab_dir) / RECORD
    record = read_stage_record(lab_dir)
    order = next_stage(record, migration, stage, stage_dir, read_roles(d.parent / "migrate.json").get("stages"))
    if order is not None:
        raise InputErrors(order, f"stage {stage_dir}: nothing applied to the lab")
    ops, problems = stage_operations(rows, roles, str(d / "moves.csv"))
    lab_json = Path(lab_dir) / "lab.json"
    lab = read_lab(lab_json, "start a lab from FROM's plan with `zcube lab up PLAN -o DIR`")
    switches, alias_problems = role_aliases(lab["switches"], roles, taken)
    problems += alias_problems
    if problems:
        raise InputErrors(problems[:20], f"stage {stage_dir}: nothing applied to the lab")
    new_roles = sorted(r for r in taken if r not in (record.get("roles") or []))
    plan = read_plan(str(d / "plan.json"))
    consoles = {r: console_lines(str(d / "console" / f"{r}.txt")) for r in new_roles}
    rerole = rerole_requests(plan, roles, new_roles, consoles)
    answer = request(lab_dir, {"operations": ops, "rerole": rerole}, wait, str(d / "moves.csv"))
    write_lab_json(lab_json, {**lab, "switches": dict(sorted(switches.items())), "plan": wiring_identity(plan)})  # runs the stage's plan
    applied = {"migration": migration, "applied": (record.get("applied") or []) + [stage], "roles": sorted(taken),
               "switch_of": {r: roles[r] for r in sorted(taken)}}
    record_path.with_name(RECORD + ".tmp").write_text(json.dumps(applied, indent=1, sort_keys=True) + "\n")
    record_path.with_name(RECORD + ".tmp").replace(record_path)
    by_switch = {r["switch"]: r["role"] for r in rerole}
    done = [{**r, "role": by_switch[r["switch"]]} for r in answer.get("rerole", [])]
    return {"operations": answer.get("operations", len(ops)), "roles": len(taken), "rerole": done,
            "rejected": sum(len(r["rejected"]) for r in done)}


__all__ = ["apply_stage", "stage_inputs"]
