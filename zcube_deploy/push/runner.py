"""Push's runner: switches in a bounded thread pool, an optional canary batch first, a failure budget that stops
new switches from starting, Ctrl-C that stops them too; then DIR/push-report.json."""

from __future__ import annotations

import json
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from zcube_deploy.errors import ZCubeError
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


class PushInterrupted(ZCubeError):
    """Ctrl-C during a push: the report of what it did so far is written (``report``); the message says which
    switches were changed, which were in flight and how they ended, which were not started. Exit 130, as an
    interrupted command's."""

    exit_code = 130

    def __init__(self, report: dict, path: Path):
        self.report = report
        by = {d["name"]: d["status"] for d in report["devices"]}
        done = [n for n, st in by.items() if n not in report["in_flight"] and st not in ("skipped", IN_FLIGHT)]
        parts = [f"{len(done)} switch(es) done before it ({_listed(done, by)})",
                 f"{len(report['in_flight'])} in flight, each left to end on its own (changed, or rolled back to its "
                 f"backup on an error) before the report was written ({_listed(report['in_flight'], by)})",
                 f"{len(report['not_started'])} not started ({_listed(report['not_started'], {})})"]
        super().__init__("push interrupted (Ctrl-C): " + "; ".join(parts) + f"; report {path}")


def _listed(names: list[str], status: dict[str, str], shown: int = 12) -> str:
    if not names:
        return "none"
    text = ", ".join(f"{n} {status[n]}" if status else n for n in names[:shown])
    return text + (f", ... {len(names) - shown} more in the report" if len(names) > shown else "")


def push_all(targets: list[Target], creds: Credentials, opts: PushOptions, out_dir: str | Path,
             on_result: Callable[[DeviceResult], None] | None = None) -> dict:
    """Push every target; returns the report (also written to DIR/push-report.json).

    An earlier run's report is removed first: a report there is always this run's (``run_id``). Ctrl-C
    (KeyboardInterrupt in the main thread) starts no new switch, lets the switches in flight end their own
    push (changed, or rolled back on an error: never half sent), writes the report (``interrupted``,
    ``in_flight``, ``not_started``) and raises :class:`PushInterrupted`; a second Ctrl-C while they end
    writes it at once, those still running as ``in_flight`` (outcome not known)."""
    out = Path(out_dir)
    path = out / "push-report.json"
    path.unlink(missing_ok=True)
    run = Run(opts.max_failures)
    running: set[str] = set()

    def job(t: Target) -> None:
        with run.lock:  # (one step: a switch is in flight, or not started, when Ctrl-C comes)
            stopped = run.stopped
            if not stopped:
                running.add(t.name)
        if stopped:
            res = DeviceResult(t.name, t.host, t.port, status="skipped", error=stopped, edited=t.edited)
        else:
            res = push_device(t, creds, opts, out)
        run.record(res)
        if on_result:
            on_result(res)

    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    in_flight: list[str] | None = None
    try:
        with ThreadPoolExecutor(max(1, opts.concurrency)) as pool:
            try:
                _batches(pool, job, run, targets, opts.canary)
            except KeyboardInterrupt:
                in_flight = _interrupt(run, running)
    except KeyboardInterrupt:  # a second Ctrl-C while the switches in flight end
        in_flight = in_flight if in_flight is not None else _interrupt(run, running)
    results = [run.results.get(t.name) or _unfinished(t, t.name in running) for t in targets]
    report = _report(run, results, opts, started)
    report["run_id"] = uuid.uuid4().hex[:16]  # which run wrote it (with "started"): never an earlier run's
    report["interrupted"] = in_flight is not None
    report["in_flight"] = in_flight or []
    report["not_started"] = [r.name for r in results if r.status == "skipped" and in_flight is not None and r.error == INTERRUPTED]
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if in_flight is not None:
        raise PushInterrupted(report, path)
    return report


IN_FLIGHT = "in_flight"
INTERRUPTED = "interrupted (Ctrl-C) before it started"


def _batches(pool: ThreadPoolExecutor, job: Callable[[Target], None], run: Run, targets: list[Target], canary: int) -> None:
    """The canary batch (the first ``canary`` targets), then the rest unless it failed."""
    first, rest = targets[:canary], targets[canary:]
    if first:
        list(pool.map(job, first))
        bad = [t.name for t in first if run.results[t.name].status not in OK_STATUSES]
        if bad and not run.stopped:
            run.stopped = f"canary failed on {', '.join(bad)}"
    list(pool.map(job, rest))


def _unfinished(t: Target, started: bool) -> DeviceResult:
    """The entry of a switch with no result after Ctrl-C: never submitted (the canary's batch was interrupted), or
    still running at a second Ctrl-C."""
    if started:
        return DeviceResult(t.name, t.host, t.port, status=IN_FLIGHT, edited=t.edited,
                            error="still running when push was interrupted again: outcome not known; read its running config")
    return DeviceResult(t.name, t.host, t.port, status="skipped", error=INTERRUPTED, edited=t.edited)


def _interrupt(run: Run, running: set[str]) -> list[str]:
    """Stop starting switches (those queued end as skipped: INTERRUPTED); returns those in flight now."""
    with run.lock:
        run.stopped = INTERRUPTED
        return sorted(running - set(run.results))


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
