"""Measure drains in the data-plane twin of glm-1k in mode bgp (issue 26, item 2; root, FRR, nftables).

Target: the drain of any one switch loses 0 packets on the port pairs not ending on its ports,
leaves 0 GPU pairs unreachable (= `zcube analyze`'s prediction), and the undrain restores every
FIB exactly (every namespace: switches and servers).

glm-1k with `routing: {mode: bgp}` added (the shipped inventory is static) is planned, the twin is
built once, then each element is drained and undrained in turn with `zcube twin test --drain`
(`--pairs` cross-group port pairs in the baseline, `--gpu-pairs` after each drain), and one row per
element is printed. Reference job (as benchmarks/twin.py): 24 namespaces and 192 veth pairs
created and deleted, measured before each drain.

Run: sudo python benchmarks/twin_drain.py [--elements switch:ZC-O001,switch:ZC-O003@no-hosts,link:F00001|all-switches]
     [--probe-period 500] [--probe-rate 2000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _measure import measure, zcube
from twin import reference_job

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ("switch:ZC-O001,switch:ZC-E002,switch:ZC-O009,switch:ZC-E010,switch:ZC-O005,switch:ZC-E006,"
           "switch:ZC-O003@no-hosts,link:F00001")


def bgp_inventory(out: Path) -> Path:
    """inventories/glm-1k.yaml with `routing: {mode: bgp}` added."""
    text = (ROOT / "inventories" / "glm-1k.yaml").read_text()
    text = re.sub(r"^platform: (\S+)$", r"platform: \1\nrouting:\n  mode: bgp", text, count=1, flags=re.M)
    path = out / "glm-1k-bgp.yaml"
    path.write_text(text)
    return path


def elements(spec: str, plan: dict) -> list[str]:
    """The ``--elements`` items in order; the item ``all-switches`` stands for every switch of the plan
    (``switch:NAME``, in the plan's order), so a run covers the whole fabric, not a sample."""
    out = []
    for item in spec.split(","):
        if item == "all-switches":
            out.extend(f"switch:{s['name']}" for s in plan["switches"])
        else:
            out.append(item)
    return out


def row(m: dict, wall: float, ref: float) -> str:
    c = m["comparison"] or {}
    return (f"{m['element']:<16} {m['order']:<8} lost {m['through_lost']:>3} of {m['through_pairs']:>4} pairs "
            f"(crossing {m['crossing_lost']}/{m['crossing_pairs']}, {m['crossing_outage_ms'] or 0:.0f} ms)  "
            f"ending {m['ending_pairs']} (early {m['ending_lost_before_ports']})  "
            f"GPU unreach {c.get('gpu_unreachable')}/{c.get('gpu_pairs')} pred {m['predicted_gpu_pairs_without_path']}  "
            f"FIB diffs {m['fib_diff_count']}/{m['fib_namespaces']}  undrain lost {m['undrain_through_lost']}  "
            f"steer {m.get('steer_ms')} ms  move {m.get('move_ms')} ms  "
            f"lag {m['probe_max_lag_ms']:.0f} ms  {'ok' if m['ok'] else 'FAIL'}  ({wall:.0f} s, ref {ref:.2f} s)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--elements", default=DEFAULT, help="ELEMENT[@ORDER],... or all-switches (every switch of the plan)")
    ap.add_argument("--probe-period", default="500")
    ap.add_argument("--probe-rate", default="2000")
    ap.add_argument("--pairs", default="500")
    ap.add_argument("--gpu-pairs", default="300")
    ap.add_argument("--undrain-order", default="staged")
    ap.add_argument("--keep", default=None, help="folder for the plan, the twin and the reports (default: a temporary one)")
    a = ap.parse_args()
    tmp = Path(a.keep or tempfile.mkdtemp(prefix="zcube-twin-drain-"))
    tmp.mkdir(parents=True, exist_ok=True)
    subprocess.run(zcube() + ["plan", str(bgp_inventory(tmp)), "-o", str(tmp / "plan")], check=True, stdout=subprocess.DEVNULL)
    items = elements(a.elements, json.loads((tmp / "plan" / "plan.json").read_text()))
    twin = tmp / "twin"
    r = measure(zcube() + ["twin", "up", str(tmp / "plan" / "plan.json"), "-o", str(twin)])
    assert r["rc"] == 0, r["stderr"]
    print(f"glm-1k bgp twin up in {r['wall_s']:.1f} s", flush=True)
    rows, results, refs, failed = [], [], [], []
    try:
        for item in items:
            el, _, order = item.partition("@")  # ELEMENT@ORDER: a known-bad --drain-order for comparison
            refs.append(reference_job())
            report = tmp / f"report-{el.replace(':', '-')}{'-' + order if order else ''}.json"
            report.unlink(missing_ok=True)  # a report left by an earlier run (--keep) must not pass for this one's
            r = measure(zcube() + ["twin", "test", str(twin), "--pairs", a.pairs, "--gpu-pairs", a.gpu_pairs, "--drain", el,
                                   "--probe-period", a.probe_period, "--probe-rate", a.probe_rate, "--undrain-order", a.undrain_order,
                                   "--report", str(report)] + (["--drain-order", order] if order else []))
            m = measurement(report)
            if m is None:  # the test did not get as far as measuring: say so, and go on with the other elements
                failed.append(item)
                rows.append(f"{item:<16} NOT MEASURED: zcube twin test exited {r['rc']} after {r['wall_s']:.0f} s without a "
                            f"measurement; its stderr ends: {r['stderr'].strip()[-600:]}")
            else:
                results.append(m)
                rows.append(row(m, r["wall_s"], refs[-1]))
            print(rows[-1], flush=True)
    finally:
        subprocess.run(zcube() + ["twin", "down", str(twin)], stdout=subprocess.DEVNULL)
    (tmp / "drains.json").write_text(json.dumps(results, indent=1) + "\n")
    print(f"reference job min {min(refs):.2f} s, median {statistics.median(refs):.2f} s; reports in {tmp}")
    if failed:
        print(f"not measured: {', '.join(failed)}")
    return 0 if not failed and all(m["ok"] for m in results) else 1


def measurement(report: Path) -> dict | None:
    """The drain's measurement in ``report``, or None when `zcube twin test` wrote none (it failed before)."""
    try:
        return json.loads(report.read_text())["measurements"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return None


if __name__ == "__main__":
    sys.exit(main())
