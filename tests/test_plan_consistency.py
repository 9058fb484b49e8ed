"""plan.json consistent with itself (plan/consistency.py): each check finds its own known-bad case.

Every case breaks one thing in a copy of a good plan and expects the check that guards it to name
the data path; with that check removed from ``CHECKS`` the case is not found (so each check is
needed). Read through ``read_plan`` the problems are an InvalidPlanFile (exit 2) naming the file,
for the whole plan and for each command's projection that reads the broken part.
"""

from __future__ import annotations

import copy
import json

import pytest

from zcube_deploy.errors import InvalidPlanFile, PlanFileError
from zcube_deploy.plan import consistency
from zcube_deploy.plan.consistency import CHECKS, plan_problems
from zcube_deploy.plan.io import read_plan, write_canonical
from zcube_deploy.plan.model import projection


def _set(path: list, value):
    def edit(d):
        node = d
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
    return edit


def _copy_from(dst: list, src: list):
    def edit(d):
        node = d
        for k in src:
            node = node[k]
        _set(dst, copy.deepcopy(node))(d)
    return edit


# check -> (edit, the data path the problem names)
CASES = {
    "switch name twice": ("unique_names", _copy_from(["switches", 3, "name"], ["switches", 2, "name"]), "switches[3].name"),
    "server name twice": ("unique_names", _copy_from(["servers", 1, "name"], ["servers", 0, "name"]), "servers[1].name"),
    "cable id twice": ("unique_names", _copy_from(["cables", 9, "id"], ["cables", 8, "id"]), "cables[9].id"),
    "interface name twice": ("unique_names", _copy_from(["switches", 0, "interfaces", 1, "name"], ["switches", 0, "interfaces", 0, "name"]),
                             "switches[0].interfaces[1].name"),
    "address twice": ("unique_addresses", _copy_from(["switches", 1, "loopback"], ["switches", 0, "loopback"]), "switches[1].loopback"),
    "nic address twice": ("unique_addresses", _copy_from(["servers", 1, "nics", 0, "address"], ["servers", 0, "nics", 0, "address"]),
                          "servers[1].nics[0].address"),
    "counts off": ("counts_match", lambda d: d["counts"].update(cables=d["counts"]["cables"] + 1), "counts.cables"),
    "a switch too many": ("sizing_matches", lambda d: d["switches"].append(copy.deepcopy(d["switches"][0]) | {"name": "ZC-X"}), "=switches"),
    "a switch's place twice": ("sizing_matches", _copy_from(["switches", 2, "index"], ["switches", 0, "index"]), "switches[2]"),
    "cable to a missing device": ("cable_ends", _set(["cables", 3, "b", "device"], "ZC-NOPE"), "cables[3].b.device"),
    "cable to a missing port": ("cable_ends", _set(["cables", 3, "b", "port"], "HundredGigabitEthernet 0/99:9"), "cables[3].b.port"),
    "cable to a port of another cable": ("cable_ends", _copy_from(["cables", 3, "b", "port"], ["cables", 1, "b", "port"]), "cables[3].b.port"),
    "fabric cable odd to odd": ("cable_ends", lambda d: _fabric_odd_to_odd(d), "cables["),
    "interface not in the port map": ("switch_interfaces", _set(["switches", 0, "interfaces", 0, "name"], "Ethernet 9/9"),
                                      "switches[0].interfaces[0].name"),
    "interface prefix length 40": ("switch_interfaces", _set(["switches", 0, "interfaces", 0, "prefix_len"], 40),
                                   "switches[0].interfaces[0].prefix_len"),
    "interface peer not a server": ("switch_interfaces", _set(["switches", 0, "interfaces", 0, "peer", "device"], "gpu99"),
                                    "switches[0].interfaces[0].peer.device"),
    "a switch without its interfaces": ("switch_interfaces", _set(["switches", 2, "interfaces"], []), "switches[2].interfaces"),
    "nic on a missing switch": ("nic_ports", _set(["servers", 0, "nics", 0, "switch"], "ZC-NOPE"), "servers[0].nics[0].switch"),
    "nic route on a foreign port": ("nic_ports", _set(["servers", 0, "nics", 0, "routes", 0, "dev"], "eth9"), "servers[0].nics[0].routes[0].dev"),
    "nic prefix length 33": ("nic_ports", _set(["servers", 0, "nics", 0, "prefix_len"], 33), "servers[0].nics[0].prefix_len"),
    "mode bgp without BGP data": ("routing_complete", _set(["routing", "mode"], "bgp"), "routing.asn_last"),
    "an ASN in mode static": ("routing_complete", _set(["switches", 0, "asn"], 4200000000), "switches[0].asn"),
    "mgmt prefix length 99": ("settings_valid", _set(["settings", "mgmt_prefix_len"], 99), "settings.mgmt_prefix_len"),
    "a switch model without speeds": ("models_valid", lambda d: d["models"]["switch"].pop("speeds"), "models.switch.speeds"),
}


def _fabric_odd_to_odd(d):
    c = next(c for c in d["cables"] if c["kind"] == "fabric")
    odd = next(s["name"] for s in d["switches"] if s["group"] == "odd" and s["name"] != c["a"]["device"])
    c["b"]["device"] = odd


@pytest.fixture(scope="module")
def good(lab64_build) -> dict:
    return json.loads((lab64_build / "plan.json").read_text())


def test_bundled_plans_are_consistent(lab64_build, glm1k_build):
    """No false alarm on the bundled plans, whole or through any command's projection."""
    from zcube_deploy.analysis.report import PLAN_FIELDS as ANALYZE
    from zcube_deploy.cabling.run import PLAN_FIELDS as CABLING
    from zcube_deploy.hall import PLAN_FIELDS as HALL
    from zcube_deploy.lab.server import PLAN_FIELDS as LAB
    from zcube_deploy.push import PLAN_FIELDS as PUSH
    from zcube_deploy.render import PLAN_FIELDS as RENDER
    from zcube_deploy.render import SHARED_FIELDS
    from zcube_deploy.verify import PLAN_FIELDS as VERIFY

    for build in (lab64_build, glm1k_build):
        assert plan_problems(json.loads((build / "plan.json").read_text())) == []
        for fields in (ANALYZE, CABLING, HALL, LAB, PUSH, RENDER, SHARED_FIELDS, VERIFY):
            read_plan(build / "plan.json", fields)  # raises on a problem


def test_a_bgp_plan_is_consistent(tmp_path):
    import yaml

    from conftest import INVENTORIES
    from zcube_deploy.inventory import resolve_inventory
    from zcube_deploy.plan import build_plan

    data = yaml.safe_load((INVENTORIES / "lab-64.yaml").read_text())
    data["routing"] = {"mode": "bgp"}
    assert plan_problems(json.loads(json.dumps(build_plan(resolve_inventory(data, base=INVENTORIES))))) == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_check_finds_its_case(good, case, monkeypatch):
    check, edit, where = CASES[case]
    doc = copy.deepcopy(good)
    edit(doc)
    found = (lambda p: p.path == where[1:]) if where.startswith("=") else (lambda p: p.path.startswith(where))
    problems = plan_problems(doc)
    assert any(found(p) for p in problems), problems
    assert all(p.hint for p in problems)
    # without the check, the case goes unseen
    monkeypatch.setattr(consistency, "CHECKS", tuple(c for c in CHECKS if c.__name__ != check))
    assert not any(found(p) for p in plan_problems(doc)), check


def test_read_plan_refuses_with_every_problem_and_the_file(good, tmp_path):
    doc = copy.deepcopy(good)
    doc["cables"][3]["b"]["device"] = "ZC-NOPE"
    doc["routing"]["mode"] = "bgp"
    write_canonical(doc, tmp_path / "plan.json")
    with pytest.raises(InvalidPlanFile) as exc:
        read_plan(tmp_path / "plan.json")
    assert exc.value.exit_code == 2 and str(tmp_path / "plan.json") in exc.value.title
    paths = {p.path for p in exc.value.problems}
    assert {"cables[3].b.device", "routing.asn_last", "routing.maximum_paths", "switches[0].asn"} <= paths
    # a projection reads and checks only its part: cabling reads no routing
    with pytest.raises(InvalidPlanFile) as exc:
        read_plan(tmp_path / "plan.json", projection(cables=None, switches={"name"}, servers={"name"}))
    assert {p.path for p in exc.value.problems} == {"cables[3].b.device"}
    assert read_plan(tmp_path / "plan.json", projection(cluster=None, tool_version=None))["cluster"]


def test_problems_are_capped(good):
    doc = copy.deepcopy(good)
    for c in doc["cables"]:
        c["b"]["device"] = "ZC-NOPE"
    problems = plan_problems(doc, limit=50)
    assert len(problems) == 51 and problems[-1].message.startswith("... and ")


@pytest.mark.parametrize("layout", ["canonical", "indented"])
def test_deep_nesting_and_huge_numbers_are_input_errors(good, tmp_path, layout):
    """A value nested thousands deep or a number past any range: exit 2 naming the file, never a RecursionError."""
    for value in ("[" * 5000 + "]" * 5000, "1" + "0" * 5000):
        doc = copy.deepcopy(good)
        doc["tool_version"] = "__here__"
        if layout == "canonical":
            write_canonical(doc, tmp_path / "plan.json")
        else:
            (tmp_path / "plan.json").write_text(json.dumps(doc, indent=1))
        text = (tmp_path / "plan.json").read_text().replace('"__here__"', value)
        (tmp_path / "plan.json").write_text(text)
        with pytest.raises(PlanFileError) as exc:
            read_plan(tmp_path / "plan.json")
        assert str(tmp_path / "plan.json") in str(exc.value) and exc.value.exit_code == 2
    (tmp_path / "plan.json").write_text('{"schema_version": ' + "[" * 100000 + "]" * 100000 + "}")
    with pytest.raises(PlanFileError):
        read_plan(tmp_path / "plan.json")
