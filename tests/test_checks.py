"""The planner's invariant checks can fail: a corrupted plan is caught, named and refused.

The plan that build_plan returns has passed every check (a failing check raises), so asserting
"no check failed" on a returned plan proves nothing about the checks themselves. Here the stages
run up to the checks, the result is broken on purpose, and the checks must see it.
"""

from __future__ import annotations

import copy

import pytest

from conftest import INVENTORIES
from zcube_deploy.errors import InvariantViolation
from zcube_deploy.inventory import load_inventory
from zcube_deploy.plan import build
from zcube_deploy.plan.checks import check_invariants


@pytest.fixture(scope="module")
def staged():
    inv = load_inventory(INVENTORIES / "lab-64.yaml")
    before_checks = [name for name, _ in build.STAGES][-2]
    return inv, build.run_stages(inv, until=before_checks)


def broken(staged, mutate):
    inv, acc = staged
    acc = copy.deepcopy(acc)
    mutate(acc)
    with pytest.raises(InvariantViolation) as exc:
        check_invariants(inv, acc)
    return str(exc.value)


def test_intact_plan_passes(staged):
    inv, acc = staged
    assert {c["status"] for c in check_invariants(inv, copy.deepcopy(acc))} == {"passed"}


def test_a_missing_host_cable_is_caught(staged):
    def drop(acc):
        acc["cables"] = [c for c in acc["cables"] if c["id"] != "H000001"]
    assert "invariant one_link_per_gpu_port" in broken(staged, drop)


def test_a_same_group_fabric_link_is_caught(staged):
    def rewire(acc):
        f = next(c for c in acc["cables"] if c["kind"] == "fabric")
        odd = next(s["name"] for s in acc["switches"] if s["group"] == "odd" and s["name"] != f["a"]["device"])
        f["b"] = {**f["b"], "device": odd}
    assert "invariant complete_bipartite_fabric" in broken(staged, rewire)


def test_a_duplicate_address_is_caught(staged):
    def dup(acc):
        sw = acc["switches"][0]
        sw["interfaces"][1]["address"] = sw["interfaces"][0]["address"]
    assert "invariant addresses_unique_next_hops_connected" in broken(staged, dup)


def test_a_route_to_a_non_peer_is_caught(staged):
    def misroute(acc):
        sw = next(s for s in acc["switches"] if s["routes"])
        sw["routes"][0] = {**sw["routes"][0], "next_hop": "10.200.0.250"}
    assert "invariant" in broken(staged, misroute)
