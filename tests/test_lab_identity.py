"""Which lab a command reaches: one lab a folder, a lab.json only while its lab runs, and only a lab of the plan.

- `zcube lab up PLAN -o DIR` into the folder of a running lab is refused (exit 2, the running lab's pid); a lab that
  stops removes its lab.json; a lab.json a killed lab left is refused once ("is the lab running?"), never one refused
  connection a switch (access.lab_problems, the lock beside lab.json).
- verify, audit, push, drain, replace refuse a lab of another plan (glm-1k against a lab of lab-64: both name
  ZC-O001...), exit 2 naming both plans' identities; a lab.json that records no plan is refused too.
- `zcube lab fix --findings audit.json`: one message (it takes a verify.json), not one a fix.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, run_zcube, zcube_exe
from zcube_deploy.access import lab_problems
from zcube_deploy.plan.io import read_plan, wiring_identity, wiring_identity_of


def _wait_for(path: Path, proc: subprocess.Popen, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"no {path} within {seconds} s"
        time.sleep(0.2)


def _lab_up(plan: Path, d: Path) -> subprocess.Popen:
    return subprocess.Popen(zcube_exe() + ["lab", "up", str(plan), "-o", str(d)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.lab
def test_one_lab_a_folder_lab_json_only_while_it_runs_and_a_killed_lab_is_named_once(tmp_path, lab64_build):
    """A second `lab up` into a running lab's folder: exit 2 naming its pid, the first lab's lab.json and known_hosts
    untouched (the trial's second lab overwrote them, then left lab.json pointing at dead ports). The first lab killed
    (SIGKILL: its lab.json stays): verify and push say once that the lab does not run, and connect to nothing. A new lab
    takes the folder; stopped cleanly, it removes its lab.json."""
    plan = lab64_build / "plan.json"
    d = tmp_path / "lab"
    first = _lab_up(plan, d)
    try:
        _wait_for(d / "lab.json", first)
        before = {n: (d / n).read_bytes() for n in ("lab.json", "known_hosts")}
        assert json.loads(before["lab.json"])["pid"] == first.pid
        second = subprocess.run(zcube_exe() + ["lab", "up", str(plan), "-o", str(d)], capture_output=True, text=True, timeout=120)
        assert second.returncode == 2, second.stdout + second.stderr
        assert f"a running lab (pid {first.pid}) serves this folder" in second.stderr and f"kill -INT {first.pid}" in second.stderr
        assert {n: (d / n).read_bytes() for n in before} == before
    finally:
        first.kill()
        first.wait(30)
    assert (d / "lab.json").exists()  # a killed lab cannot clean up
    for args in (["verify", str(plan), "-o", str(tmp_path / "v")], ["push", str(plan), "--configs", str(lab64_build)]):
        r = run_zcube(*args, "--lab", str(d / "lab.json"), "--timeout", "2")
        assert r.returncode == 2, r.stdout + r.stderr
        said = f"is the lab running? ({d / 'lab.json'} from pid {first.pid}, not running)"
        assert (r.stdout + r.stderr).count(said) == 1 and "TCP connection" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert not (tmp_path / "v").exists()
    third = _lab_up(plan, d)
    try:
        for _ in range(300):  # the killed lab's lab.json stays until the new lab writes its own
            if (d / "lab.json").exists() and json.loads((d / "lab.json").read_text()).get("pid") == third.pid:
                break
            assert third.poll() is None, third.communicate()
            time.sleep(0.2)
        r = run_zcube("verify", str(plan), "--lab", str(d / "lab.json"), "-o", str(tmp_path / "v3"), "--only", "ZC-O001")
        assert r.returncode in (0, 1) and "is the lab running" not in r.stderr, r.stderr
    finally:
        third.send_signal(signal.SIGINT)
        third.communicate(timeout=60)
    assert third.returncode == 0 and not (d / "lab.json").exists() and (d / "wiring.json").exists()


@pytest.fixture(scope="module")
def lab64_lab_json(lab64_build, tmp_path_factory) -> Path:
    """A lab.json of lab-64 as `zcube lab up` writes it (its switches, its plan), no pid: its lab is not asked after."""
    plan = read_plan(lab64_build / "plan.json")
    d = tmp_path_factory.mktemp("lab64-lab")
    (d / "lab.json").write_text(json.dumps({"switches": {s["name"]: {"host": "127.0.0.1", "port": 1} for s in plan["switches"]},
                                            "plan": wiring_identity(plan)}))
    return d / "lab.json"


@pytest.mark.slow  # the glm-1k build
@pytest.mark.parametrize("cmd", [["verify", "-o", "OUT"], ["audit", "-o", "OUT"], ["push", "--configs", "CONFIGS", "--dry-run"],
                                 ["drain", "switch:ZC-O001", "--configs", "CONFIGS", "--dry-run"],
                                 ["replace", "ZC-O001", "--configs", "CONFIGS", "--dry-run", "--access-lines", "ACCESS"]])
def test_commands_refuse_a_lab_of_another_plan_naming_both(tmp_path, glm1k_build, lab64_build, lab64_lab_json, cmd):
    """glm-1k's plan against a lab of lab-64 (the trial: both name ZC-O001..., so a check of names alone let
    `--only`, drain and replace of ZC-O001 through): exit 2 naming the lab's plan and this one, nothing written."""
    plan = glm1k_build / "plan.json"
    args = [{"OUT": str(tmp_path / "out"), "CONFIGS": str(glm1k_build), "ACCESS": str(ROOT / "inventories" / "lab-access-lines.txt")}.get(a, a)
            for a in cmd]
    r = run_zcube(args[0], str(plan), *args[1:], "--lab", str(lab64_lab_json))
    assert r.returncode == 2, r.stdout + r.stderr
    lab, this = wiring_identity(read_plan(lab64_build / "plan.json")), wiring_identity_of(plan)
    assert (f"the lab runs another plan (cluster 'lab64', cables sha256 {lab['cables_sha256'][:12]}); "
            f"this plan is cluster '{this['cluster']}', cables sha256 {this['cables_sha256'][:12]}") in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "out").exists()


def test_the_lab_of_the_plan_passes_and_a_lab_json_without_a_plan_is_refused(tmp_path, lab64_build):
    """The check's other cases, in access.lab_problems: the lab's own plan passes; so does a plan the caller says the
    lab may run (an expansion's old plan, `zcube expand --push` before `zcube lab grow`); a lab.json without the
    record is refused with the record to add; a pid whose lock nobody holds is a lab that does not run."""
    plan = read_plan(lab64_build / "plan.json")
    ident = wiring_identity(plan)
    other = {**ident, "cables_sha256": "0" * 64}
    path = tmp_path / "lab.json"
    assert lab_problems(path, {"switches": {}, "plan": ident}, [ident]) == []
    assert lab_problems(path, {"switches": {}, "plan": ident}, [other, ident]) == []
    [p] = lab_problems(path, {"switches": {}, "plan": ident}, [other])
    assert "the lab runs another plan" in p.message
    [p] = lab_problems(path, {"switches": {}}, [ident])
    assert "records no plan" in p.message and json.dumps(ident, sort_keys=True) in p.hint
    assert lab_problems(path, {"switches": {}, "plan": ident, "pid": 4242}, [ident]) == []  # no lock file: cannot be told
    (tmp_path / "lab.lock").write_text("4242\n")  # a lab's lock file nobody holds: the lab does not run
    [p] = lab_problems(path, {"switches": {}, "plan": ident, "pid": 4242}, [ident])
    assert p.message == f"is the lab running? ({path} from pid 4242, not running)"


def test_the_wiring_identity_read_without_the_cables_is_the_plans(tmp_path, lab64_build):
    """plan.io.wiring_identity_of (push and the Nornir inventory read no cables) gives wiring_identity's digest, from
    the canonical file and from the same plan written otherwise (read whole)."""
    path = lab64_build / "plan.json"
    ident = wiring_identity(read_plan(path))
    assert wiring_identity_of(path) == wiring_identity_of(lab64_build) == ident
    pretty = tmp_path / "plan.json"
    pretty.write_text(json.dumps(json.loads(path.read_text()), indent=2))
    assert wiring_identity_of(pretty) == ident


def test_lab_fix_takes_a_verify_json_and_says_so_once_for_an_audit_json(tmp_path, lab64_plan):
    """An audit.json given to `lab fix --findings`: one problem (the trial printed 21 'expected a mapping, found str')."""
    lab = tmp_path / "lab"
    lab.mkdir()
    (lab / "lab.json").write_text(json.dumps({"switches": {"ZC-O001": {"host": "127.0.0.1", "port": 1}}, "plan": wiring_identity(lab64_plan)}))
    audit = tmp_path / "audit.json"
    audit.write_text(json.dumps({"cluster": "lab64", "mode": "live", "runner": "threads", "scope": ["ZC-O001"], "summary": {},
                                 "unreachable": {}, "findings": [{"source": "config", "fix": ["interface X", "no shutdown"]}] * 21}))
    r = run_zcube("lab", "fix", str(lab), "--findings", str(audit), "--wait", "0.5")
    assert r.returncode == 2, r.stderr
    assert "(1 problem)" in r.stderr and "an audit report (audit.json), not a verify.json" in r.stderr, r.stderr
    assert "expected a mapping" not in r.stderr and "zcube push" in r.stderr and not (lab / "control.json").exists()
