"""Benchmark `zcube plan` at 1k, 16k and 64k GPUs: wall time and peak RSS of the CLI process.

Targets (2-core machine): 16,384 GPUs <= 3 s, 65,536 GPUs <= 12 s, peak RSS <= 1.5 GB at 65,536.
Run: python benchmarks/plan.py [--repeat N]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _measure import measure, report, zcube

ROOT = Path(__file__).resolve().parents[1]
CASES = [("glm-1k", "glm-1k.yaml", ""), ("zcube-16k", "zcube-16k.yaml", "<= 3 s"), ("zcube-64k", "zcube-64k.yaml", "<= 12 s, <= 1.5 GB")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3, help="runs per case; the best is reported")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case, inv, target in CASES:
            runs = [measure(zcube() + ["plan", str(ROOT / "inventories" / inv), "-o", tmp]) for _ in range(args.repeat)]
            best = min(runs, key=lambda r: r["wall_s"])
            best["peak_rss_bytes"] = max(r["peak_rss_bytes"] for r in runs)
            rows.append({"case": case, "target": target, **best})
    report(rows, "zcube plan (best wall time of the runs, largest peak RSS)")


if __name__ == "__main__":
    main()
