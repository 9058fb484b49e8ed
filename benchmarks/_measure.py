"""Shared helper: run a command as a child process, report wall time and the child's peak RSS."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time

_WRAPPER = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(json.dumps({"rc": r.returncode, "wall_s": wall, "peak_rss_bytes": rss, "stderr": r.stderr[-2000:]}))
"""


def measure(cmd: list[str]) -> dict:
    """Wall time and peak RSS of ``cmd`` (measured in a fresh wrapper so each run's peak is its own)."""
    out = subprocess.run([sys.executable, "-c", _WRAPPER, *cmd], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def zcube() -> list[str]:
    return [sys.executable, "-m", "zcube_deploy"]


def report(rows: list[dict], title: str) -> None:
    print(title)
    for r in rows:
        extra = "" if r.get("rc", 0) == 0 else f"  FAILED rc={r['rc']}: {r.get('stderr', '')[-300:]}"
        print(f"  {r['case']:<14} {r['wall_s']:8.2f} s   peak RSS {r['peak_rss_bytes'] / 2**20:8.0f} MiB"
              + (f"   target {r['target']}" if r.get("target") else "") + extra)


def prepare_16k_lab(d, extra_lab_args: tuple[str, ...] = ()):
    """Plan and render zcube-16k into ``d`` and start `zcube lab up` on it; returns the lab process once ready."""
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    cmd = zcube()
    subprocess.run(cmd + ["plan", str(root / "inventories" / "zcube-16k.yaml"), "-o", str(d)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(cmd + ["render", str(d / "plan.json"), "-o", str(d)], check=True, stdout=subprocess.DEVNULL)
    lab = subprocess.Popen(cmd + ["lab", "up", str(d / "plan.json"), "-o", str(d / "lab"), *extra_lab_args],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while not (d / "lab" / "lab.json").exists():
        if lab.poll() is not None:
            raise SystemExit(lab.stderr.read())
        time.sleep(0.1)
    return lab


def reference_job() -> float:
    """A fixed pure-Python CPU job (sort and sum a million floats): its time shows how loaded the machine is."""
    rng = random.Random(1)
    data = [rng.random() for _ in range(1_000_000)]
    t = time.perf_counter()
    sorted(data)
    sum(x * x for x in data)
    return time.perf_counter() - t
