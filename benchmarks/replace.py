"""Benchmark `zcube replace` in the lab: how long a dead switch's successor takes to come into the fabric.

Per case (lab-64, glm-1k): build, `zcube lab up`, push every switch; then per run: `zcube lab replace`
(a fresh unit), the first `zcube replace` (bootstrap written, the unit silent: exit 1), `zcube lab
console` (the bootstrap pasted), and the second `zcube replace --new-host-key` (probe, push of the one
switch, verify of it: exit 0). Reports min / median of each over --runs N (default 3), with the fixed
reference job measured in the same run. Run: python benchmarks/replace.py [--only 64|1k] [--runs N]
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _measure import min_median, reference_job, reference_ratio, selected, size_args, wait_for_lab, zcube

ROOT = Path(__file__).resolve().parents[1]
CASES = [("lab-64", "lab-64.yaml", "ZC-O003"), ("glm-1k", "glm-1k.yaml", "ZC-O003")]
ACCESS = ROOT / "inventories" / "lab-access-lines.txt"


def timed(args: list[str], want: int) -> float:
    t = time.perf_counter()
    r = subprocess.run(zcube() + args, capture_output=True, text=True)
    took = time.perf_counter() - t
    if r.returncode != want:
        raise SystemExit(f"{' '.join(args)}: exit {r.returncode}, expected {want}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return took


def run_case(d: Path, inventory: str, switch: str, runs: int) -> dict[str, list[float]]:
    subprocess.run(zcube() + ["build", str(ROOT / "inventories" / inventory), "-o", str(d)], check=True, stdout=subprocess.DEVNULL)
    lab = subprocess.Popen(zcube() + ["lab", "up", str(d / "plan.json"), "-o", str(d / "lab")], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    wait_for_lab(lab, d / "lab")
    lab_json = str(d / "lab" / "lab.json")
    times: dict[str, list[float]] = {k: [] for k in ("lab replace", "replace (unit silent)", "console paste", "replace", "total")}
    try:
        timed(["push", str(d / "plan.json"), "--configs", str(d), "--lab", lab_json], 0)
        args = ["replace", str(d / "plan.json"), switch, "--configs", str(d), "--lab", lab_json, "--access-lines", str(ACCESS)]
        for _ in range(runs):
            steps = [timed(["lab", "replace", str(d / "lab"), switch], 0), timed(args, 1),
                     timed(["lab", "console", str(d / "lab"), switch, "--file", str(d / "replace" / switch / "bootstrap.txt")], 0),
                     timed(args + ["--new-host-key"], 0)]
            for key, t in zip(times, steps + [sum(steps)]):
                times[key].append(t)
    finally:
        lab.send_signal(signal.SIGINT)
        lab.wait(60)
    return times


def main() -> None:
    args = size_args(["64", "1k"])
    for case, inventory, switch in selected(CASES, args.only):
        ref = [reference_job()]
        with tempfile.TemporaryDirectory() as tmp:
            times = run_case(Path(tmp), inventory, switch, args.runs)
        ref += [reference_job(), reference_job()]
        print(f"zcube replace {switch}, {case}, {args.runs} runs (each: lab replace, replace, console, replace --new-host-key)")
        for key, xs in times.items():
            print(f"  {key:<22} {min_median(xs)}")
        print(f"  {reference_ratio(times['replace'], ref)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
