"""Benchmark `zcube compare` and `zcube analyze` (no targets in the issue; figures for the README).

glm-1k (1,040 single failures, 400 trials per probability), zcube-16k (16,640 single failures,
100 trials) and zcube-64k (66,048 single failures, 20 trials). Run: python benchmarks/analyze.py
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from _measure import measure, report, zcube

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    rows = []
    r = measure(zcube() + ["compare", "--gpus", "16384", "--switch-capacity", "51.2T"])
    rows.append({**r, "case": "compare 16k"})
    with tempfile.TemporaryDirectory() as tmp:
        for inv, samples in (("glm-1k", 400), ("zcube-16k", 100), ("zcube-64k", 20)):
            d = Path(tmp) / inv
            subprocess.run(zcube() + ["plan", str(ROOT / "inventories" / f"{inv}.yaml"), "-o", str(d)], check=True,
                           stdout=subprocess.DEVNULL)
            r = measure(zcube() + ["analyze", str(d / "plan.json"), "-o", str(d / "an"), "--samples", str(samples)])
            rows.append({**r, "case": f"analyze {inv}"})
    report(rows, "zcube compare / analyze")


if __name__ == "__main__":
    main()
