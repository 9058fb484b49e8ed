"""Each stage of a migration in the data-plane twin, as a user runs it (root, FRR, fping, nftables needed; issue 27:
"every stage: 0 unreachable in-service pairs in the twin").

The pair (default: the bundled inventories/glm-1k-roft.yaml -> inventories/glm-1k.yaml, whose roles stand in
temporary places) planned with `zcube plan`, migrated with `zcube migrate FROM TO -o mig --unit 4-gpu` (floor 0.75),
then per stage and run: `zcube twin up mig/stage-NN/plan.json -o tw`, `zcube twin test tw --pairs 20000 --fib-walk`
(20,000 seeded port pairs with real packets, then every in-service port pair of each island walked on the kernels'
FIBs), `zcube twin down tw`. Reported per stage: the islands (switches, NIC ports), the port pairs probed and walked,
the GPU pairs per island and how many are unreachable (target 0), the pairs across the islands (not walked), the
walk's read and walk seconds, and min / median of the wall and CPU seconds of up and test over the runs (CPU: the
zcube process and its children; the FRR daemons run detached and are not in it), the 1-minute load average before
each run and the fixed reference job of benchmarks/_measure.py measured before each run (the ratio: min/min,
median/median). Exit 1 when a check of any run fails (its problems printed).
Run: sudo python benchmarks/twin_stages.py [--runs 3] [--stages 1,2] [--pairs 20000] [--from INV --to INV]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from _measure import ROOT, measure, reference_job, zcube


def load1() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def islands(plan: dict) -> str:
    """Per island: its switches and the NIC ports cabled to them ("roft 16, 1,536; zcube 8, 512")."""
    side = {sw["name"]: "roft" if sw["group"] in ("leaf", "spine") else "zcube" for sw in plan["switches"]}
    count: dict[str, list[int]] = {}
    for sw in plan["switches"]:
        c = count.setdefault(side[sw["name"]], [0, 0])
        c[0] += 1
        c[1] += sum(1 for i in sw["interfaces"] if i["kind"] == "host")
    return "; ".join(f"{k} {s}, {p:,}" for k, (s, p) in sorted(count.items()))


def one_run(plan: Path, d: Path, pairs: int) -> dict:
    """up, test --pairs --fib-walk, down (always): the times, the report's figures and its failed checks."""
    row = {"load": load1(), "reference_s": reference_job()}
    up = measure(zcube() + ["twin", "up", str(plan), "-o", str(d)])
    try:
        if up["rc"]:
            return {**row, "failed": [f"twin up exit {up['rc']}: {up['stderr']}"]}
        test = measure(zcube() + ["twin", "test", str(d), "--pairs", str(pairs), "--fib-walk"])
        rep = json.loads((d / "test-report.json").read_text())
    finally:
        if (d / "twin.json").exists():
            down = measure(zcube() + ["twin", "down", str(d)])
            assert down["rc"] == 0, down["stderr"]
    walk = next(m for m in rep["measurements"] if m["kind"] == "fib_walk")
    base = rep["baseline"]
    failed = [c["name"] for c in rep["checks"] if not c["ok"]] + walk["problems"][:5] + \
        [" ".join(e) for e in walk["examples"][:5]]
    return {**row, "up_s": up["wall_s"], "up_cpu_s": up["cpu_s"], "test_s": test["wall_s"], "test_cpu_s": test["cpu_s"],
            "load_after": load1(), "probed": base["pairs_tested"], "of": base["pairs_total"],
            "probed_unreachable": base["unreachable"], "stable": walk["stable"],
            "walked": sum(i["port_pairs_walked"] for i in walk["islands"].values()),
            "walk_failed": sum(i["port_pairs_failed"] for i in walk["islands"].values()),
            "gpu_pairs": {k: (i["gpu_pairs"], i["gpu_pairs_unreachable"]) for k, i in sorted(walk["islands"].items())},
            "across": walk["cross_island_gpu_pairs"], "out_of_service": walk["out_of_service_gpus"],
            "read_s": walk["seconds_read"], "walk_s": walk["seconds_walk"], "failed": failed if not rep["ok"] else []}


def mm(xs: list[float], digits: int = 1) -> str:
    return f"{min(xs):.{digits}f} / {statistics.median(xs):.{digits}f}"


def stage_lines(name: str, plan: dict, runs: list[dict]) -> list[str]:
    ok = [r for r in runs if not r["failed"]]
    ref = [r["reference_s"] for r in runs]
    out = [f"{name}: islands (switches, NIC ports) {islands(plan)}; {len(runs)} run(s), {len(runs) - len(ok)} failed"]
    for r in runs:
        out += [f"  FAILED: {f}" for f in r["failed"]]
    if not ok:
        return out
    r = ok[0]  # the pairs and their outcome are the same every run (seeded sample, same FIBs): said by the last line
    gp = ", ".join(f"{k} {n:,} ({u} unreachable)" for k, (n, u) in r["gpu_pairs"].items())
    out += [f"  probed {r['probed']:,} of {r['of']:,} port pairs, {r['probed_unreachable']} unreachable; walked {r['walked']:,} port "
            f"pairs, {r['walk_failed']} failed, tables stable {r['stable']}",
            f"  GPU pairs walked: {gp}; across the islands, not walked: {r['across']:,}; GPUs out of service {r['out_of_service']}",
            f"  up    wall {mm([x['up_s'] for x in ok])} s (min / median), CPU {mm([x['up_cpu_s'] for x in ok])} s",
            f"  test  wall {mm([x['test_s'] for x in ok])} s, CPU {mm([x['test_cpu_s'] for x in ok])} s; "
            f"walk: read {mm([x['read_s'] for x in ok], 2)} s, walk {mm([x['walk_s'] for x in ok], 2)} s",
            f"  reference job {mm(ref, 2)} s; ratio up {min(x['up_s'] for x in ok) / min(ref):.1f}x / "
            f"{statistics.median(x['up_s'] for x in ok) / statistics.median(ref):.1f}x, test "
            f"{min(x['test_s'] for x in ok) / min(ref):.1f}x / {statistics.median(x['test_s'] for x in ok) / statistics.median(ref):.1f}x; "
            f"load average {min(x['load'] for x in runs):.1f}-{max(max(x['load'], x.get('load_after', 0)) for x in runs):.1f}",
            "  same figures every run: " + str(len({(x['probed_unreachable'], x['walked'], x['walk_failed'], str(x['gpu_pairs'])) for x in ok}) == 1)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--from", dest="src", default=str(ROOT / "inventories" / "glm-1k-roft.yaml"))
    ap.add_argument("--to", dest="dst", default=str(ROOT / "inventories" / "glm-1k.yaml"))
    ap.add_argument("--unit", default="4-gpu")
    ap.add_argument("--capacity-floor", default="0.75")
    ap.add_argument("--pairs", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--stages", default="", help="stage numbers to run, comma-separated (default: every stage)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("the twin needs root")
    bad = False
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for name, inv in (("from", a.src), ("to", a.dst)):
            r = measure(zcube() + ["plan", inv, "-o", str(t / name)])
            assert r["rc"] == 0, r["stderr"]
        r = measure(zcube() + ["migrate", str(t / "from"), str(t / "to"), "-o", str(t / "mig"), "--unit", a.unit,
                               "--capacity-floor", a.capacity_floor])
        assert r["rc"] == 0, r["stderr"]
        stages = sorted((t / "mig").glob("stage-*"))
        wanted = {int(s) for s in a.stages.split(",") if s}
        print(f"{Path(a.src).name} -> {Path(a.dst).name}, --unit {a.unit}, floor {a.capacity_floor}: {len(stages)} stages; "
              f"twin test --pairs {a.pairs} --fib-walk, {a.runs} run(s) a stage")
        for st in stages:
            if wanted and int(st.name.split("-")[1]) not in wanted:
                continue
            runs = [one_run(st / "plan.json", t / f"tw-{st.name}-{k}", a.pairs) for k in range(a.runs)]
            bad |= any(r["failed"] for r in runs)
            print("\n".join(stage_lines(st.name, json.loads((st / "plan.json").read_text()), runs)), flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
