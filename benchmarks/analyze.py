"""Benchmark `zcube compare` and `zcube analyze` (no targets in the issue; figures for the docs).

glm-1k (1,040 single failures, 400 trials per probability), zcube-16k (16,640 single failures,
100 trials) and zcube-64k (66,048 single failures, 20 trials). Each case runs ``--runs`` times (3)
and prints the min and median of the wall time and of the CPU time (user + system of the child),
next to a fixed reference job measured in the same run (its time shows how loaded the machine is).

    python benchmarks/analyze.py                       # everything
    python benchmarks/analyze.py --only glm-1k         # one inventory, analyze only
    python benchmarks/analyze.py --only glm-1k --code /path/to/other/checkout   # that checkout's code
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _measure import reference_job, zcube

ROOT = Path(__file__).resolve().parents[1]
CASES = (("glm-1k", 400), ("zcube-16k", 100), ("zcube-64k", 20))


def timed(cmd: list[str], env: dict) -> tuple[float, float]:
    """(wall s, CPU s) of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def row(case: str, runs: list[tuple[float, float]], ref: list[float]) -> str:
    w = [r[0] for r in runs]
    c = [r[1] for r in runs]
    return (f"  {case:<18} wall min {min(w):7.2f} s  median {statistics.median(w):7.2f} s   "
            f"CPU min {min(c):7.2f} s  median {statistics.median(c):7.2f} s   "
            f"reference job min {min(ref):5.2f} s  median {statistics.median(ref):5.2f} s  ({len(runs)} runs)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=[c for c, _ in CASES], help="one inventory (analyze only, no compare)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--code", help="run another checkout's zcube_deploy (PYTHONPATH), e.g. main, for a before/after")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.code:
        env["PYTHONPATH"] = str(Path(args.code).resolve())
    print(f"zcube compare / analyze ({args.code or ROOT})")
    if not args.only:
        runs, ref = [], []
        for _ in range(args.runs):
            ref.append(reference_job())
            runs.append(timed(zcube() + ["compare", "--gpus", "16384", "--switch-capacity", "51.2T"], env))
        print(row("compare 16k", runs, ref))
    with tempfile.TemporaryDirectory() as tmp:
        for inv, samples in CASES:
            if args.only and inv != args.only:
                continue
            d = Path(tmp) / inv
            subprocess.run(zcube() + ["plan", str(ROOT / "inventories" / f"{inv}.yaml"), "-o", str(d)], check=True,
                           stdout=subprocess.DEVNULL)
            runs, ref = [], []
            for _ in range(args.runs):
                ref.append(reference_job())
                runs.append(timed(zcube() + ["analyze", str(d / "plan.json"), "-o", str(d / "an"), "--samples", str(samples)], env))
            print(row(f"analyze {inv}", runs, ref))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
