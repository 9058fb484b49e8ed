"""The audit pipeline: collect (or replay), verify's checks, config drift, audit.json and metrics.

One run: the switches' outputs are recorded into ``OUT/recordings`` (live, over SSH with a thread
pool or through Nornir) or read from a recording folder (offline); verify's checks run on them
(LLDP against the plan, link state, routes, BGP and BFD, management: the same findings, the same
stable IDs, and ``not_checked`` where a check could not run); then each switch's running config
is compared with its rendered config inside the managed scope (``audit/drift.py``). Every finding
goes to ``OUT/audit.json``; ``--metrics`` writes the counts in the Prometheus text format.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from zcube_deploy.access import given_secrets, lab_targets
from zcube_deploy.audit.cache import FOLDER as CACHE_FOLDER
from zcube_deploy.audit.cache import intended_reading, prune
from zcube_deploy.audit.drift import DRIFT_KINDS, config_drift, drift_id
from zcube_deploy.audit.metrics import check_metrics_path, write_metrics
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.platforms import platform_module, require_device_access
from zcube_deploy.push.scope import ManagedScope
from zcube_deploy.push.targets import render_manifest
from zcube_deploy.safety import make_private_dir, mask_credentials, redact_secrets, write_private
from zcube_deploy.vocabulary import FindingKind
from zcube_deploy.verify import PLAN_FIELDS as VERIFY_FIELDS
from zcube_deploy.verify import scope_of
from zcube_deploy.verify.classify import Context
from zcube_deploy.perf import bulk_allocation
from zcube_deploy.verify.collect import collect, observe_recording, read_recording, recorded_switches
from zcube_deploy.verify.observe import commands, observe, record_name
from zcube_deploy.verify.pipeline import verify_observed

RUNNERS = ("threads", "nornir")
# what audit reads of the plan: verify's sections and the port map (the managed scope owns the unused and reserved ports too)
PLAN_FIELDS = {**VERIFY_FIELDS, "port_map": None}


@dataclass
class AuditOptions:
    configs_dir: Path
    lab_path: str | None = None
    known_hosts: str | None = None
    replay_dir: str | None = None
    only: str | None = None
    concurrency: int = 32
    timeout: float = 30
    runner: str = "threads"
    drained: dict[str, set[str]] | None = None  # switch -> ports shut by zcube drain (their findings are expected)
    graceful: set[str] = field(default_factory=set)  # switches a drain has put in BGP graceful shutdown


@dataclass
class AuditResult:
    findings: list[dict]
    summary: dict
    unreachable: dict[str, str]
    scope: list[str] = field(default_factory=list)
    paths: dict[str, str] = field(default_factory=dict)
    duration_s: float = 0.0
    finished: str = ""  # when the run ended, UTC (for the terminal; audit.json holds no clock)

    @property
    def clean(self) -> bool:
        return not self.findings and not self.unreachable


def intended_configs(opts: AuditOptions, names: list[str], suffix: str) -> dict[str, str]:
    """The rendered configs of ``names`` (DIR/configs/<name><suffix>), every unreadable one at once (exit 2); audit
    compares the running configs with them, `zcube lab drift` draws its edits over them."""
    d = opts.configs_dir / "configs"
    if not d.is_dir():
        raise InputErrors(Problem(str(d), "no rendered configs here", "run `zcube render PLAN -o DIR` and give DIR with --configs"))
    out, problems = {}, []
    for n in names:
        p = d / f"{n}{suffix}"
        try:
            out[n] = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(str(p), f"cannot read the rendered config: {exc}"))
    if problems:
        raise InputErrors(problems, "cannot audit")
    return out


def _record_nornir(plan_path: str, opts: AuditOptions, names: list[str], rec: Path, commands: tuple[str, ...]) -> dict[str, str]:
    """Collect through Nornir (zcube_deploy.nornir.ZCubeInventory + nornir_napalm's napalm_cli); write rec/<switch>/."""
    # (imported here for start-up time: Nornir and its plugins load only when --runner nornir asks for them)
    from nornir import InitNornir
    from nornir_napalm.plugins.tasks import napalm_cli

    options = {"plan": plan_path, "lab": opts.lab_path, "known_hosts": opts.known_hosts}
    nr = InitNornir(runner={"plugin": "threaded", "options": {"num_workers": max(1, opts.concurrency)}}, logging={"enabled": False},
                    inventory={"plugin": "ZCubeInventory", "options": {k: v for k, v in options.items() if v}})
    wanted = set(names)
    result = nr.filter(filter_func=lambda h: h.name in wanted).run(task=napalm_cli, commands=list(commands))
    errors = {}
    make_private_dir(rec)
    for name, multi in result.items():
        if multi.failed:
            exc = multi[0].exception
            # (the inventory's credentials are the environment's or the lab's: given_secrets covers both)
            said = mask_credentials(f"{type(exc).__name__}: {exc}".splitlines()[0], *given_secrets()) if exc else "failed"
            errors[name] = redact_secrets(said)[:300]
            continue
        for cmd, text in multi[0].result.items():
            write_private(rec / name / record_name(cmd), text)
    return errors


def record_live(plan: dict, plan_path: str, opts: AuditOptions, names: list[str], rec: Path, creds) -> dict[str, str]:
    """Record every switch's outputs into ``rec`` (a fresh folder); returns {switch: why it could not be read}."""
    platform = plan["cluster"]["platform"]
    if opts.runner == "nornir":
        return _record_nornir(plan_path, opts, names, rec, commands(platform))
    targets, kh = lab_targets(plan, names, opts.lab_path, opts.known_hosts)
    # recorded only: verify's replay reads the recordings next, on its own processes
    _, errors = collect(targets, creds, kh, concurrency=opts.concurrency, timeout=opts.timeout, record=rec, platform=platform, read=False)
    return errors


# what a forked worker reads: (plan, expected configs, recordings folder, cache, switches not to compare, the file
# cache's folder, verify's context of the plan or None), set by the pool's initializer
_WORK: tuple = ()
NO_RUNNING_CONFIG = "no running config was read"


def _work_init(*work) -> None:
    global _WORK
    _WORK = work


def _drift_of(name: str) -> tuple[list[dict], str | None, tuple | None]:
    """One switch's config drift in a pool worker (:func:`drift_one` on what the initializer gave)."""
    return drift_one(*_WORK[:3], name, _WORK[3], _WORK[5])


def _inspect_of(name: str) -> tuple:
    """One switch's recording in a pool worker (:func:`inspect_one` on what the initializer gave)."""
    plan, intended, rec, cache, skip, store, planned = _WORK
    return inspect_one(plan, intended, rec, name, cache, name not in skip, store, planned)


def drift_one(plan: dict, intended: dict[str, str], rec: Path, name: str, cache: dict | None,
              store: Path | None = None) -> tuple[list[dict], str | None, tuple | None]:
    """(findings, why the running config could not be read or None, the (key, scope, intended side) read anew
    for the cache or None) of switch ``name``. ``cache``: (switch, sha256 of its expected config) -> (its
    managed scope, the platform's reading of that config), read once and kept across runs; ``store``: the
    file cache's folder (audit/cache.py) of what a config's text alone decides, or None."""
    f = rec / name / record_name(platform_module(plan["cluster"]["platform"]).RUNNING_CONFIG_COMMAND)
    if not f.is_file():
        return [], NO_RUNNING_CONFIG, None
    try:
        raw = f.read_bytes()
    except OSError as exc:
        return [], f"{f}: {exc}", None
    return drift_of_text(plan, intended, name, raw, f, cache, store)


def drift_of_text(plan: dict, intended: dict[str, str], name: str, raw: bytes, f: Path,
                  cache: dict | None, store: Path | None = None) -> tuple[list[dict], str | None, tuple | None]:
    """:func:`drift_one` on the running config's bytes ``raw`` (read from ``f``)."""
    platform = plan["cluster"]["platform"]
    pm = platform_module(platform)
    try:
        running = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [], f"{f}: {exc}", None
    # (the key of the runs' cache: not hashed for a single run, which keeps nothing)
    key = (name, hashlib.sha256(intended[name].encode()).hexdigest()) if cache is not None else None
    hit = cache.get(key) if cache is not None else None
    new = None
    if hit is None:
        sw = next(s for s in plan["switches"] if s["name"] == name)
        reading = intended_reading(store, platform, intended[name])
        scope = ManagedScope.for_switch(plan, sw, reading["top"], platform)
        side = pm.intended_side(intended[name], scope.owns, reading)
        new = (key, scope, side) if cache is not None else None
    else:
        scope, side = hit
    found = config_drift(name, running, side, scope.owns, pm.drift_rows, lambda t: redact_secrets(t, platform))
    return found, None, new


def inspect_one(plan: dict, intended: dict[str, str], rec: Path, name: str, cache: dict | None,
                compare: bool, store: Path | None = None, planned: Context | None = None) -> tuple:
    """One switch's recording read once for both of audit's parts: (its observation or None, the problems of its
    files or of its reading, :func:`drift_one`'s triple or None when not ``compare`` or a file could not be
    read, what verify's checks read of it alone (``planned``'s
    :meth:`~zcube_deploy.verify.classify.Context.per_switch`) or None). A switch without a folder: (None, [], ...)."""
    platform = plan["cluster"]["platform"]
    sd = rec / name
    if not sd.is_dir():
        return None, [], (([], NO_RUNNING_CONFIG, None) if compare else None), None
    raw, absent, problems = read_recording(sd, platform)
    if problems:  # (strict, the run stops on them: exit 2, as verify's replay does)
        return None, problems, (([], str(problems[0]), None) if compare else None), None
    obs, problems = observe_recording(sd, raw, absent, platform)
    unmatched = planned.per_switch(name, obs) if planned is not None and obs is not None else None
    if not compare:
        return obs, problems, None, unmatched
    cmd = platform_module(platform).RUNNING_CONFIG_COMMAND
    if cmd not in raw:
        return obs, problems, ([], NO_RUNNING_CONFIG, None), unmatched
    return obs, problems, drift_of_text(plan, intended, name, raw[cmd], sd / record_name(cmd), cache, store), unmatched


def _pool(jobs: int | None, n: int, work: tuple):
    """A fork pool of ``jobs`` processes (default: up to 2, the cores the tool is sized for) that inherit ``work``
    (initargs are not pickled with fork), or None for one process (32 switches or fewer, no fork)."""
    jobs = jobs or min(2, os.cpu_count() or 1)
    if jobs > 1 and n > 32 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork").Pool(jobs, _work_init, work)
    return None


def _gather(names: list[str], results, cache: dict | None) -> tuple[list[dict], list[tuple[str, str]]]:
    """drift_one's triples of ``names`` -> (findings, (switch, why) without a readable running config: the
    switches without one first)."""
    findings, problems = [], []
    for n, (found, why, new) in zip(names, results):
        findings.extend(found)
        if why is not None:
            problems.append((n, why))
        if new is not None and cache is not None:
            cache[new[0]] = new[1:]
    missing = [(n, why) for n, why in problems if why == NO_RUNNING_CONFIG]
    return findings, missing + [p for p in problems if p not in missing]


def drift_findings(plan: dict, names: list[str], intended: dict[str, str], rec: Path, cache: dict | None = None,
                   jobs: int | None = None, store: Path | None = None) -> tuple[list[dict], list[tuple[str, str]]]:
    """Config drift of every switch with a recorded running config; (switch, why) for those without a readable one.

    Over more than 32 switches the comparison runs on ``jobs`` forked processes (:func:`_pool`), each reading
    its switches' recordings; the findings are the same, in the same order, as on one. ``cache`` (see
    :func:`drift_one`) is read and filled; ``store``: the file cache's folder, or None."""
    pool = _pool(jobs, len(names), (plan, intended, rec, cache, set(), store))
    if pool is not None:
        with pool:
            results = pool.map(_drift_of, names, chunksize=8)
    else:
        results = [drift_one(plan, intended, rec, n, cache, store) for n in names]
    return _gather(names, results, cache)


def inspect_recordings(plan: dict, names: list[str], intended: dict[str, str], rec: Path, skip: set[str],
                       cache: dict | None = None, jobs: int | None = None, strict: bool = True, store: Path | None = None,
                       planned: Context | None = None):
    """Every switch's recording in ``rec`` read once, for verify's checks and for config drift together:
    (observations {switch: Observation}, {switch: why not observed}, drift findings, (switch, why) without a
    readable running config): what ``replay`` and :func:`drift_findings` give, in one pass over the switches on
    the pool of :func:`_pool`. ``skip``: switches not to compare (unreachable in this run). A recording that
    cannot be read (a folder where a file should be, a line the platform's reader refuses) is bad input; not
    ``strict`` (a live run's own recordings: what a switch answered), such a switch is not observed, its
    reason in the second dict, and its running config still compared when it could be read. ``store``: the
    file cache's folder (audit/cache.py), or None. ``planned``: verify's context of the plan and no
    observations (classify.Context), or None: what verify's checks read of each observed switch alone goes into
    its ``unmatched`` and ``route_gaps`` (its unmatched planned ports, its static routes against the plan's: the
    checks then read the other ports no more, a quarter of a million at 512 switches, nor the routes)."""
    present, problems, errors = recorded_switches(rec, names)
    platform = plan["cluster"]["platform"]
    _warm(platform)
    pool = _pool(jobs, len(names), (plan, intended, rec, cache, skip, store, planned))
    if pool is not None:
        with pool:
            results = pool.map(_inspect_of, names, chunksize=8)
    else:
        results = [inspect_one(plan, intended, rec, n, cache, n not in skip, store, planned) for n in names]
    if not strict:
        errors.update({n: f"its output could not be read: {r[1][0]}" for n, r in zip(names, results) if r[1]})
    problems += [p for r in results for p in r[1]] if strict else []
    if problems:
        raise InputErrors(problems, "unreadable recordings")
    observed = {n: r[0] for n, r in zip(names, results) if r[0] is not None}
    for n, r in zip(names, results) if planned is not None else ():
        if r[3] is not None:
            planned.unmatched[n] = r[3][0]
            if r[3][1] is not None:
                planned.route_gaps[n] = r[3][1]
    compared = [(n, r[2]) for n, r in zip(names, results) if r[2] is not None]
    drift, no_config = _gather([n for n, _ in compared], [d for _, d in compared], cache)
    return observed, {n: errors[n] for n in names if n in errors}, drift, no_config


def _warm(platform: str) -> None:
    """Load the platform's readers once in this process, before a fork pool copies it (each worker would load
    them anew: TextFSM's templates, the remediation's libraries)."""
    pm = platform_module(platform)
    observe({}, platform, {})
    pm.drift_rows("", "", None)


def not_checked_finding(device: str, check: str, why: str) -> dict:
    return {"id": drift_id("not_checked", device, check, why), "kind": "not_checked", "device": device, "check": check,
            "what": f"{check} not checked on {device}: {why}", "fix": []}


def audit_once(plan: dict, plan_path: str, out_dir: Path, opts: AuditOptions, creds=None, cache: dict | None = None) -> AuditResult:
    """One audit of ``plan``'s switches: writes OUT/audit.json (and OUT/recordings when live).

    ``cache``: the rendered configs as read for the comparison (:func:`drift_one`), kept by the caller
    across runs of the same plan (``run_audits`` with ``every``); a config that changed is read anew."""
    started = time.monotonic()
    if opts.runner not in RUNNERS:
        raise InputErrors(Problem("--runner", f"unknown runner {opts.runner!r}", f"one of {', '.join(RUNNERS)}"))
    names = scope_of(plan, opts.only)
    platform = plan["cluster"]["platform"]
    intended = intended_configs(opts, names, platform_module(platform).CONFIG_SUFFIX)
    _, problems = render_manifest(plan, opts.configs_dir)  # push's check: configs rendered from another plan are refused
    if problems:
        raise InputErrors(problems, "cannot audit")
    if opts.drained or opts.graceful:  # a drained switch's expected config: its drain's lines are not drift
        pm = platform_module(platform)
        intended = {n: pm.drained_config(t, sorted((opts.drained or {}).get(n, ())), n in opts.graceful) for n, t in intended.items()}
    if not opts.replay_dir:  # a lab of another plan (either runner): refused before OUT is made
        lab_targets(plan, names, opts.lab_path, opts.known_hosts)
    out_dir.mkdir(parents=True, exist_ok=True)
    unreachable: dict[str, str] = {}
    if opts.replay_dir:
        rec = Path(opts.replay_dir)
    else:
        rec = out_dir / "recordings"
        fresh = out_dir / "recordings.new"
        shutil.rmtree(fresh, ignore_errors=True)
        try:
            unreachable = record_live(plan, plan_path, opts, names, fresh, creds)
        except BaseException:  # Ctrl-C (--every) or an error mid-recording: no half recording of running configs stays
            shutil.rmtree(fresh, ignore_errors=True)
            raise
        fresh.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(rec, ignore_errors=True)
        fresh.rename(rec)  # never a mix of this run's and an earlier run's outputs
    require_device_access(platform)
    with bulk_allocation():  # parsing and comparing make millions of small objects and no cycles
        planned = Context(plan, {})  # (built before the pool forks: its workers read it)
        observed, errors, drift, no_config = inspect_recordings(plan, names, intended, rec, set(unreachable), cache,
                                                                strict=bool(opts.replay_dir), store=opts.configs_dir / CACHE_FOLDER,
                                                                planned=planned)
        v = verify_observed(plan, observed, errors, None, {}, opts.drained, planned)
    if opts.only is None:  # the whole fabric compared: the cache's readings of other (older) configs go
        prune(opts.configs_dir / CACHE_FOLDER, platform, intended.values())
    # verify's not_checked findings (one per switch and reason) are not copied: audit gives its own below, one per
    # switch and check, from the same summary (both counted, a skipped check was two findings)
    findings = [dict(f, source="verify") for f in v["findings"] if f["kind"] != FindingKind.NOT_CHECKED]
    for check, reasons in sorted(v["summary"].get("not_checked", {}).items()):
        for r in reasons:
            for n in r["names"]:
                findings.append(not_checked_finding(n, check, r["reason"]))
    findings.extend(dict(f, source="config") for f in drift)
    for n, why in sorted(errors.items()):  # a switch without a (readable) recording: verify's checks did not run there
        if n not in unreachable:
            findings.append(not_checked_finding(n, "verify", why))
    for n, why in no_config:
        findings.append(not_checked_finding(n, "config_drift", why))
    for n, why in sorted(unreachable.items()):
        findings.append(not_checked_finding(n, "all", f"unreachable: {why}"))
    findings.sort(key=lambda f: (f.get("device") or _device_of(f), f["kind"], f["id"]))
    summary = summarize(findings, names, unreachable)
    result = AuditResult(findings, summary, unreachable, names, duration_s=round(time.monotonic() - started, 3))
    doc = {"cluster": plan["cluster"]["name"], "mode": "offline" if opts.replay_dir else "live", "runner": opts.runner,
           "scope": names, "summary": summary, "unreachable": unreachable, "findings": findings}
    path = out_dir / "audit.json"
    tmp = out_dir / "audit.json.tmp"
    write_private(tmp, json.dumps(doc, indent=1, sort_keys=True) + "\n")  # (secrets are masked; owner-only all the same)
    tmp.replace(path)
    result.paths["audit"] = str(path)
    result.finished = time.strftime("%H:%M:%S", time.gmtime())
    return result


def _device_of(f: dict) -> str:
    ends = f.get("ends") or [{}]
    return ends[0].get("device", "")


def summarize(findings: list[dict], names: list[str], unreachable: dict[str, str]) -> dict:
    by_kind: dict[str, int] = {}
    for f in findings:
        by_kind[f["kind"]] = by_kind.get(f["kind"], 0) + 1
    return {"switches": len(names), "switches_unreachable": len(unreachable), "findings": len(findings),
            "drift": sum(by_kind.get(k, 0) for k in DRIFT_KINDS), "not_checked": by_kind.get("not_checked", 0),
            "by_kind": dict(sorted(by_kind.items())), "clean": not findings}


def check_options(every: float | None, count: int | None, replay_dir: str | None, runner: str) -> None:
    """The option combinations that make no sense, as input errors (exit 2)."""
    problems = []
    if count and not every:
        problems.append(Problem("--count", "--count goes with --every", "add --every SECONDS, or drop --count"))
    if replay_dir and runner != "threads":
        problems.append(Problem("--runner", "--runner applies to a live audit, not to --from"))
    if runner not in RUNNERS:
        problems.append(Problem("--runner", f"unknown runner {runner!r}", f"one of {', '.join(RUNNERS)}"))
    if problems:
        raise InputErrors(problems, "bad options")


def configs_folder(plan_path: str, configs_dir: str | None) -> tuple[str, Path]:
    """(the plan.json path, the render output folder: ``configs_dir`` or the plan's folder)."""
    src = Path(plan_path)
    plan_file = src / "plan.json" if src.is_dir() else src
    return str(plan_file), Path(configs_dir) if configs_dir else plan_file.parent


def run_audits(plan: dict, plan_file: str, out_dir: Path, opts: AuditOptions, creds=None, metrics_path: str | None = None,
               every: float | None = None, count: int | None = None,
               report: Callable[[AuditResult, int | None], None] | None = None) -> AuditResult:
    """One audit, or (``every``) one every ``every`` seconds until ``count`` runs, SIGTERM or Ctrl-C.

    ``report(result, cycle)`` is called after each run (cycle None for a single run); the last result
    is returned. A run that fails on bad input raises as usual; an interrupt between runs ends the loop.
    """
    if metrics_path:
        check_metrics_path(metrics_path, out_dir)
    stop = threading.Event()
    cache: dict | None = {} if every else None  # the rendered configs, read once for all the runs
    if every and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
    cycle = 0
    while True:
        cycle += 1
        result = audit_once(plan, plan_file, out_dir, opts, creds, cache)
        if metrics_path:
            # every kind verify can find too, 0 included: a series that vanishes at 0 breaks an alert's rate()
            write_metrics(metrics_path, result, plan["cluster"]["name"], known_kinds=tuple(k.value for k in FindingKind))
        if report:
            report(result, cycle if every else None)
        if not every or (count and cycle >= count):
            return result
        try:
            if stop.wait(every):
                return result
        except KeyboardInterrupt:
            return result
