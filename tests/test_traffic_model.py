"""The traffic model's parts against each other and against hand-made cases: aggregation by switch
pair equals the per-pair run, the designs' shapes, the port policy under failures, pd placement."""

from __future__ import annotations

import numpy as np
import pytest

from zcube_deploy.analysis.fabric import unique_rows
from zcube_deploy.traffic import net, run, workloads
from zcube_deploy.traffic.flows import build_subflows


@pytest.fixture(scope="module")
def lab_zcube(lab64_plan):
    return net.zcube_from_plan(lab64_plan)


def designs(z):
    return [z] + [net.build_design(k, z.n_gpus, 8, 25600, 200.0) for k in ("hpn", "clos")]


def test_aggregated_all_to_all_equals_per_pair(lab_zcube):
    for n_ in designs(lab_zcube):
        per_pair = run.measure(n_, workloads.all_to_all(n_.n_gpus, 2**20), "split", None)
        agg = run.measure_aggregated(n_, 2**20)
        assert abs(agg["completion_time_s"] / per_pair["completion_time_s"] - 1) < 1e-9, n_.design
        assert abs(agg["mlu"] - per_pair["mlu"]) < 1e-9


def test_aggregated_refuses_pxn_and_failures(lab_zcube):
    with pytest.raises(net.NotModelled, match="PXN"):
        run.measure_aggregated(net.build_design("roft", 64, 8, 25600, 200.0), 2**20)
    with pytest.raises(net.NotModelled, match="every port"):
        run.measure_aggregated(lab_zcube.with_failure("x", switches=[0]), 2**20)


def test_unique_rows_is_numpys():
    rng = np.random.default_rng(3)
    for _ in range(100):
        a = rng.integers(-1, 4, size=(int(rng.integers(1, 50)), int(rng.integers(1, 6))))
        u1, i1 = np.unique(a, axis=0, return_inverse=True)
        u2, i2 = unique_rows(a)
        assert (u1 == u2).all() and (i1.ravel() == i2).all()


def test_design_shapes():
    roft = net.build_design("roft", 1024, 8, 51200, 200.0)
    # 2 pods of 64 servers x 8 rails = 16 leaves, 16 x 64 uplinks over 8 spines
    assert roft.n_switches == 24 and (roft.kind == net.KIND_FABRIC).sum() == 2 * 16 * 64
    hpn = net.build_design("hpn", 1024, 8, 51200, 200.0)
    assert hpn.n_switches == 2 * (8 + 4) and hpn.gpu_bandwidth_gbps == 400.0
    rail = net.build_design("rail-only", 1024, 8, 51200, 200.0)
    assert rail.n_switches == 8 * 3
    with pytest.raises(net.NotModelled, match="third tier"):
        net.build_design("roft", 16384, 8, 51200, 200.0)


def test_tor_is_the_busiest_switch(lab_zcube):
    s = run.tor_switch(lab_zcube)
    assert not lab_zcube.table.is_odd[s]  # ZCube: an even (top-of-rack) switch among the tied ones
    roft = net.build_design("roft", 64, 8, 25600, 200.0)
    assert roft.switch_names[run.tor_switch(roft)].startswith("ROFT-L")


def test_failover_keeps_every_pair_routed_in_rail_only_and_roft():
    for key in ("rail-only", "roft"):
        n_ = net.build_design(key, 64, 8, 25600, 200.0)
        f = run.failed(n_, ("tor", ""), 1)
        sf = build_subflows(f, workloads.all_to_all(64, 1e6))
        assert len(sf.unrouted) == 0, key
        dead = f.port_alive()[:, 0]
        used = np.unique(sf.links[sf.links >= 0])
        assert not np.isin(f.port_up[~dead, 0], used).any()  # nothing is sent into a dead port


def test_zcube_switch_down_uses_the_other_port(lab_zcube):
    s = run.tor_switch(lab_zcube)
    f = lab_zcube.with_failure("x", switches=[s])
    tr = workloads.collective("allreduce", f.server_of, 2**30)
    base = run.measure(lab_zcube, tr, "split", None)["completion_time_s"]
    down = run.measure(f, tr, "split", None)
    # the GPUs of the dead even switch keep port 1 only: half their bandwidth, twice the time
    assert down["unrouted_flows"] == 0 and abs(down["completion_time_s"] / base - 2) < 1e-9


@pytest.mark.parametrize("placement", ["packed", "spread", "random"])
def test_pd_placement(placement):
    p = workloads.PdParams(requests=50, placement=placement, prefill=3, decode=5)
    pre, dec = workloads.pd_placement(p, 64)
    slots = np.concatenate([pre, dec]) // 8
    assert len(pre) == 3 and len(dec) == 5 and len(set(slots.tolist())) == 8
    tr, info = workloads.pd(p, 64)
    assert len(tr) == 50 * 8 and info["prefill_instances"] == 3
    assert np.isin(tr.src // 8, pre // 8).all() and np.isin(tr.dst // 8, dec // 8).all()
    assert (tr.src % 8 == tr.dst % 8).all()  # shard i: prefill GPU i to decode GPU i
    if placement == "spread":
        assert sorted(slots.tolist()) == list(range(8)) and list(np.sort(pre // 8)) != [0, 1, 2]


@pytest.mark.parametrize("ring", ["all", "rail"])
def test_static_zcube_pins_ring_neighbours_to_one_link(glm1k_plan, ring):
    """A known finding (docs/traffic.md, "What it shows"): in mode static the planner pins each
    destination sub-block (K/m consecutive host ports of a switch) to one of the m parallel links,
    and ring neighbours fall into the same sub-blocks: on glm-1k (S 8, K 128, m 16) 8 ring edges
    from one even switch land in one sub-block of an odd switch and share one link, so ring
    all-reduce takes 8x the non-blocking time that mode bgp (ECMP over the 16 links) reaches. If
    this fails, the model or the planner's static routes changed: update docs/traffic.md."""
    sz = glm1k_plan["sizing"]
    S, K, m, G = sz["S"], sz["K"], sz["m"], sz["gpus_per_server"]
    n = sz["installed_gpus"]
    # independent of the model: every inter-server ring edge a -> b sends half its bytes from a's
    # port 2 (even switch a // K) to b's port 1 (odd switch b % S, host port b // S, sub-block of K/m)
    edges = [(g, (g + 1) % n) for g in range(n) if g // G != ((g + 1) % n) // G] if ring == "all" else \
        [(s * G + r, ((s + 1) % (n // G)) * G + r) for r in range(G) for s in range(n // G)]
    share = max(np.unique([(a // K, b % S, (b // S) // (K // m)) for a, b in edges], axis=0, return_counts=True)[1])
    assert share == 8
    times = {}
    for mode in ("static", "bgp"):
        p = {**glm1k_plan, "routing": {**(glm1k_plan.get("routing") or {}), "mode": mode}}
        row = run.study(p, run.Options(workloads=("allreduce",), ring=ring))["designs"][0]
        times[mode] = row["completion_time_s"]
    members = n if ring == "all" else n // G
    formula = 2 * (members - 1) / members * 2**30 * 8 / (2 * 200e9)  # ring all-reduce at a GPU's 2 x 200G
    assert abs(times["bgp"] / formula - 1) < 1e-9
    assert abs(times["static"] / times["bgp"] - share) < 1e-9
