"""Push reads back what it claims (issue 23 item 1), over the lab's lenient CLI: a rejected `interface X` line stops
its block and is reported in the device's words; after the rollback the whole running config is read back and
compared with the backup: `rolled_back` only when equal, else `rollback_incomplete` naming the lines."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT, run_zcube
from zcube_deploy.access import DEFAULT_ENABLE_SECRET, DEFAULT_PASSWORD, DEFAULT_USERNAME
from zcube_deploy.lab.server import running_lab
from zcube_deploy.platforms.ruijie_rgos import config_drift
from zcube_deploy.platforms.ruijie_rgos import driver as rgos_driver
from zcube_deploy.push import Credentials, PushOptions, push_all, select_targets

pytestmark = pytest.mark.lab
CREDS = Credentials(DEFAULT_USERNAME, DEFAULT_PASSWORD, DEFAULT_ENABLE_SECRET)
PORT = "TwoHundredGigabitEthernet 0/5:1"  # a fabric port: its block carries `bfd interval ...`
LENIENT = {"devices": {"ZC-O001": {"reject_lines": [f"interface {PORT}"], "sublines": "global"},
                       "ZC-E002": {"reject_lines": [f"interface {PORT}"]}}}


@pytest.fixture(scope="module")
def bgp(tmp_path_factory):
    """lab-64 in mode bgp: a fabric port's block carries `bfd interval ...`, a valid global command on RGOS."""
    out = tmp_path_factory.mktemp("bgp")
    r = run_zcube("build", str(ROOT / "tests" / "inventories" / "lab-64-bgp.yaml"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    return out


def plan_of(d):
    return json.loads((d / "plan.json").read_text())


def running(lab, name):
    return lab.runner.call(lambda: lab.model.switches[name].running_config())


def push(lab, built, tmp_path, only="ZC-O001,ZC-E002"):
    opts = PushOptions(concurrency=4, known_hosts=str(lab.out / "known_hosts"), timeout=5, read_timeout=20)
    return push_all(select_targets(plan_of(built), built, only, lab.endpoints), CREDS, opts, tmp_path / "p")


@pytest.fixture
def lab(bgp, tmp_path):
    with running_lab(plan_of(bgp), faults=LENIENT, out_dir=tmp_path / "lab") as lab:
        lab.out = tmp_path / "lab"
        yield lab


def test_a_rejected_interface_stops_its_block_and_the_rollback_is_read_back(lab, bgp, tmp_path):
    before = {n: running(lab, n) for n in ("ZC-O001", "ZC-E002")}
    report = push(lab, bgp, tmp_path)
    dev = {d["name"]: d for d in report["devices"]}
    for name in ("ZC-O001", "ZC-E002"):  # the lenient and the strict CLI end alike
        d = dev[name]
        assert d["status"] == "rolled_back", d
        assert f"the device rejected 'interface {PORT}': % Invalid input detected" in d["error"]  # the device's words
        assert config_drift(running(lab, name), before[name]) == []  # the whole config, not only the scope
        sent = lab.runner.call(lambda name=name: list(lab.model.switches[name].config_log))
        after = sent[sent.index(f"interface {PORT}") + 1]
        assert not after.startswith(("description", "bfd interval", "no switchport")), f"{name}: the rejected block went on: {after}"
    assert not report["ok"]


def test_a_block_sent_whole_leaves_stray_lines_and_says_so(lab, bgp, tmp_path, monkeypatch):
    """The known-bad case of the read-back: with the blocks sent whole (the driver before this change), the lenient
    CLI takes the rejected port's `bfd interval` in global mode, the scoped rollback cannot see it, and the switch
    ends `rollback_incomplete` naming it, not `rolled_back`."""
    monkeypatch.setattr(rgos_driver, "send_units", lambda lines: [lines[i:i + 200] for i in range(0, len(lines), 200)])
    report = push(lab, bgp, tmp_path, only="ZC-O001")
    (d,) = report["devices"]
    assert d["status"] == "rollback_incomplete", d
    stray = [x for x in d["drift"] if x.startswith("+ bfd interval ")]
    assert stray and stray[0] in d["error"]
    assert stray[0][2:] in running(lab, "ZC-O001").splitlines()  # it is there, at the top level
    assert "remove or restore the lines named" in d["action"] and not report["ok"]


def test_the_cli_shows_the_devices_words_and_exits_1(bgp, tmp_path):
    """The rejection reaches the terminal in the device's words (it used to read "the device closed the session")."""
    faults = {"devices": {"ZC-O001": {"reject_lines": [f"interface {PORT}"], "sublines": "global"}}}
    with running_lab(plan_of(bgp), faults=faults, out_dir=tmp_path / "lab") as lab:
        sw = lab.model.switches["ZC-O001"]
        r = run_zcube("push", str(bgp / "plan.json"), "--configs", str(bgp), "--lab", str(tmp_path / "lab" / "lab.json"),
                      "--only", "ZC-O001")
        assert r.returncode == 1 and "rolled_back" in r.stdout and "% Invalid input" in r.stdout, r.stdout + r.stderr
        assert lab.runner.call(lambda: sw.config_log)  # it did send
