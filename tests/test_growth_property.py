"""Growth within the capacity moves nothing (zcube.md section 3; issue 26 item 4).

Over many shapes (GPUs per server, radix, NIC ports, oversubscription, capacity, racks, placement
rules, racks that may hold switches, routing mode), a plan of N servers and the plan of the same
inventory grown to M (N <= M <= capacity) are compared row by row: every cable, switch, interface,
route and server row of the small plan is in the big one, unchanged. The comparison here is plain
set inclusion of canonical JSON rows, written apart from the planner and apart from
``zcube_deploy.expand.growth`` (which the test also runs, and which must agree).
"""

from __future__ import annotations

import copy
import json
from math import ceil

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tests.test_invariants_property import ROUTING, make_catalog
from zcube_deploy.errors import PlanError
from zcube_deploy.expand.growth import compare_growth
from zcube_deploy.inventory import resolve_inventory
from zcube_deploy.plan import build_plan

INVENTORIES = ROOT / "inventories"


def _rows(plan: dict) -> dict[str, set[str]]:
    """Every row an expansion must keep, as canonical JSON, by kind."""
    dump = lambda row: json.dumps(row, sort_keys=True)  # noqa: E731
    return {
        "cable": {dump(c) for c in plan["cables"]},
        "switch": {dump({k: v for k, v in s.items() if k not in ("interfaces", "routes")}) for s in plan["switches"]},
        "interface": {dump({"switch": s["name"], **i}) for s in plan["switches"] for i in s["interfaces"]},
        "route": {dump({"switch": s["name"], **r}) for s in plan["switches"] for r in s["routes"]},
        "server": {dump(s) for s in plan["servers"]},
        "fabric": {dump({k: plan[k] for k in ("port_map", "routing", "settings", "layout")}),
                   dump({k: v for k, v in plan["addressing"].items() if k != "used"}),
                   dump({k: v for k, v in plan["sizing"].items() if not k.startswith("installed_")})},
    }


def kept_rows(old: dict, new: dict) -> dict[str, int]:
    """kind -> how many rows of ``old`` are missing from ``new`` (each one moved or gone)."""
    o, n = _rows(old), _rows(new)
    return {kind: len(o[kind] - n[kind]) for kind in o if o[kind] - n[kind]}


def growth_inventory(servers: int, capacity: int, over: float, nic_ports: int, routing: str, per_rack: int, first_u: int,
                     spare_racks: int, network: int, network_u: int, compute_switches: bool, even: str, odd: str) -> dict:
    compute = ceil(capacity / per_rack) + spare_racks
    return {
        "routing": ROUTING[routing],
        "cluster": "grow", "switch_model": "T-SW", "server_model": "T-SRV",
        "switch_naming": "ZC-P{plane}-{G}{number:03d}",
        "topology": {"oversubscription": over, "capacity_servers": capacity},
        "layout": {"placement": {"even": even, "odd": odd},
                   "rows": [{"name": "A", "generate": [{"count": compute, "name": "A{n:02d}", "allow_switches": compute_switches}]},
                            {"name": "B", "generate": [{"count": network, "name": "N{n:02d}", "role": "network", "u_height": network_u}]}]},
        "servers": {"generate": {"count": servers, "per_rack": per_rack, "first_u": first_u}},
        "addressing": {"host_pool": "10.0.0.0/10", "fabric_pool": "10.64.0.0/10", "loopback_pool": "10.128.0.0/16",
                       "management": {"network": "172.16.0.0/20"}},
    }


def _plan(data: dict, catalog) -> dict | None:
    try:
        return build_plan(resolve_inventory(copy.deepcopy(data), catalog=catalog))
    except PlanError:
        return None


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # ~1 s each: CI's 30-minute budget
@given(
    gpus=st.sampled_from([2, 4, 8]),
    cages=st.integers(min_value=4, max_value=32),
    lanes=st.sampled_from([1, 2, 4]),
    nic_ports=st.sampled_from([2, 4]),
    over=st.sampled_from([1.0, 2.0]),
    capacity=st.integers(min_value=1, max_value=40),
    fills=st.tuples(st.floats(min_value=0.0, max_value=1.0), st.floats(min_value=0.0, max_value=1.0)),
    routing=st.sampled_from(sorted(ROUTING)),
    per_rack=st.integers(min_value=1, max_value=12),
    first_u=st.integers(min_value=1, max_value=20),
    spare_racks=st.integers(min_value=0, max_value=2),
    network=st.integers(min_value=1, max_value=3),
    network_u=st.sampled_from([4, 8, 16, 48]),
    compute_switches=st.booleans(),
    even=st.sampled_from(["near_servers", "network_racks"]),
    odd=st.sampled_from(["network_racks", "near_servers"]),
)
def test_growth_keeps_every_row(gpus, cages, lanes, nic_ports, over, capacity, fills, routing, per_rack, first_u, spare_racks,
                                network, network_u, compute_switches, even, odd):
    catalog = make_catalog(cages, lanes, gpus, nic_ports)
    small, big = sorted(max(1, round(f * capacity)) for f in fills)
    shape = (over, nic_ports, routing, per_rack, first_u, spare_racks, network, network_u, compute_switches, even, odd)
    old = _plan(growth_inventory(small, capacity, *shape), catalog)
    new = _plan(growth_inventory(big, capacity, *shape), catalog)
    # where the switches fit does not depend on how many servers are installed
    assert (old is None) == (new is None)
    assume(old is not None)
    assert kept_rows(old, new) == {}
    growth = compare_growth(old, new)
    assert growth.problems == []
    assert len(growth.new_servers) == big - small
    assert len(growth.new_cables) == (big - small) * gpus * nic_ports
    # the switches that gain ports are exactly those the new cables end on
    ends = {c["b"]["device"] for c in new["cables"] if c["id"] in set(growth.new_cables)}
    assert set(growth.changed_switches) == ends


def _glm(count: int, capacity: int = 128) -> dict:
    data = yaml.safe_load((INVENTORIES / "glm-1k.yaml").read_text())
    data["topology"]["capacity_servers"] = capacity
    data["servers"]["generate"]["count"] = count
    return data


def test_glm_half_grown_to_full_moves_no_switch():
    """The case that found it: glm-1k planned with 64 of 128 servers put the four even switches
    without servers in the first network rack, above the odd switches, so growing to 128 relocated
    12 switches (and the fabric cables on them)."""
    old = build_plan(resolve_inventory(_glm(64), base=INVENTORIES))
    new = build_plan(resolve_inventory(_glm(128), base=INVENTORIES))
    full = build_plan(resolve_inventory(yaml.safe_load((INVENTORIES / "glm-1k.yaml").read_text()), base=INVENTORIES))
    assert kept_rows(old, new) == {}
    assert [(s["name"], s["rack"], s["u"]) for s in old["switches"]] == [(s["name"], s["rack"], s["u"]) for s in full["switches"]]
    growth = compare_growth(old, new)
    assert growth.problems == [] and len(growth.new_cables) == 64 * 16
    assert growth.changed_switches == sorted([f"ZC-O{n:03d}" for n in range(1, 16, 2)] + ["ZC-E010", "ZC-E012", "ZC-E014", "ZC-E016"])


def test_listed_servers_cannot_say_where_they_will_go():
    """Known-bad: servers listed one by one (or from CSV) say nothing about the ones not installed
    yet, so an even switch without servers is placed in the network racks, after every other switch;
    when its servers arrive it goes near them. Only that switch moves, and the comparison names it
    and its fabric cables, while the odd switches and the even switches with servers stay."""
    plan = build_plan(resolve_inventory(_glm(64), base=INVENTORIES))
    listed = _glm(0)
    listed["servers"]["list"] = [{"name": s["name"], "rack": s["rack"], "u": s["u"]} for s in plan["servers"]]
    old = build_plan(resolve_inventory(listed, base=INVENTORIES))
    grown = _glm(0)
    full = build_plan(resolve_inventory(_glm(128), base=INVENTORIES))
    grown["servers"]["list"] = [{"name": s["name"], "rack": s["rack"], "u": s["u"]} for s in full["servers"]]
    new = build_plan(resolve_inventory(grown, base=INVENTORIES))
    problems = compare_growth(old, new).problems
    moved = sorted({p.path.split("]")[0][len("switches["):] for p in problems if p.path.startswith("switches[")})
    assert moved == ["ZC-E010", "ZC-E012", "ZC-E014", "ZC-E016"]
    assert all("rack: AN1 ->" in p.message or "rack: BN1 ->" in p.message for p in problems if p.path.startswith("switches["))
    fabric = {p.path for p in problems if p.path.startswith("cables[F")}
    assert len(fabric) == 4 * 8 * 16  # every fabric cable of the four moved switches
    assert not [p for p in problems if p.path.startswith(("cables[H", "servers["))]
    assert kept_rows(old, new) == {"cable": 4 * 8 * 16, "switch": 4}  # the test's own comparison agrees


@pytest.mark.parametrize("edit,expect", [
    (lambda d: d["servers"]["generate"].update(name="node{n:04d}"), "servers[gpu0001]"),
    (lambda d: d["addressing"].update(host_pool="10.16.0.0/20"), "addressing"),
    (lambda d: d["topology"].update(capacity_servers=120), "sizing"),
])
def test_growth_refuses_what_moves(edit, expect):
    """Known-bad: renamed servers, another host pool, another capacity: rows of the old plan go or move."""
    old = build_plan(resolve_inventory(_glm(40), base=INVENTORIES))
    data = _glm(64)
    edit(data)
    new = build_plan(resolve_inventory(data, base=INVENTORIES))
    problems = compare_growth(old, new).problems
    assert any(p.path == expect for p in problems), [str(p) for p in problems[:5]]
    assert kept_rows(old, new)


def test_projection_doctest():
    """inventory/servers.py's example of where the generator puts the servers not installed yet."""
    import doctest

    from zcube_deploy.inventory import servers

    assert doctest.testmod(servers).failed == 0
