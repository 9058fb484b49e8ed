"""Benchmark `zcube cabling` (workbooks + labels + CSVs + DOT) at 16k and 64k GPUs.

Targets (2-core machine, issue #17): zcube-16k (49,152 cables) <= 12 s, zcube-64k (196,608 cables)
<= 45 s, memory <= 1 GB. Both sizes are above the catalog's split size (20,000 cables), so they
write one workbook per layout row plus a summary workbook, on every core.

Each case runs --runs times (default 3), interleaved with a fixed reference job (pure-Python CPU
work of about a second: the machine is shared, so the ratio to the reference tells more than the
seconds). Memory: the peak RSS of the largest process (what ru_maxrss reports) and the peak of the
whole process tree's proportional set size (PSS, shared pages split among the processes that share
them), and the CPU time of every process in the tree, sampled every 0.1 s from /proc.
Run: python benchmarks/cabling.py [--only 16k|64k] [--runs N]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _measure import min_median, plan_case, reference_ratio, selected, size_args, zcube


REFERENCE = [sys.executable, "-c", "import random; r = random.Random(1); "
             "rows = sorted((r.random(), str(i)) for i in range(600_000)); "
             "s = ''.join(f'{a:.6f},{b}\\n' for a, b in rows); print(len(s))"]


TICK = os.sysconf("SC_CLK_TCK")


def _tree(root: int, cpu: dict[int, float]) -> int:
    """Sum of PSS (bytes) of ``root`` and its descendants; records each one's CPU seconds so far in ``cpu``."""
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            fields = (p / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        stats[int(p.name)] = fields
        children.setdefault(int(fields[1]), []).append(int(p.name))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        if pid in stats:  # utime + stime (fields 14 and 15 of stat; here 11 and 12 after the name)
            cpu[pid] = max(cpu.get(pid, 0.0), (int(stats[pid][11]) + int(stats[pid][12])) / TICK)
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
                    break
        except OSError:
            pass
    return total


def run(cmd: list[str]) -> dict:
    """Wall time, largest-process peak RSS (ru_maxrss) and the tree's peak PSS of one run of ``cmd``."""
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], "
                             "stdout=subprocess.DEVNULL, stderr=subprocess.PIPE); "
                             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024); sys.stderr.write(r.stderr.decode()[-2000:]); "
                             "sys.exit(r.returncode)", *cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    cpu: dict[int, float] = {}
    stop = threading.Event()

    def sample():
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree(proc.pid, cpu))
            stop.wait(0.1)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - t
    stop.set()
    th.join()
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err}")
    return {"wall_s": wall, "rss": int(out.strip()), "cpu_s": sum(cpu.values()), "cpu_max_s": max(cpu.values(), default=0.0), "pss": peak}


def main() -> None:
    args = size_args(["16k", "64k"])
    cases = [("zcube-16k", "zcube-16k.yaml", 12.0), ("zcube-64k", "zcube-64k.yaml", 45.0)]
    print(f"zcube cabling (whole CLI run: read plan.json, workbooks, labels.csv, CSVs, DOT); {args.runs} runs each, "
          "interleaved with the reference job")
    with tempfile.TemporaryDirectory() as tmp:
        for case, inv, target in selected(cases, args.only):
            d = plan_case(tmp, case, inv)
            ours, ref = [], []
            for _ in range(args.runs):
                ref.append(run(REFERENCE))
                ours.append(run(zcube() + ["cabling", str(d / "plan.json"), "-o", str(d)]))
            books = sorted((d / "cabling").glob("*.xlsx")) or [d / "cabling.xlsx"]
            size = sum(b.stat().st_size for b in books)
            w = [x["wall_s"] for x in ours]
            rw = [x["wall_s"] for x in ref]
            print(f"  {case}: {len(books)} workbook(s), {size / 2**20:.0f} MiB")
            print(f"    wall   {min_median(w)}   target <= {target:g} s  {'OK' if min(w) <= target else 'MISSED'}")
            print(f"    {reference_ratio(w, rw)}")
            c = [x["cpu_s"] for x in ours]
            print(f"    CPU time (user + system of every process, sampled)  min {min(c):6.2f} s  median {statistics.median(c):6.2f} s;  "
                  f"reference job min {min(x['cpu_s'] for x in ref):6.2f} s")
            print(f"    busiest single process (the main one: the critical path on an idle 2-core machine) "
                  f"min {min(x['cpu_max_s'] for x in ours):6.2f} s CPU; idle-machine estimate max(that, total / 2) = "
                  f"{min(max(x['cpu_max_s'], x['cpu_s'] / 2) for x in ours):6.2f} s")
            print(f"    memory  peak RSS of the largest process {max(x['rss'] for x in ours) / 2**20:.0f} MiB, "
                  f"peak PSS of the whole process tree {max(x['pss'] for x in ours) / 2**20:.0f} MiB   target <= 1024 MiB")


if __name__ == "__main__":
    main()
