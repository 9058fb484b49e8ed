"""Benchmark the data-plane twin (root, FRR, fping, nftables needed).

Targets (2-core machine): lab-64 `twin up` <= 5 s, all cross-group port pairs tested <= 10 s,
`twin down` <= 2 s; glm-1k in mode bgp: up and converged <= 60 s and <= 4 GB (memory the machine
loses while the twin is up: MemAvailable before up minus during), a silent fabric-link failure
converges <= 1 s with BFD 300 ms x 3 on the failed link's session.

Each figure: min and median of N runs (default 3). Reference job, measured in the same run: the
bare kernel work of a twin of lab-64's shape (24 namespaces, 192 veth pairs created and deleted
with `ip -batch`, no FRR, no configuration), so figures can be compared across machines.
Run: sudo python benchmarks/twin.py [--runs 3] [--only lab-64|glm-1k] [--glm-modes bgp,static]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _measure import measure, zcube

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def mem_available() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def reference_job() -> float:
    """Create and delete 24 namespaces and 192 veth pairs with ip -batch (lab-64's shape, nothing else)."""
    pre = f"ztref{os.getpid()}-"
    t = time.perf_counter()
    lines = [f"netns add {pre}{i}" for i in range(24)]
    subprocess.run(["ip", "-batch", "-"], input="\n".join(lines) + "\n", check=True, text=True)
    veths = [f"link add v{k}a index {30000 + 2 * k} netns {pre}{k % 16} type veth peer name v{k}b index {30001 + 2 * k} netns {pre}{16 + k % 8}"
             for k in range(192)]
    subprocess.run(["ip", "-batch", "-"], input="\n".join(veths) + "\n", check=True, text=True)
    subprocess.run(["ip", "-force", "-batch", "-"], input="\n".join(f"netns del {pre}{i}" for i in range(24)) + "\n", text=True)
    return time.perf_counter() - t


def stats(xs: list[float]) -> str:
    return f"min {min(xs):7.2f}  median {statistics.median(xs):7.2f}"


def lab64(runs: int, tmp: Path) -> list[str]:
    plan = tmp / "lab64"
    subprocess.run(zcube() + ["plan", str(ROOT / "inventories" / "lab-64.yaml"), "-o", str(plan)], check=True, stdout=subprocess.DEVNULL)
    up, test, down, ref, pairs = [], [], [], [], None
    for k in range(runs):
        ref.append(reference_job())
        d = tmp / f"twin-lab64-{k}"
        r = measure(zcube() + ["twin", "up", str(plan / "plan.json"), "-o", str(d)])
        assert r["rc"] == 0, r["stderr"]
        up.append(r["wall_s"])
        try:
            r = measure(zcube() + ["twin", "test", str(d)])
            rep = json.loads((d / "test-report.json").read_text())
            pairs = rep["baseline"]["pairs_tested"]
            assert rep["ok"], rep["checks"]
            test.append(r["wall_s"])
        finally:
            r = measure(zcube() + ["twin", "down", str(d)])
            assert r["rc"] == 0, r["stderr"]
            down.append(r["wall_s"])
    refm = min(ref)
    return [f"lab-64 (static, {runs} runs; reference job min {refm:.2f} s, median {statistics.median(ref):.2f} s)",
            f"  twin up          {stats(up)} s   ratio to reference {min(up) / refm:5.1f}x   target <= 5 s",
            f"  twin test (all {pairs} pairs, TTL 3 + TTL 2) {stats(test)} s   target <= 10 s",
            f"  twin down        {stats(down)} s   target <= 2 s"]


def glm1k(runs: int, tmp: Path, mode: str = "bgp") -> list[str]:
    inv = (ROOT / "inventories" / "glm-1k.yaml").read_text()
    if mode == "bgp":
        inv = re.sub(r"^platform: (\S+)$", r"platform: \1\nrouting:\n  mode: bgp", inv, count=1, flags=re.M)
    (tmp / f"glm-{mode}.yaml").write_text(inv)
    plan = tmp / f"glm-{mode}"
    subprocess.run(zcube() + ["plan", str(tmp / f"glm-{mode}.yaml"), "-o", str(plan)], check=True, stdout=subprocess.DEVNULL)
    up, mem, conv, sw_fib, down, ref = [], [], [], [], [], []
    for k in range(runs):
        ref.append(reference_job())
        d = tmp / f"twin-glm-{mode}-{k}"
        before = mem_available()
        r = measure(zcube() + ["twin", "up", str(plan / "plan.json"), "-o", str(d)])
        assert r["rc"] == 0, r["stderr"]
        up.append(r["wall_s"])
        time.sleep(2)
        mem.append((before - mem_available()) / 2**30)
        try:
            if mode == "bgp":
                subprocess.run(zcube() + ["twin", "test", str(d), "--pairs", "1000", "--gpu-pairs", "300", "--fail", "link:F00001",
                                          "--mode", "silent"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                rep = json.loads((d / "test-report.json").read_text())
                f = rep["failures"][0]
                conv.append(f["converge_ms"] if f["converged"] and f["converge_ms"] is not None else float("inf"))
            # a whole switch down (carrier): the surviving switches' FIBs free of its next hops (mode bgp: BGP)
            subprocess.run(zcube() + ["twin", "test", str(d), "--pairs", "1000", "--gpu-pairs", "300", "--fail", "switch:ZC-O001"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            f = json.loads((d / "test-report.json").read_text())["failures"][0]
            sw_fib.append(f["fib_converge_ms"] if f["fib_converge_ms"] is not None else float("inf"))
        finally:
            r = measure(zcube() + ["twin", "down", str(d)])
            down.append(r["wall_s"])
    refm = min(ref)
    out = [f"glm-1k ({mode}{', 1,024 sessions' if mode == 'bgp' else ''}, {runs} runs; reference job min {refm:.2f} s)",
           f"  twin up + converged  {stats(up)} s   ratio to reference {min(up) / refm:5.1f}x   target <= 60 s",
           f"  memory while up      {stats(mem)} GiB (MemAvailable drop)   target <= 4 GB"]
    if conv:
        out.append(f"  silent F00001 outage {stats(conv)} ms (BFD 300 ms x 3 on that session)   target <= 1000 ms")
    out += [f"  switch:ZC-O001 FIB   {stats(sw_fib)} ms (no surviving switch forwards to it)" + ("   target <= 1000 ms" if mode == "bgp" else ""),
            f"  twin down            {stats(down)} s"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", choices=["lab-64", "glm-1k"])
    ap.add_argument("--glm-modes", default="bgp,static", help="routing modes of the glm-1k runs (comma-separated)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("the twin benchmark needs root")
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        if a.only in (None, "lab-64"):
            lines += lab64(a.runs, Path(tmp))
        if a.only in (None, "glm-1k"):
            for mode in a.glm_modes.split(","):
                lines += glm1k(a.runs, Path(tmp), mode)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
