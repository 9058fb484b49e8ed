"""Benchmark `zcube verify` of zcube-16k (256 switches, 10 injected cabling faults): live against the lab
at concurrency 32 (after a push, so the fabric is configured; the first live run records), and offline
from those recordings.

Each case runs --runs times (default 3), interleaved with a fixed reference job (pure-Python CPU work
of about a second: the machine is shared, so the ratio to the reference tells more than the seconds);
the figures are min and median wall time, and min / reference min.

Targets (2-core machine): live <= 60 s, offline <= 10 s. Run: python benchmarks/verify.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _measure import prepare_16k_lab, reference_job
from _measure import zcube as _zcube

ROOT = Path(__file__).resolve().parents[1]


def zcube(*args: str) -> list[str]:
    return [*_zcube(), *args]




def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=False)
    return time.perf_counter() - t


def stats(xs: list[float], ref: float) -> str:
    return f"min {min(xs):6.1f} s  median {statistics.median(xs):6.1f} s  (min/reference {min(xs) / ref:5.1f}x)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    live, offline, refs = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        lab = prepare_16k_lab(d, ("--faults", "random:10", "--seed", "3"))
        try:
            lab_json = str(d / "lab" / "lab.json")
            subprocess.run(zcube("push", str(d / "plan.json"), "--configs", str(d), "--lab", lab_json, "--concurrency", "32"),
                           capture_output=True, check=False)
            for i in range(args.runs):
                refs.append(reference_job())
                live.append(timed(zcube("verify", str(d / "plan.json"), "--lab", lab_json, "-o", str(d / f"v1-{i}"),
                                        *(("--record", str(d / "rec")) if i == 0 else ()), "--concurrency", "32")))
        finally:
            lab.send_signal(signal.SIGINT)
            lab.wait(60)
        for i in range(args.runs):
            refs.append(reference_job())
            offline.append(timed(zcube("verify", str(d / "plan.json"), "--from", str(d / "rec"), "-o", str(d / f"v2-{i}"))))
        a = json.loads((d / "v1-0" / "verify.json").read_text())
        same = all(json.loads((d / f"v{k}-{i}" / "verify.json").read_text())["findings"] == a["findings"]
                   for k in (1, 2) for i in range(args.runs))
        expected = json.loads((d / "lab" / "faults.json").read_text())["expected_findings"]
    ref = min(refs)
    print(f"zcube verify, zcube-16k (256 switches), 10 injected cabling faults; {args.runs} runs each, "
          "interleaved with the reference job")
    print(f"  reference job                          min {ref:6.2f} s  median {statistics.median(refs):6.2f} s")
    print(f"  live, concurrency 32 (first --record):  {stats(live, ref)}   target <= 60 s")
    print(f"  offline from the recordings:            {stats(offline, ref)}   target <= 10 s")
    print(f"  findings {a['summary']['by_kind']}; every run the same findings: {same}")
    print(f"  injected faults: {len(expected)}; found with the right kind and cables: "
          f"{sum(1 for e in expected if any(f['kind'] == e['kind'] and f['cables'] == e['cables'] for f in a['findings']))}")


if __name__ == "__main__":
    main()
