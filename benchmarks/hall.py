"""Benchmark `zcube hall` (read plan.json, build the model, write the page) at 1k and 64k GPUs.

Target (2-core machine): zcube-64k (8,192 servers, 512 switches, 196,608 cables) <= 10 s, and a
page that stays usable (bundles, rack elevations on demand): its size is reported.
Each case runs --runs times (default 3), interleaved with a fixed reference job (json.loads of the
same plan.json, the bulk of the work any command reading that plan does); the report gives min
and median wall time of both and their ratio, so a loaded machine shows as a slow reference.

Run: python benchmarks/hall.py [--only 64k] [--runs 3]
"""

from __future__ import annotations

import statistics
import sys
import tempfile

from _measure import measure, plan_case, selected, size_args, zcube

REFERENCE = "import json, sys; json.loads(open(sys.argv[1], encoding='utf-8').read())"


def main() -> None:
    args = size_args(["1k", "64k"])
    cases = [("glm-1k", "glm-1k.yaml", None), ("zcube-64k", "zcube-64k.yaml", 10.0)]
    print(f"zcube hall: {args.runs} runs each, interleaved with the reference job (json.loads of the same plan.json)")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for case, inv, target in selected(cases, args.only):
            d = plan_case(tmp, case, inv)
            plan = d / "plan.json"
            hall, ref = [], []
            for _ in range(args.runs):
                h = measure(zcube() + ["hall", str(plan), "-o", str(d)])
                assert h["rc"] == 0, h["stderr"]
                hall.append(h)
                f = measure([sys.executable, "-c", REFERENCE, str(plan)])
                assert f["rc"] == 0, f["stderr"]
                ref.append(f)
            page = d / "hall" / "index.html"
            ht = [x["wall_s"] for x in hall]
            rt = [x["wall_s"] for x in ref]
            rss = max(x["peak_rss_bytes"] for x in hall)
            print(f"  {case:<10} hall min {min(ht):6.2f} s, median {statistics.median(ht):6.2f} s"
                  + (f" (target <= {target:g} s)" if target else "")
                  + f"; reference min {min(rt):6.2f} s, median {statistics.median(rt):6.2f} s; "
                  f"ratio (median) {statistics.median(ht) / statistics.median(rt):4.2f}; peak RSS {rss / 2**20:5.0f} MiB; "
                  f"plan.json {plan.stat().st_size / 2**20:5.1f} MiB; page {page.stat().st_size / 2**20:5.1f} MiB")
            if target and min(ht) > target:
                failed = True
    if failed:
        print("  TARGET MISSED")
        sys.exit(1)


if __name__ == "__main__":
    main()
