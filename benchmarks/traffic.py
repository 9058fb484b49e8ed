"""Benchmark `zcube traffic` against issue 25's targets (2 cores):

- glm-1k all-to-all per GPU pair (1,047,552 flows), the plan's ZCube: <= 60 s and <= 4 GB;
- glm-1k pd with 10,000 requests, the plan's ZCube: <= 30 s;
- zcube-64k all-to-all aggregated by switch pair (all-to-all-switch): <= 120 s.

Each case runs ``--runs`` times (3) as a child process (wall time and peak RSS of the child, plan
loading included; the plans are made once beforehand and not timed) and prints the min and median
next to the fixed reference job measured in the same run, and their ratio (the machine may be
shared: the reference job's time shows how loaded it was).

    python benchmarks/traffic.py                  # everything
    python benchmarks/traffic.py --only glm-1k    # the two glm-1k cases
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from _measure import measure, plan_case, reference_job, reference_ratio, selected, size_args, zcube

CASES = (  # (name, inventory, traffic arguments, target seconds, target peak bytes)
    ("all-to-all glm-1k", "glm-1k.yaml", ["--workload", "all-to-all"], 60, 4 * 2**30),
    ("pd-10k glm-1k", "glm-1k.yaml", ["--workload", "pd", "--requests", "10000"], 30, None),
    ("a2a-switch zcube-64k", "zcube-64k.yaml", ["--workload", "all-to-all-switch"], 120, None),
)


def main() -> None:
    args = size_args(["glm-1k", "zcube-64k"])
    cases = selected(list(CASES), args.only)
    with tempfile.TemporaryDirectory() as tmp:
        plans = {inv: plan_case(tmp, inv.split(".")[0], inv) / "plan.json" for _, inv, *_ in cases}
        print(f"zcube traffic, {args.runs} runs per case")
        for name, inv, extra, target_s, target_rss in cases:
            walls, rss, ref = [], [], []
            for i in range(args.runs):
                ref.append(reference_job())
                r = measure(zcube() + ["traffic", str(plans[inv]), "-o", str(Path(tmp) / f"out-{i}"), *extra])
                if r["rc"] != 0:
                    raise SystemExit(f"{name}: zcube traffic failed: {r['stderr']}")
                walls.append(r["wall_s"])
                rss.append(r["peak_rss_bytes"])
            met = statistics.median(walls) <= target_s and (target_rss is None or max(rss) <= target_rss)
            print(f"  {name:<22} wall min {min(walls):7.2f} s  median {statistics.median(walls):7.2f} s   "
                  f"peak RSS max {max(rss) / 2**30:5.2f} GiB   target {target_s} s"
                  + (f", {target_rss / 2**30:.0f} GiB" if target_rss else "") + ("  met" if met else "  NOT met"))
            print(f"  {'':<22} {reference_ratio(walls, ref)}")


if __name__ == "__main__":
    main()
