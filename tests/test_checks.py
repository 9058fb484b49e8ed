"""The planner's invariant checks can fail: a corrupted plan is caught, named and refused.

The plan that build_plan returns has passed every check (a failing check stops the build), so
asserting "no check failed" on a returned plan proves nothing about the checks themselves. Here
the stages run up to the checks, the result is broken on purpose, and ``evaluate_invariants`` must
return exactly the broken invariant as "failed" (the others still "passed"), and the checks stage
must refuse to go on.
"""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import INVENTORIES
from zcube_deploy.errors import InvariantViolation
from zcube_deploy.inventory import load_inventory, resolve_inventory
from zcube_deploy.plan import build
from zcube_deploy.plan.checks import evaluate_invariants, require_invariants

INVARIANTS = {"one_link_per_gpu_port", "port_budget_and_cages", "complete_bipartite_fabric", "rail_switches",
              "server_on_one_even_switch", "addresses_unique_next_hops_connected", "one_path_at_most_two_switches"}


def _before_checks(inv):
    return inv, build.run_stages(inv, until=[name for name, _ in build.STAGES][-2])


@pytest.fixture(scope="module")
def staged():
    return _before_checks(load_inventory(INVENTORIES / "lab-64.yaml"))


@pytest.fixture(scope="module")
def staged_bgp():
    data = yaml.safe_load((INVENTORIES / "lab-64.yaml").read_text())
    data["routing"] = {"mode": "bgp"}
    return _before_checks(resolve_inventory(data, base=INVENTORIES))


def failed(staged, mutate) -> dict[str, list[str]]:
    """Break a copy of the staged plan; the failed invariants and their violations. Also: the
    checks stage refuses the broken plan, naming them."""
    inv, acc = staged
    acc = copy.deepcopy(acc)
    mutate(acc)
    rows = evaluate_invariants(inv, acc)
    assert {r["name"] for r in rows} == INVARIANTS
    out = {r["name"]: r["violations"] for r in rows if r["status"] == "failed"}
    assert all(r["status"] in ("passed", "not_applicable") and "violations" not in r for r in rows if r["name"] not in out)
    if out:
        with pytest.raises(InvariantViolation) as exc:
            build.stage_checks(inv, acc)
        assert {p.path for p in exc.value.problems} == {f"invariant {name}" for name in out}
        assert exc.value.exit_code == 1
    return out


def test_intact_plan_passes(staged, staged_bgp):
    for st in (staged, staged_bgp):
        rows = evaluate_invariants(*copy.deepcopy(st))
        assert {r["status"] for r in rows} == {"passed"}
        require_invariants(rows)  # does not raise


def test_a_missing_host_cable_fails_one_link_per_gpu_port(staged):
    def drop(acc):
        acc["cables"] = [c for c in acc["cables"] if c["id"] != "H000001"]
    out = failed(staged, drop)
    assert set(out) == {"one_link_per_gpu_port"}
    assert any("GPU 0 plane 0 has 0 odd links" in v for v in out["one_link_per_gpu_port"])


def test_a_same_group_fabric_link_fails_the_bipartite_fabric(staged):
    def rewire(acc):
        f = next(c for c in acc["cables"] if c["kind"] == "fabric")
        odd = next(s["name"] for s in acc["switches"] if s["group"] == "odd" and s["name"] != f["a"]["device"])
        f["b"] = {**f["b"], "device": odd}
    out = failed(staged, rewire)
    assert set(out) == {"complete_bipartite_fabric"}
    assert any("both odd" in v for v in out["complete_bipartite_fabric"])


def test_a_host_link_on_a_fabric_port_fails_the_port_budget(staged):
    def misport(acc):
        sw = acc["switches"][0]
        host = next(i for i in sw["interfaces"] if i["kind"] == "host")
        host["name"] = acc["port_map"]["unused_ports"][0]
    out = failed(staged, misport)
    assert set(out) == {"port_budget_and_cages"}


def test_a_gpu_off_its_rail_fails_rail_switches(staged):
    def off_rail(acc):
        c = next(c for c in acc["cables"] if c["kind"] == "host" and c["group"] == "odd" and c["gpu"] == 1)
        c["b"] = {**c["b"], "device": next(s["name"] for s in acc["switches"] if s["group"] == "odd" and s["index"] == 0)}
    out = failed(staged, off_rail)
    assert "rail_switches" in out


def test_a_duplicate_address_fails_addresses_unique(staged):
    def dup(acc):
        sw = acc["switches"][0]
        sw["interfaces"][1]["address"] = sw["interfaces"][0]["address"]
    out = failed(staged, dup)
    assert "addresses_unique_next_hops_connected" in out
    assert any("is also" in v for v in out["addresses_unique_next_hops_connected"])


def test_a_route_to_a_non_peer_fails_next_hops_and_the_walk(staged):
    def misroute(acc):
        sw = next(s for s in acc["switches"] if s["routes"])
        sw["routes"][0] = {**sw["routes"][0], "next_hop": "10.200.0.250"}
    out = failed(staged, misroute)
    assert "addresses_unique_next_hops_connected" in out
    assert any("next hop not directly connected" in v for v in out["addresses_unique_next_hops_connected"])


def test_a_removed_static_route_black_holes_the_walk(staged):
    def unroute(acc):
        sw = next(s for s in acc["switches"] if s["group"] == "odd")
        sw["routes"] = [r for r in sw["routes"] if r.get("fallback")]
    out = failed(staged, unroute)
    assert set(out) == {"one_path_at_most_two_switches"}
    assert any("black hole" in v or "switches" in v for v in out["one_path_at_most_two_switches"])


def test_bgp_a_missing_fabric_session_fails_the_walk(staged_bgp):
    """Mode bgp: the checks walk the best paths the forwarding interface derives from the sessions;
    cutting an odd/even pair's /31s (renumbered off the pair) leaves its GPUs without a direct path."""
    def cut(acc):
        odd = next(s for s in acc["switches"] if s["group"] == "odd")
        for itf in odd["interfaces"]:
            if itf["kind"] == "fabric":
                itf["peer"] = {**itf["peer"], "device": odd["name"]}  # the session now points back at itself
                break
    out = failed(staged_bgp, cut)
    assert "one_path_at_most_two_switches" in out


def test_the_sampled_walk_passes_an_intact_plan_and_finds_a_black_hole(staged, monkeypatch):
    """Above EXHAUSTIVE_PAIRS the walk samples pairs and builds the policy tables of their source ports
    only: on lab-64 forced into the sampled branch (nearly every pair drawn), the intact plan passes
    and a removed static route is found, as in the exhaustive walk."""
    from zcube_deploy.plan import checks

    monkeypatch.setattr(checks, "EXHAUSTIVE_PAIRS", 0)
    monkeypatch.setattr(checks, "SAMPLED_PAIRS", 30_000)
    inv, acc = staged
    rows = {r["name"]: r for r in evaluate_invariants(inv, copy.deepcopy(acc))}
    walk = rows["one_path_at_most_two_switches"]
    assert walk["status"] == "passed" and "sampled (seed" in walk["detail"], walk

    def unroute(acc):
        sw = next(s for s in acc["switches"] if s["group"] == "odd")
        sw["routes"] = [r for r in sw["routes"] if r.get("fallback")]
    assert set(failed(staged, unroute)) == {"one_path_at_most_two_switches"}
