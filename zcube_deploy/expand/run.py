"""`zcube expand OLD_PLAN NEW_INVENTORY -o DIR`: the grown plan and everything a team needs to add
the new servers without touching what runs (docs/expand.md).

``prepare`` (offline, no device contacted):

1. compare the grown plan with the old one row by row (``growth.compare_growth``): any existing
   cable, address, route, switch or server that would move or go refuses the whole expansion
   (exit 2, every problem listed) and nothing is written;
2. render both plans into a stage folder inside DIR and compute each switch's change set
   (``changes.change_sets``): refused the same way when one would negate or change an existing line,
   or when the switches that change are not exactly those the new cables end on;
3. publish: DIR/plan.json, DIR/configs, DIR/hosts and manifest.json (render's, for push),
   DIR/changes/<switch>.diff for the switches that change only, DIR/changes/hosts/ with the new
   servers' network configs, DIR/new-cables/ (cut sheets, labels, CSVs of the new cables only) and
   DIR/expand.json (what was added, per switch).

``push_and_verify`` (after the cabling): a push of the changed switches only, with a canary batch
(the normal push path, so backups, the scope, the management guard and rollback all apply), then a
verify of the whole grown plan whose findings are split into the new cables and the old ones.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from zcube_deploy.cabling.run import write_cabling
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.expand.changes import change_sets
from zcube_deploy.expand.growth import HINT, Growth, compare_growth
from zcube_deploy.plan.io import write_plan
from zcube_deploy.plan.roles import design_of
from zcube_deploy.platforms import platform_module
from zcube_deploy.push.scope import ManagedScope
from zcube_deploy.render import render_all
from zcube_deploy.render.owned import publish

REPORT = "expand.json"
CHANGES = "changes"
NEW_CABLES = "new-cables"
STAGE = "stage"  # a migration stage's plan (zcube migrate)


@dataclass
class Prepared:
    report: dict
    growth: Growth
    render: dict  # what publishing the grown render did to DIR's earlier files (render/owned.py's publish)


def _refuse(problems: list[Problem], title: str) -> InputErrors:
    """Every problem, one line each, and once what an expansion may do."""
    return InputErrors(problems, f"{title} ({HINT})")


DESIGN_NAMES = {"zcube": "ZCube", "roft": "ROFT"}


def check_same_design(old: dict, new: dict) -> None:
    """Expand grows a plan within its own design (ZCube or ROFT); a plan of another design, or a migration stage's
    plan, is refused at once (exit 2) with what to use instead, not with every row that would change."""
    was, will = design_of(old), design_of(new)
    if was == will and was != STAGE:
        return
    if STAGE in (was, will):
        raise InputErrors(Problem("design", f"a migration stage's plan is not grown ({was} -> {will})",
                                  "finish the migration (zcube migrate's stages), then expand the ZCube it built"), "cannot expand")
    name = DESIGN_NAMES.get(was, was)
    hint = f"to move {name} to ZCube use zcube migrate" if will == "zcube" else f"no command moves a {name} to a {DESIGN_NAMES.get(will, will)}"
    raise InputErrors(Problem("design", f"expand grows a plan of the same design; this one is {name}, the new one "
                              f"{DESIGN_NAMES.get(will, will)}", hint), "cannot expand")


def check_output(old_plan_path: str | Path, out_dir: str | Path) -> None:
    """DIR may not be the folder of the plan being grown: the grown plan.json, configs and manifest would replace the
    deployed plan's (the fabric's record: push, verify, audit and the drain records beside it read it) before a
    byte is pushed; refused (exit 2) before anything is read or written."""
    old = Path(old_plan_path)
    old = old / "plan.json" if old.is_dir() else old
    if (Path(out_dir) / "plan.json").resolve() == old.resolve():
        raise InputErrors(Problem("-o/--output", f"{out_dir} holds the plan being grown ({old}): the grown plan, its configs and "
                                                 "manifest would overwrite the deployed ones",
                                  "give a new folder (e.g. -o grown); the deployed plan stays the fabric's record until the "
                                  "expansion is pushed"), "cannot expand")


def _texts(folder: Path, suffix: str) -> dict[str, str]:
    return {p.name.removesuffix(suffix): p.read_text(encoding="utf-8") for p in sorted(folder.glob(f"*{suffix}"))}


def _body(text: str) -> str:
    """A rendered host file without its first line (the tool's header, which names the inventory's hash)."""
    return text.split("\n", 1)[1] if "\n" in text else ""


def prepare(old: dict, new: dict, out_dir: str | Path, catalog: str | None = None) -> Prepared:
    """Check the growth, compute and check the change sets, and write DIR (module docstring). Raises
    InputErrors (exit 2) listing every problem; DIR then holds nothing of this run."""
    check_same_design(old, new)
    growth = compare_growth(old, new)
    if growth.problems:
        raise _refuse(growth.problems, f"cannot expand: {len(growth.problems)} existing rows would move or go")
    platform = new["cluster"]["platform"]
    pm = platform_module(platform)
    if not hasattr(pm, "remediation"):
        raise InputErrors(Problem("cluster.platform", f"platform {platform!r} has no remediation: expand cannot compute its change sets",
                                  "expand supports the platforms push reaches"))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".expand-", dir=out))
    try:
        render_all(old, stage / "old")
        render_all(new, stage / "new")
        suffix = pm.CONFIG_SUFFIX
        old_cfg, new_cfg = _texts(stage / "old" / "configs", suffix), _texts(stage / "new" / "configs", suffix)
        by_name = {s["name"]: s for s in new["switches"]}
        scopes = {n: ManagedScope.for_switch(new, by_name[n], [s.text for s in pm.numbered_sections(t)], platform).owns for n, t in new_cfg.items()}
        sets, problems = change_sets(old_cfg, new_cfg, growth.new_interfaces, scopes, pm, growth.changed_switches)
        old_hosts, new_hosts = _texts(stage / "old" / "hosts", ""), _texts(stage / "new" / "hosts", "")
        problems += [f"{n}: its network config would change" for n in sorted(old_hosts) if _body(old_hosts[n]) != _body(new_hosts.get(n, ""))]
        if problems:
            raise _refuse([Problem("changes", p) for p in problems], f"cannot expand: {len(problems)} problems in the change sets")
        write_plan(new, out)
        # as `zcube render` would: an earlier render's files replaced or retired by its manifest, no other file touched
        tidy = publish(stage / "new", out)
        changes = out / CHANGES
        shutil.rmtree(changes, ignore_errors=True)
        (changes / "hosts").mkdir(parents=True)
        for name, cs in sets.items():
            (changes / f"{name}.diff").write_text("".join(ln + "\n" for ln in cs.lines), encoding="utf-8")
        new_servers = set(growth.new_servers)
        for name, text in new_hosts.items():
            if name.split(".", 1)[0] in new_servers:
                (changes / "hosts" / name).write_text(text, encoding="utf-8")
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    cabling = _new_cabling(new, growth, out / NEW_CABLES, catalog)
    report = _report(old, new, growth, sets, pm.SECTION_END, len(old["servers"]), cabling)
    (out / REPORT).write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return Prepared(report, growth, tidy)


def _new_cabling(new: dict, growth: Growth, folder: Path, catalog: str | None) -> dict:
    """Cut sheets, labels and CSVs of the new cables only (cabling/run.py on the plan cut to them)."""
    shutil.rmtree(folder, ignore_errors=True)
    keep = set(growth.new_cables)
    cables = [c for c in new["cables"] if c["id"] in keep]
    if not cables:
        return {"cables": 0, "files": []}
    hosts = sum(1 for c in cables if c["kind"] == "host")
    counts = {**new["counts"], "cables": len(cables), "host_cables": hosts, "fabric_cables": len(cables) - hosts}
    # no switch to buy (the bill of materials lists the new cables and optics only), the new servers only
    cut = {**new, "cables": cables, "counts": counts, "switches": [], "servers": [s for s in new["servers"] if s["name"] in set(growth.new_servers)]}
    result = write_cabling(cut, folder, catalog or new["inputs"].get("cabling_catalog"))
    return {"cables": len(cables), "files": result["files"], "labels": result["labels"]}


def _report(old: dict, new: dict, growth: Growth, sets: dict, section_end: str, old_servers: int, cabling: dict) -> dict:
    per_switch = [cs.as_dict(section_end) for cs in sets.values()]
    return {
        "old_plan": {"servers": len(old["servers"]), "cables": len(old["cables"]), "inventory_sha256": old["inputs"]["inventory_sha256"]},
        "new_plan": {"servers": len(new["servers"]), "cables": len(new["cables"]), "inventory_sha256": new["inputs"]["inventory_sha256"]},
        "capacity_servers": new["sizing"]["capacity_servers"],
        "added": {"servers": growth.new_servers, "cables": len(growth.new_cables),
                  "host_cables": sum(1 for c in new["cables"] if c["kind"] == "host" and c["id"] in set(growth.new_cables)),
                  "switch_ports": sum(len(v) for v in growth.new_interfaces.values())},
        "kept": {"cables": len(old["cables"]), "switches": len(old["switches"]), "servers": len(old["servers"]),
                 "moved_or_gone": 0},
        "predicted_switches": growth.changed_switches,
        "changed_switches": sorted(sets),
        "untouched_switches": sorted(s["name"] for s in new["switches"] if s["name"] not in sets),
        "lines_sent": sum(p["lines"] for p in per_switch),
        "existing_lines_negated": sum(p["existing_lines_negated"] for p in per_switch),
        "placeholders_replaced": sum(p["placeholders_replaced"] for p in per_switch),
        "switches": per_switch,
        "old_servers_configs_unchanged": old_servers,
        "new_cabling": cabling,
    }


def split_findings(findings: list[dict], new_cables: list[str], old_cables: list[str]) -> dict:
    """A verify's findings split into those on the new cables, those on the old ones and the rest (a
    switch-wide finding, a check that could not run: ``not_checked`` counts those, never as passed)."""
    new, old = set(new_cables), set(old_cables)
    on_new = {c for f in findings for c in f.get("cables") or () if c in new}
    on_old = {c for f in findings for c in f.get("cables") or () if c in old}
    other = [f for f in findings if not set(f.get("cables") or ()) & (new | old)]
    return {"new_cables": {"cables": len(new), "with_findings": len(on_new), "clean": len(new) - len(on_new)},
            "old_cables": {"cables": len(old), "with_findings": len(on_old), "clean": len(old) - len(on_old)},
            "other_findings": sum(1 for f in other if f.get("kind") != "not_checked"),
            "not_checked": sum(1 for f in other if f.get("kind") == "not_checked")}
