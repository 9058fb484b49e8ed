"""Benchmark `zcube push` of zcube-16k (256 switches) against the lab at concurrency 32.

Reports the wall time of a dry run and of a real push, and the ratio of wall time to
(sum of per-device session times / concurrency): 1.0 means the pool was the only limit.
Target (2-core machine): 256 switches pushed in <= 4 minutes. Run: python benchmarks/push.py
"""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from _measure import prepare_16k_lab
from _measure import zcube as _zcube

ROOT = Path(__file__).resolve().parents[1]
CONCURRENCY = 32


def zcube(*args: str) -> list[str]:
    return [*_zcube(), *args]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        lab = prepare_16k_lab(d, ())
        try:
            rows = []
            for label, extra in (("dry run", ["--dry-run"]), ("push", []), ("second push", [])):
                t = time.perf_counter()
                r = subprocess.run(zcube("push", str(d / "plan.json"), "--configs", str(d), "--lab", str(d / "lab" / "lab.json"),
                                         "--concurrency", str(CONCURRENCY), *extra), capture_output=True, text=True)
                wall = time.perf_counter() - t
                rep = json.loads((d / "push-report.json").read_text())
                sessions = sum(x["duration_s"] for x in rep["devices"])
                lines = sum(x["lines_changed"] for x in rep["devices"])
                rows.append((label, wall, sessions, lines, rep["summary"], r.returncode))
        finally:
            lab.send_signal(signal.SIGINT)
            lab.wait(60)
    print(f"zcube push, zcube-16k (256 switches) against the lab, concurrency {CONCURRENCY}")
    for label, wall, sessions, lines, summary, rc in rows:
        ideal = sessions / CONCURRENCY
        print(f"  {label:<12} wall {wall:7.1f} s   sum of sessions {sessions:8.1f} s   wall/(sum/concurrency) {wall / ideal if ideal else 0:5.2f}"
              f"   lines {lines:,}   {summary}   rc={rc}")
    print("  target: the push of 256 switches <= 240 s")


if __name__ == "__main__":
    main()
