"""Plan: golden for lab-64, determinism, growth stability, the documented minimum, diff."""

from __future__ import annotations

import copy
import json

import yaml

from conftest import GOLDEN, INVENTORIES, ROOT, check_golden, run_zcube
from zcube_deploy.inventory import resolve_inventory
from zcube_deploy.plan import build_plan
from zcube_deploy.plan.diff import diff_plans
from zcube_deploy.plan.io import dumps_plan, read_plan
from zcube_deploy.plan.schema import Plan


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


def test_documented_minimum_validates(glm1k_plan):
    doc = Plan.model_validate(json.loads(dumps_plan(glm1k_plan)))
    assert {s.group for s in doc.switches} == {"odd", "even"}
    host = next(c for c in doc.cables if c.kind == "host")
    assert host.a.device.startswith("gpu") and host.b.device.startswith("ZC-")
    fab = next(c for c in doc.cables if c.kind == "fabric")
    names = {s.name: s.group for s in doc.switches}
    assert names[fab.a.device] == "odd" and names[fab.b.device] == "even"


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
    import pytest
    from zcube_deploy.errors import PlanFileError

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
