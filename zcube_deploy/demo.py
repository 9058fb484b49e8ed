"""`zcube demo`: the whole tool on a bundled inventory with no hardware.

plan, render, cabling, a lab of simulated switches with injected cabling faults, push (dry run, then
for real), verify, the technicians' fixes applied to the lab's wiring, verify again. :func:`run`
yields ``(event, data)`` pairs as it goes; the caller prints them (see ``zcube_deploy/cli/demo.py``).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from zcube_deploy import workflow
from zcube_deploy.access import Credentials, lab_credentials
from zcube_deploy.errors import ZCubeError
from zcube_deploy.lab.server import running_lab
from zcube_deploy.push import PushOptions, push_all, select_targets
from zcube_deploy.resources import data_dir
from zcube_deploy.verify.pipeline import run_verify

DEFAULT_INVENTORY = "glm-1k.yaml"


class DemoFailed(ZCubeError):
    """A step the demo cannot go on from (the push failed)."""


def run(out_dir: str | None = None, inventory: str | None = None, faults: str = "random:6", seed: int = 7,
        concurrency: int = 16) -> Iterator[tuple[str, dict]]:
    """Run the demo in ``out_dir`` (default: a new temporary folder). Yields, in order:

    ("step", n, text, elapsed), ("plan", summary, path), ("render", result, out_dir), ("cabling", result, out_dir),
    ("lab", endpoints, expected), ("dry_run", report, lines, diff_dir), ("push", report, report_path),
    ("verify", result) twice around ("fixes", operations, findings), and last ("done", ...) whose ``ok``
    says whether verify found every injected fault and nothing after the fixes.
    """
    t0 = time.perf_counter()
    d = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="zcube-demo-"))
    d.mkdir(parents=True, exist_ok=True)
    inv_path = Path(inventory) if inventory else data_dir("inventories") / DEFAULT_INVENTORY

    def step(n: int, text: str) -> tuple[str, dict]:
        return "step", {"n": n, "text": text, "elapsed": time.perf_counter() - t0}

    yield step(1, f"plan {inv_path.name}")
    plan = workflow.plan_inventory(inv_path)
    path, summary = workflow.write_plan(plan, d)
    yield "plan", {"summary": summary, "path": path}
    yield step(2, "render switch configs and netplan files")
    yield "render", {"result": workflow.render(plan, d), "out_dir": d}
    yield step(3, "cabling workbook, BOM, CSVs")
    yield "cabling", {"result": workflow.cabling(plan, d), "out_dir": d}
    yield step(4, f"start a lab of {len(plan['switches'])} simulated switches with injected cabling faults ({faults}, seed {seed})")
    creds = Credentials(*lab_credentials())
    lab_args = {"lab_path": str(d / "lab" / "lab.json"), "known_hosts": str(d / "lab" / "known_hosts")}
    with running_lab(plan, faults=faults, seed=seed, out_dir=d / "lab") as lab:
        yield "lab", {"endpoints": len(lab.endpoints), "expected": lab.expected}
        opts = PushOptions(concurrency=concurrency, known_hosts=str(d / "lab" / "known_hosts"))
        targets = select_targets(plan, d, None, lab.endpoints)
        yield step(5, "push --dry-run: diffs only")
        opts.dry_run = True
        rep = push_all(targets, creds, opts, d)
        yield "dry_run", {"report": rep, "lines": sum(x["lines_changed"] for x in rep["devices"]), "diff_dir": d / "push"}
        yield step(6, "push: apply, read back, confirm, write")
        opts.dry_run = False
        rep = push_all(targets, creds, opts, d)
        yield "push", {"report": rep, "report_path": d / "push-report.json"}
        if not rep["ok"]:
            raise DemoFailed("the push failed; see push-report.json")
        yield step(7, "verify: LLDP, interface state and routes against the plan")
        first = run_verify(plan, str(d / "verify-1"), creds=creds, **lab_args)
        yield "verify", {"result": first}
        yield step(8, "apply the fixes to the lab's wiring (what the technicians do)")
        ops = [op for f in first["findings"] for op in f["fix"]]
        lab.runner.call(lab.apply_operations, ops)
        lab.write_wiring(d / "lab")
        yield "fixes", {"operations": len(ops), "findings": len(first["findings"])}
        yield step(9, "verify again")
        second = run_verify(plan, str(d / "verify-2"), creds=creds, **lab_args)
        yield "verify", {"result": second}
    yield step(10, "done: the lab is stopped")
    found = {(f["kind"], tuple(f["cables"])) for f in first["findings"]}
    missed = [e for e in lab.expected if (e["kind"], tuple(e["cables"])) not in found]
    yield "done", {"out_dir": d, "switches": len(plan["switches"]), "servers": len(plan["servers"]), "injected": len(lab.expected),
                   "first": len(first["findings"]), "missed": len(missed), "second": len(second["findings"]),
                   "elapsed": time.perf_counter() - t0, "ok": not (missed or second["findings"] or second["errors"])}
