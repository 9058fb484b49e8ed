"""Safe batch push: back up, diff, (dry-run stops here), apply, read back, confirm, then write.

The device is reached through its platform's NAPALM driver (``napalm.get_network_driver``, see
platforms/<name>) and the NAPALM contract only: ``get_config`` is the backup, loading the
candidate runs the driver's pre-flight, ``compare_config`` is the diff, ``commit_config`` applies,
reads back and writes, ``rollback`` returns to the backup (optional_args ``rollback_to`` when a new
session must undo an earlier one's commit; ``managed_scope`` limits all of it to what push owns).

Any error after the first line was sent rolls the device back to its backup (reconnecting if the
session dropped) and leaves its startup config untouched; except when the error is the save itself
(``StartupNotConfirmed``, platforms/contract.py): push then saves once more on a new session, when the
running config still holds exactly the change (status ``changed``, ``save_retried``); if that save
is not confirmed either, it rolls back, the startup config may hold the new config, and the switch
ends ``startup_uncertain`` with what to check. Devices run in a bounded thread pool;
an optional canary batch goes first; a failure budget stops new devices from starting.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from napalm.base.exceptions import MergeConfigException, ReplaceConfigException

from zcube_deploy.access import Credentials, load_lab
from zcube_deploy.plan.model import projection
from zcube_deploy.platforms import DEFAULT_PLATFORM, napalm_driver, platform_module
from zcube_deploy.push.guard import after_change, management_problems
from zcube_deploy.platforms.contract import StartupNotConfirmed
from zcube_deploy.push.targets import Target, select_targets

__all__ = ["OK_STATUSES", "PLAN_FIELDS", "Credentials", "PushOptions", "Target", "load_lab", "push_all", "push_device", "select_targets"]
from zcube_deploy.safety import make_private_dir, redact_secrets, write_private

OK_STATUSES = ("unchanged", "changed", "would_change")
# the plan sections push reads (a projection for read_plan)
PLAN_FIELDS = projection(switches=None, port_map=None, addressing=None, models=None, cluster=None, inputs=None, tool_version=None,
                         settings=None, sizing=None, routing=None)


@dataclass
class PushOptions:
    dry_run: bool = False
    concurrency: int = 8
    canary: int = 0
    max_failures: int | None = None
    known_hosts: str | None = None
    trust_on_first_use: bool = False
    timeout: float = 30
    read_timeout: float = 120
    rollback_attempts: int = 3


@dataclass
class PushRun:
    results: dict[str, dict] = field(default_factory=dict)
    failures: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")


def push_device(t: Target, creds: Credentials, opts: PushOptions, out: Path) -> dict:
    """Push one switch; every outcome is a result (a device's failure never stops the others)."""
    res: dict = {"name": t.name, "host": t.host, "port": t.port, "status": "failed", "lines_changed": 0, "error": None}
    if t.edited:
        res["edited"] = True  # the file differs from render's manifest (pushed with allow_edited)
    started = time.monotonic()
    try:
        return _push_device(t, creds, opts, out, res)
    except Exception as exc:  # e.g. a config the parser cannot read: nothing was sent before the diff
        res.update(status="failed", error=f"{_clean(exc, creds, t.platform)} (before any change)" if res["status"] != "changed" else res["error"])
        res["duration_s"] = round(time.monotonic() - started, 3)
        return res


def _push_device(t: Target, creds: Credentials, opts: PushOptions, out: Path, res: dict) -> dict:
    started = time.monotonic()

    driver_class = napalm_driver(t.platform)

    def driver(**extra):
        return driver_class(t.host, creds.username, creds.password, timeout=int(opts.timeout), optional_args={
            "port": t.port, "secret": creds.secret, "known_hosts": opts.known_hosts,
            "trust_on_first_use": opts.trust_on_first_use, "read_timeout": opts.read_timeout, "managed_scope": t.scope, **extra})

    drv = driver()
    try:
        try:
            drv.open()
        except Exception as exc:
            res.update(status="unreachable", error=_clean(exc, creds, t.platform))
            return res
        try:
            running = drv.get_config("running")["running"]
        except Exception as exc:
            res.update(status="unreachable", error=f"could not read the running config: {_clean(exc, creds, t.platform)}")
            return res
        # the backup holds the device's whole config, secrets included: owner-only
        make_private_dir(out / "backups")
        backup = out / "backups" / t.name / f"{_stamp()}.cfg"
        write_private(backup, running)
        res["backup"] = str(backup)
        try:
            drv.load_replace_candidate(config=t.intended)  # the driver's pre-flight: every interface named exists
        except (ReplaceConfigException, MergeConfigException) as exc:
            res.update(status="failed", error=f"{_clean(exc, creds, t.platform, with_type=False)}; nothing was changed")
            return res
        diff_text = drv.compare_config()
        lines = diff_text.splitlines() if diff_text else []
        res["lines_changed"] = sum(1 for ln in lines if ln != "exit")
        ddir = out / "push"
        ddir.mkdir(parents=True, exist_ok=True)
        diff = ddir / f"{t.name}.diff"
        diff.write_text(redact_secrets("".join(ln + "\n" for ln in lines), t.platform), encoding="utf-8")
        res["diff"] = str(diff)
        refused = _management_guard(t, running, lines)
        if refused:
            res.update(status="refused", error=redact_secrets("refused: " + "; ".join(refused) + "; nothing was changed", t.platform))
            return res
        if opts.dry_run:
            res["status"] = "would_change" if lines else "unchanged"
            return res
        if not lines:
            res["status"] = "unchanged"
            return res
        unsaved: StartupNotConfirmed | None = None
        try:
            drv.commit_config()  # apply, read back (nothing may still differ), then write
            res["status"] = "changed"
            return res
        except StartupNotConfirmed as exc:  # applied and confirmed; the write may have happened, or partly
            unsaved = exc
            res["error"] = _clean(exc, creds, t.platform, with_type=False)
        except Exception as exc:
            res["error"] = _clean(exc, creds, t.platform)
        if unsaved is not None:
            # the running config is as intended: save it once more, on a new session, before giving the change up
            _close_quietly(drv)
            drv = driver()
            if _save_again(drv, t, res, creds):
                return res
            _close_quietly(drv)
            drv = driver(rollback_to=running)  # this session's commit took the new config as its backup: never roll back to it
            try:
                drv.open()
            except Exception:
                pass  # the loop below reconnects
        # roll back to the backup; reconnect when the session is gone; never write
        for attempt in range(1, opts.rollback_attempts + 1):
            try:
                if not drv.is_alive()["is_alive"]:
                    drv.close()
                    drv = driver(rollback_to=running)
                    drv.open()
                drv.rollback()
                res["status"] = "rolled_back"
                res["rollback_attempts"] = attempt
                if unsaved is not None:
                    _startup_uncertain(res, unsaved, t, rolled_back=True)
                return res
            except Exception as exc:
                res["rollback_error"] = _clean(exc, creds, t.platform)
                try:
                    drv.close()
                except Exception:
                    pass
                drv = driver(rollback_to=running)
                try:
                    drv.open()
                except Exception:
                    pass
        res["status"] = "failed"
        if unsaved is not None:
            _startup_uncertain(res, unsaved, t, rolled_back=False)
        return res
    finally:
        drv.close()
        res["duration_s"] = round(time.monotonic() - started, 3)


def _close_quietly(drv) -> None:
    try:
        drv.close()
    except Exception:
        pass


def _save_again(drv, t: Target, res: dict, creds: Credentials) -> bool:
    """After a commit whose save was not confirmed: on a new session, when nothing differs from the intended config
    (the running config still holds exactly the change), commit again, which applies nothing and saves. True when
    the device confirmed the save (status ``changed``, ``save_retried``); False, with the reason, otherwise."""
    try:
        drv.open()
        drv.load_replace_candidate(config=t.intended)
        left = drv.compare_config()
        if left:
            res["save_retry_error"] = f"not saved again: {len(left.splitlines())} lines differ from the intended config on a new session"
            return False
        drv.commit_config()
    except Exception as exc:
        res["save_retry_error"] = _clean(exc, creds, t.platform)
        return False
    res.update(status="changed", save_retried=True,
               note=f"the first save was not confirmed ({res.pop('error', None) or 'no answer'}); a second one on a new session was")
    res["error"] = None
    return True


def _startup_uncertain(res: dict, exc: StartupNotConfirmed, t: Target, rolled_back: bool) -> None:
    """The commit's save was not confirmed: the startup config may hold the new config, the old one, or part of
    either. Status ``startup_uncertain`` (a failure) and what a technician does about it."""
    check = exc.check or "compare the switch's startup config with its running config"
    again = f"re-run `zcube push PLAN --configs DIR --only {t.name}` (it applies the change again and saves it)"
    if rolled_back:
        action = (f"the running config is back to the backup, but the startup config may already hold the new config "
                  f"(a reload would bring it up): {check}; if they differ, {again}, or save the restored running config; "
                  f"do not reload the switch before")
    else:
        action = (f"the rollback failed too: the running config holds the new config or part of it, and the startup config "
                  f"is unknown: {check}, compare the running config with the backup {res.get('backup', '')}; then {again}")
    res.update(status="startup_uncertain", rolled_back=rolled_back, action=action)


def _management_guard(t: Target, running: str, lines: list[str]) -> list[str]:
    """Why the change would cut this switch's management path ([] when it would not, or nothing changes)."""
    if not lines or t.scope is None:
        return []
    plat = platform_module(t.platform)
    after = after_change(running, t.intended, t.scope.owns, plat.parse_config)
    return management_problems(plat.l3_facts(running), plat.l3_facts(after), [a for a in (t.mgmt_address, t.host) if a])


def _clean(exc: BaseException, creds: Credentials, platform: str = DEFAULT_PLATFORM, with_type: bool = True) -> str:
    text = (f"{type(exc).__name__}: {exc}" if with_type else str(exc)).strip().splitlines()[0][:300]
    for s in (creds.password, creds.secret):
        if s:
            text = text.replace(s, "***")
    return redact_secrets(text, platform)


def push_all(targets: list[Target], creds: Credentials, opts: PushOptions, out_dir: str | Path,
             on_result: Callable[[dict], None] | None = None) -> dict:
    out = Path(out_dir)
    run = PushRun()
    budget = opts.max_failures
    stop = threading.Event()

    def job(t: Target) -> None:
        if stop.is_set():
            res = {"name": t.name, "status": "skipped", "lines_changed": 0, "duration_s": 0.0,
                   "error": stop_reason[0] or "stopped"}
        else:
            res = push_device(t, creds, opts, out)
        with run.lock:
            run.results[t.name] = res
            if res["status"] not in OK_STATUSES and res["status"] != "skipped":
                run.failures += 1
                if budget is not None and run.failures >= budget:
                    stop_reason[0] = f"failure budget of {budget} reached"
                    stop.set()
        if on_result:
            on_result(res)

    stop_reason = [""]
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    canary, rest = targets[: opts.canary], targets[opts.canary:]
    with ThreadPoolExecutor(max(1, opts.concurrency)) as pool:
        if canary:
            list(pool.map(job, canary))
            bad = [n for n in (t.name for t in canary) if run.results[n]["status"] not in OK_STATUSES]
            if bad:
                stop_reason[0] = f"canary failed on {', '.join(bad)}"
                stop.set()
        list(pool.map(job, rest))
    devices = [run.results[t.name] for t in targets]
    summary: dict[str, int] = {}
    for d in devices:
        summary[d["status"]] = summary.get(d["status"], 0) + 1
    report = {
        "dry_run": opts.dry_run,
        "started": started,
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "concurrency": opts.concurrency,
        "canary": opts.canary,
        "max_failures": opts.max_failures,
        "stopped": stop_reason[0] or None,
        "summary": dict(sorted(summary.items())),
        "ok": all(d["status"] in OK_STATUSES for d in devices),
        "devices": sorted(devices, key=lambda d: d["name"]),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "push-report.json").write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return report
