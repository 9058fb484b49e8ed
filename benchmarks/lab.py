"""Benchmark the lab: 512 simulated switches (the zcube-64k plan) in one process.

Measures the time from `zcube lab up` to lab.json (ready), the lab process's RSS, and one netmiko
`ruijie_os` session per switch at concurrency 32 running `show lldp neighbors detail`.
Targets (2-core machine): ready <= 15 s, <= 600 MB RSS. Run: python benchmarks/lab.py
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from _measure import wait_for_lab  # noqa: E402


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    from netmiko import ConnectHandler

    from zcube_deploy.access import DEFAULT_ENABLE_SECRET, DEFAULT_PASSWORD, DEFAULT_USERNAME

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        subprocess.run([sys.executable, "-m", "zcube_deploy", "plan", str(ROOT / "inventories" / "zcube-64k.yaml"), "-o", str(d)],
                       check=True, stdout=subprocess.DEVNULL)
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "zcube_deploy", "lab", "up", str(d / "plan.json"), "-o", str(d / "lab")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            wait_for_lab(proc, d / "lab", poll=0.05)
            ready = time.perf_counter() - t0
            doc = json.loads((d / "lab" / "lab.json").read_text())
            rss_ready = rss_mib(proc.pid)
            names = sorted(doc["switches"])

            def session(name: str) -> tuple[float, int]:
                ep = doc["switches"][name]
                t = time.perf_counter()
                c = ConnectHandler(device_type="ruijie_os", host=ep["host"], port=ep["port"], username=DEFAULT_USERNAME,
                                   password=DEFAULT_PASSWORD, secret=DEFAULT_ENABLE_SECRET, allow_agent=False, use_keys=False,
                                   ssh_config_file=None, conn_timeout=60, banner_timeout=60, auth_timeout=60)
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
    print(f"lab of {len(names)} switches (zcube-64k)")
    print(f"  ready (process start to lab.json): {ready:.1f} s   (target <= 15 s)")
    print(f"  lab peak RSS (VmHWM): {rss_ready:.0f} MiB at ready, {rss_after:.0f} MiB after the sessions "
          f"= {rss_after * 1.048576:.0f} MB   (target <= 600 MB)")
    print(f"  {len(names)} netmiko sessions at concurrency 32, `show lldp neighbors detail` each: {wall:.1f} s wall, "
          f"per session median {sorted(per)[len(per) // 2]:.2f} s, max {max(per):.2f} s; "
          f"{sum(r[1] for r in results)} neighbours read")


if __name__ == "__main__":
    main()
