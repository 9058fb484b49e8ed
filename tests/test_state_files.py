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
