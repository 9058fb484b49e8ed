"""zcube drain / undrain interrupted (a real Ctrl-C mid-push) or lagging behind their switches, a drain whose hosts
step failed, and the messages a new user met (docs/drain.md)."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ROOT, interrupt_zcube, lab_session, run_zcube
from zcube_deploy.drain.run import _say_lines, graceful_now, shut_now


@pytest.fixture(scope="module")
def bgp_lab(tmp_path_factory):
    """lab-64 in mode bgp, rendered and pushed to a lab of its own. Yields (plan folder, plan file, lab, lab.json)."""
    from zcube_deploy import push_configs
    from zcube_deploy.lab.server import running_lab

    out = tmp_path_factory.mktemp("resume-bgp")
    r = run_zcube("build", str(ROOT / "tests/inventories/lab-64-bgp.yaml"), "-o", str(out), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    plan = json.loads((out / "plan.json").read_text())
    with running_lab(plan, out_dir=out / "lab") as lab:
        lab_json = str(out / "lab" / "lab.json")
        assert push_configs(plan, out, dry_run=False, lab=lab_json)["ok"]
        yield out, str(out / "plan.json"), lab, lab_json


def _running(lab, name) -> str:
    with lab_session(lab, name) as c:
        c.enable()
        return c.send_command("show running-config", read_timeout=30)


@pytest.mark.lab
def test_ctrl_c_mid_step_the_record_follows_push_and_a_rerun_goes_on(bgp_lab):
    """The trial's case: Ctrl-C while a step's push is in flight. Push lets the switch end its push (changed); the record
    must say that step is done (it said the step before, so audit and the next undrain saw a hand edit), and a re-run
    goes on from there: drain to drained, undrain back to the byte-identical running config."""
    out, plan_file, lab, lab_json = bgp_lab
    before = _running(lab, "ZC-O005")
    rec = out / "drains" / "switch-ZC-O005.json"
    work = out / "drain-work" / "switch-ZC-O005"
    # drain: Ctrl-C during step 3 (host ports): steer 1, hosts 2 (no --host-command: not run), host ports 3, fabric 4
    rc, so, se = interrupt_zcube(["drain", plan_file, "switch:ZC-O005", "--lab", lab_json, "--settle", "0.1"], work / "step-3" / "backups")
    assert rc == 130, so + se
    record = json.loads(rec.read_text())
    assert record["status"] == "draining: step 3 (host ports) done, then interrupted (ZC-O005 changed)", record["status"]
    assert len(shut_now(record)["ZC-O005"]) == 8 and "run `zcube drain` again" in so + se
    r = run_zcube("drain", plan_file, "switch:ZC-O005", "--lab", lab_json, "--settle", "0.1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "step 3 host ports: done before (the switches hold it)" in r.stdout and "step 4 fabric ports: ZC-O005 changed" in r.stdout
    assert json.loads(rec.read_text())["status"] == "drained"
    # undrain: Ctrl-C during step 2 (host ports), after step 1 (fabric ports) and its settle time
    rc, so, se = interrupt_zcube(["undrain", plan_file, "switch:ZC-O005", "--lab", lab_json, "--settle", "0.5"], work / "undrain-2" / "backups")
    assert rc == 130, so + se
    record = json.loads(rec.read_text())
    assert record["status"] == "undraining: step 2 (host ports) done, then interrupted (ZC-O005 changed)", record["status"]
    assert shut_now(record) == {} and graceful_now(record) == {"ZC-O005"}  # every port up, the steer still on
    u = run_zcube("undrain", plan_file, "switch:ZC-O005", "--lab", lab_json, "--settle", "0.1")
    assert u.returncode == 0 and "back as planned" in u.stdout, u.stdout + u.stderr
    assert "the record said" not in u.stdout  # the record held what the switch did: nothing to read back into it
    assert "undrain in 1 step: steer off" in u.stdout and "verify ZC-O005: 0 findings" in u.stdout
    assert _running(lab, "ZC-O005") == before and not rec.exists()


@pytest.mark.lab
def test_a_record_behind_its_switch_is_made_to_follow_it(bgp_lab):
    """A record that lags its switch (written before the push's end reached it: a kill, a second Ctrl-C): undrain
    reads the switch, recognises the drain's state it holds, says so and goes on; it was refused as a hand edit."""
    out, plan_file, lab, lab_json = bgp_lab
    before = _running(lab, "ZC-E006")
    rec = out / "drains" / "switch-ZC-E006.json"
    r = run_zcube("drain", plan_file, "switch:ZC-E006", "--lab", lab_json, "--settle", "0")
    assert r.returncode == 0, r.stdout + r.stderr
    record = json.loads(rec.read_text())
    record["steps"] = record["steps"][:2]  # steer and hosts: the host and fabric ports' steps not recorded
    record["status"] = "draining"
    rec.write_text(json.dumps(record))
    u = run_zcube("undrain", plan_file, "switch:ZC-E006", "--lab", lab_json, "--settle", "0")
    assert u.returncode == 0 and "back as planned" in u.stdout, u.stdout + u.stderr
    assert 'the record said "draining"; the switches hold: ZC-E006 after step 4 (fabric ports)' in u.stdout
    assert "undrain in 3 steps: fabric ports, host ports, steer off" in u.stdout
    assert _running(lab, "ZC-E006") == before and not rec.exists()


@pytest.mark.lab
def test_a_failed_hosts_step_is_recorded_refuses_push_and_undrain_says_what_it_does(lab64_build, tmp_path):
    """Mode static: step 1 is the hosts'. A host command that fails: the record says "failed at step 1 (hosts)" (it said
    "draining"), push --only the switch is refused (it was not: no port shut yet), undrain says it brings the hosts'
    ports back and does, or says its own step failed (it printed "NOT back as planned: None")."""
    from zcube_deploy import push_configs
    from zcube_deploy.lab.server import running_lab

    work = tmp_path / "out"
    shutil.copytree(lab64_build, work, ignore=shutil.ignore_patterns("drains", "drain-work"))
    plan_file = str(work / "plan.json")
    plan = json.loads((work / "plan.json").read_text())
    with running_lab(plan, out_dir=tmp_path / "lab") as lab:
        lab_json = str(tmp_path / "lab" / "lab.json")
        assert push_configs(plan, work, dry_run=False, lab=lab_json, only="ZC-O001")["ok"]
        before = _running(lab, "ZC-O001")
        r = run_zcube("drain", plan_file, "switch:ZC-O001", "--lab", lab_json, "--host-command", "sh -c 'exit 3' {port}")
        assert r.returncode == 1 and "failed at step 1 (hosts)" in r.stdout, r.stdout + r.stderr
        rec = work / "drains" / "switch-ZC-O001.json"
        assert json.loads(rec.read_text())["status"].startswith("failed at step 1 (hosts): 8 host commands failed")
        p = run_zcube("push", plan_file, "--configs", str(work), "--lab", lab_json, "--only", "ZC-O001", "--dry-run")
        assert p.returncode == 2 and "ZC-O001" in p.stderr and "is drained" in p.stderr, p.stdout + p.stderr
        u = run_zcube("undrain", plan_file, "switch:ZC-O001", "--lab", lab_json, "--host-command", "sh -c 'exit 4' {port} {state}")
        assert u.returncode == 1 and "undrain failed at step 1 (hosts): 8 host commands failed" in u.stdout, u.stdout + u.stderr
        assert "None" not in u.stdout and "(failed at step 1 (hosts): 8 host commands failed): undrain in 1 step: hosts" in u.stdout
        u = run_zcube("undrain", plan_file, "switch:ZC-O001", "--lab", lab_json, "--host-command", "true {port} {state}")
        assert u.returncode == 0 and "back as planned" in u.stdout, u.stdout + u.stderr
        assert _running(lab, "ZC-O001") == before and not rec.exists()


@pytest.mark.lab
def test_blast_radius_first_and_the_messages(bgp_lab, lab64_build, tmp_path):
    out, plan_file, lab, lab_json = bgp_lab
    r = run_zcube("drain", plan_file, "switch:ZC-O005", "--lab", lab_json, "--dry-run")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.index("8 GPU ports move to their other port") < r.stdout.index("step 1 steer"), r.stdout
    listed = out / "drain-work" / "dry-run-switch-ZC-O005" / "blast.json"
    assert f"... 2 more (every one in {listed})" in r.stdout.replace("\n", "")
    assert len(json.loads(listed.read_text())["host_ports"]) == 8
    # --settle below 0, PLAN and ELEMENT swapped
    s = run_zcube("drain", plan_file, "switch:ZC-O005", "--settle", "-1")
    assert s.returncode == 2 and "--settle" in s.stderr
    w = run_zcube("drain", "switch:ZC-O005", plan_file)
    assert w.returncode == 2 and "PLAN and ELEMENT swapped" in w.stderr and "no such plan file" not in w.stderr, w.stderr
    # another plan's render: drain's own way out, never push's --allow-edited
    c = run_zcube("drain", plan_file, "switch:ZC-O005", "--lab", lab_json, "--dry-run", "--configs", str(lab64_build))
    assert c.returncode == 2 and "--allow-edited" not in c.stderr and "give --configs the folder this plan was rendered to" in c.stderr, c.stderr
    # a stray JSON in drains/: said not to be a drain record, with what it holds
    (out / "drains").mkdir(exist_ok=True)
    stray = out / "drains" / "notes.json"
    stray.write_text(json.dumps({"owner": "me", "ticket": 42}))
    try:
        v = run_zcube("verify", plan_file, "--lab", lab_json, "--only", "ZC-O005")
        assert v.returncode == 2 and "it has no `element`, so it is no drain record (it holds: owner, ticket)" in v.stderr, v.stderr
        assert "None" not in v.stderr
    finally:
        stray.unlink()


def test_a_dry_run_step_that_changes_nothing_on_a_switch_says_no_change(tmp_path, capsys):
    empty, some = tmp_path / "A.diff", tmp_path / "B.diff"
    empty.write_text("")
    some.write_text("interface X\n shutdown\n")
    said: list[str] = []
    _say_lines({"devices": [{"name": "ZC-O001", "diff": str(empty)}, {"name": "ZC-E002", "diff": str(some)}]}, said.append)
    assert said == ["  ZC-O001: no change", f"  ZC-E002 ({some}):", "    interface X", "     shutdown"]
