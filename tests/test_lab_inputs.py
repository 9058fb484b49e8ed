"""The lab's inputs from people: fault files, `random:N`, site baselines, findings files for `lab fix`.

Each bad input is refused whole (exit 2 / InputErrors naming the file, the place and what is wrong),
never a traceback, a hang, or a half-applied change; hypothesis mutates each file kind.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT, run_zcube
from zcube_deploy.access import load_lab
from zcube_deploy.errors import InputErrors
from zcube_deploy.lab.control import fix_operations, read_baseline
from zcube_deploy.lab.core import LabModel
from zcube_deploy.lab.inject import apply_faults, load_faults, max_random_faults
from zcube_deploy.lab.wiring import Wiring
from zcube_deploy.platforms.ruijie_rgos.lab import DEFAULT_BASELINE
from zcube_deploy.platforms.ruijie_rgos.lab.shell import SwitchState, load_baseline

PORTS = ["Mgmt 0", "TwoHundredGigabitEthernet 0/1:1", "TwoHundredGigabitEthernet 0/1:2"]
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# any YAML/JSON-like value: what a hand-edited file can hold
values = st.recursive(st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=True) |
                      st.text(max_size=30) | st.sampled_from(["H000017", "ZC-O001", "TwoHundredGigabitEthernet 0/1:1", "gpu01", "b", "move"]),
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12) | st.sampled_from(
                          ["cable", "to", "device", "port", "a", "b", "name", "op", "end", "keep", "server", "fix"]), inner, max_size=4),
                      max_leaves=12)


@pytest.fixture(scope="module")
def model(lab64_plan):
    return LabModel(lab64_plan, "")


def good_faults() -> dict:
    return {"cabling": [{"swap": ["H000017", "H000019"]}, {"remove": "H000033"},
                        {"move": {"cable": "H000005", "to": {"device": "ZC-O001", "port": "TwoHundredGigabitEthernet 0/3:1"}}},
                        {"down": {"device": "ZC-E008", "port": "TwoHundredGigabitEthernet 0/1:1"}},
                        {"wrong_host": {"cable": "H000052", "name": "gpu-impostor"}}, {"lldp_off": "gpu08"}],
            "devices": {"ZC-O001": {"refuse_login": True, "delay": 0.1}, "ZC-E006": {"reject_lines": ["interface X"], "sublines": "global"}}}


# ---- fault files
def test_fault_file_wrong_types_are_refused_whole_with_their_places(tmp_path, lab64_plan):
    f = tmp_path / "faults.yaml"
    f.write_text(yaml.safe_dump({"cabling": [{"swap": "H000017"}, {"move": {"cable": 5, "to": ["x"]}}, {"frob": 1}, 7],
                                 "devices": {"ZC-O001": {"delay": "slow", "drop_after": True, "reject_lines": "x", "bogus": 1},
                                             "ZC-O003": [1], "ZC-O005": {"write_fault": "sometimes"}}}))
    with pytest.raises(InputErrors) as err:
        load_faults(str(f), lab64_plan)
    assert str(f) in err.value.title and "no fault applied" in err.value.title
    paths = {p.path for p in err.value.problems}
    assert {"cabling[0].swap", "cabling[1].move.cable", "cabling[1].move.to", "cabling[2]", "cabling[3]", "devices.ZC-O001.delay",
            "devices.ZC-O001.drop_after", "devices.ZC-O001.reject_lines", "devices.ZC-O001.bogus", "devices.ZC-O003",
            "devices.ZC-O005.write_fault"} <= paths, paths


def test_fault_file_undecodable_or_not_yaml(tmp_path, lab64_plan):
    f = tmp_path / "faults.yaml"
    f.write_bytes(b"cabling:\n  - remove: H\xff\xfe\n")
    with pytest.raises(InputErrors, match="not UTF-8") as err:
        load_faults(str(f), lab64_plan)
    assert err.value.problems[0].path == str(f)
    f.write_text("cabling: [")
    with pytest.raises(InputErrors, match="not valid YAML"):
        load_faults(str(f), lab64_plan)
    f.write_text("[" * 5000 + "]" * 5000)
    with pytest.raises(InputErrors):
        load_faults(str(f), lab64_plan)


def test_lab_up_refuses_a_bad_fault_file_with_exit_2(tmp_path, lab64_build):
    f = tmp_path / "faults.yaml"
    f.write_text("devices:\n  ZC-O001: {delay: slow}\n")
    r = run_zcube("lab", "up", str(lab64_build / "plan.json"), "-o", str(tmp_path / "lab"), "--faults", str(f), timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert str(f) in r.stderr + r.stdout and "devices.ZC-O001.delay" in r.stderr + r.stdout
    assert not (tmp_path / "lab" / "lab.json").exists()


@FUZZ
@given(doc=values, base=st.booleans())
def test_fuzzed_fault_documents_are_applied_or_refused(model, tmp_path_factory, doc, base):
    """Whatever a fault file holds: applied, or InputErrors; never another exception, never half applied."""
    if base and isinstance(doc, dict):  # mutate a good file rather than start from nothing
        good = good_faults()
        good.update({k: v for k, v in doc.items() if k in ("cabling", "devices")} or {"cabling": good["cabling"] + [doc]})
        doc = good
    f = tmp_path_factory.mktemp("f") / "faults.yaml"
    f.write_text(yaml.safe_dump(doc, allow_unicode=True))
    m = LabModel(model.plan, "")
    before = json.dumps(m.wiring.as_dict(), sort_keys=True)
    try:
        apply_faults(m, load_faults(str(f), m.plan))
    except InputErrors as exc:
        assert exc.problems
        # refused before anything changed? (shape problems); semantic problems may follow partial edits on this
        # throwaway model only: `lab up` then exits, so the check that matters is that nothing else escapes
        if "no fault applied" in exc.title and all("not a cable" not in p.message and "no such switch" not in p.message
                                                      for p in exc.problems):
            assert json.dumps(m.wiring.as_dict(), sort_keys=True) == before


@FUZZ
@given(data=st.binary(max_size=200))
def test_fuzzed_fault_bytes(lab64_plan, tmp_path_factory, data):
    f = tmp_path_factory.mktemp("f") / "faults.yaml"
    f.write_bytes(data)
    try:
        load_faults(str(f), lab64_plan)
    except InputErrors:
        pass


def test_random_faults_are_bounded(lab64_plan):
    most = max_random_faults(lab64_plan)
    t = time.perf_counter()
    with pytest.raises(InputErrors, match=f"at most {most}"):
        load_faults("random:99999999", lab64_plan)
    with pytest.raises(InputErrors, match="only"):  # N under the bound that no draw can place: refused, not returned short
        load_faults(f"random:{most}", lab64_plan, seed=0)
    with pytest.raises(InputErrors):
        load_faults("random:-1", lab64_plan)
    assert time.perf_counter() - t < 10
    assert len(load_faults("random:5", lab64_plan, seed=9)["cabling"]) >= 5


# ---- site baselines
def fresh() -> SwitchState:
    return SwitchState(model="RG-TEST", interface_names=PORTS, abbreviations={}, serial="G1TEST")


@pytest.mark.parametrize("text, why", [
    ("banner motd ^C\nhello\n", "not closed by its delimiter"),
    ("ntp server 192.0.2.1\nexit\nntp server 192.0.2.2\n", "leaves configuration mode"),
    ("end\nntp server 192.0.2.1\n", None),  # `end` is a show-running-config line: skipped
    ("line vty 0 4\n exit\n exit\n", "indented line outside any section"),
    ("interface Mgmt 0\n frobnicate\n", "Invalid input"),
])
def test_malformed_baselines_are_refused_with_their_line(text, why):
    st_ = fresh()
    if why is None:
        load_baseline(st_, text)
        return
    with pytest.raises(ValueError, match=why) as err:
        load_baseline(st_, text)
    assert str(err.value).startswith("line ")


def test_lab_up_refuses_a_bad_baseline_with_its_file(tmp_path, lab64_build):
    b = tmp_path / "site.cfg"
    b.write_text("ntp server 192.0.2.1\nbanner motd ^C\nnever closed\n")
    r = run_zcube("lab", "up", str(lab64_build / "plan.json"), "-o", str(tmp_path / "lab"), "--baseline", str(b), timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"{b}: the simulated switch rejects line 2" in " ".join((r.stderr + r.stdout).split())


def test_baseline_files_that_are_not_text(tmp_path):
    b = tmp_path / "site.cfg"
    b.write_bytes(b"ntp server \xff\n")
    with pytest.raises(InputErrors, match="not UTF-8"):
        read_baseline(str(b))
    with pytest.raises(InputErrors, match="not a regular file"):
        read_baseline(str(tmp_path))
    with pytest.raises(InputErrors, match="no such file"):
        read_baseline(str(tmp_path / "nope.cfg"))


@FUZZ
@given(cuts=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 40), st.text(max_size=8)), max_size=6))
def test_fuzzed_baselines_load_or_are_refused(cuts):
    """Mutations of the default baseline: loaded, or ValueError naming a line; never another exception or a hang."""
    text = DEFAULT_BASELINE.read_text()
    for at, drop, insert in cuts:
        at %= len(text)
        text = text[:at] + insert + text[at + drop:]
    try:
        load_baseline(fresh(), text)
    except ValueError as exc:
        assert str(exc).startswith("line ")


def test_a_large_baseline_loads_in_linear_time():
    """20,000 extra lines of every kind the lab keeps (top-level, ACL entries, routes, interface lines): once
    quadratic (41 s for a lab), now a second or two per switch; a loose bound, the machine may be loaded."""
    n = 5000
    text = "\n".join([f"ntp server 10.{i // 256 % 256}.{i % 256}.1" for i in range(n)] +
                     ["ip access-list extended BIG"] + [f" {i} permit ip host 10.0.{i // 256 % 256}.{i % 256} any" for i in range(n)] +
                     [f"ip route 10.{i // 256 % 256}.{i % 256}.0 255.255.255.0 192.0.2.1" for i in range(n)] +
                     ["interface TwoHundredGigabitEthernet 0/1:1"] + [f" qos queue {i}" for i in range(n)])
    st_ = fresh()
    t = time.perf_counter()
    load_baseline(st_, text)
    took = time.perf_counter() - t
    run = st_.running_config(header=False)
    assert run.count("\nntp server ") == n and run.count("\nip route ") == n and run.count(" permit ip host") == n
    assert took < 20, took


# ---- findings files for `lab fix`
def verify_doc() -> dict:
    return {"findings": [
        {"kind": "swapped", "fix": [{"op": "move", "cable": "H000017", "end": "b", "to": {"device": "ZC-O001", "port": "TwoHundredGigabitEthernet 0/5:1"}},
                                   {"op": "move", "cable": "H000019", "end": "b", "to": {"device": "ZC-O003", "port": "TwoHundredGigabitEthernet 0/5:1"}}]},
        {"kind": "down", "fix": [{"op": "reseat", "device": "ZC-E008", "port": "TwoHundredGigabitEthernet 0/1:1"}]},
        {"kind": "missing", "fix": [{"op": "lldp_on", "server": "gpu08"}]}]}


def test_findings_with_a_wrong_type_are_refused_whole(tmp_path):
    doc = verify_doc()
    doc["findings"][1]["fix"][0]["port"] = 7
    doc["findings"].append("oops")
    doc["findings"].append({"fix": "move"})
    f = tmp_path / "verify.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(InputErrors) as err:
        fix_operations(str(f))
    assert str(f) in err.value.title and "no fix applied" in err.value.title
    assert {p.path for p in err.value.problems} == {"findings[1].fix[0].port", "findings[3]", "findings[4].fix"}
    f.write_bytes(b"\xff")
    with pytest.raises(InputErrors):
        fix_operations(str(f))


def test_wiring_applies_a_list_whole_or_not_at_all(lab64_plan):
    w = Wiring.from_plan(lab64_plan)
    before = json.dumps(w.as_dict(), sort_keys=True)
    ops = [op for f in verify_doc()["findings"] for op in f["fix"]]
    bad = ops + [{"op": "move", "cable": "H999999", "to": {"device": "ZC-O001", "port": "x"}}]  # well formed, no such cable
    with pytest.raises(ValueError, match=r"operations\[4\].*H999999"):
        w.apply_all(bad)
    assert json.dumps(w.as_dict(), sort_keys=True) == before  # the first four were not applied
    with pytest.raises(ValueError, match=r"operations\[0\]"):
        w.apply_all([{"op": "move", "cable": 5}])
    assert w.apply_all(ops) == 4 and json.dumps(w.as_dict(), sort_keys=True) != before


@FUZZ
@given(doc=values, where=st.integers(0, 5))
def test_fuzzed_findings_are_applied_whole_or_refused(lab64_plan, tmp_path_factory, doc, where):
    good = verify_doc()
    ops = [op for f in good["findings"] for op in f["fix"]]
    if isinstance(doc, dict) and where < len(ops):  # mutate one operation of a good file
        ops[where] = {**ops[where], **doc}
        good = {"findings": [{"fix": ops}]}
    elif where == 5:
        good = doc
    f = tmp_path_factory.mktemp("v") / "verify.json"
    f.write_text(json.dumps(good, default=str))
    w = Wiring.from_plan(lab64_plan)
    before = json.dumps(w.as_dict(), sort_keys=True)
    try:
        got, _ = fix_operations(str(f))
    except InputErrors:
        return
    try:
        w.apply_all(got)
    except ValueError:
        assert json.dumps(w.as_dict(), sort_keys=True) == before


@pytest.mark.lab
def test_a_running_lab_survives_a_bad_control_file(lab64_plan, tmp_path):
    from zcube_deploy.lab.server import running_lab

    with running_lab(lab64_plan, out_dir=tmp_path) as lab:
        before = lab.runner.call(lambda: json.dumps(lab.model.wiring.as_dict(), sort_keys=True))
        for bad in ('[{"op": "move", "cable": "H000017", "to": ["x"]}]', '["move"]', '{"operations": 5}', "[1, 2",
                    json.dumps([{"op": "reseat", "device": "ZC-E008", "port": "TwoHundredGigabitEthernet 0/1:1"},
                                {"op": "move", "cable": "H999999", "to": {"device": "a", "port": "b"}}])):
            (tmp_path / "control.json").write_text(bad)
            lab.runner.call(lab.poll_control, tmp_path)
            assert (tmp_path / "control.error").read_text().strip(), bad
            assert not (tmp_path / "control.json").exists()
            assert lab.runner.call(lambda: json.dumps(lab.model.wiring.as_dict(), sort_keys=True)) == before, bad
        # still serving, and a good file is applied
        (tmp_path / "control.json").write_text(json.dumps([{"op": "lldp_on", "server": "gpu08"}]))
        lab.runner.call(lab.poll_control, tmp_path)
        assert not (tmp_path / "control.error").exists()


def test_lab_fix_cli_refuses_a_bad_findings_file_and_sends_nothing(tmp_path):
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "lab.json").write_text("{}")
    f = tmp_path / "verify.json"
    f.write_text(json.dumps({"findings": [{"fix": [{"op": "move", "cable": "H1", "to": "ZC-O001"}]}]}))
    r = run_zcube("lab", "fix", str(tmp_path / "lab"), "--findings", str(f), "--wait", "1")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "findings[0].fix[0].to" in r.stderr + r.stdout
    assert not (tmp_path / "lab" / "control.json").exists() and not Path(tmp_path / "lab" / "control.json.tmp").exists()


# ---- the plan as the lab reads it: list sections validated a chunk at a time (memory at 512 switches)
def test_chunked_plan_read_names_each_bad_row_by_its_position(lab64_plan, tmp_path, monkeypatch):
    from zcube_deploy.errors import InvalidPlanFile
    from zcube_deploy.lab.server import PLAN_FIELDS
    from zcube_deploy.plan import io as plan_io

    path = plan_io.write_plan(lab64_plan, tmp_path)
    monkeypatch.setattr(plan_io, "ROWS_PER_CHUNK", 3)
    whole = plan_io.read_plan(path, PLAN_FIELDS)
    assert [c["id"] for c in whole["cables"]] == [c["id"] for c in lab64_plan["cables"]]  # every row, in order
    lines = path.read_text().splitlines(keepends=True)
    first = next(i for i, ln in enumerate(lines) if ln.startswith('"cables":['))
    for k in (7, 100):
        lines[first + 1 + k] = lines[first + 1 + k].replace('"kind":"', '"kind":5,"x":"', 1)
    path.write_text("".join(lines))
    with pytest.raises(InvalidPlanFile) as err:
        plan_io.read_plan(path, PLAN_FIELDS)
    paths = {p.path for p in err.value.problems}
    assert any(p.startswith("cables[7]") for p in paths) and any(p.startswith("cables[100]") for p in paths), paths


def test_every_fault_kind_has_its_shape_application_and_draw():
    """Fault injection is a table of kinds (lab/inject.py): a kind added to FaultKind needs all three."""
    from zcube_deploy.lab import inject
    from zcube_deploy.vocabulary import FaultKind

    assert set(inject.CABLING_SHAPES) == set(inject.CABLING) == set(inject.DRAWS) == set(FaultKind)


@pytest.mark.parametrize("doc, where, what", [
    ([{"name": "ZC-O001"}], "", "valid dictionary"),                                   # a JSON list
    ({"switches": [{"name": "ZC-O001"}]}, ": switches", "valid dictionary"),           # a plan.json's shape
    ({"switches": {"a": {"host": 1}}}, ": switches.a.host", "valid string"),
    ({"switches": {"a": {"host": "h", "port": "22"}}}, ": switches.a.port", "valid integer"),
    ({"switches": {"a": {"host": "h", "port": 22}}, "known_hosts": 3}, ": known_hosts", "valid string"),
    ({"known_hosts": "kh"}, ": switches", "missing"),
])
def test_a_file_that_is_not_a_lab_json_is_an_input_error_with_its_place(tmp_path, doc, where, what):
    f = tmp_path / "lab.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(InputErrors) as exc:
        load_lab(f)
    p = exc.value.problems[0]
    assert p.path == f"{f}{where}" and "not a lab.json" in p.message and what in p.message and "zcube lab up" in p.hint


def test_a_lab_json_loads(tmp_path):
    f = tmp_path / "lab.json"
    f.write_text(json.dumps({"switches": {"ZC-O001": {"host": "127.0.0.1", "port": 2201}}, "known_hosts": "/x/known_hosts"}))
    assert load_lab(f) == ({"ZC-O001": ("127.0.0.1", 2201)}, "/x/known_hosts")


@pytest.mark.parametrize("cmd", [["audit", "-o", "OUT"], ["push", "--configs", "CONFIGS"], ["verify", "-o", "OUT"],
                                 ["drain", "switch:ZC-O001"]])
def test_commands_refuse_a_plan_given_as_lab_json_with_exit_2(tmp_path, lab64_build, cmd):
    plan = str(lab64_build / "plan.json")
    args = [{"OUT": str(tmp_path / "out"), "CONFIGS": str(lab64_build / "configs")}.get(a, a) for a in cmd]
    r = run_zcube(args[0], plan, *args[1:], "--lab", plan)
    assert r.returncode == 2, r.stderr
    assert f"{plan}: switches: not a lab.json" in r.stderr and "zcube lab up" in r.stderr and "Traceback" not in r.stderr


def test_lab_grow_refuses_a_plan_given_as_lab_json_with_exit_2(tmp_path, lab64_build):
    """`zcube lab grow DIR PLAN` reads DIR/lab.json as access.load_lab does: a plan.json there is exit 2 with the
    field's place (it was an internal error, exit 3: a plan's switches are a list)."""
    plan = lab64_build / "plan.json"
    (tmp_path / "lab.json").write_text(plan.read_text())
    r = run_zcube("lab", "grow", str(tmp_path), str(plan), "--wait", "1")
    assert r.returncode == 2, r.stderr
    assert f"{tmp_path / 'lab.json'}: switches: not a lab.json" in r.stderr and "zcube lab up" in r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert not (tmp_path / "control.json").exists()  # nothing sent to a lab


def test_lab_endpoint_rows_take_the_endpoints_load_lab_reads(tmp_path, lab64_plan):
    from zcube_deploy.lab.control import endpoint_rows

    f = tmp_path / "lab.json"
    f.write_text(json.dumps({"switches": {"ZC-E002": {"host": "127.0.0.1", "port": 2202}, "ZC-O001": {"host": "127.0.0.1", "port": 2201}}}))
    rows = endpoint_rows(lab64_plan, load_lab(f)[0])
    mg = {s["name"]: s["mgmt_address"] for s in lab64_plan["switches"]}
    assert rows == [("ZC-E002", "127.0.0.1:2202", mg["ZC-E002"]), ("ZC-O001", "127.0.0.1:2201", mg["ZC-O001"])]  # by name


def test_lab_fix_stage_refuses_a_plan_given_as_lab_json_with_exit_2(tmp_path):
    """`zcube lab fix DIR --stage STAGE` names the stage's roles in DIR/lab.json, read through access.read_lab: a plan
    there is the field's place (it was "played by ..., which the lab does not run" for every role: a wrong lead)."""
    inv = ROOT / "tests" / "inventories"
    for args in (["build", str(inv / "roft-small.yaml"), "-o", str(tmp_path / "roft")],
                 ["plan", str(inv / "zcube-small.yaml"), "-o", str(tmp_path / "zcube")],
                 ["migrate", str(tmp_path / "roft" / "plan.json"), str(tmp_path / "zcube" / "plan.json"), "-o", str(tmp_path / "mig"),
                  "--unit", "4-gpu", "--capacity-floor", "0.5"]):
        assert run_zcube(*args).returncode == 0, args
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "lab.json").write_text((tmp_path / "roft" / "plan.json").read_text())
    r = run_zcube("lab", "fix", str(tmp_path / "lab"), "--stage", str(tmp_path / "mig" / "stage-01"), "--wait", "1")
    assert r.returncode == 2, r.stderr
    assert f"{tmp_path / 'lab' / 'lab.json'}: switches: not a lab.json" in r.stderr and "does not run" not in r.stderr, r.stderr
    assert not (tmp_path / "lab" / "control.json").exists()


@pytest.mark.parametrize("cmd", [["audit", "-o", "OUT"], ["verify", "-o", "OUT"], ["push", "--configs", "CONFIGS"],
                                 ["drain", "switch:ZC-O001"]])
def test_commands_refuse_the_lab_of_another_plan_with_exit_2(tmp_path, lab64_build, cmd):
    """A plan against a lab that does not run its switches (its lab.json records this plan, so the plan check passes:
    tests/test_lab_identity.py has a lab of another plan): exit 2 naming the plan's switches the lab does not run, one
    check (access.not_in_lab) for every command; verify and audit were KeyError, exit 3."""
    from zcube_deploy.plan.io import wiring_identity_of

    plan = str(lab64_build / "plan.json")
    lab = tmp_path / "lab.json"
    lab.write_text(json.dumps({"switches": {"R-L001": {"host": "127.0.0.1", "port": 1}, "R-S001": {"host": "127.0.0.1", "port": 2}},
                               "plan": wiring_identity_of(plan)}))
    args = [{"OUT": str(tmp_path / "out"), "CONFIGS": str(lab64_build)}.get(a, a) for a in cmd]
    r = run_zcube(args[0], plan, *args[1:], "--lab", str(lab))
    assert r.returncode == 2, r.stderr
    assert "ZC-O001 is not in the lab" in r.stderr and "the lab runs 2 switch(es) (R-L001, R-S001)" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert not (tmp_path / "out").exists()  # nothing written


@pytest.mark.parametrize("given", [["--findings", "v/verify.json", "--stage", "smig/stage-01"], []])
def test_lab_fix_with_both_or_neither_source_is_a_usage_error(tmp_path, given):
    """`zcube lab fix DIR` takes --findings or --stage, one of them: both or neither is click's usage error, exit 2
    (handle_errors let click's own exceptions through; it was "internal error: UsageError", exit 3)."""
    r = run_zcube("lab", "fix", str(tmp_path), *given, "--wait", "1")
    assert r.returncode == 2, r.stderr
    assert "give --findings VERIFY_JSON or --stage DIR/stage-NN (one of them)" in r.stderr and "Usage: zcube lab fix" in r.stderr
    assert "internal error" not in r.stderr and not (tmp_path / "control.json").exists()


def _lab_folder(tmp_path, plan: dict) -> Path:
    """A lab folder as `zcube lab up` leaves it (lab.json with the plan it runs), no lab running."""
    from zcube_deploy.plan.io import wiring_identity

    d = tmp_path / "lab"
    d.mkdir()
    (d / "lab.json").write_text(json.dumps({"switches": {"ZC-O001": {"host": "127.0.0.1", "port": 1}}, "plan": wiring_identity(plan)}))
    return d


def _findings(tmp_path, plan: dict | None, **meta) -> Path:
    """A verify.json with one physical fix; ``plan``: the plan it records (None: no record, as an older zcube wrote)."""
    from zcube_deploy.plan.io import wiring_identity

    doc = {"cluster": "lab64", **meta, "findings": [{"fix": [{"op": "lldp_on", "server": "gpu08"}]}]}
    if plan is not None:
        doc["plan"] = wiring_identity(plan)
    f = tmp_path / "v" / "verify.json"
    f.parent.mkdir(exist_ok=True)
    f.write_text(json.dumps(doc))
    return f


def test_lab_fix_refuses_findings_of_another_plan(tmp_path, lab64_plan):
    """Findings of ANOTHER cluster, or of the same cluster's plan wired otherwise (an earlier migration stage's after a
    later stage re-wired the lab), or a verify.json that records no plan: exit 2 naming both plans, nothing sent (the
    lab of the trial applied 112 fixes of zcubesmall's findings to lab64 and broke)."""
    lab = _lab_folder(tmp_path, lab64_plan)
    other_cluster = {**lab64_plan, "cluster": {**lab64_plan["cluster"], "name": "zcubesmall"}}
    rewired = {**lab64_plan, "cables": lab64_plan["cables"][1:]}
    runs = f"the lab runs cluster 'lab64', cables sha256 {json.loads((lab / 'lab.json').read_text())['plan']['cables_sha256'][:12]}"
    for plan, what in ((other_cluster, "findings of another plan (cluster 'zcubesmall'"), (rewired, "findings of another plan (cluster 'lab64'"),
                       (None, "records no plan identity (only cluster 'lab64'")):
        f = _findings(tmp_path, plan)
        r = run_zcube("lab", "fix", str(lab), "--findings", str(f), "--wait", "0.5")
        assert r.returncode == 2, r.stderr
        assert f"{f}: {what}" in r.stderr and runs in r.stderr and "no fix applied" in r.stderr, r.stderr
        assert not (lab / "control.json").exists()


def test_lab_fix_withdraws_a_request_no_lab_took(tmp_path, lab64_plan):
    """Findings of the plan the lab runs, but no lab running: exit 1 after --wait, and control.json withdrawn (it was left
    there, and the next `zcube lab up` in the folder applied the stale request)."""
    lab = _lab_folder(tmp_path, lab64_plan)
    r = run_zcube("lab", "fix", str(lab), "--findings", str(_findings(tmp_path, lab64_plan)), "--wait", "0.5")
    assert r.returncode == 1, r.stderr
    assert "did not pick up" in r.stderr and "the request was withdrawn: nothing applied" in r.stderr
    assert not (lab / "control.json").exists() and not (lab / "control.json.tmp").exists()


def test_lab_up_in_a_used_folder_starts_clean(tmp_path, lab64_build):
    """`zcube lab up PLAN -o DIR` into the folder of an earlier lab: that lab's request never taken (control.json) and
    its migration record are removed, and it says so; the new lab runs PLAN as cabled (the stale request was applied
    by the new lab, and a fresh lab refused `lab fix --stage stage-01` as already applied)."""
    import signal
    import subprocess

    from conftest import zcube_exe

    d = tmp_path / "lab"
    d.mkdir()
    (d / "control.json").write_text(json.dumps([{"op": "remove", "cable": "H000017"}]))
    (d / "migration.json").write_text(json.dumps({"migration": "/x/mig", "applied": [1], "roles": [], "switch_of": {}}))
    proc = subprocess.Popen(zcube_exe() + ["lab", "up", str(lab64_build / "plan.json"), "-o", str(d)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(300):
            if (d / "lab.json").exists() or proc.poll() is not None:
                break
            time.sleep(0.2)
        time.sleep(3)  # more than the lab's 2 s poll of control.json
        cables = {c["id"] for c in json.loads((d / "wiring.json").read_text())["cables"]}
    finally:
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    assert "H000017" in cables, stderr
    assert not (d / "control.json").exists() and not (d / "migration.json").exists()
    assert f"{d}: an earlier lab's state removed (control.json, migration.json)" in stdout, stdout + stderr


@pytest.mark.parametrize("where", ["nonexistent/dir/z.prom", "afile/z.prom"])
def test_audit_metrics_in_a_missing_folder_is_refused(tmp_path, lab64_build, where):
    """`audit --metrics /nonexistent/dir/z.prom` made /nonexistent/dir (mkdir -p of a user's path): exit 2 naming the
    folder, before any audit runs, nothing made."""
    (tmp_path / "afile").write_text("")
    m = tmp_path / where
    r = run_zcube("audit", str(lab64_build / "plan.json"), "--from", str(tmp_path / "rec"), "-o", str(tmp_path / "out"), "--metrics", str(m))
    assert r.returncode == 2, r.stderr
    assert f"--metrics: {m}: its folder {m.parent} " in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "nonexistent").exists() and not (tmp_path / "out").exists()


def test_audit_metrics_in_the_audits_own_output_folder_is_accepted(tmp_path, lab64_build):
    """docs/audit.md's `-o out/a1 --metrics out/a1/zcube.prom` exited 2 ("its folder out/a1 does not exist"): the
    audit makes its -o folder itself, so a metrics file there is written; a folder below it is still refused."""
    (tmp_path / "rec").mkdir()
    out = tmp_path / "out"
    r = run_zcube("audit", str(lab64_build / "plan.json"), "--from", str(tmp_path / "rec"), "-o", str(out), "--metrics", str(out / "z.prom"))
    assert r.returncode == 1, r.stderr  # nothing recorded: not checked, not clean
    assert 'zcube_audit_clean{cluster="lab64"} 0.0' in (out / "z.prom").read_text()
    below = tmp_path / "out2" / "sub" / "z.prom"
    r = run_zcube("audit", str(lab64_build / "plan.json"), "--from", str(tmp_path / "rec"), "-o", str(tmp_path / "out2"), "--metrics", str(below))
    assert r.returncode == 2 and f"--metrics: {below}: its folder {below.parent} does not exist" in r.stderr, r.stderr
    assert not (tmp_path / "out2").exists()
