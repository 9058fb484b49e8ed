"""Shared helpers of the benchmarks: run a command as a child process (wall time and the child's peak RSS),
the `--only SIZE --runs N` arguments, plan a case's inventory, wait for a lab, min/median and the reference ratio."""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_WRAPPER = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": r.returncode, "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "peak_rss_bytes": ru.ru_maxrss * 1024,
                  "stderr": r.stderr[-2000:]}))
"""


def measure(cmd: list[str], env: dict | None = None, cwd: str | Path | None = None) -> dict:
    """Wall time, CPU time (user + system) and peak RSS of ``cmd`` (measured in a fresh wrapper so each run's
    peak is its own)."""
    out = subprocess.run([sys.executable, "-c", _WRAPPER, *cmd], capture_output=True, text=True, check=True, env=env, cwd=cwd)
    return json.loads(out.stdout)


def zcube() -> list[str]:
    return [sys.executable, "-m", "zcube_deploy"]


def report(rows: list[dict], title: str) -> None:
    print(title)
    for r in rows:
        extra = "" if r.get("rc", 0) == 0 else f"  FAILED rc={r['rc']}: {r.get('stderr', '')[-300:]}"
        print(f"  {r['case']:<14} {r['wall_s']:8.2f} s   peak RSS {r['peak_rss_bytes'] / 2**20:8.0f} MiB"
              + (f"   target {r['target']}" if r.get("target") else "") + extra)


def size_args(sizes: list[str], plan_dir: bool = False, configured: bool = False) -> argparse.Namespace:
    """``--only SIZE`` (one of ``sizes``: run that case only) and ``--runs N`` (default 3); with ``plan_dir``,
    ``--plan DIR`` too (a folder already holding the case's plan.json and configs/: not planned again)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=sizes, default=None)
    ap.add_argument("--runs", type=int, default=3)
    if plan_dir:
        ap.add_argument("--plan", default=None, help="a rendered plan's folder to use instead of planning the case")
        ap.add_argument("--offline", default=None, help="offline runs only, from this recording folder (made when missing)")
    if configured:
        ap.add_argument("--configured", action="store_true", help="a lab started configured with the rendered configs (no push)")
    return ap.parse_args()


def selected(cases: list[tuple], only: str | None) -> list[tuple]:
    """The cases ``(name, ...)`` that ``--only`` keeps (all without it): a name ends with the size."""
    return [c for c in cases if not only or c[0].endswith(only)]


def plan_case(tmp, case: str, inventory: str) -> Path:
    """`zcube plan inventories/<inventory> -o <tmp>/<case>` (it must succeed); returns that folder."""
    d = Path(tmp) / case
    r = measure(zcube() + ["plan", str(ROOT / "inventories" / inventory), "-o", str(d)])
    assert r["rc"] == 0, r["stderr"]
    return d


def wait_for_lab(proc: subprocess.Popen, lab_dir: Path, poll: float = 0.1) -> None:
    """Wait until `zcube lab up` (``proc``) has written ``lab_dir``/lab.json: it is serving. Exits if it died."""
    while not (Path(lab_dir) / "lab.json").exists():
        if proc.poll() is not None:
            raise SystemExit(proc.stderr.read())
        time.sleep(poll)


def min_median(xs: list[float], width: int = 6, digits: int = 2) -> str:
    return f"min {min(xs):{width}.{digits}f} s  median {statistics.median(xs):{width}.{digits}f} s"


def reference_ratio(ours: list[float], ref: list[float], digits: int = 1) -> str:
    """The reference job's min and median, and ours divided by it (min/min, median/median)."""
    return (f"reference job  {min_median(ref)};  ratio min/min {min(ours) / min(ref):.{digits}f}x, "
            f"median/median {statistics.median(ours) / statistics.median(ref):.{digits}f}x")


def prepare_16k_lab(d, extra_lab_args: tuple[str, ...] = ()):
    """Plan and render zcube-16k into ``d`` and start `zcube lab up` on it; returns the lab process once ready."""
    cmd = zcube()
    subprocess.run(cmd + ["plan", str(ROOT / "inventories" / "zcube-16k.yaml"), "-o", str(d)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(cmd + ["render", str(d / "plan.json"), "-o", str(d)], check=True, stdout=subprocess.DEVNULL)
    lab = subprocess.Popen(cmd + ["lab", "up", str(d / "plan.json"), "-o", str(d / "lab"), *extra_lab_args],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_lab(lab, d / "lab")
    return lab


def reference_job() -> float:
    """A fixed pure-Python CPU job (sort and sum a million floats): its time shows how loaded the machine is."""
    rng = random.Random(1)
    data = [rng.random() for _ in range(1_000_000)]
    t = time.perf_counter()
    sorted(data)
    sum(x * x for x in data)
    return time.perf_counter() - t
