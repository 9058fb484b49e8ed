"""Push's runner: switches in a bounded thread pool, an optional canary batch first, a failure budget that stops
new switches from starting; then DIR/push-report.json."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from zcube_deploy.push.device import DeviceResult, push_device
from zcube_deploy.push.options import Credentials, PushOptions
from zcube_deploy.push.targets import Target

OK_STATUSES = ("unchanged", "changed", "would_change")


@dataclass
class Run:
    """The switches' results so far, and whether (and why) no new switch may start."""

    budget: int | None
    results: dict[str, DeviceResult] = field(default_factory=dict)
    failures: int = 0
    stopped: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, res: DeviceResult) -> None:
        with self.lock:
            self.results[res.name] = res
            if res.status not in OK_STATUSES and res.status != "skipped":
                self.failures += 1
                if self.budget is not None and self.failures >= self.budget and not self.stopped:
                    self.stopped = f"failure budget of {self.budget} reached"


def push_all(targets: list[Target], creds: Credentials, opts: PushOptions, out_dir: str | Path,
             on_result: Callable[[DeviceResult], None] | None = None) -> dict:
    """Push every target; returns the report (also written to DIR/push-report.json)."""
    out = Path(out_dir)
    run = Run(opts.max_failures)

    def job(t: Target) -> None:
        if run.stopped:
            res = DeviceResult(t.name, t.host, t.port, status="skipped", error=run.stopped, edited=t.edited)
        else:
            res = push_device(t, creds, opts, out)
        run.record(res)
        if on_result:
            on_result(res)

    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    canary, rest = targets[: opts.canary], targets[opts.canary:]
    with ThreadPoolExecutor(max(1, opts.concurrency)) as pool:
        if canary:
            list(pool.map(job, canary))
            bad = [t.name for t in canary if run.results[t.name].status not in OK_STATUSES]
            if bad and not run.stopped:
                run.stopped = f"canary failed on {', '.join(bad)}"
        list(pool.map(job, rest))
    report = _report(run, [run.results[t.name] for t in targets], opts, started)
    out.mkdir(parents=True, exist_ok=True)
    (out / "push-report.json").write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return report


def _report(run: Run, results: list[DeviceResult], opts: PushOptions, started: str) -> dict:
    summary: dict[str, int] = {}
    for r in results:
        summary[r.status] = summary.get(r.status, 0) + 1
    return {
        "dry_run": opts.dry_run,
        "started": started,
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "concurrency": opts.concurrency,
        "canary": opts.canary,
        "max_failures": opts.max_failures,
        "stopped": run.stopped or None,
        "summary": dict(sorted(summary.items())),
        "ok": all(r.status in OK_STATUSES for r in results),
        "devices": [r.as_dict() for r in sorted(results, key=lambda r: r.name)],
        # checks that could not run, by switch (never a silent pass: the CLI prints them)
        "not_checked": {r.name: r.not_checked for r in sorted(results, key=lambda r: r.name) if r.not_checked},
    }
