"""Benchmark the lab's BGP model (lab/bgp.py) at 512 switches: zcube-64k in routing mode bgp.

In one process: the rendered configs typed into every simulated switch's CLI once (reported, not
part of the model), then 3 runs of: the first model of the fabric (parse the 512 running configs,
judge 2 x 65,536 sessions), `show ip route` on one switch (its best paths: one walk), the same
model asked again with nothing changed (the cache), and one config line + `show ip bgp summary`
on a switch (a new generation: the changed switch is re-parsed, the fabric re-judged). Each
figure as min / median, and as a ratio to a fixed pure-Python reference job timed in the same run.

Run: python benchmarks/lab_bgp.py [FOLDER]   (FOLDER: plan.json + configs/ of a bgp build; default:
plan + render inventories/zcube-64k.yaml with `routing: {mode: bgp}` into a temporary folder, ~2 min)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import reference_job  # noqa: E402




def build(d: Path) -> Path:
    inv = d / "zcube-64k-bgp.yaml"
    inv.write_text("routing:\n  mode: bgp\n" + (ROOT / "inventories" / "zcube-64k.yaml").read_text())
    cmd = [sys.executable, "-m", "zcube_deploy"]
    subprocess.run(cmd + ["plan", str(inv), "-o", str(d)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(cmd + ["render", str(d / "plan.json"), "-o", str(d)], check=True, stdout=subprocess.DEVNULL)
    return d


def load(plan: dict, configs: dict[str, list[str]]):
    """A lab with every rendered config typed into its switch's CLI (what a push does, without SSH)."""
    from zcube_deploy.lab.core import LabModel

    m = LabModel(plan)
    m.enable_secret = "x"
    t = time.perf_counter()
    for name, lines in configs.items():
        s = m.new_session(name)
        for ln in ("enable", "x", "configure terminal", *lines, "end"):
            s.feed(ln)
    return m, time.perf_counter() - t


def one_run(m) -> dict:
    m._bgp_key, m._bgp_parsed = None, {}  # forget everything: the first model parses every config again
    first = sorted(m.switches)[0]
    sess = m.new_session(first)
    sess.feed("enable"), sess.feed("x")
    out = {}
    t = time.perf_counter()
    model = m.bgp_model()
    out["first_model_s"] = time.perf_counter() - t
    t = time.perf_counter()
    text = sess.feed("show ip route")
    out["show_ip_route_s"] = time.perf_counter() - t
    t = time.perf_counter()
    assert m.bgp_model() is model
    out["cached_model_s"] = time.perf_counter() - t
    sess.feed("configure terminal"), sess.feed("interface Loopback 0"), sess.feed("description bench"), sess.feed("end")
    t = time.perf_counter()
    summary = sess.feed("show ip bgp summary")
    out["after_one_line_s"] = time.perf_counter() - t
    n_sessions = sum(len(v) for v in m.bgp_model().sessions.values())
    established = sum(s.state == "Established" for v in m.bgp_model().sessions.values() for s in v)
    out["_check"] = (n_sessions, established, text.count("\nB "), summary.count("\n"))
    return out


def main() -> None:
    from zcube_deploy.lab.server import PLAN_FIELDS
    from zcube_deploy.plan.io import read_plan

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(sys.argv[1]) if len(sys.argv) > 1 else build(Path(tmp))
        plan = read_plan(d, PLAN_FIELDS)
        configs = {}
        for sw in plan["switches"]:
            text = (d / "configs" / f"{sw['name']}.cfg").read_text()
            configs[sw["name"]] = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("!") and ln != "end"]
        m, load_s = load(plan, configs)
        runs, refs = [], []
        for _ in range(3):
            refs.append(reference_job())
            runs.append(one_run(m))
        ref = min(refs)
        print(f"lab BGP model, {len(configs)} switches; sessions (configured, Established), B routes on one switch, summary lines: "
              f"{runs[0]['_check']}")
        print(f"  reference job: min {ref:.3f} s, median {statistics.median(refs):.3f} s")
        print(f"  configs typed into the CLI (once, not the model): {load_s:.1f} s")
        for key in ("first_model_s", "show_ip_route_s", "cached_model_s", "after_one_line_s"):
            vals = [r[key] for r in runs]
            print(f"  {key:<18} min {min(vals):8.3f} s   median {statistics.median(vals):8.3f} s   min/reference {min(vals) / ref:7.2f}")


if __name__ == "__main__":
    main()
