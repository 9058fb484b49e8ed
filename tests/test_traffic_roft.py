"""`zcube traffic` on a ROFT plan as built and on a migration stage's plan (docs/traffic.md, "Your ROFT as
built", "A migration stage"): the builder keeps every cable and port of the plan, agrees with the sized ROFT
where both describe the same fabric, relays cross-rail traffic over NVLink by (server, local GPU index) on
an island of half servers, and a stage is modelled island by island with its cross-island pairs counted as
not modelled."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import ROOT, run_zcube
from zcube_deploy.plan.io import read_plan
from zcube_deploy.traffic import run
from zcube_deploy.traffic.flows import Transfers, build_subflows
from zcube_deploy.traffic.net import KIND_FABRIC, build_design, roft_from_plan


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """roft-small and zcube-small planned, then migrated in 4-GPU units at a floor of 0.5 (2 stages)."""
    d = tmp_path_factory.mktemp("roft-traffic")
    for name in ("roft", "zcube"):
        r = run_zcube("plan", f"tests/inventories/{name}-small.yaml", "-o", str(d / name), cwd=ROOT)
        assert r.returncode == 0, r.stderr
    r = run_zcube("migrate", str(d / "roft"), str(d / "zcube"), "-o", str(d / "mig"), "--unit", "4-gpu", "--capacity-floor", "0.5",
                  cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return d


def traffic(plan, out, *args):
    r = run_zcube("traffic", str(plan), "-o", str(out), *args, cwd=ROOT)
    return r, (json.loads((out / "traffic.json").read_text()) if (out / "traffic.json").exists() else None)


def test_builder_keeps_every_cable_and_port(small):
    """Every fabric cable of the plan is one link each way between its leaf and spine at the leaf port map's
    fabric speed, every NIC port one up and one down link to its switch (checked from the plan, not the builder).
    Known-bad: the builder dropping a fabric cable or a NIC port fails here."""
    plan = read_plan(small / "roft")
    net = roft_from_plan(plan)
    fabric = [c for c in plan["cables"] if c["kind"] == "fabric"]
    fab = np.flatnonzero(net.kind == KIND_FABRIC)
    got = sorted((net.cable_names[net.cable[k]], net.node_name(int(net.end_a[k])), net.node_name(int(net.end_b[k]))) for k in fab)
    want = sorted([(c["id"], c["a"]["device"], c["b"]["device"]) for c in fabric] + [(c["id"], c["b"]["device"], c["a"]["device"]) for c in fabric])
    assert got == want
    fabric_speed = float(plan["port_maps"]["leaf"]["fabric_speed"].rstrip("G"))
    assert set(net.cap[fab].tolist()) == {fabric_speed}
    ports = {(srv["name"], nic["gpu"], nic["nic_port"]): nic["switch"] for srv in plan["servers"] for nic in srv["nics"]}
    built = {}
    for g, name in enumerate(net.gpu_names):
        server, gpu = name.rsplit("/gpu", 1)
        for p in range(2):
            if net.port_switch[g, p] >= 0:
                built[(server, int(gpu), p + 1)] = net.switch_names[net.port_switch[g, p]]
    assert built == ports and net.n_gpus == len(ports) // 2
    assert net.gpu_bandwidth_gbps == 2 * float(plan["models"]["nic"]["speed"].rstrip("G"))


@pytest.mark.slow
def test_plan_roft_agrees_with_the_sized_roft(tmp_path):
    """glm-1k-roft as planned (2 x 200G ports per GPU on its rail leaf, 8 spines) and the ROFT `zcube compare` sizes
    for glm-1k's numbers (one 400G port per GPU): the same all-to-all and all-reduce times (both rings)."""
    r = run_zcube("plan", "inventories/glm-1k-roft.yaml", "-o", str(tmp_path), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    plan = read_plan(tmp_path, run.PLAN_FIELDS)
    built = roft_from_plan(plan)
    sized = build_design("roft", built.n_gpus, built.gpus_per_server, 51200.0, 200.0)
    assert (built.n_switches, built.gpu_bandwidth_gbps) == (sized.n_switches, sized.gpu_bandwidth_gbps)
    for workload, ring in (("all-to-all", "all"), ("allreduce", "all"), ("allreduce", "rail")):
        opts = run.Options(workloads=(workload,), ring=ring)
        t = [run.evaluate(n, run.transfers_for(workload, n, opts)[0], opts)["completion_time_s"] for n in (built, sized)]
        assert t[0] == pytest.approx(t[1], rel=1e-9), (workload, ring, t)


def test_pxn_relays_by_server_and_local_index_on_half_servers(small):
    """An island of half servers (GPUs 4-7 only): a cross-rail transfer gpu01/gpu4 -> gpu03/gpu5 crosses NVLink to
    gpu01/gpu5 and leaves from its ports to gpu03/gpu5's. Known-bad: a relay looked up as server * G + index (GPU 13
    of 16 here, gpu04/gpu5) sends from another server."""
    plan = read_plan(small / "roft")
    half = {**plan, "servers": [{**s, "nics": [n for n in s["nics"] if n["gpu"] >= 4]} for s in plan["servers"]]}
    net = roft_from_plan(half)
    g = {name: i for i, name in enumerate(net.gpu_names)}
    a, b, relay = g["gpu01/gpu4"], g["gpu03/gpu5"], g["gpu01/gpu5"]
    sf = build_subflows(net, Transfers(np.array([a]), np.array([b]), np.array([1e6]), np.zeros(1)))
    assert len(sf) == 2  # port 1 -> port 1, port 2 -> port 2
    for links in sf.links:
        links = links[links >= 0].tolist()
        assert links[:2] == [net.nv_up[a], net.nv_down[relay]]
        assert links[2] in net.port_up[relay].tolist() and links[3] in net.port_down[b].tolist()


def test_a_roft_plan_is_modelled_as_built(small, tmp_path):
    r, doc = traffic(small / "roft" / "plan.json", tmp_path / "a", "--workload", "all-to-all")
    assert r.returncode == 0, r.stdout + r.stderr
    (row,) = doc["designs"]
    assert row["design"] == "roft" and row["modelled"] and "as built: 16 leaves, 2 spines" in row["note"]
    r, doc = traffic(small / "roft" / "plan.json", tmp_path / "b", "--design", "all", "--workload", "allreduce")
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {x["design"]: x for x in doc["designs"]}
    assert not rows["zcube"]["modelled"] and "plan the ZCube inventory" in rows["zcube"]["note"]
    assert rows["roft"]["switches"] == 18 and rows["hpn"]["modelled"]


@pytest.mark.parametrize("spec,label", [("switch:R-L001", "switch R-L001"), ("link:L0001", "cable L0001")])
def test_fail_an_element_of_the_plans_roft(small, tmp_path, spec, label):
    plan = read_plan(small / "roft")
    if spec.startswith("link"):
        cable = next(c["id"] for c in plan["cables"] if c["kind"] == "fabric")
        spec, label = f"link:{cable}", f"cable {cable}"
    r, doc = traffic(small / "roft" / "plan.json", tmp_path, "--workload", "all-to-all", "--fail", spec)
    assert r.returncode == 0, r.stdout + r.stderr
    healthy, failed = doc["designs"]
    assert failed["failure"] == label
    if spec.startswith("switch"):  # a rail leaf down: its GPUs fail over over NVLink to another rail, so slower
        assert failed["unrouted_flows"] == 0 and failed["completion_time_s"] > healthy["completion_time_s"]


@pytest.mark.parametrize("args,expect", [
    (("--design", "zcube"), "plan the ZCube inventory"),
    (("--fail", "switch:ZC-O001"), "no switch named 'ZC-O001'"),
])
def test_bad_input_on_a_roft_plan_exit_2(small, tmp_path, args, expect):
    r, doc = traffic(small / "roft" / "plan.json", tmp_path, *args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert expect in r.stdout + r.stderr and "Traceback" not in r.stderr and doc is None


def test_a_stage_island_by_island(small, tmp_path):
    """stage-01 of roft-small -> zcube-small in 4-GPU units: a ROFT island and a ZCube island of 16 GPUs each (half
    servers); the 16 x 16 pairs across them counted, not modelled; the FROM plan found through migrate.json; pd's
    8-GPU instances refused on half servers with the reason, 4-GPU instances modelled."""
    stage = small / "mig" / "stage-01" / "plan.json"
    r, doc = traffic(stage, tmp_path / "a", "--workload", "all-to-all,pd")
    assert r.returncode == 0, r.stdout + r.stderr
    st = doc["stage"]
    assert {k: v["gpus"] for k, v in st["islands"].items()} == {"roft": 16, "zcube": 16}
    assert st["cross_island"] == {**st["cross_island"], "gpu_pairs": 256, "modelled": False}
    isl = [x for x in doc["designs"] if x["island"]]
    assert [(x["label"], x["workload"]) for x in isl] == [("ROFT island", "all-to-all"), ("ROFT island", "pd"),
                                                          ("ZCube island", "all-to-all"), ("ZCube island", "pd")]
    assert all(x["flows"] == 16 * 15 for x in isl if x["workload"] == "all-to-all")
    assert all(not x["modelled"] and "would span servers" in x["note"] for x in isl if x["workload"] == "pd")
    assert st["from_plan"]["gpus"] == 32 and [c["workload"] for c in st["cost"]] == ["all-to-all", "pd"]
    assert st["cost"][0]["islands"]["roft"]["gpu_gbps_vs_from"] == pytest.approx(1.0)
    assert "across the islands: 256 GPU pairs not modelled" in r.stdout
    r, doc = traffic(stage, tmp_path / "b", "--workload", "pd", "--gpus-per-instance", "4", "--requests", "50")
    assert r.returncode == 0, r.stdout + r.stderr
    assert all(x["modelled"] and x["pd"]["gpus_per_instance"] == 4 for x in doc["designs"] if x["island"])


def test_the_last_stage_is_one_island_against_the_from_plan(small, tmp_path):
    r, doc = traffic(small / "mig" / "stage-02" / "plan.json", tmp_path, "--workload", "allreduce")
    assert r.returncode == 0, r.stdout + r.stderr
    st = doc["stage"]
    assert list(st["islands"]) == ["zcube"] and st["cross_island"]["gpu_pairs"] == 0 and st["from_plan"]["gpus"] == 32
    assert "one island (ZCube island): no GPU pairs across islands" in r.stdout


def test_a_stage_without_its_migrate_json_says_so(small, tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "plan.json").write_bytes((small / "mig" / "stage-01" / "plan.json").read_bytes())
    r, doc = traffic(alone / "plan.json", tmp_path / "o", "--workload", "allreduce")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["stage"]["from_plan"] is None and "the stage's cost is not said" in doc["stage"]["from_note"]
    assert "the stage's cost is not said" in r.stdout


@pytest.mark.parametrize("args,expect", [
    (("--design", "roft"), "modelled island by island"),
    (("--fail", "switch:NOPE"), "no switch 'NOPE' on either island"),
    (("--workload", "trace", "--trace", "x.csv"), "a stage's islands are two"),
])
def test_bad_input_on_a_stage_exit_2(small, tmp_path, args, expect):
    r, doc = traffic(small / "mig" / "stage-01" / "plan.json", tmp_path, *args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert expect in r.stdout + r.stderr and "Traceback" not in r.stderr and doc is None
