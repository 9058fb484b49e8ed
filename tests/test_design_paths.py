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
def _baseline(plan: dict, monkeypatch, rule=None, every_gpu_pair=False) -> twin_test.Baseline:
    """measure_baseline on ``plan`` with every pair answering at its predicted TTL and not one below."""
    state = {"namespaces": {s["name"]: "ns-" + s["name"] for s in plan["servers"]}}
    monkeypatch.setattr(twin_test.traffic, "ping_pairs", lambda pairs, ns, ttl, **kw: {p: "timeout_ms" not in kw for p in pairs})
    if rule is not None:
        monkeypatch.setattr(twin_test.designs, "path_rule", rule)
    s = twin_test.Session(state, plan, twin_test.Ports(plan, state), "bgp", "carrier", 1, 10, lambda *_: None)
    return twin_test.measure_baseline(s, None, every_gpu_pair)


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


def test_twin_baseline_on_every_gpu_pair_of_each_island(small_pair, monkeypatch):
    """--every-gpu-pair: one port pair per GPU pair of each island; 16 GPUs a side (4 per server): 120 - 4 x 6 pairs."""
    plan = json.loads((small_pair / "mig" / "stage-01" / "plan.json").read_text())
    b = _baseline(plan, monkeypatch, every_gpu_pair=True)
    assert b.unit == "GPU pairs" and b.pairs_tested == b.pairs_total == 2 * 96 and b.ok
    assert {k: v["pairs_tested"] for k, v in b.islands.items()} == {"roft": 96, "zcube": 96}
    # known-bad: a GPU whose ports no design rule reaches (its ports' role unknown to the pair search) is not reached
    ports = twin_test.Ports(plan, {"namespaces": {s["name"]: "ns" for s in plan["servers"]}})
    for a in ports.gpus[("gpu01", 0)]:
        ports.by_addr[a]["plane"] = 7
    pp, total = ports.gpu_pair_ports()
    assert total == 192 and len(pp) == 192 - 12  # gpu01's GPU 0 and the 12 GPUs of other servers on its side


@pytest.mark.xdist_group("twin")  # namespaces, FRR, ARP sysctls: one twin at a time (docs/tests.md)
@pytest.mark.slow  # about 60-90 s: each stage's twin (18 and 16 FRR switches, 4 servers) up, every GPU pair, down
def test_twin_of_every_stage_carries_each_islands_gpu_pairs(small_pair, tmp_path):
    """issue 27's proof in the twin, on roft-small -> zcube-small in 4-GPU units: after each stage, every GPU pair of
    each island answered over its design's path (0 unreachable), none across the islands probed, none out of service;
    and every port pair of each island walked on the kernels' FIBs (--fib-walk), the same GPU pairs reaching."""
    from zcube_deploy.platforms.frr import runtime
    from zcube_deploy.twin import build, netns

    why = build.netns.missing_support() or runtime.missing()
    if why:
        pytest.skip(why)
    seen = {}
    for stage in ("stage-01", "stage-02"):
        d = tmp_path / stage
        plan = json.loads((small_pair / "mig" / stage / "plan.json").read_text())
        try:
            r = run_zcube("twin", "up", str(small_pair / "mig" / stage / "plan.json"), "-o", str(d))
            assert r.returncode == 0, r.stderr
            prefix = json.loads((d / "twin.json").read_text())["prefix"]
            r = run_zcube("twin", "test", str(d), "--every-gpu-pair", "--fib-walk")
            rep = json.loads((d / "test-report.json").read_text())
            assert r.returncode == 0 and rep["ok"], r.stdout + r.stderr
            seen[stage] = rep["baseline"]
            walk = next(m for m in rep["measurements"] if m["kind"] == "fib_walk")  # every port pair on the kernels' FIBs
            assert walk["stable"] and not walk["problems"] and all(c["ok"] for c in walk["checks"])
            assert {k: (v["gpu_pairs"], v["gpu_pairs_unreachable"]) for k, v in walk["islands"].items()} == \
                {k: (v["pairs_tested"], 0) for k, v in rep["baseline"]["islands"].items()}
        finally:
            if (d / "twin.json").exists():
                assert run_zcube("twin", "down", str(d)).returncode == 0
        assert not [n for n in netns.existing_namespaces() if n.startswith(prefix)]
        assert plan["counts"]["gpus"] == 32
    one, two = seen["stage-01"], seen["stage-02"]
    assert {k: (v["pairs_tested"], v["unreachable"]) for k, v in one["islands"].items()} == {"roft": (96, 0), "zcube": (96, 0)}
    assert one["unreachable"] == one["predicted_not_2_switches"] == one["fewer_than_2_switches"] == 0
    assert one["out_of_service"]["gpus"] == 0
    # after the last stage one ZCube island: 32 GPUs, 8 per server
    assert two["pairs_tested"] == two["pairs_total"] == 32 * 31 // 2 - 4 * 28 and two["unreachable"] == 0


# ------------------------------------------------------------------ diff, drain, expand, migrate on a ROFT and a stage
def test_expand_refuses_another_design_and_a_stage(small_pair, tmp_path):
    r = run_zcube("expand", str(small_pair / "roft" / "plan.json"), str(SMALL_ZCUBE), "-o", str(tmp_path / "x"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "expand grows a plan of the same design; this one is ROFT, the new one ZCube" in r.stderr
    assert "hint: to move ROFT to ZCube use zcube migrate" in r.stderr and r.stderr.count("\n  - ") == 1  # not 3,268 rows
    assert not (tmp_path / "x").exists()
    r = run_zcube("expand", str(small_pair / "mig" / "stage-01" / "plan.json"), str(SMALL_ZCUBE), "-o", str(tmp_path / "y"))
    assert r.returncode == 2 and "a migration stage's plan is not grown (stage -> zcube)" in r.stderr


def test_expand_grows_a_roft_within_its_capacity(tmp_path):
    """A ROFT planned for 4 servers with 3 installed grows to 4: the 8 leaves of the new server's pod change."""
    text = SMALL_ROFT.read_text().replace("  oversubscription: 1.0", "  oversubscription: 1.0\n  capacity_servers: 4")
    (tmp_path / "r4.yaml").write_text(text)
    (tmp_path / "r3.yaml").write_text(text.replace("    count: 4", "    count: 3"))
    assert run_zcube("plan", str(tmp_path / "r3.yaml"), "-o", str(tmp_path / "r3")).returncode == 0
    r = run_zcube("expand", str(tmp_path / "r3" / "plan.json"), str(tmp_path / "r4.yaml"), "-o", str(tmp_path / "g"), "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)["report"]
    assert rep["changed_switches"] == [f"R-L{n:03d}" for n in range(9, 17)]
    assert len(list((tmp_path / "g" / "new-cables").glob("labels.csv"))) == 1


def test_diff_of_roft_plans_and_a_stage(small_pair):
    r = run_zcube("diff", str(small_pair / "roft" / "plan.json"), str(small_pair / "roft" / "plan.json"), "--json", "--fail-on", "any")
    assert r.returncode == 0, r.stderr
    r = run_zcube("diff", str(small_pair / "roft" / "plan.json"), str(small_pair / "mig" / "stage-01" / "plan.json"), "--json")
    assert r.returncode == 1, r.stderr  # --fail-on moved (the default): stage 1 moves cables
    d = json.loads(r.stdout)
    # stage 1: GPUs 0-3's 32 NIC cables moved to the ZCube side, the 8 leaves that left lost their 16 spine links,
    # the ZCube side's 16 fabric cables added
    assert {k: d["summary"][k] for k in ("cables_moved", "cables_removed", "cables_added")} == \
        {"cables_moved": 32, "cables_removed": 16, "cables_added": 16}
    assert d["sizing_changed"]["design"] == ["roft", "stage"]


def test_drain_on_a_roft_leaf_spine_and_a_stage(small_pair):
    env = {"ZCUBE_USERNAME": "u", "ZCUBE_PASSWORD": "p", "ZCUBE_ENABLE_SECRET": "s"}
    r = run_zcube("drain", str(small_pair / "roft" / "plan.json"), "switch:R-L001", "--dry-run", env=env)
    assert r.returncode == 2 and "the analysis predicts 61 GPU pairs without a routed path" in r.stderr, r.stderr
    r = run_zcube("drain", str(small_pair / "mig" / "stage-01" / "plan.json"), "switch:R-S001", "--dry-run", env=env)
    assert r.returncode == 2 and "drain takes a ZCube or a ROFT plan; this one is a migration stage's" in r.stderr
    from zcube_deploy.drain.blast import Element, blast_radius
    from zcube_deploy.drain.run import steps

    plan = json.loads((small_pair / "roft" / "plan.json").read_text())
    spine = blast_radius(plan, Element("switch", "R-S001"))
    assert spine.gpu_pairs_without_routed_path == 0 and spine.host_ports == () and len(spine.fabric_links) == 16
    names = [name for name, _, _ in steps(spine)]
    assert names[0] == "steer" and names[-1] == "fabric ports"  # graceful shutdown first, its leaf-facing ports last
    leaf = blast_radius(plan, Element("switch", "R-L001"))
    assert len(leaf.host_ports) == 4 and leaf.gpu_pairs_without_routed_path == 2 * 31 - 1


def test_migrate_zcube_to_itself_says_what_to_use(small_pair, tmp_path):
    z = small_pair / "zcube" / "plan.json"
    r = run_zcube("migrate", str(z), str(z), "-o", str(tmp_path / "m"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "FROM is a ZCube with TO's switches" in r.stderr and "to grow a ZCube use zcube expand" in r.stderr
