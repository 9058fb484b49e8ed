"""Plan: golden for lab-64, determinism, growth stability, the plan model (validated on write and
read, projections; `zcube plan`'s fresh write: the same bytes unvalidated), pure stages, the
forwarding interface, diff."""

from __future__ import annotations

import copy
import ipaddress
import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import to_json

from conftest import GOLDEN, INVENTORIES, ROOT, check_golden, run_zcube
from zcube_deploy.errors import InvalidPlanFile, InvariantViolation, PlanFileError
from zcube_deploy.inventory import resolve_inventory
from zcube_deploy.plan import build, build_plan
from zcube_deploy.plan.diff import diff_plans
from zcube_deploy import designs
from zcube_deploy.inventory import load_inventory
from zcube_deploy.plan import io as plan_io
from zcube_deploy.plan.io import dumps_plan, read_plan, write_plan
from zcube_deploy.plan.model import PLAN_ADAPTER, REQUIRED_SECTIONS, SECTIONS, check_projection, projection
from zcube_deploy.topology.forwarding import switch_tables


def test_golden_plan_lab64(tmp_path, update_golden):
    r = run_zcube("plan", "inventories/lab-64.yaml", "-o", str(tmp_path), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    check_golden(GOLDEN / "lab-64" / "plan.json", (tmp_path / "plan.json").read_text(), update_golden)


def test_same_input_same_bytes(tmp_path):
    a = run_zcube("plan", "inventories/glm-1k.yaml", "-o", str(tmp_path / "a"), cwd=ROOT)
    b = run_zcube("plan", "inventories/glm-1k.yaml", "-o", str(tmp_path / "b"), cwd=ROOT)
    assert a.returncode == b.returncode == 0
    assert (tmp_path / "a" / "plan.json").read_bytes() == (tmp_path / "b" / "plan.json").read_bytes()


def test_glm1k_shape(glm1k_plan):
    p = glm1k_plan
    assert p["counts"]["switches"] == 16
    assert p["counts"]["host_cables"] == 2048
    assert p["counts"]["fabric_cables"] == 1024
    assert (p["sizing"]["S"], p["sizing"]["K"], p["sizing"]["m"]) == (8, 128, 16)
    assert all(c["status"] == "passed" for c in p["checks"])


def test_plan_matches_its_model(glm1k_plan):
    doc = PLAN_ADAPTER.validate_json(dumps_plan(glm1k_plan))
    assert doc == glm1k_plan and set(doc) == SECTIONS - {"port_maps"}  # port_maps: a design whose roles have their own ports (ROFT)
    assert {s["group"] for s in doc["switches"]} == {"odd", "even"}
    host = next(c for c in doc["cables"] if c["kind"] == "host")
    assert host["a"]["device"].startswith("gpu") and host["b"]["device"].startswith("ZC-")
    fab = next(c for c in doc["cables"] if c["kind"] == "fabric")
    names = {s["name"]: s["group"] for s in doc["switches"]}
    assert names[fab["a"]["device"]] == "odd" and names[fab["b"]["device"]] == "even"


@pytest.fixture
def lab64_file(tmp_path, lab64_plan):
    return write_plan(lab64_plan, tmp_path / "good")


def _edit(path, tmp_path, *subs: tuple[str, str], count: int = 1):
    text = path.read_text(encoding="utf-8")
    for old, new in subs:
        assert old in text, old
        text = text.replace(old, new, count)
    out = tmp_path / "edited" / "plan.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out


PROJECTIONS = [None, projection(switches={"name", "mgmt_address", "interfaces"}, servers={"name": None, "nics": {"port", "address"}},
                                cables={"id", "a"}, routing=None)]


@pytest.mark.parametrize("fields", PROJECTIONS, ids=["whole", "projected"])
def test_read_collects_every_hand_edit_with_its_data_path(lab64_file, tmp_path, fields):
    sw = json.loads(lab64_file.read_text().splitlines()[[i for i, x in enumerate(lab64_file.read_text().splitlines())
                                                           if x.startswith('"switches"')][0] + 1].rstrip(","))
    first = sw["interfaces"][0]["address"]
    bad = _edit(lab64_file, tmp_path,
                (f'"address":"{first}"', '"address":"10.0.0.300"'),   # not an address
                (f'"mgmt_address":"{sw["mgmt_address"]}"', f'"mgmt_adress":"{sw["mgmt_address"]}"'),  # misspelt key
                ('"nic_port":2,', '"nic_port":"2",'),                  # a string for an integer
                ('"b":{"device":', '"b":{"devise":'))                  # a cable end without its device
    with pytest.raises(InvalidPlanFile) as exc:
        read_plan(bad, fields)
    paths = {p.path for p in exc.value.problems}
    assert {"switches[0].interfaces[0].address", "switches[0].mgmt_address"} <= paths
    # a projection validates what it keeps (and ignores fields it does not read); a whole read, everything
    whole_only = {"switches[0].mgmt_adress", "cables[0].b.device", "servers[0].nics[1].nic_port"}
    assert whole_only & paths == (set() if fields else whole_only)
    assert all(p.hint for p in exc.value.problems)
    assert exc.value.exit_code == 2


def test_cli_reports_a_hand_edited_plan_without_traceback(lab64_file, tmp_path):
    bad = _edit(lab64_file, tmp_path, ('"loopback":"', '"loopback":"ten.'))
    for cmd in (("render", str(bad), "-o", str(tmp_path / "r")), ("diff", str(lab64_file), str(bad))):
        r = run_zcube(*cmd)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "switches[0].loopback" in r.stderr and "Traceback" not in r.stderr and "internal error" not in r.stderr


@pytest.mark.parametrize("fields", PROJECTIONS, ids=["whole", "projected"])
def test_read_refuses_a_truncated_plan(lab64_file, tmp_path, fields):
    cut = tmp_path / "cut.json"
    text = lab64_file.read_text()
    cut.write_text(text[: len(text) // 2])
    with pytest.raises(PlanFileError, match="truncated"):
        read_plan(cut, fields)


@pytest.mark.parametrize("fields", PROJECTIONS, ids=["whole", "projected"])
def test_read_names_an_older_schema_version(lab64_file, tmp_path, fields):
    old = _edit(lab64_file, tmp_path, ('"schema_version":2', '"schema_version":1'))
    with pytest.raises(PlanFileError, match="schema version 1 was written by an older zcube.*re-run `zcube plan`"):
        read_plan(old, fields)


def test_projected_read_is_the_projection_of_the_whole(lab64_file):
    whole = read_plan(lab64_file)
    part = read_plan(lab64_file, PROJECTIONS[1])
    assert set(part) == {"schema_version", "design", "switches", "servers", "cables", "routing"}  # design: every read has it
    assert part["routing"] == whole["routing"]
    assert part["switches"] == [{k: s[k] for k in ("name", "mgmt_address", "interfaces")} for s in whole["switches"]]
    assert part["servers"][3]["nics"] == [{"port": n["port"], "address": n["address"]} for n in whole["servers"][3]["nics"]]
    assert part["cables"][-1] == {"id": whole["cables"][-1]["id"], "a": whole["cables"][-1]["a"]}


def test_projections_are_checked_against_the_model():
    with pytest.raises(KeyError, match="switches.nam"):
        projection(switches={"nam"})
    with pytest.raises(KeyError, match="plan.switchez"):
        projection(switchez=None)
    with pytest.raises(KeyError, match="servers.nics.mca"):
        check_projection({"servers": {"nics": {"mca"}}})
    # every command's projection names fields the model has
    from zcube_deploy.analysis.report import PLAN_FIELDS as analyze
    from zcube_deploy.cabling.run import PLAN_FIELDS as cabling
    from zcube_deploy.hall import PLAN_FIELDS as hall
    from zcube_deploy.lab.server import PLAN_FIELDS as lab
    from zcube_deploy.push import PLAN_FIELDS as push
    from zcube_deploy.render import PLAN_FIELDS as render
    from zcube_deploy.verify import PLAN_FIELDS as verify
    for fields in (analyze, cabling, hall, lab, push, render, verify):
        check_projection(fields)


@pytest.mark.parametrize("change", ["extra field", "wrong type", "missing section"])
def test_write_refuses_a_plan_that_does_not_match_the_model(lab64_plan, tmp_path, change):
    plan = copy.deepcopy(lab64_plan)
    if change == "extra field":
        plan["switches"][2]["colour"] = "blue"
    elif change == "wrong type":
        plan["cables"][5]["plane"] = "0"
    else:
        del plan["routing"]
    with pytest.raises(InvariantViolation, match="plan model"):
        write_plan(plan, tmp_path)
    assert not (tmp_path / "plan.json").exists()


@pytest.mark.parametrize("name", ["lab-64", "glm-1k", "glm-1k-roft"])
def test_a_built_plan_matches_its_model_and_its_fresh_write_is_the_validated_one(name, tmp_path):
    """`zcube plan` writes the planner's big row lists without validating them again (plan/io.py ``fresh``): each
    bundled inventory's plan validates against the model, reads back (validated, consistent) as it was built, and
    its fresh write is byte for byte the validated write (tests/test_invariants_property.py: over generated shapes)."""
    plan = designs.build_plan(load_inventory(INVENTORIES / f"{name}.yaml"))
    PLAN_ADAPTER.validate_python(plan)
    fresh = write_plan(plan, tmp_path / "fresh", fresh=True)
    assert fresh.read_bytes() == write_plan(plan, tmp_path / "checked").read_bytes()
    assert read_plan(fresh) == plan


def test_the_fresh_write_still_refuses_what_it_cannot_write_as_validated(lab64_plan, tmp_path):
    """Fresh: the small sections are still validated, and a row msgspec cannot encode goes to the validation."""
    for change in ("missing section", "extra section", "an object in a row"):
        plan = {**lab64_plan, "cables": list(lab64_plan["cables"])}
        if change == "missing section":
            del plan["routing"]
        elif change == "extra section":
            plan["colour"] = "blue"
        else:
            plan["cables"][3] = {**plan["cables"][3], "plane": object()}
        with pytest.raises(InvariantViolation, match="plan model"):
            write_plan(plan, tmp_path, fresh=True)
        assert not (tmp_path / "plan.json").exists(), change


@pytest.mark.parametrize("fresh", [True, False])
def test_a_float_msgspec_writes_otherwise_is_written_as_pydantic_core_writes_it(lab64_plan, tmp_path, fresh):
    """msgspec writes 1e16 as 1e16, pydantic-core (plan.json's bytes until now) as 1e+16: such a section is written by
    pydantic-core, fresh or not."""
    plan = {**lab64_plan, "cables": list(lab64_plan["cables"])}
    plan["cables"][0] = {**plan["cables"][0], "length_m": 1e16}
    plan["cables"][1] = {**plan["cables"][1], "estimate_m": -2.5e20}
    text = dumps_plan(plan, fresh=fresh)
    assert '"length_m":1e+16' in text and '"estimate_m":-2.5e+20' in text
    assert text == dumps_plan(plan)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.text()
    | st.floats(min_value=-1e16, max_value=1e16, exclude_min=True, exclude_max=True),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=5), max_leaves=20)


def _sorted_keys(v):
    if isinstance(v, dict):
        return {k: _sorted_keys(v[k]) for k in sorted(v)}
    return [_sorted_keys(x) for x in v] if isinstance(v, list) else v


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.dictionaries(st.text(max_size=6), JSON, max_size=6), max_size=7))
def test_msgspec_rows_are_pydantic_core_rows_with_sorted_keys(rows):
    """The row encoder (msgspec, keys sorted, in chunks) writes what pydantic-core's to_json writes of the rows with their
    keys sorted at every level: any strings (control characters, non-ASCII), integers, floats below 1e16, nesting."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plan_io, "ROWS_PER_CHUNK", 3)
        assert b",\n".join(plan_io._lines(rows)) == b",\n".join(to_json(_sorted_keys(r)) for r in rows)


def test_float_fields_are_found_through_nested_rows_and_lists():
    assert plan_io.float_fields("cables") == (("estimate_m",), ("length_m",))
    rows = [{"a": [{"x": 1.0}, {"x": 2.0}]}, {"a": {"x": 3.0}}, {"b": 4.0}]
    assert list(plan_io._at(rows, ("a", "x"))) == [1.0, 2.0, 3.0]


def test_schema_is_the_models(lab64_plan):
    r = run_zcube("schema", "plan")
    assert r.returncode == 0
    schema = json.loads(r.stdout)
    assert set(schema["required"]) == REQUIRED_SECTIONS and set(schema["properties"]) == SECTIONS
    assert set(lab64_plan) == SECTIONS - {"port_maps"} and lab64_plan["design"] == "zcube"
    sw = schema["$defs"]["Switch"]
    assert set(sw["required"]) == set(lab64_plan["switches"][0]) and sw["additionalProperties"] is False
    assert set(sw["properties"]) - set(sw["required"]) == {"pod", "routing_mode"}  # a ROFT leaf's, a stage switch's


def _shapes() -> list:
    """Inventories of different shapes: static and bgp, partial fill, 4-port NICs (two planes), m > 1."""
    lab = yaml.safe_load((INVENTORIES / "lab-64.yaml").read_text())
    bgp = copy.deepcopy(lab)
    bgp["routing"] = {"mode": "bgp"}
    partial = copy.deepcopy(lab)
    partial["servers"]["generate"]["count"] = 3
    nosgf = copy.deepcopy(lab)
    nosgf["routing"] = {"mode": "static", "same_group_fallback": False}
    glm = yaml.safe_load((INVENTORIES / "glm-1k.yaml").read_text())
    glm["topology"]["capacity_servers"] = 32
    glm["servers"]["generate"]["count"] = 20
    return [("lab-64", lab), ("bgp", bgp), ("partial", partial), ("nosgf", nosgf), ("glm-32-srv-m>1", glm)]


@pytest.mark.parametrize("name,data", _shapes(), ids=[n for n, _ in _shapes()])
def test_no_stage_changes_its_inputs(name, data):
    """Each stage is a function of (inventory, earlier sections): what it was given is unchanged after it."""
    inv = resolve_inventory(data, base=INVENTORIES)
    acc: dict = {}
    for stage, fn in build.STAGES:
        before = copy.deepcopy(acc)
        out = fn(inv, acc)
        assert acc == before, f"stage {stage} changed its inputs"
        assert isinstance(out, dict) and out
        acc = {**acc, **out}
    assert build.assemble_plan(inv, acc) == build_plan(inv)


def test_switch_tables_follow_the_routing_kind(lab64_plan):
    """The forwarding interface: mode static gives the configured routes; mode bgp gives best paths
    that reach every other switch's host block over the direct odd/even links (checked here with
    ipaddress, apart from topology/bestpaths.py)."""
    static = switch_tables(lab64_plan["routing"], lab64_plan["switches"])
    for sw in lab64_plan["switches"]:
        assert sorted((e.prefix, str(ipaddress.ip_address(e.next_hops[0]))) for e in static[sw["name"]]) == \
            sorted((r["prefix"], r["next_hop"]) for r in sw["routes"])
    data = yaml.safe_load((INVENTORIES / "lab-64.yaml").read_text())
    data["routing"] = {"mode": "bgp"}
    bgp_plan = build_plan(resolve_inventory(data, base=INVENTORIES))
    tables = switch_tables(bgp_plan["routing"], bgp_plan["switches"])
    by_name = {s["name"]: s for s in bgp_plan["switches"]}
    owner = {i["address"]: s["name"] for s in bgp_plan["switches"] for i in s["interfaces"]}
    for sw in bgp_plan["switches"]:
        assert sw["routes"] == []
        entries = {e.prefix: e for e in tables[sw["name"]]}
        for other in bgp_plan["switches"]:
            if other["name"] == sw["name"]:
                continue
            e = entries[other["host_block"]]
            hops = {owner[str(ipaddress.ip_address(h))] for h in e.next_hops}
            if other["group"] != sw["group"]:
                assert hops == {other["name"]}  # one AS hop: straight across
            else:
                assert hops and all(by_name[h]["group"] != sw["group"] for h in hops)  # via every switch of the other group
                assert len(hops) == sum(1 for s in bgp_plan["switches"] if s["group"] != sw["group"] and s["plane"] == sw["plane"])
    with pytest.raises(ValueError, match="no forwarding model"):
        switch_tables({"mode": "ospf"}, [])


def _glm_data() -> dict:
    return yaml.safe_load((INVENTORIES / "glm-1k.yaml").read_text())


def test_growth_adds_cables_and_moves_none():
    data = _glm_data()
    data["topology"]["capacity_servers"] = 128
    small = copy.deepcopy(data)
    small["servers"]["generate"]["count"] = 40
    old = build_plan(resolve_inventory(small, base=INVENTORIES))
    new = build_plan(resolve_inventory(data, base=INVENTORIES))
    d = diff_plans(old, new)
    assert d["summary"]["cables_moved"] == 0 and d["summary"]["cables_removed"] == 0
    assert d["summary"]["cables_added"] == (128 - 40) * 8 * 2
    assert d["summary"]["routes_changed"] == 0  # fabric and routes sized for capacity from day one
    assert d["summary"]["addresses_changed"] == 0
    assert old["sizing"]["S"] == new["sizing"]["S"] and old["sizing"]["m"] == new["sizing"]["m"]
    # the fabric is complete from day one
    assert old["counts"]["fabric_cables"] == new["counts"]["fabric_cables"] == 1024


def test_partial_fill_reserves_host_ports():
    data = _glm_data()
    data["topology"]["capacity_servers"] = 128
    data["servers"]["generate"]["count"] = 10
    p = build_plan(resolve_inventory(data, base=INVENTORIES))
    assert p["counts"]["host_cables"] == 10 * 8 * 2
    assert p["sizing"]["capacity_gpus"] == 1024


def test_read_plan_refuses_unknown_schema(tmp_path):
    (tmp_path / "plan.json").write_text(json.dumps({"schema_version": 999}))
    with pytest.raises(PlanFileError, match="schema version 999"):
        read_plan(tmp_path)


def test_cli_plan_json_summary(tmp_path):
    r = run_zcube("plan", str(INVENTORIES / "lab-64.yaml"), "-o", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert (s["S"], s["K"], s["m"]) == (8, 8, 1)
    assert s["switches"] == 16 and s["host_cables"] == 128 and s["fabric_cables"] == 64
    assert s["invariants_passed"] is True


def test_cli_schema():
    r = run_zcube("schema", "plan")
    assert r.returncode == 0
    assert "cables" in json.loads(r.stdout)["properties"]
    r = run_zcube("schema", "inventory")
    assert "addressing" in json.loads(r.stdout)["properties"]


def test_cli_diff_and_fail_on_moved(tmp_path):
    data = _glm_data()
    data["topology"]["capacity_servers"] = 128
    small = copy.deepcopy(data)
    small["servers"]["generate"]["count"] = 64
    for name, d in (("small", small), ("big", data)):
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(d))
        assert run_zcube("plan", str(tmp_path / f"{name}.yaml"), "-o", str(tmp_path / name)).returncode == 0
    r = run_zcube("diff", str(tmp_path / "small" / "plan.json"), str(tmp_path / "big" / "plan.json"), "--json")
    assert r.returncode == 1
    assert json.loads(r.stdout)["summary"]["cables_added"] == 1024
    # growth moves nothing: the CI gate passes
    r = run_zcube("diff", str(tmp_path / "small"), str(tmp_path / "big"), "--fail-on", "moved")
    assert r.returncode == 0, r.stdout + r.stderr
    # renaming the servers moves cables: the gate fails
    moved = copy.deepcopy(data)
    moved["servers"]["generate"]["name"] = "node{n:04d}"
    (tmp_path / "moved.yaml").write_text(yaml.safe_dump(moved))
    assert run_zcube("plan", str(tmp_path / "moved.yaml"), "-o", str(tmp_path / "moved")).returncode == 0
    r = run_zcube("diff", str(tmp_path / "big"), str(tmp_path / "moved"), "--fail-on", "moved")
    assert r.returncode == 1
    assert "moved cables" in r.stdout
    r = run_zcube("diff", str(tmp_path / "big"), str(tmp_path / "big"))
    assert r.returncode == 0


def test_streamed_rows_same_bytes_as_lists(tmp_path):
    """write_canonical streams iterator values row by row (the lab's 64k-cable wiring.json) with the
    same bytes as the in-memory layout, including empty and batch-boundary sizes."""
    from zcube_deploy.plan.io import iter_canonical, write_canonical

    for n in (0, 1, 1999, 2000, 2001, 4500):
        rows = [{"id": f"C{i:05d}", "x": {"b": i, "a": "é"}} for i in range(n)]
        doc = {"rows": rows, "empty": [], "meta": {"n": n}}
        path = write_canonical({**doc, "rows": iter(rows)}, tmp_path / "doc.json")
        assert path.read_text(encoding="utf-8") == "".join(iter_canonical(doc))
        assert json.loads(path.read_text(encoding="utf-8")) == doc


def test_plan_cli_ends_fast_with_its_output_whole(tmp_path):
    """`zcube plan` ends its process without freeing the plan object by object (cli.main, os._exit): what it
    printed reaches a pipe whole (flushed first), plan.json is complete, and the exit codes are unchanged."""
    r = run_zcube("plan", str(INVENTORIES / "lab-64.yaml"), "-o", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)  # the whole JSON document, not a buffer cut short
    assert summary["plan"] == str(tmp_path / "plan.json")
    assert read_plan(tmp_path / "plan.json")["counts"]["switches"] == 16
    r = run_zcube("plan", str(tmp_path / "missing.yaml"), "-o", str(tmp_path / "x"))
    assert r.returncode == 2 and "missing.yaml" in r.stdout + r.stderr
