"""`zcube expand --push` end to end on the lab, as a user runs it (docs/expand.md).

lab-64 planned for 8 servers with 4 installed, pushed and verified clean on a lab; then the inventory
grows to 8 servers: `zcube expand` (offline), `zcube expand --push --dry-run` (the diffs push computes
against the running switches equal the offline change sets), `zcube expand --push` before the new
servers are cabled (canary push of the changed switches only; verify finds the new cables missing, the
old ones clean: exit 1), `zcube lab grow` (the technicians rack and cable the new servers), and
`zcube expand --push` again (nothing left to push; verify of the new links and the old ones clean).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_zcube, zcube_exe

pytestmark = pytest.mark.lab


def _inventory(path: Path, count: int) -> Path:
    data = yaml.safe_load((ROOT / "inventories" / "lab-64.yaml").read_text())
    data["topology"]["capacity_servers"] = 8
    data["servers"]["generate"]["count"] = count
    path.write_text(yaml.safe_dump(data))
    return path


def _ok(r, code: int = 0) -> str:
    assert r.returncode == code, r.stdout + r.stderr
    return r.stdout


def test_expand_on_a_lab(tmp_path):
    small, big = _inventory(tmp_path / "small.yaml", 4), _inventory(tmp_path / "big.yaml", 8)
    old, grown, lab = tmp_path / "old", tmp_path / "grown", tmp_path / "lab"
    _ok(run_zcube("plan", str(small), "-o", str(old)))
    _ok(run_zcube("render", str(old / "plan.json"), "-o", str(old)))
    proc = subprocess.Popen(zcube_exe() + ["lab", "up", str(old / "plan.json"), "-o", str(lab)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(150):
            if (lab / "lab.json").exists():
                break
            time.sleep(0.2)
        labj = str(lab / "lab.json")
        _ok(run_zcube("push", str(old / "plan.json"), "--configs", str(old), "--lab", labj))
        _ok(run_zcube("verify", str(old / "plan.json"), "--lab", labj, "-o", str(tmp_path / "v0")))
        # offline: the grown plan and its change sets
        _ok(run_zcube("expand", str(old / "plan.json"), str(big), "-o", str(grown)))
        rep = json.loads((grown / "expand.json").read_text())
        changed = rep["changed_switches"]
        assert changed == sorted([f"ZC-O{n:03d}" for n in range(1, 16, 2)] + ["ZC-E010", "ZC-E012", "ZC-E014", "ZC-E016"])
        # dry run: push's own diffs against the running switches are the offline change sets, line for line
        _ok(run_zcube("expand", str(old / "plan.json"), str(big), "-o", str(grown), "--push", "--lab", labj, "--dry-run"))
        report = json.loads((grown / "push-report.json").read_text())
        assert sorted(d["name"] for d in report["devices"]) == changed
        for name in changed:
            assert (grown / "push" / f"{name}.diff").read_text() == (grown / "changes" / f"{name}.diff").read_text(), name
        # pushed before the new servers are cabled (known-bad): the push goes through, canary first, the changed
        # switches only; verify finds every new cable missing and every old one clean: exit 1
        out = _ok(run_zcube("expand", str(old / "plan.json"), str(big), "-o", str(grown), "--push", "--lab", labj, "--canary", "2"), 1)
        report = json.loads((grown / "push-report.json").read_text())
        assert sorted(d["name"] for d in report["devices"]) == changed
        assert {d["status"] for d in report["devices"]} == {"changed"}
        assert "verify: new cables 0/64 clean, old cables 128/128 clean" in out, out
        # with where the findings are and what to do (it said exit 1 and nothing more)
        assert f"the new cables' findings, which cable to move where: {grown / 'verify' / 'verify.json'} (not cabled yet? cable " \
               f"them from {grown / 'new-cables' / 'cabling.xlsx'}, then run this again)" in out, out
        # the technicians rack and cable the new servers; the lab learns them
        out = _ok(run_zcube("lab", "grow", str(lab), str(grown / "plan.json")))
        assert out.startswith("64 cables connected and 4 servers racked"), out
        # now: nothing left to push, and verify of the new links and the old ones is clean
        out = _ok(run_zcube("expand", str(old / "plan.json"), str(big), "-o", str(grown), "--push", "--lab", labj))
        report = json.loads((grown / "push-report.json").read_text())
        assert {d["status"] for d in report["devices"]} == {"unchanged"}
        assert "verify: new cables 64/64 clean, old cables 128/128 clean, 0 other findings, 0 not checked" in out, out
        assert "findings" not in out.split("0 not checked", 1)[1], out
        # a second grow adds nothing
        assert _ok(run_zcube("lab", "grow", str(lab), str(grown / "plan.json"))).startswith("0 cables connected and 0 servers racked")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
