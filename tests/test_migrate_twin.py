"""issue 27's proof in the twin for a migration whose roles stand in temporary places: roft-small ->
zcube-small-inplace (`--unit 4-gpu --capacity-floor 0.5`, 2 stages; TO's switches stand where the ROFT's serve, so four
roles stand in stage 1 in temporary places, their cables laid there, and move in stage 2). Each stage's plan as a user
runs it: `zcube twin up`, `zcube twin test --every-gpu-pair --fib-walk`, `zcube twin down`. Known-bad: stage 1's plan
with one stand-in cable (a cable laid to a role in its temporary place) dropped fails, on exactly the port pairs that
cable's two switches joined. (roft-small -> zcube-small, without temporary places: tests/test_design_paths.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT, run_zcube

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("twin")]  # namespaces, FRR, ARP sysctls: one twin at a time

SMALL = ROOT / "tests" / "inventories"


@pytest.fixture(scope="module")
def inplace(tmp_path_factory):
    """roft-small and zcube-small-inplace planned, migrated in 4-GPU units at a floor of 0.5; skipped without the
    twin's needs (root, namespaces, FRR)."""
    from zcube_deploy.platforms.frr import runtime
    from zcube_deploy.twin import netns

    why = netns.missing_support() or runtime.missing()
    if why:
        pytest.skip(why)
    d = tmp_path_factory.mktemp("inplace")
    for name, inv in (("roft", "roft-small.yaml"), ("zcube", "zcube-small-inplace.yaml")):
        r = run_zcube("plan", str(SMALL / inv), "-o", str(d / name))
        assert r.returncode == 0, r.stderr
    r = run_zcube("migrate", str(d / "roft" / "plan.json"), str(d / "zcube" / "plan.json"), "-o", str(d / "mig"),
                  "--unit", "4-gpu", "--capacity-floor", "0.5")
    assert r.returncode == 0, r.stderr
    return d / "mig"


def _twin(plan: Path, d: Path) -> tuple[int, dict, str]:
    """`twin up PLAN`, `twin test --every-gpu-pair --fib-walk`, `twin down` (always); the test's exit code, its report
    and what it printed. Every namespace of the twin is gone afterwards."""
    from zcube_deploy.twin import netns

    prefix = None
    try:
        r = run_zcube("twin", "up", str(plan), "-o", str(d))
        assert r.returncode == 0, r.stdout + r.stderr
        prefix = json.loads((d / "twin.json").read_text())["prefix"]
        r = run_zcube("twin", "test", str(d), "--every-gpu-pair", "--fib-walk")
        rep = json.loads((d / "test-report.json").read_text())
    finally:
        if (d / "twin.json").exists():
            assert run_zcube("twin", "down", str(d)).returncode == 0
    assert prefix and not [n for n in netns.existing_namespaces() if n.startswith(prefix)]
    return r.returncode, rep, r.stdout + r.stderr


def _walk(rep: dict) -> dict:
    return next(m for m in rep["measurements"] if m["kind"] == "fib_walk")


def _ports(plan: dict, switch: str) -> set[str]:
    """The NIC port addresses on ``switch`` (its host interfaces' peers)."""
    sw = next(s for s in plan["switches"] if s["name"] == switch)
    return {i["peer"]["address"] for i in sw["interfaces"] if i["kind"] == "host"}


def test_every_stage_with_temporary_places_carries_each_islands_pairs(inplace, tmp_path):
    """After each stage, every GPU pair of each island answers real packets over its design's path and every port
    pair of each island is delivered on the kernels' FIBs (0 unreachable), the roles in temporary places included;
    none across the islands is probed, no GPU is out of service."""
    temp = json.loads((inplace / "migrate.json").read_text())["temporary_places"]
    assert len(temp) == 4 and {t["from_stage"] for t in temp} == {1} and {t["moves_in_stage"] for t in temp} == {2}, \
        f"this test needs a pair whose roles stand in temporary places; migrate.json: {temp}"
    seen = {}
    for stage in ("stage-01", "stage-02"):
        plan = json.loads((inplace / stage / "plan.json").read_text())
        at = {s["name"]: (s["rack"], s["u"]) for s in plan["switches"]}
        # the stage plan stands each role where migrate.json says: its temporary place in stage 1, its own in stage 2
        assert all((at[t["role"]] == (t["rack"], t["u"])) == (stage == "stage-01") for t in temp)
        rc, rep, out = _twin(inplace / stage / "plan.json", tmp_path / stage)
        assert rc == 0 and rep["ok"], out
        walk = _walk(rep)
        assert walk["stable"] and not walk["problems"] and all(c["ok"] for c in walk["checks"])
        assert {k: (v["gpu_pairs"], v["gpu_pairs_unreachable"], v["port_pairs_failed"]) for k, v in walk["islands"].items()} \
            == {k: (v["pairs_tested"], 0, 0) for k, v in rep["baseline"]["islands"].items()}
        assert rep["baseline"]["unreachable"] == 0 and rep["baseline"]["out_of_service"]["gpus"] == 0
        seen[stage] = walk
    one, two = seen["stage-01"], seen["stage-02"]
    # stage 1: GPUs 0-3 of the 4 servers on ZCube (16 GPUs, 4 a server), GPUs 4-7 on the ROFT; 16 x 12 / 2 pairs each
    assert {k: v["gpu_pairs"] for k, v in one["islands"].items()} == {"roft": 96, "zcube": 96}
    assert one["cross_island_gpu_pairs"] == 16 * 16 and two["cross_island_gpu_pairs"] == 0
    # after the last stage one ZCube island: 32 GPUs, 8 per server
    assert {k: v["gpu_pairs"] for k, v in two["islands"].items()} == {"zcube": 32 * 31 // 2 - 4 * 28}


def test_a_stage_plan_without_one_stand_in_cable_fails_in_the_twin(inplace, tmp_path):
    """Known-bad: stage 1's plan with one stand-in cable dropped (a fabric cable laid to a role in its temporary
    place, longer than TO's to reach there; dropped from the cable list and both switches' interfaces, as a stage
    plan that forgot it would hold it). The twin runs it as any plan;
    the port pairs from that cable's odd switch's ports to its even switch's, and back, are then delivered over 4
    switches where ZCube takes 2: the walk fails exactly those, the other pairs pass."""
    plan = json.loads((inplace / "stage-01" / "plan.json").read_text())
    temp = {t["role"] for t in json.loads((inplace / "migrate.json").read_text())["temporary_places"]}
    to_part = {c["id"]: c["part"] for c in json.loads((inplace.parent / "zcube" / "plan.json").read_text())["cables"]}
    # a stand-in: a fabric cable to a role in its temporary place, of another part than TO's (longer, to reach there)
    cable = min((c for c in plan["cables"] if c["kind"] == "fabric" and {c["a"]["device"], c["b"]["device"]} & temp
                 and c["part"] != to_part[c["id"]]), key=lambda c: c["id"], default=None)
    assert cable, "stage 1 lays no stand-in cable to a role in a temporary place: this known-bad needs one"
    plan["cables"] = [c for c in plan["cables"] if c["id"] != cable["id"]]
    for sw in plan["switches"]:
        sw["interfaces"] = [i for i in sw["interfaces"] if i["cable"] != cable["id"]]
    plan["counts"]["cables"] -= 1  # the plan's own counts agree (the twin refuses a plan whose parts disagree)
    plan["counts"]["fabric_cables"] -= 1
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "plan.json").write_text(json.dumps(plan, indent=1))
    rc, rep, out = _twin(bad / "plan.json", tmp_path / "twin")
    assert rc == 1 and not rep["ok"], out
    walk = _walk(rep)
    a, b = _ports(plan, cable["a"]["device"]), _ports(plan, cable["b"]["device"])
    host = {n["address"]: s["name"] for s in plan["servers"] for n in s["nics"]}
    crossing = sum(host[x] != host[y] for x in a for y in b) * 2
    assert walk["stable"] and walk["islands"]["roft"]["port_pairs_failed"] == 0
    assert walk["islands"]["zcube"]["port_pairs_failed"] == crossing > 0, (cable["id"], walk["islands"])
    assert [c["ok"] for c in walk["checks"]] == [True, False]  # every GPU still reaches (by its other port pair)
