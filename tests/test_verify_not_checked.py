"""Issue 23 item 2: a verify check that could not run is a `not_checked` finding, never a pass.

Recordings of lab-64 in routing mode bgp are made in-process (the lab's simulated switches, no SSH),
written as `zcube verify --record` writes them, then edited the way a person or a failed collection
would leave them (a command's file missing, a CLI error instead of an output, a directory where a
file should be, an address out of range) and replayed with `zcube verify --from`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import run_zcube
from zcube_deploy.lab.core import LabModel
from zcube_deploy.platforms import platform_module
from zcube_deploy.verify.collect import replay
from zcube_deploy.verify.classify import check
from zcube_deploy.verify.observe import record_name

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = platform_module("ruijie_rgos").VERIFY_COMMANDS
SECRET = "en"


def _session(model, name):
    s = model.new_session(name)
    s.feed("enable")
    s.feed(SECRET)
    return s


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """(plan path, plan, a clean recording folder) of lab-64 in mode bgp, pushed and converged."""
    d = tmp_path_factory.mktemp("nc")
    r = run_zcube("build", str(ROOT / "tests" / "inventories" / "lab-64-bgp.yaml"), "-o", str(d / "out"), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    plan = json.loads((d / "out" / "plan.json").read_text())
    m = LabModel(plan)
    m.enable_secret = SECRET
    for sw in plan["switches"]:
        s = _session(m, sw["name"])
        s.feed("configure terminal")
        for ln in (d / "out" / "configs" / f"{sw['name']}.cfg").read_text().splitlines():
            if ln.strip() and not ln.startswith("!") and ln != "end":
                assert not s.feed(ln).strip(), ln
        s.feed("end")
    rec = d / "rec"
    for sw in plan["switches"]:
        (rec / sw["name"]).mkdir(parents=True)
        for cmd in COMMANDS:
            out = _session(m, sw["name"]).feed(cmd)
            (rec / sw["name"] / record_name(cmd)).write_text(out if isinstance(out, str) else "".join(out))
    return d / "out" / "plan.json", plan, rec


def edited(recorded, tmp_path, edit):
    """A copy of the clean recording with ``edit(folder)`` applied."""
    rec = tmp_path / "rec"
    shutil.copytree(recorded[2], rec)
    edit(rec)
    return rec


def verify(plan_path, rec, tmp_path):
    r = run_zcube("verify", str(plan_path), "--from", str(rec), "-o", str(tmp_path / "v"))
    report = json.loads((tmp_path / "v" / "verify.json").read_text()) if r.returncode in (0, 1) else None
    return r, report


def not_checked(report):
    return sorted((f["ends"][0]["device"], tuple(f["checks"])) for f in report["findings"] if f["kind"] == "not_checked")


def test_a_complete_recording_is_clean(recorded, tmp_path):
    r, rep = verify(recorded[0], recorded[2], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert rep["findings"] == [] and "clean: every planned check ran and passed" in r.stdout
    assert "64 of 64 planned are Established" in r.stdout


def test_bgp_recordings_without_the_session_summary_are_not_clean(recorded, tmp_path):
    """Was: "0 of 64 Established", "clean", exit 0."""
    plan_path, plan, _ = recorded
    rec = edited(recorded, tmp_path, lambda d: [p.unlink() for p in d.glob("*/show_ip_bgp_summary.txt")])
    r, rep = verify(plan_path, rec, tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "clean: every" not in r.stdout and "not clean: planned checks could not run on 16 switches" in r.stdout
    assert "0 of 64 planned are Established, 64 not checked" in r.stdout
    assert not_checked(rep) == sorted((s["name"], ("routes", "bgp")) for s in plan["switches"])
    assert {f["kind"] for f in rep["findings"]} == {"not_checked"}
    f = rep["findings"][0]
    assert f["reason"] == "`show ip bgp summary` was not recorded (no show_ip_bgp_summary.txt in the switch's folder)"
    assert f["what"].startswith(f"the routes check and the bgp check of {f['ends'][0]['device']} could not run: ")
    assert rep["summary"]["not_checked"]["bgp"][0]["switches"] == 16


def test_a_missing_lldp_recording_is_one_finding_not_sixteen_missing(recorded, tmp_path):
    rec = edited(recorded, tmp_path, lambda d: (d / "ZC-E002" / "show_lldp_neighbors_detail.txt").unlink())
    r, rep = verify(recorded[0], rec, tmp_path)
    assert r.returncode == 1
    assert [(f["kind"], f["ends"][0]["device"], f["checks"]) for f in rep["findings"]] == [("not_checked", "ZC-E002", ["cabling"])]


def test_a_missing_interface_status_recording_is_one_finding(recorded, tmp_path):
    rec = edited(recorded, tmp_path, lambda d: (d / "ZC-O001" / "show_interface_status.txt").unlink())
    r, rep = verify(recorded[0], rec, tmp_path)
    assert r.returncode == 1
    assert [(f["kind"], f["ends"][0]["device"], f["checks"]) for f in rep["findings"]] == [("not_checked", "ZC-O001", ["cabling"])]


def test_a_missing_running_config_is_not_sixteen_hostname_findings(recorded, tmp_path):
    plan_path, plan, _ = recorded
    rec = edited(recorded, tmp_path, lambda d: [p.unlink() for p in d.glob("*/show_running-config.txt")])
    r, rep = verify(plan_path, rec, tmp_path)
    assert r.returncode == 1
    assert not_checked(rep) == sorted((s["name"], ("hostname", "management")) for s in plan["switches"])
    assert {f["kind"] for f in rep["findings"]} == {"not_checked"}


def test_a_missing_route_table_and_a_refused_command(recorded, tmp_path):
    def edit(d):
        (d / "ZC-O003" / "show_ip_route.txt").unlink()
        (d / "ZC-E004" / "show_bfd_neighbors.txt").write_text("show bfd neighbors\n        ^\n% Invalid input detected at '^' marker.\n")

    r, rep = verify(recorded[0], edited(recorded, tmp_path, edit), tmp_path)
    assert r.returncode == 1
    assert not_checked(rep) == [("ZC-E004", ("bfd",)), ("ZC-O003", ("routes",))]
    why = {f["ends"][0]["device"]: f["reason"] for f in rep["findings"]}
    assert why["ZC-E004"] == "the switch answered `show bfd neighbors` with \"% Invalid input detected at '^' marker.\""


def test_the_management_check_without_plan_data_is_not_checked(recorded):
    plan_path, plan, rec = recorded
    plan = json.loads(json.dumps(plan))
    del plan["settings"]["mgmt_prefix_len"]
    obs, err = replay(rec, [s["name"] for s in plan["switches"]])
    findings, skipped = check(plan, obs)
    assert not err and [(f["kind"], f["checks"]) for f in findings] == [("not_checked", ["management"])] * 16
    assert list(skipped) == ["management"]


@pytest.mark.parametrize("case", ["directory", "octet", "mask", "switch file"])
def test_unreadable_recordings_are_bad_input_naming_file_and_line(recorded, tmp_path, case):
    """A recording edited into something no switch prints: exit 2, the file and the line, no traceback."""
    def edit(d):
        run = d / "ZC-O003" / "show_running-config.txt"
        text = run.read_text()
        if case == "directory":
            (d / "ZC-O001" / "show_ip_route.txt").unlink()
            (d / "ZC-O001" / "show_ip_route.txt").mkdir()
        elif case == "octet":
            run.write_text(text.replace(" ip address 10.", " ip address 10.999999999999999999", 1))
        elif case == "mask":
            run.write_text(text.replace(" 255.255.255.254", " 255.255.255.2", 1))
        else:
            shutil.rmtree(d / "ZC-E016")
            (d / "ZC-E016").write_text("")

    rec = edited(recorded, tmp_path, edit)
    r, _ = verify(recorded[0], rec, tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    where = {"directory": f"{rec}/ZC-O001/show_ip_route.txt: is not a file",
             "octet": f"{rec}/ZC-O003/show_running-config.txt, line ", "mask": f"{rec}/ZC-O003/show_running-config.txt, line ",
             "switch file": f"{rec}/ZC-E016: is not a folder"}[case]
    assert where in r.stdout + r.stderr
    assert not (tmp_path / "v" / "verify.json").exists()  # nothing that looks like a result


# ---------------------------------------------------------------- mutated recordings (hypothesis)
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from zcube_deploy.errors import InputErrors  # noqa: E402

SWITCH = "ZC-O003"
_EDITS = st.sampled_from(["drop lines", "numbers", "insert", "truncate", "bytes", "directory", "delete", "empty"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(cmd="show running-config", edit="numbers", seed=1, text="x", number="999999999999999999999")  # the cases
@example(cmd="show ip route", edit="directory", seed=1, text="x", number="0")
@example(cmd="show lldp neighbors detail", edit="bytes", seed=2, text="x", number="0")
@given(cmd=st.sampled_from(COMMANDS), edit=_EDITS, seed=st.integers(0, 2**32 - 1),
       text=st.text(min_size=1, max_size=80), number=st.sampled_from(["256", "999999999999999999999", "-1", "4294967296",
                                                                      "1.2.3", "0", "65536.65536", "00"]))
def test_mutated_recordings_are_read_or_refused_never_a_traceback(recorded, tmp_path_factory, cmd, edit, seed, text, number):
    """Any edit of one recorded output: the replay reads it (findings, not_checked) or refuses it as bad input
    naming the file; it never raises anything else, and the check runs on whatever was read."""
    import random
    import re

    plan_path, plan, rec = recorded
    d = tmp_path_factory.mktemp("mut") / SWITCH
    shutil.copytree(rec / SWITCH, d)
    f = d / record_name(cmd)
    lines = f.read_text().split("\n")
    rnd = random.Random(seed)
    if edit == "drop lines":
        lines = [ln for ln in lines if rnd.random() > 0.2]
    elif edit == "numbers":
        lines = [re.sub(r"\d+", lambda m: number if rnd.random() < 0.3 else m.group(0), ln) for ln in lines]
    elif edit == "insert":
        for _ in range(3):
            lines.insert(rnd.randrange(len(lines) + 1), text)
    elif edit == "truncate":
        lines = lines[: rnd.randrange(len(lines) + 1)]
    if edit == "bytes":
        f.write_bytes(bytes(rnd.randrange(256) for _ in range(200)))
    elif edit == "directory":
        f.unlink()
        f.mkdir()
    elif edit == "delete":
        f.unlink()
    elif edit == "empty":
        f.write_text("")
    else:
        f.write_text("\n".join(lines))
    try:
        obs, err = replay(d.parent, [SWITCH])
    except InputErrors as exc:
        assert all(p.path.startswith(str(d)) for p in exc.problems), exc.problems
        return
    assert not err
    findings, _ = check(plan, obs)
    assert all(f["kind"] and f["what"] for f in findings)
    if edit == "delete":
        assert any(f["kind"] == "not_checked" and f["ends"][0]["device"] == SWITCH for f in findings)
