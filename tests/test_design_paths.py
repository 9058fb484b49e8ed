"""The pipeline's design-aware checks on a ROFT and on a migration stage (issue 27; docs/designs.md, "Path rules"):
`zcube check-routing` walks each island (the switches of one design) against its design's paths, the twin's
baseline probes each island's pairs against its design's path lengths, and the commands that are ZCube's alone
(drain, expand, migrate ZCube -> ZCube) refuse a plan they cannot take, saying what to use instead."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest

from conftest import ROOT, run_zcube
from zcube_deploy import designs
from zcube_deploy.render import routing_proof
from zcube_deploy.twin import test as twin_test

SMALL_ROFT = ROOT / "tests" / "inventories" / "roft-small.yaml"
SMALL_ZCUBE = ROOT / "tests" / "inventories" / "zcube-small.yaml"


@pytest.fixture(scope="module")
def small_pair(tmp_path_factory):
    """roft-small and zcube-small built (`zcube build`), then migrated in 4-GPU units at a floor of 0.5 (2 stages)."""
    d = tmp_path_factory.mktemp("pair")
    for name, inv in (("roft", SMALL_ROFT), ("zcube", SMALL_ZCUBE)):
        r = run_zcube("build", str(inv), "-o", str(d / name), cwd=ROOT)
        assert r.returncode == 0, r.stderr
    r = run_zcube("migrate", str(d / "roft"), str(d / "zcube"), "-o", str(d / "mig"), "--unit", "4-gpu", "--capacity-floor", "0.5")
    assert r.returncode == 0, r.stderr
    return d


def _proof(directory) -> dict:
    r = run_zcube("check-routing", str(directory), "--json")
    assert r.returncode in (0, 1), r.stderr
    rep = json.loads(r.stdout)
    assert (r.returncode == 0) == rep["ok"]
    return rep


# ------------------------------------------------------------------ check-routing on a ROFT
def test_check_routing_walks_a_roft_through_every_spine(small_pair):
    rep = _proof(small_pair / "roft")
    assert rep["ok"] and rep["design"] == "roft" and list(rep["islands"]) == ["roft"]
    isl = rep["islands"]["roft"]
    # 64 NIC ports, every ordered pair: a leaf holds 4 ports (2 servers x 2), 16 leaves: 16 x 4 x 3 on one leaf
    assert isl["walked"] == isl["delivered"] == 64 * 63 and isl["path_lengths"] == {"1": 16 * 4 * 3, "3": 64 * 63 - 192}
    assert isl["max_switches"] == 3 and isl["reach"] == {"pairs": 64 * 63, "checked": 64 * 63, "not_routed": 0}


def test_check_routing_fails_a_roft_whose_spine_lost_its_routes(small_pair, tmp_path):
    """Known-bad: spine R-S002's sessions deleted from its config. Every pair across leaves is still delivered (over
    R-S001), so a proof that asked only for delivery within 3 switches passed it; the ROFT's path rule asks for
    every spine of the plane."""
    bad = tmp_path / "bad"
    shutil.copytree(small_pair / "roft", bad)
    cfg = bad / "configs" / "R-S002.cfg"
    cfg.write_text("".join(ln for ln in cfg.read_text().splitlines(True) if not ln.startswith(" neighbor ")))
    rep = _proof(bad)
    assert not rep["ok"] and rep["checked"] == 64 * 63 and rep["delivered"] == 16 * 4 * 3  # only the one-leaf pairs
    assert "1 path(s) R-L001-R-S001-R-L002, not the 2 its design takes: R-L001-R-S001-R-L002 | R-L001-R-S002-R-L002" \
        in rep["failures"][0]


def test_check_routing_fails_a_port_whose_table_routes_nowhere(small_pair, monkeypatch):
    """Known-bad: one NIC port's table emptied. Its pairs are no longer walked at all (the walk takes what the tables
    route), which passed before; the must-reach check finds its 63 missing destinations."""
    real = routing_proof.load_rendered

    def load(d):
        net, ports = real(d)
        net.host_routes[(ports[0]["host"], ports[0]["port"])] = []
        ports[0]["routes"] = []
        return net, ports

    monkeypatch.setattr(routing_proof, "load_rendered", load)
    rep = routing_proof.prove_routing(small_pair / "roft")
    assert not rep["ok"] and rep["checked"] == rep["delivered"] == 63 * 63
    assert rep["islands"]["roft"]["reach"]["not_routed"] == 63
    assert "its table has no route to it (the roft design says it must reach it)" in rep["failures"][0]


def test_a_manifest_without_roles_is_held_to_zcube_and_says_so(small_pair, tmp_path):
    """A render folder of an older tool (no roles in manifest.json): every switch held to ZCube's rule, the must-reach
    check not run and said so; a ROFT's leaf-spine-leaf paths then fail (3 switches), never pass silently."""
    old = tmp_path / "old"
    shutil.copytree(small_pair / "roft", old)
    m = json.loads((old / "manifest.json").read_text())
    del m["roles"], m["design"]
    (old / "manifest.json").write_text(json.dumps(m))
    rep = _proof(old)
    assert not rep["ok"] and rep["must_reach"] == "not checked: manifest.json has no roles"
    assert rep["roles"].startswith("none in manifest.json")


def test_a_manifest_whose_roles_miss_a_switch_is_bad_input(small_pair, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(small_pair / "roft", bad)
    m = json.loads((bad / "manifest.json").read_text())
    del m["roles"]["R-S001"]
    m["roles"]["R-L001"] = ["core", 0]
    (bad / "manifest.json").write_text(json.dumps(m))
    r = run_zcube("check-routing", str(bad))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "switch R-S001 is rendered but has no role here" in r.stderr and "roles.R-L001" in r.stderr and "'core'" in r.stderr


# ------------------------------------------------------------------ check-routing on a migration stage
def test_check_routing_walks_each_island_of_a_stage_apart(small_pair):
    rep = _proof(small_pair / "mig" / "stage-01")
    assert rep["ok"] and rep["design"] == "stage" and sorted(rep["islands"]) == ["roft", "zcube"]
    roft, zc = rep["islands"]["roft"], rep["islands"]["zcube"]
    # after stage 1 GPUs 4-7 of the 4 servers are on the ROFT (8 leaves, 2 spines), GPUs 0-3 on ZCube (8 switches)
    assert (roft["switches"], roft["ports"], zc["switches"], zc["ports"]) == (10, 32, 8, 32)
    assert roft["walked"] == roft["delivered"] == zc["walked"] == zc["delivered"] == 32 * 31
    assert set(roft["path_lengths"]) == {"1", "3"} and set(zc["path_lengths"]) == {"1", "2"}
    assert roft["reach"]["not_routed"] == zc["reach"]["not_routed"] == 0 and zc["reach"]["checked"] == 16 * 16 * 2
    assert rep["between_islands"]["pairs_routed"] == 0
    last = _proof(small_pair / "mig" / "stage-02")
    assert last["ok"] and list(last["islands"]) == ["zcube"]


def test_pairs_across_islands_are_not_expected_neither_failed_nor_passed(small_pair, tmp_path):
    """A ROFT-side port whose table routes 10.0.0.0/8 (the ZCube side's addresses too): its pairs into the other
    island are counted as not expected and not walked (walked, they would black-hole at its leaf: a failure)."""
    d = tmp_path / "stage"
    shutil.copytree(small_pair / "mig" / "stage-01", d)
    host = d / "hosts" / "gpu01.yaml"
    host.write_text(host.read_text().replace("- to: 10.16.0.0/25  # plane", "- to: 10.0.0.0/8  # plane", 1))
    rep = _proof(d)
    assert rep["between_islands"]["pairs_routed"] == 32  # gpu01's port 5:1 to each ZCube-side port
    assert rep["ok"] and rep["checked"] == 2 * 32 * 31, rep["failures"]


# ------------------------------------------------------------------ the twin's baseline by island (no root: pings faked)
def _baseline(plan: dict, monkeypatch, rule=None) -> twin_test.Baseline:
    """measure_baseline on ``plan`` with every pair answering at its predicted TTL and not one below."""
    state = {"namespaces": {s["name"]: "ns-" + s["name"] for s in plan["servers"]}}
    monkeypatch.setattr(twin_test.traffic, "ping_pairs", lambda pairs, ns, ttl, **kw: {p: "timeout_ms" not in kw for p in pairs})
    if rule is not None:
        monkeypatch.setattr(twin_test.designs, "path_rule", rule)
    s = twin_test.Session(state, plan, twin_test.Ports(plan, state), "bgp", "carrier", 1, 10, lambda *_: None)
    return twin_test.measure_baseline(s, None)


def test_twin_baseline_probes_each_island_by_its_design(small_pair, monkeypatch):
    plan = json.loads((small_pair / "mig" / "stage-01" / "plan.json").read_text())
    b = _baseline(plan, monkeypatch)
    # ROFT side: 32 ports, every pair of different servers (8 per server); ZCube side: odd -> even and back
    assert b.islands == {"roft": {"pairs_tested": 32 * 32 - 4 * 8 * 8, "unreachable": 0, "switches_per_path": "1 or 3"},
                         "zcube": {"pairs_tested": 2 * (16 * 16 - 4 * 4 * 4), "unreachable": 0, "switches_per_path": "2"}}
    assert b.ok and b.predicted_not_2_switches == 0 and b.out_of_service["gpus"] == 0
    # known-bad: the ROFT's path lengths applied to the whole stage (as the baseline did before it asked each island's
    # design) fail the ZCube side's 384 two-switch pairs
    roft_lengths = designs.ROFT_PATHS.switches_per_path
    bad = _baseline(plan, monkeypatch, rule=lambda isl: replace(designs.DESIGNS[isl].paths, switches_per_path=roft_lengths))
    assert not bad.ok and bad.predicted_not_2_switches == 384


def test_twin_baseline_leaves_out_of_service_gpus_unprobed_and_says_so(small_pair, monkeypatch):
    plan = json.loads((small_pair / "mig" / "stage-01" / "plan.json").read_text())
    gone = plan["servers"][3]
    gone["nics"] = []
    b = _baseline(plan, monkeypatch)
    assert b.out_of_service == {"gpus": 8, "servers": [gone["name"]], "note": "no NIC port in the plan: out of service, not probed"}
    assert b.islands["roft"]["pairs_tested"] == 24 * 24 - 3 * 8 * 8 and b.ok
