"""The state JSONs beside a plan read with their shape checked (plan/state.py): a file of another shape where one is
expected (a plan.json or a lab.json where a twin folder's twin.json belongs, a truncated file, a record edited by hand)
is exit 2 naming the file and the field's place, never a traceback. One known-bad case per reader; each reader's
good document passes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import run_zcube
from zcube_deploy.errors import InputErrors


@pytest.fixture(scope="module")
def twin_dir(lab64_build, tmp_path_factory) -> Path:
    """A twin.json as `zcube twin up` writes it before the first namespace exists (no namespace made: no root work)."""
    from zcube_deploy.plan.io import read_plan
    from zcube_deploy.render import render_all
    from zcube_deploy.twin import build

    out = tmp_path_factory.mktemp("twin")
    plan = read_plan(lab64_build / "plan.json")
    render_all(plan, out / "rendered")
    b = build.prepare(plan, out, None, "ztf00000-", out / "run")
    b.state = build.initial_state(b, str(lab64_build / "plan.json"), "ztf00000-", out / "run", None, {})
    build._save(out, b.state)
    return out


def _problems(fn, *args) -> list[str]:
    with pytest.raises(InputErrors) as exc:
        fn(*args)
    return [str(p) for p in exc.value.problems]


def test_twin_json_of_another_shape_is_bad_input(twin_dir, lab64_build, tmp_path):
    from zcube_deploy.twin.build import TWIN_FILE, load

    good = load(twin_dir)
    assert good == json.loads((twin_dir / TWIN_FILE).read_text())  # as read: every field kept
    bad = tmp_path / "bad"
    bad.mkdir()
    path = bad / TWIN_FILE
    shutil.copy(lab64_build / "plan.json", path)  # another plan's folder: its plan.json where the twin.json is
    said = _problems(load, bad)
    assert said and all(s.startswith(f"{path}") for s in said), said
    assert said[0].startswith(f"{path}: version: not a twin description: ") and said[-1].endswith("more"), said
    path.write_text(json.dumps({"switches": {"ZC-O001": {"host": "127.0.0.1", "port": 2222}}, "known_hosts": None}))  # a lab.json
    assert _problems(load, bad)[0].startswith(f"{path}: version: not a twin description: ")
    doc = json.loads((twin_dir / TWIN_FILE).read_text())
    doc["links"][3]["a"]["ifindex"] = "7"
    path.write_text(json.dumps(doc))  # an edited field: its place
    assert _problems(load, bad) == [f"{path}: links[3].a.ifindex: not a twin description: " + _problems(load, bad)[0].split(": not a twin description: ")[1]]
    path.write_text((twin_dir / TWIN_FILE).read_text()[:500])  # truncated
    assert _problems(load, bad)[0].startswith(f"{path}: not a twin description: ")
    shutil.copy(lab64_build / "plan.json", path)
    r = run_zcube("twin", "down", str(bad))
    assert r.returncode == 2 and "not a twin description" in r.stderr and "Traceback" not in r.stderr, r.stdout + r.stderr


def test_drain_records_edited_by_hand_name_the_field(lab64_build, tmp_path):
    from zcube_deploy.drain.run import read_records
    from zcube_deploy.plan.io import read_plan

    plan = read_plan(lab64_build / "plan.json")
    d = tmp_path / "drains"
    d.mkdir()
    good = {"element": "switch:ZC-O001", "ports": {"ZC-O001": []}, "steps": [{"step": "ports", "ok": True, "shut": {"ZC-O001": []}}],
            "blast": {"host_ports": []}, "status": "drained"}
    (d / "switch-ZC-O001.json").write_text(json.dumps(good))
    assert read_records(tmp_path, plan) == [good]  # as read: every field kept
    good["steps"][0]["ok"] = "true"  # a string where a bool belongs: not taken for one
    good["steps"][0]["shut"] = {"ZC-O001": "Eth1"}  # a string where a list of ports belongs (was read letter by letter)
    (d / "switch-ZC-O001.json").write_text(json.dumps(good))
    said = _problems(read_records, tmp_path, plan)
    assert [s.split(": not a drain record")[0] for s in said] == [f"{d / 'switch-ZC-O001.json'}: steps[0].ok",
                                                                   f"{d / 'switch-ZC-O001.json'}: steps[0].shut.ZC-O001"], said


def _stage_folder(lab64_build, tmp_path, migrate_doc) -> Path:
    mig = tmp_path / "mig"
    (mig / "stage-01").mkdir(parents=True)
    (mig / "stage-01" / "moves.csv").write_text("step,action\n")
    (mig / "migrate.json").write_text(migrate_doc)
    return mig / "stage-01"


def test_migrate_json_of_another_shape_is_bad_input_for_a_stage(lab64_build, tmp_path):
    from zcube_deploy.lab.stage import stage_inputs

    good = {"roles": [{"role": "ZC-O001", "switch": "ZC-O001", "first_stage": 1}], "stages": 1, "from": {"plan": "a/plan.json"}}
    stage = _stage_folder(lab64_build, tmp_path, json.dumps(good))
    assert stage_inputs(str(stage))[1:] == ({"ZC-O001": "ZC-O001"}, ["ZC-O001"], 1)
    (stage.parent / "migrate.json").write_text((lab64_build / "plan.json").read_text())  # a plan.json
    assert _problems(stage_inputs, str(stage))[0].startswith(f"{stage.parent / 'migrate.json'}: roles: not a migrate.json")
    good["roles"][0]["first_stage"] = "1"
    (stage.parent / "migrate.json").write_text(json.dumps(good))
    assert _problems(stage_inputs, str(stage))[0].startswith(f"{stage.parent / 'migrate.json'}: roles[0].first_stage: not a migrate.json")


def test_a_stage_record_of_another_shape_is_bad_input(tmp_path):
    from zcube_deploy.lab.control import STAGE_RECORD, read_stage_record

    assert read_stage_record(tmp_path) == {}
    good = {"migration": "/m", "applied": [1], "roles": ["ZC-O001"], "switch_of": {"ZC-O001": "ZC-E002"}}
    (tmp_path / STAGE_RECORD).write_text(json.dumps(good))
    assert read_stage_record(tmp_path) == good
    (tmp_path / STAGE_RECORD).write_text(json.dumps({**good, "switch_of": ["ZC-E002"]}))
    assert _problems(read_stage_record, tmp_path)[0].startswith(f"{tmp_path / STAGE_RECORD}: switch_of: not the lab's record")


def test_a_stage_whose_migrate_json_is_damaged_says_why_its_cost_is_not_said(tmp_path):
    from zcube_deploy.workflow import _stage_from_plan

    stage = tmp_path / "mig" / "stage-01"
    stage.mkdir(parents=True)
    (tmp_path / "mig" / "migrate.json").write_text(json.dumps({"from": {"plan": 3}}))
    plan, note = _stage_from_plan(str(stage / "plan.json"), {})
    assert plan is None and note.startswith(f"no FROM plan: {tmp_path / 'mig' / 'migrate.json'}: from.plan: not a migrate.json"), note
