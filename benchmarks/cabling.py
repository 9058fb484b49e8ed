"""Benchmark `zcube cabling` (workbook + CSVs + DOT) at 16k and 64k GPUs.

Targets (2-core machine): zcube-16k (49,152 cables) <= 20 s, zcube-64k (196,608 cables) <= 90 s,
peak RSS <= 1 GB. Run: python benchmarks/cabling.py [--only 16k]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _measure import measure, report, zcube

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=["16k", "64k"], default=None)
    args = ap.parse_args()
    cases = [("zcube-16k", "zcube-16k.yaml", "<= 20 s, <= 1 GB"), ("zcube-64k", "zcube-64k.yaml", "<= 90 s, <= 1 GB")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case, inv, target in cases:
            if args.only and not case.endswith(args.only):
                continue
            d = Path(tmp) / case
            r = measure(zcube() + ["plan", str(ROOT / "inventories" / inv), "-o", str(d)])
            assert r["rc"] == 0, r["stderr"]
            m = measure(zcube() + ["cabling", str(d / "plan.json"), "-o", str(d)])
            size = (d / "cabling.xlsx").stat().st_size if (d / "cabling.xlsx").exists() else 0
            rows.append({"case": f"{case} ({size / 2**20:.0f} MiB xlsx)", "target": target, **m})
    report(rows, "zcube cabling (whole CLI run: read plan.json, write workbook, CSVs and DOT)")


if __name__ == "__main__":
    main()
