"""Benchmark the lab: 512 simulated switches (the zcube-64k plan) in one process.

Measures the time from `zcube lab up` to lab.json (ready), the lab process's RSS, and one netmiko
`ruijie_os` session per switch at concurrency 32 running `show lldp neighbors detail`.
Targets (2-core machine): ready <= 15 s, <= 600 MB RSS. Run: python benchmarks/lab.py [--runs N] [--plan DIR]
(one plan, N lab runs; each run also times the fixed reference job, so a loaded machine shows as a ratio).
"""

from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from _measure import min_median, reference_job, reference_ratio, wait_for_lab  # noqa: E402


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def one_run(plan: Path, lab_dir: Path) -> dict:
    """Start `zcube lab up` on ``plan``, wait for lab.json, run 512 netmiko sessions at concurrency 32, stop it."""
    from netmiko import ConnectHandler

    from zcube_deploy.access import DEFAULT_ENABLE_SECRET, DEFAULT_PASSWORD, DEFAULT_USERNAME, load_lab

    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "zcube_deploy", "lab", "up", str(plan), "-o", str(lab_dir)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_lab(proc, lab_dir, poll=0.05)
        ready = time.perf_counter() - t0
        endpoints, _ = load_lab(lab_dir / "lab.json")
        rss_ready = rss_mib(proc.pid)
        print(f"  ready in {ready:.1f} s, VmHWM {rss_ready:.0f} MiB", flush=True)
        names = sorted(endpoints)

        def session(name: str) -> tuple[float, int]:
            host, port = endpoints[name]
            t = time.perf_counter()
            c = ConnectHandler(device_type="ruijie_os", host=host, port=port, username=DEFAULT_USERNAME,
                               password=DEFAULT_PASSWORD, secret=DEFAULT_ENABLE_SECRET, allow_agent=False, use_keys=False,
                               ssh_config_file=None, conn_timeout=60, banner_timeout=60, auth_timeout=60,
                               read_timeout_override=120)  # a loaded machine: prompts may take long
            out = c.send_command("show lldp neighbors detail", read_timeout=120)
            c.disconnect()
            return time.perf_counter() - t, out.count("Neighbor index")

        t1 = time.perf_counter()
        with ThreadPoolExecutor(32) as pool:
            results = list(pool.map(session, names))
        wall = time.perf_counter() - t1
        rss_after = rss_mib(proc.pid)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
    per = [r[0] for r in results]
    return {"switches": len(names), "ready": ready, "rss_ready": rss_ready, "rss_after": rss_after, "wall": wall,
            "median": sorted(per)[len(per) // 2], "max": max(per), "neighbours": sum(r[1] for r in results)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--plan", default=None, help="a folder with the zcube-64k plan.json (default: plan it first)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(args.plan) if args.plan else Path(tmp)
        if not args.plan:
            subprocess.run([sys.executable, "-m", "zcube_deploy", "plan", str(ROOT / "inventories" / "zcube-64k.yaml"), "-o", str(d)],
                           check=True, stdout=subprocess.DEVNULL)
        runs, ref = [], []
        for i in range(args.runs):
            ref.append(reference_job())
            r = one_run(d / "plan.json", Path(tmp) / f"lab{i}")
            runs.append(r)
            print(f"run {i + 1}: {r['switches']} switches ready in {r['ready']:.1f} s; peak RSS (VmHWM) {r['rss_ready']:.0f} MiB at ready, "
                  f"{r['rss_after']:.0f} MiB after the sessions = {r['rss_after'] * 1.048576:.0f} MB; sessions {r['wall']:.1f} s wall, "
                  f"per session median {r['median']:.2f} s, max {r['max']:.2f} s; {r['neighbours']} neighbours read", flush=True)
    peaks = [r["rss_after"] for r in runs]
    print(f"lab of {runs[0]['switches']} switches (zcube-64k), {len(runs)} runs")
    print(f"  ready (process start to lab.json): {min_median([r['ready'] for r in runs], digits=1)}   (target <= 15 s)")
    print(f"  peak RSS (VmHWM, after the sessions): min {min(peaks):.0f} MiB, median {statistics.median(peaks):.0f} MiB "
          f"= {statistics.median(peaks) * 1.048576:.0f} MB   (target <= 600 MB)")
    print(f"  512 sessions: {min_median([r['wall'] for r in runs], digits=1)}")
    print(f"  {reference_ratio([r['ready'] for r in runs], ref)} (ready time / reference job)")


if __name__ == "__main__":
    main()
