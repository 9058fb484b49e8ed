"""Benchmark `zcube migrate` planning: glm-1k's ROFT -> glm-1k (the bundled pair: glm-1k's switches stand where the
ROFT's serve, so some roles stand in temporary places; 4-GPU units, floor 0.75), the same ROFT -> glm-1k-beside-roft
(glm-1k's ZCube in the network racks the ROFT leaves free), the same ROFT -> glm-1k-inplace (glm-1k with the places `zcube migrate` suggests: every switch
where the ROFT switch taking its role stands, no temporary place, no re-rack) and a 16k ROFT (zcube-16k's 2,048 servers as a 2-plane
ROFT: 128 leaves per plane, 64 spines per plane) -> zcube-16k (whole servers, floor 0.75; its switches too stand
where the ROFT's serve).

Planning = reading both plans, the stage search, the role assignment, the moves, the switches' rack work and the
invariants checked apart (plan_migration, check_migration; what `zcube migrate` runs before it writes), in a child
process; the stage folders (plans, renders, workbooks) are
not part of it. Targets (2-core machine): glm-1k <= 10 s, 16k <= 120 s. Each case runs --repeat times
(default 3), interleaved with the fixed reference job of benchmarks/plan.py; reported: min and median,
the reference's, their ratio, the CPU time (user + system) of both, and the machine's load average when the case
started.
Run: python benchmarks/migrate.py [--repeat N] [--cases glm-1k,glm-1k-beside,glm-1k-inplace,16k]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _measure import measure, zcube
from plan import REFERENCE

ROOT = Path(__file__).resolve().parents[1]
PLANNING = r"""
import sys
from zcube_deploy.catalog.cabling import plan_catalog
from zcube_deploy.migrate.invariants import check_migration
from zcube_deploy.migrate.planner import Options, plan_migration
from zcube_deploy.migrate.report import summary
from zcube_deploy.plan.io import read_plan
src, dst, unit = sys.argv[1:4]
plan_to = read_plan(dst)
mig = plan_migration(read_plan(src), plan_to, Options(0.75, unit, 0), catalog=plan_catalog(plan_to, None, accept_changed=True)[0])
broken = {name: len(p) for name, p in check_migration(mig).items() if p}
doc = summary(mig, src, dst)
print(doc["stages"], doc["stages_lower_bound"], doc["cable_touches"], doc["cable_touches_lower_bound"], doc["cable_touches_temporary"],
      len(mig.temp), mig.places_met, "conflicts:", len(mig.rack_conflicts), "broken:", broken)
"""


def roft_16k(tmp: Path) -> Path:
    """zcube-16k.yaml's servers as a ROFT (2 planes), names, pools and ASNs apart from zcube-16k's."""
    text = (ROOT / "inventories" / "zcube-16k.yaml").read_text()
    for a, b in (('switch_naming: "ZC-{G}{number:03d}"\n',
                  'design: roft\nroft:\n  planes: 2\n  leaf_naming: "RO-L{number:03d}"\n  spine_naming: "RO-S{number:03d}"\n'),
                 ("cluster: zc16k", "cluster: ro16k"), ("host_pool: 10.0.0.0/16", "host_pool: 10.64.0.0/16"),
                 ("fabric_pool: 10.128.0.0/17", "fabric_pool: 10.160.0.0/15"), ("loopback_pool: 10.255.0.0/22", "loopback_pool: 10.254.0.0/22"),
                 ("first: 172.16.0.11", "first: 172.16.2.11"), ("topology:\n", "routing:\n  mode: bgp\n  asn_base: 4200100000\n\ntopology:\n")):
        assert a in text, a
        text = text.replace(a, b)
    path = tmp / "roft-16k.yaml"
    path.write_text(text)
    return path


def _plan(inventory: Path, out: Path) -> Path:
    subprocess.run(zcube() + ["plan", str(inventory), "-o", str(out)], check=True, capture_output=True)
    return out / "plan.json"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default="glm-1k,glm-1k-beside,glm-1k-inplace,16k")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        cases = []
        wanted = args.cases.split(",")
        r1k = _plan(ROOT / "inventories" / "glm-1k-roft.yaml", tmp / "r1k") if {"glm-1k", "glm-1k-beside", "glm-1k-inplace"} & set(wanted) else None
        if "glm-1k" in wanted:
            cases.append(("glm-1k", r1k, _plan(ROOT / "inventories" / "glm-1k.yaml", tmp / "z1k"), "4-gpu", 10.0))
        if "glm-1k-beside" in wanted:
            cases.append(("beside", r1k, _plan(ROOT / "inventories" / "glm-1k-beside-roft.yaml", tmp / "b1k"), "4-gpu", 10.0))
        if "glm-1k-inplace" in wanted:
            cases.append(("inplace", r1k, _plan(ROOT / "inventories" / "glm-1k-inplace.yaml", tmp / "i1k"), "4-gpu", 10.0))
        if "16k" in wanted:
            cases.append(("16k", _plan(roft_16k(tmp), tmp / "r16k"), _plan(ROOT / "inventories" / "zcube-16k.yaml", tmp / "z16k"),
                          "server", 120.0))
        print(f"zcube migrate planning: {args.repeat} runs per case, interleaved with the reference job")
        for case, src, dst, unit, target in cases:
            load = os.getloadavg()[0]
            runs, refs, ref_cpu = [], [], []
            for _ in range(args.repeat):
                ref = measure(REFERENCE)
                refs.append(ref["wall_s"])
                ref_cpu.append(ref["cpu_s"])
                r = measure([sys.executable, "-c", PLANNING, str(src), str(dst), unit])
                if r["rc"] != 0:
                    raise SystemExit(f"{case}: planning failed: {r['stderr']}")
                runs.append(r)
            wall = [r["wall_s"] for r in runs]
            print(f"  {case:<7} min {min(wall):7.2f} s  median {statistics.median(wall):7.2f} s   target <= {target:g} s   "
                  f"peak RSS {max(r['peak_rss_bytes'] for r in runs) / 2**20:5.0f} MiB   load average at start {load:.1f}")
            print(f"  {'':<7} reference min {min(refs):.2f} s median {statistics.median(refs):.2f} s; ratio min/min "
                  f"{min(wall) / min(refs):.1f}x, median/median {statistics.median(wall) / statistics.median(refs):.1f}x")
            cpu = [r["cpu_s"] for r in runs]
            print(f"  {'':<7} CPU (user + system, less sensitive to load) min {min(cpu):.2f} s median {statistics.median(cpu):.2f} s; "
                  f"reference's min {min(ref_cpu):.2f} s")


if __name__ == "__main__":
    main()
