"""Benchmark `zcube render` at 16k and 64k GPUs, and the per-switch render cost.

Targets (2-core machine): zcube-16k (256 switches, 2,048 servers) <= 3 s, zcube-64k (512
switches, 8,192 servers) <= 10 s; per-switch render at the 64k size within 2x of a plain Jinja2
loop over the same interfaces and routes. The render includes the hier_config self-check.
Run: python benchmarks/render.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import jinja2

from _measure import measure, report, zcube

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PLAIN = jinja2.Template(
    "hostname {{ hostname }}\n{% for i in interfaces %}interface {{ i.name }}\n description {{ i.description }}\n"
    " no switchport\n ip address {{ i.address }} {{ i.mask }}\n no shutdown\n!\n{% endfor %}"
    "{% for r in routes %}ip route {{ r.network }} {{ r.mask }} {{ r.next_hop }}\n{% endfor %}"
)


def per_switch(plan_path: Path) -> None:
    from zcube_deploy.plan.io import read_plan
    from zcube_deploy.render.jinja import template
    from zcube_deploy.render.views import PlanIndex, switch_view

    plan = read_plan(plan_path)
    index = PlanIndex(plan)
    tpl = template("ruijie_rgos", "switch.cfg.j2")
    sw = plan["switches"][0]
    view = switch_view(index, sw)

    def best(fn, n=30):
        times = []
        for _ in range(n):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times) * 1000, statistics.median(times) * 1000

    ours = best(lambda: tpl.render(switch_view(index, sw)))
    ours_tpl = best(lambda: tpl.render(view))
    plain = best(lambda: PLAIN.render(view))
    print(f"per switch at 64k size ({len(sw['interfaces'])} routed interfaces, {len(view['unused'])} unused, {len(sw['routes'])} routes):")
    print(f"  zcube view + template : best {ours[0]:.2f} ms  (median {ours[1]:.2f})")
    print(f"  zcube template only   : best {ours_tpl[0]:.2f} ms")
    print(f"  plain Jinja2 loop     : best {plain[0]:.2f} ms  (same interfaces and routes, dict items)")
    print(f"  ratio view+template / plain loop = {ours[0] / plain[0]:.2f}x (target <= 2x)")


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case, inv, target in (("zcube-16k", "zcube-16k.yaml", "<= 3 s"), ("zcube-64k", "zcube-64k.yaml", "<= 10 s")):
            d = Path(tmp) / case
            r = measure(zcube() + ["plan", str(ROOT / "inventories" / inv), "-o", str(d)])
            assert r["rc"] == 0, r["stderr"]
            runs = [measure(zcube() + ["render", str(d / "plan.json"), "-o", str(d)]) for _ in range(2)]
            best = min(runs, key=lambda x: x["wall_s"])
            rows.append({"case": case, "target": target, **best})
        report(rows, "zcube render (whole CLI run: read plan.json, render, self-check, write; best of 2)")
        per_switch(Path(tmp) / "zcube-64k" / "plan.json")


if __name__ == "__main__":
    main()
