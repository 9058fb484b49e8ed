"""--only, one check for every command (plan/scope.py): render and push (verify's and audit's in test_verify.py)
refuse each pattern of the list that matches nothing, exit 2 before anything is written or contacted, with the
plan's closest names; a list with one good and one bad pattern is refused, never shrunk to the good one."""

from __future__ import annotations

import json
import shutil
import socket

import pytest

from conftest import run_zcube
from zcube_deploy.errors import InputErrors
from zcube_deploy.plan.io import read_plan, wiring_identity
from zcube_deploy.plan.scope import only_patterns
from zcube_deploy.verify import scope_of

# (--only, what stderr must say): an unknown name, the same up to case and separators, a good and a bad one, a rack
CASES = [("ZC-O01", "--only: 'ZC-O01' matches no {what}\n    hint: did you mean 'ZC-O001'?"),
         ("zc-o-1", "did you mean 'ZC-O001'?"),
         ("ZC-O001,ZC-E0002", "--only: 'ZC-E0002' matches no {what}\n    hint: did you mean 'ZC-E002'?"),
         ("ZC-O00*,rack:B9*", "--only: 'rack:B9*' matches no {rack}\n"),
         (" , ", "--only: ' , ' holds no pattern"),
         # given empty (an unset shell variable): refused, never read as every device
         ("", "--only: '' holds no pattern")]


def _said(r, only: str, said: str) -> None:
    assert r.returncode == 2 and said in r.stderr, (only, r.returncode, r.stdout + r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    if "," in only.strip(" ,"):
        good = only.split(",")[0]
        assert f"'{good}'" not in r.stderr, r.stderr  # only the bad pattern is named


@pytest.mark.parametrize("only,said", CASES, ids=[c[0] or "empty" for c in CASES])
def test_render_refuses_each_pattern_that_matches_nothing(lab64_build, tmp_path, only, said):
    """`zcube render --only`: nothing written, the bad pattern named with a did-you-mean over switches and servers."""
    out = tmp_path / "r"
    r = run_zcube("render", str(lab64_build / "plan.json"), "-o", str(out), "--only", only)
    _said(r, only, said.format(what="switch or server", rack="rack"))
    assert not out.exists(), only


def test_render_only_lists_the_racks_and_takes_a_good_list(lab64_build, tmp_path):
    r = run_zcube("render", str(lab64_build / "plan.json"), "-o", str(tmp_path / "r"), "--only", "rack:B9*")
    racks = sorted({d["rack"] for d in read_plan(lab64_build / "plan.json")["switches"]})
    assert f"the plan's {len(racks)} racks: {', '.join(racks)}" in r.stderr, r.stderr
    r = run_zcube("render", str(lab64_build / "plan.json"), "-o", str(tmp_path / "ok"), "--only", "ZC-O001,rack:A01")
    assert r.returncode == 0, r.stderr


@pytest.fixture
def refused_lab(lab64_build, tmp_path):
    """lab-64's rendered configs copied (a push that went on would write beside them) and a lab.json of its plan whose
    every switch is a port of ours bound but not listening: a push that got past --only is refused a connection."""
    work = tmp_path / "work"
    shutil.copytree(lab64_build / "configs", work / "configs")
    shutil.copy(lab64_build / "manifest.json", work / "manifest.json")
    shutil.copy(lab64_build / "plan.json", work / "plan.json")
    plan = read_plan(work / "plan.json")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        (work / "lab.json").write_text(json.dumps({"switches": {s["name"]: {"host": "127.0.0.1", "port": port} for s in plan["switches"]},
                                                   "plan": wiring_identity(plan)}))
        yield work


@pytest.mark.parametrize("only,said", CASES, ids=[c[0] or "empty" for c in CASES])
def test_push_refuses_each_pattern_that_matches_nothing(refused_lab, only, said):
    """`zcube push --dry-run --only`: exit 2 before any switch is contacted (no push report, no diff folder), the bad
    pattern named; a rack pattern of push is on the racks of switches (it pushes the switches in them)."""
    work = refused_lab
    r = run_zcube("push", str(work / "plan.json"), "--configs", str(work), "--lab", str(work / "lab.json"),
                  "--dry-run", "--only", only, "--timeout", "3", env={"ZCUBE_USERNAME": "", "ZCUBE_PASSWORD": ""})
    _said(r, only, said.format(what="switch", rack="switch rack"))
    assert not (work / "push-report.json").exists() and not (work / "push").exists(), only


def test_one_check_for_every_command(lab64_build):
    """The same patterns, the same problems from plan/scope.py, whichever command reads them; verify's rack pattern
    also takes a rack that holds servers only (the switches serving them)."""
    plan = read_plan(lab64_build / "plan.json")
    names = [s["name"] for s in plan["switches"]]
    with pytest.raises(InputErrors) as e:
        scope_of(plan, "ZC-O001,ZC-E0002")
    assert [str(p) for p in e.value.problems] == [
        f"--only: 'ZC-E0002' matches no switch (hint: did you mean 'ZC-E002'? the plan's {len(names)} switches: "
        f"{', '.join(sorted(names)[:8])}, ... (globs: 'ZC-E0*'; racks: 'rack:A0*'))"]
    assert only_patterns(None, names, []) == []
    with pytest.raises(InputErrors, match="holds no pattern"):
        only_patterns("", names, [])
    servers_only = {"switches": [{"name": "SW1", "rack": "N1"}], "servers": [{"name": "gpu1", "rack": "A01"}],
                    "cables": [{"kind": "host", "a": {"device": "gpu1"}, "b": {"device": "SW1"}}]}
    assert scope_of(servers_only, "rack:A0*") == ["SW1"]
