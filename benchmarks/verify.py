"""Benchmark `zcube verify` of zcube-16k (256 switches): live against the lab at concurrency 32 (after a
push, so the fabric is configured), and offline from the recordings that live run made.

Targets (2-core machine): live <= 90 s, offline <= 10 s. Run: python benchmarks/verify.py
"""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from _measure import prepare_16k_lab
from _measure import zcube as _zcube

ROOT = Path(__file__).resolve().parents[1]


def zcube(*args: str) -> list[str]:
    return [*_zcube(), *args]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        lab = prepare_16k_lab(d, ("--faults", "random:10", "--seed", "3"))
        try:
            lab_json = str(d / "lab" / "lab.json")
            subprocess.run(zcube("push", str(d / "plan.json"), "--configs", str(d), "--lab", lab_json, "--concurrency", "32"),
                           capture_output=True, check=False)
            t = time.perf_counter()
            subprocess.run(zcube("verify", str(d / "plan.json"), "--lab", lab_json, "-o", str(d / "v1"), "--record", str(d / "rec"),
                                 "--concurrency", "32"), capture_output=True)
            live = time.perf_counter() - t
        finally:
            lab.send_signal(signal.SIGINT)
            lab.wait(60)
        t = time.perf_counter()
        subprocess.run(zcube("verify", str(d / "plan.json"), "--from", str(d / "rec"), "-o", str(d / "v2")), capture_output=True)
        offline = time.perf_counter() - t
        a = json.loads((d / "v1" / "verify.json").read_text())
        b = json.loads((d / "v2" / "verify.json").read_text())
        expected = json.loads((d / "lab" / "faults.json").read_text())["expected_findings"]
    print("zcube verify, zcube-16k (256 switches), 10 injected cabling faults")
    print(f"  live, concurrency 32 (with --record): {live:6.1f} s   (target <= 90 s)   findings {a['summary']['by_kind']}")
    print(f"  offline from the recordings:          {offline:6.1f} s   (target <= 10 s)  same findings: {a['findings'] == b['findings']}")
    print(f"  injected faults: {len(expected)}; found with the right kind and cables: "
          f"{sum(1 for e in expected if any(f['kind'] == e['kind'] and f['cables'] == e['cables'] for f in a['findings']))}")


if __name__ == "__main__":
    main()
