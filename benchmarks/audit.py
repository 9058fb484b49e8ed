"""Benchmark `zcube audit` (``audit_once``) of a pushed lab: issue 26's target, 512 switches audited in
<= 60 s live and <= 10 s offline (2-core machine).

Per size (zcube-16k: 256 switches, zcube-64k: 512): plan + render, `zcube lab up` of every switch in its
own process, `zcube push` at concurrency 32 (none of it timed); then ``audit_once`` live (threads runner,
concurrency 32) and offline (``replay_dir`` = the first live run's recordings) ``--runs`` times each,
interleaved with benchmarks/verify.py's fixed reference job (the machine is shared: the ratio to the
reference tells more than the seconds). Every run must give 0 findings (a clean pushed lab: no false
positives at that size; asserted). A breakdown of one offline run follows: the one pass over the recordings
(each switch's outputs read, observed and compared with its rendered config, on 2 processes) and verify's checks;
collection is about live minus offline.

Run: python benchmarks/audit.py [--only zcube-16k|zcube-64k] [--runs N] [--plan DIR] [--offline REC] [--configured]   (prints a
table and a JSON line; --plan: a folder holding the case's plan.json and configs/ already, with --only; --offline: the offline
runs only, from REC, which is first recorded in-process from the lab's simulated switches configured with the rendered configs
when it does not exist: what `zcube lab up` would serve after a push, without SSH; --configured: the lab's switches start
configured with the rendered configs (benchmarks/_configured_lab.py) instead of `zcube lab up` and `zcube push`: the same
state, the untimed push of 512 switches skipped)
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _measure import ROOT, min_median, reference_job, reference_ratio, selected, size_args, wait_for_lab, zcube

from zcube_deploy.access import credentials
from zcube_deploy.audit.run import CACHE_FOLDER, AuditOptions, audit_once, inspect_recordings
from zcube_deploy.perf import bulk_allocation
from zcube_deploy.verify import scope_of
from zcube_deploy.verify.classify import Context
from zcube_deploy.verify.pipeline import verify_observed

CASES = [("zcube-16k", "zcube-16k.yaml", 256), ("zcube-64k", "zcube-64k.yaml", 512)]


def run(cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise SystemExit(f"zcube {cmd[3]} failed (exit {r.returncode}): {r.stderr[-1500:]}")


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_s() -> float:
    """CPU seconds this process and its waited-for children (the audit's fork pools) have used so far."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed_audit(plan: dict, d: Path, out: Path, opts: AuditOptions, creds) -> float:
    t = time.perf_counter()
    result = audit_once(plan, str(d / "plan.json"), out, opts, creds)
    wall = time.perf_counter() - t
    assert result.clean, f"{out}: {result.summary['findings']} findings on a clean pushed lab, e.g. {result.findings[:3]}"
    return wall


def breakdown(plan: dict, rec: Path, d: Path) -> dict:
    """One offline run's parts on the recordings (seconds): every switch's recording read, observed and compared
    with its rendered config (one pass on 2 processes; audit's file cache as the runs before left it), then verify's
    checks over the observations (one process)."""
    from zcube_deploy.audit.run import intended_configs
    from zcube_deploy.platforms import platform_module

    names = scope_of(plan, None)
    intended = intended_configs(AuditOptions(d), names, platform_module(plan["cluster"]["platform"]).CONFIG_SUFFIX)
    with bulk_allocation():  # (as audit_once runs them)
        t = time.perf_counter()
        planned = Context(plan, {})
        observed, errors, drift, missing = inspect_recordings(plan, names, intended, rec, set(), store=d / CACHE_FOLDER,
                                                              planned=planned)
        t_pass = time.perf_counter() - t
        assert not drift and not missing and not errors, (drift[:3], missing[:3], errors)
        t = time.perf_counter()
        verify_observed(plan, observed, errors, None, {}, None, planned)
    return {"recordings_pass_s": round(t_pass, 2), "verify_checks_s": round(time.perf_counter() - t, 2)}


def bench(case: str, inventory: str, switches: int, runs: int, tmp: Path, plan_dir: str | None = None,
          configured: bool = False) -> dict:
    d = tmp / case
    if plan_dir:  # rendered already: the lab, the push and the audits' outputs go to the temporary folder
        d.mkdir()
        for entry in ("plan.json", "configs", "manifest.json"):  # (push checks the configs against render's manifest)
            (d / entry).symlink_to(Path(plan_dir).resolve() / entry)
    else:
        run(zcube() + ["plan", str(ROOT / "inventories" / inventory), "-o", str(d)])
        run(zcube() + ["render", str(d / "plan.json"), "-o", str(d)])
    plan = json.loads((d / "plan.json").read_text())
    assert len(plan["switches"]) == switches, len(plan["switches"])
    serve = [sys.executable, str(ROOT / "benchmarks" / "_configured_lab.py"), str(d), str(d / "lab")] if configured \
        else zcube() + ["lab", "up", str(d / "plan.json"), "-o", str(d / "lab")]
    lab = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    live, offline, refs, cpu = [], [], [], []
    push_s = None
    try:
        wait_for_lab(lab, d / "lab")
        lab_json = str(d / "lab" / "lab.json")
        if not configured:
            t = time.perf_counter()
            run(zcube() + ["push", str(d / "plan.json"), "--configs", str(d), "--lab", lab_json, "--concurrency", "32"])
            push_s = round(time.perf_counter() - t, 1)
        creds = credentials(True)
        opts = AuditOptions(d, lab_path=lab_json, concurrency=32, runner="threads")
        for i in range(runs):
            refs.append(reference_job())
            lab_cpu, own_cpu = process_cpu(lab.pid), own_cpu_s()
            live.append(timed_audit(plan, d, d / f"live-{i}", opts, creds))
            cpu.append({"lab_s": round(process_cpu(lab.pid) - lab_cpu, 1), "auditor_s": round(own_cpu_s() - own_cpu, 1),
                        "load": os.getloadavg()[0]})
    finally:
        lab.send_signal(signal.SIGINT)
        lab.wait(120)
    rec = d / "live-0" / "recordings"
    for i in range(runs):
        refs.append(reference_job())
        offline.append(timed_audit(plan, d, d / f"off-{i}", AuditOptions(d, replay_dir=str(rec)), None))
    same = len({(d / f"{k}-{i}" / "audit.json").read_bytes() for k in ("off",) for i in range(runs)}) == 1
    return {"case": case, "switches": switches, "runs": runs, "live_s": [round(x, 2) for x in live],
            "offline_s": [round(x, 2) for x in offline], "reference_s": [round(x, 3) for x in refs],
            "findings": 0, "offline_audit_json_identical": same, "push_untimed_s": push_s, "lab": "configured" if configured else "pushed", "live_cpu": cpu,
            **breakdown(plan, rec, d)}


def record_in_process(d: Path, rec: Path) -> None:
    """Each switch of the plan in ``d`` configured with its rendered config and its verify commands' outputs recorded
    into ``rec`` (the lab's model in this process, as tests/test_audit.py's thousand-drift test does)."""
    from zcube_deploy.lab.core import LabModel
    from zcube_deploy.platforms import platform_module
    from zcube_deploy.verify.observe import record_name

    plan = json.loads((d / "plan.json").read_text())
    model = LabModel(plan)
    model.enable_secret = "en"
    commands = platform_module(plan["cluster"]["platform"]).VERIFY_COMMANDS
    for when in ("configure", "record"):
        for sw in plan["switches"]:
            s = model.new_session(sw["name"])
            for line in ("enable", "en"):
                s.feed(line)
            if when == "configure":
                text = (d / "configs" / f"{sw['name']}.cfg").read_text()
                for line in ["configure terminal", *[x for x in text.splitlines() if x.strip() and not x.startswith("!") and x != "end"], "end"]:
                    s.feed(line)
                continue
            (rec / sw["name"]).mkdir(parents=True)
            for cmd in commands:
                out = s.feed(cmd)
                (rec / sw["name"] / record_name(cmd)).write_text(out if isinstance(out, str) else "".join(out))


def offline_only(case: str, switches: int, runs: int, d: Path, rec: Path, tmp: Path) -> dict:
    """The offline runs and the breakdown only, from ``rec`` (recorded in-process first when missing). The first run
    is cold: audit's file cache of the rendered configs' readings (DIR/.audit-cache, audit/cache.py) is removed
    before it and written by it; the others read it (what every later audit of the same render does)."""
    if not rec.exists():
        record_in_process(d, rec)
    shutil.rmtree(d / CACHE_FOLDER, ignore_errors=True)
    plan = json.loads((d / "plan.json").read_text())
    assert len(plan["switches"]) == switches, len(plan["switches"])
    offline, refs, cpu = [], [], []
    for i in range(runs):
        refs.append(reference_job())
        t0 = os.times()
        offline.append(timed_audit(plan, d, tmp / f"off-{i}", AuditOptions(d, replay_dir=str(rec)), None))
        t1 = os.times()
        cpu.append({"cache": "warm" if i else "cold", "main_s": round(t1.user + t1.system - t0.user - t0.system, 1),
                    "pool_s": round(t1.children_user + t1.children_system - t0.children_user - t0.children_system, 1),
                    "load": round(os.getloadavg()[0], 1)})
    same = len({(tmp / f"off-{i}" / "audit.json").read_bytes() for i in range(runs)}) == 1
    return {"case": case, "switches": switches, "runs": runs, "offline_s": [round(x, 2) for x in offline],
            "reference_s": [round(x, 3) for x in refs], "findings": 0, "offline_audit_json_identical": same,
            "offline_cpu": cpu, **breakdown(plan, rec, d)}


def main() -> None:
    args = size_args([c[0] for c in CASES], plan_dir=True, configured=True)
    if (args.plan or args.offline) and not args.only:
        raise SystemExit("--plan and --offline go with --only (the case whose plan or recordings they are)")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for case, inventory, switches in selected(CASES, args.only):
            if args.offline:
                if not args.plan:
                    raise SystemExit("--offline needs --plan DIR (the rendered plan the recordings are of)")
                results.append(offline_only(case, switches, args.runs, Path(args.plan), Path(args.offline), Path(tmp)))
            else:
                results.append(bench(case, inventory, switches, args.runs, Path(tmp), args.plan, args.configured))
    for r in results:
        print(f"zcube audit ({r['case']}, {r['switches']} switches, {r.get('lab', 'pushed')} lab, 0 findings every run); "
              f"{r['runs']} runs each, interleaved with the reference job")
        if "live_s" in r:
            print(f"  live, threads, concurrency 32:  {min_median(r['live_s'], digits=1)}   target <= 60 s (512 switches)")
            print(f"      {reference_ratio(r['live_s'], r['reference_s'])}")
            print("      CPU a run, lab / auditor (ms a switch): " + ", ".join(
                f"{c['lab_s']} / {c['auditor_s']} s ({1000 * c['lab_s'] / r['switches']:.0f} / {1000 * c['auditor_s'] / r['switches']:.0f}) "
                f"at load {c['load']:.1f}" for c in r["live_cpu"]))
        if "offline_cpu" in r and len(r["offline_s"]) > 1:  # the first run cold (it writes audit's file cache), the others warm
            print(f"  offline from the recordings, cold (the first run: it writes the cache): {r['offline_s'][0]:.1f} s")
            print(f"  offline from the recordings, warm: {min_median(r['offline_s'][1:], digits=1)}   target <= 10 s (512 switches)")
            print(f"      {reference_ratio(r['offline_s'][1:], r['reference_s'])}")
        else:
            print(f"  offline from the recordings:    {min_median(r['offline_s'], digits=1)}   target <= 10 s (512 switches)")
            print(f"      {reference_ratio(r['offline_s'], r['reference_s'])}")
        if "offline_cpu" in r:  # (CPU seconds hardly depend on the load; main + pool / 2: the wall on 2 idle cores, if the halves balance)
            print("      CPU a run, main process + fork pool: " + ", ".join(
                f"{c['cache']}: {c['main_s']} + {c['pool_s']} s (2 idle cores: ~{c['main_s'] + c['pool_s'] / 2:.1f} s) at load {c['load']:.1f}"
                for c in r["offline_cpu"]))
        print(f"  one offline run's parts: the recordings read, observed and compared (2 processes) {r['recordings_pass_s']} s, "
              f"verify's checks {r['verify_checks_s']} s; "
              f"offline audit.json byte-identical across runs: {r['offline_audit_json_identical']}")
        print(json.dumps(r, sort_keys=True))


if __name__ == "__main__":
    main()
