"""Benchmark `zcube plan` at 1k, 16k and 64k GPUs: wall time and peak RSS of the CLI process, and
what reading the plan back costs (validated against the plan model, whole and as render's
projection) next to a plain json.loads of the same file.

Targets (2-core machine): 16,384 GPUs <= 3 s, 65,536 GPUs <= 12 s, peak RSS <= 1.5 GB at 65,536.
Each case runs --repeat times (default 3), interleaved with a fixed reference job (pure-Python CPU
work of about a second; the machine is shared, so the ratio to the reference tells more than the
raw time). Reported: min and median of the wall time, the reference's, and their ratio; CPU time.

With ``--before DIR`` (another commit's tree, e.g. ``git archive REV | tar -x -C DIR``), each run also
plans with that tree, interleaved, and the two plan.json files must be the same bytes (a speed-up
that changes the plan fails here): both figures and their ratio to the same reference job.
Run: python benchmarks/plan.py [--repeat N] [--cases zcube-16k,zcube-64k] [--no-read] [--before DIR]
"""

from __future__ import annotations

import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _measure import measure, zcube

ROOT = Path(__file__).resolve().parents[1]
CASES = [("glm-1k", "glm-1k.yaml", None), ("zcube-16k", "zcube-16k.yaml", 3.0), ("zcube-64k", "zcube-64k.yaml", 12.0)]
REFERENCE = [sys.executable, "-c", "import random; r = random.Random(1); "
             "rows = sorted((r.random(), str(i)) for i in range(600_000)); "
             "s = ''.join(f'{a:.6f},{b}\\n' for a, b in rows); print(len(s))"]
READ = r"""
import json, sys, time
from zcube_deploy.perf import bulk_allocation
from zcube_deploy.plan.io import read_plan
from zcube_deploy.render import PLAN_FIELDS
p = sys.argv[1]
with bulk_allocation():
    t = time.perf_counter(); json.loads(open(p, "rb").read()); a = time.perf_counter() - t
    t = time.perf_counter(); read_plan(p); b = time.perf_counter() - t
    t = time.perf_counter(); read_plan(p, PLAN_FIELDS); c = time.perf_counter() - t
print(json.dumps([a, b, c]))
"""


def _plan(tree: Path, inv: str, out: str, case: str) -> dict:
    """`zcube plan` of ``inv`` with the package of ``tree`` (first on the path; run from a neutral folder)."""
    r = measure(zcube() + ["plan", str(ROOT / "inventories" / inv), "-o", out], env=dict(os.environ, PYTHONPATH=str(tree)), cwd=_out_parent(out))
    if r["rc"] != 0:
        raise SystemExit(f"{case}: zcube plan ({tree}) failed: {r['stderr']}")
    return r


def _out_parent(out: str) -> str:
    Path(out).mkdir(parents=True, exist_ok=True)
    return str(Path(out).parent)


def _stats(xs: list[float]) -> str:
    return f"min {min(xs):6.2f} s  median {statistics.median(xs):6.2f} s"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3, help="runs per case")
    ap.add_argument("--cases", default=",".join(c for c, _, _ in CASES))
    ap.add_argument("--no-read", action="store_true", help="skip the read-back timing")
    ap.add_argument("--before", default=None, help="another tree of zcube-deploy to plan with too (same bytes required)")
    args = ap.parse_args()
    wanted = args.cases.split(",")
    print(f"zcube plan: {args.repeat} runs per case, interleaved with the reference job")
    with tempfile.TemporaryDirectory() as tmp:
        for case, inv, target in CASES:
            if case not in wanted:
                continue
            runs, refs, reads, before = [], [], [], []
            for _ in range(args.repeat):
                refs.append(measure(REFERENCE)["wall_s"])
                runs.append(_plan(ROOT, inv, tmp, case))
                if args.before:
                    before.append(_plan(Path(args.before), inv, str(Path(tmp) / "before"), case))
                    if not filecmp.cmp(Path(tmp) / "plan.json", Path(tmp) / "before" / "plan.json", shallow=False):
                        raise SystemExit(f"{case}: plan.json differs from the one of {args.before}")
                if not args.no_read:
                    out = subprocess.run([sys.executable, "-c", READ, str(Path(tmp) / "plan.json")], capture_output=True, text=True, check=True)
                    reads.append(__import__("json").loads(out.stdout))
            wall = [r["wall_s"] for r in runs]
            rss = max(r["peak_rss_bytes"] for r in runs)
            print(f"  {case:<10} plan  {_stats(wall)}" + (f"   target <= {target:g} s" if target else "")
                  + f"   peak RSS {rss / 2**20:5.0f} MiB")
            print(f"  {'':<10} reference job {_stats(refs)};  ratio min/min {min(wall) / min(refs):.2f}x, "
                  f"median/median {statistics.median(wall) / statistics.median(refs):.2f}x;  CPU {_stats([r['cpu_s'] for r in runs])}")
            if before:
                bw = [r["wall_s"] for r in before]
                print(f"  {'':<10} before ({args.before}) {_stats(bw)};  ratio min/min {min(bw) / min(refs):.2f}x, median/median "
                      f"{statistics.median(bw) / statistics.median(refs):.2f}x;  CPU {_stats([r['cpu_s'] for r in before])}; "
                      f"peak RSS {max(r['peak_rss_bytes'] for r in before) / 2**20:.0f} MiB;  plan.json the same bytes")
            if reads:
                for i, what in ((0, "json.loads (no validation)"), (1, "read_plan whole, validated"), (2, "read_plan render's projection")):
                    print(f"  {'':<10} read back: {what:<30} {_stats([r[i] for r in reads])}")


if __name__ == "__main__":
    main()
