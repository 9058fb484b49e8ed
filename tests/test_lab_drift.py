"""`zcube lab drift`: hand edits typed on a running lab, the audit finds each (docs/audit.md "Trying it on the lab")."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import run_zcube, zcube_exe
from zcube_deploy import push_configs
from zcube_deploy.audit.run import AuditOptions, audit_once
from zcube_deploy.access import credentials
from zcube_deploy.lab.server import running_lab


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def pushed(lab64_build, tmp_path_factory):
    plan = json.loads((lab64_build / "plan.json").read_text())
    lab_dir = tmp_path_factory.mktemp("driftlab") / "lab"
    with running_lab(plan, out_dir=lab_dir) as lab:
        lab_json = str(lab_dir / "lab.json")
        assert push_configs(plan, lab64_build, dry_run=False, lab=lab_json)["ok"]
        yield lab64_build, plan, lab_json, lab


def test_drifts_typed_on_the_lab_are_what_the_audit_finds(pushed, tmp_path):
    out, plan, lab_json, _ = pushed
    r = run_zcube("lab", "drift", str(out / "plan.json"), "--lab", lab_json, "--count", "12", "--seed", "4")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((Path(lab_json).parent / "drifts.json").read_text())
    assert len(doc["drifts"]) == 12 and all(d["applied"] for d in doc["drifts"]) and not doc["unreachable"]
    assert Counter(d["kind"] for d in doc["drifts"]) == Counter({k: 2 for k in doc["kinds"]})  # every kind, in turn
    res = audit_once(plan, str(out / "plan.json"), tmp_path / "a", AuditOptions(out, lab_path=lab_json), credentials(True))
    got = Counter((f["device"], f["kind"], f["section"]) for f in res.findings if f.get("source") == "config")
    assert got == Counter((d["switch"], d["kind"], d["section"]) for d in doc["drifts"])
    # the same seed draws the same edits (a dry run types nothing and writes nothing)
    before = (Path(lab_json).parent / "drifts.json").read_text()
    r = run_zcube("lab", "drift", str(out / "plan.json"), "--lab", lab_json, "--count", "12", "--seed", "4", "--dry-run")
    assert r.returncode == 0 and "dry run: not typed" in r.stdout
    assert (Path(lab_json).parent / "drifts.json").read_text() == before
    assert push_configs(plan, out, dry_run=False, lab=lab_json)["ok"]  # repaired for the next test


def test_a_switch_that_cannot_be_reached_is_named_and_its_edits_not_counted_as_typed(pushed, tmp_path):
    out, plan, lab_json, _ = pushed
    doc = json.loads(Path(lab_json).read_text())
    doc["switches"]["ZC-O001"]["port"] = _closed_port()  # nothing listens there
    bad = tmp_path / "lab.json"
    bad.write_text(json.dumps(doc))
    r = run_zcube("lab", "drift", str(out / "plan.json"), "--lab", str(bad), "--count", "24", "--kind", "config_stray",
                  "--configs", str(out))
    assert r.returncode == 1, r.stdout + r.stderr
    drifts = json.loads((tmp_path / "drifts.json").read_text())
    assert "ZC-O001" in drifts["unreachable"] and "ZC-O001: not drifted" in r.stdout
    mine = [d for d in drifts["drifts"] if d["switch"] == "ZC-O001"]
    assert mine and not any(d["applied"] for d in mine)
    assert all(d["applied"] for d in drifts["drifts"] if d["switch"] != "ZC-O001")
    assert push_configs(plan, out, dry_run=False, lab=lab_json)["ok"]


def test_bad_input_is_refused_with_where_and_why(pushed, tmp_path, lab64_build):
    out, plan, lab_json, _ = pushed
    r = run_zcube("lab", "drift", str(out / "plan.json"), "--lab", lab_json, "--kind", "port_shut,typo")
    assert r.returncode == 2 and "--kind" in r.stdout + r.stderr and "typo" in r.stdout + r.stderr
    r = run_zcube("lab", "drift", str(out / "plan.json"), "--lab", lab_json, "--count", "100000", "--kind", "missing_route", "--dry-run")
    assert r.returncode == 2 and "--count" in r.stdout + r.stderr
    other = json.loads(Path(lab_json).read_text())
    other["switches"] = {"R-L001": next(iter(other["switches"].values()))}  # a lab of another fabric
    (tmp_path / "other.json").write_text(json.dumps(other))
    r = run_zcube("lab", "drift", str(out / "plan.json"), "--lab", str(tmp_path / "other.json"))
    assert r.returncode == 2 and "does not run 16 of the plan's switches" in r.stdout + r.stderr
    assert not (tmp_path / "drifts.json").exists()


def test_a_port_shut_by_hand_is_a_push_not_cable_work(pushed, tmp_path):
    """`lab drift --kind port_shut`: the switch prints the port `disabled`, verify's down finding says shut (a push,
    no physical fix: it sent a technician to reseat cable F00009), and `lab fix` counts no physical fix for it."""
    out, plan, lab_json, lab = pushed
    r = run_zcube("lab", "drift", str(out / "plan.json"), "--lab", lab_json, "--count", "2", "--kind", "port_shut", "--seed", "9")
    assert r.returncode == 0, r.stdout + r.stderr
    shut = {(d["switch"], d["section"].split(" ", 1)[1]) for d in json.loads((Path(lab_json).parent / "drifts.json").read_text())["drifts"]}
    try:
        v = run_zcube("verify", str(out / "plan.json"), "--lab", lab_json, "-o", str(tmp_path / "v"))
        assert v.returncode == 1, v.stdout + v.stderr
        findings = json.loads((tmp_path / "v" / "verify.json").read_text())["findings"]
        down = [f for f in findings if f["kind"] == "down"]
        assert len(down) == len(shut) == 2 and {f["cause"] for f in down} == {"shut"} and not any(f["fix"] for f in down)
        for f in down:
            dev, port = next((e["device"], e["port"]) for e in f["ends"] if (e["device"], e["port"]) in shut)
            assert f"zcube push --only {dev}" in f["instruction"] and "reseat" not in f["instruction"], f
        lab_dir = Path(lab_json).parent
        proc = subprocess.Popen(zcube_exe() + ["lab", "fix", str(lab_dir), "--findings", str(tmp_path / "v" / "verify.json")],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "COLUMNS": "200"})
        while proc.poll() is None:  # the lab of this fixture takes control.json when asked (`zcube lab up` polls it)
            lab.runner.call(lab.poll_control, lab_dir)
            time.sleep(0.2)
        said = proc.communicate()[0]
        assert proc.returncode == 0, said
        assert f"0 physical fixes from 0 findings applied to the lab; {len(findings)} findings have no physical fix" in said
    finally:
        assert push_configs(plan, out, dry_run=False, lab=lab_json)["ok"]  # repaired for the next test
