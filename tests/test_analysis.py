"""`zcube analyze`: the fast counts (port classes, components) against an exhaustive, independent
computation from the plan's own route tables, on lab-64 and on small plans with m > 1 (split
peer blocks, also m = 3 spread over 4 sub-blocks) and partial fill."""

from __future__ import annotations

import ipaddress
import json
import random
from collections import deque

import numpy as np
import pytest

from conftest import run_zcube
from test_invariants_property import make_catalog, make_inventory
from zcube_deploy.analysis.fabric import dual_plane_clos, zcube_from_plan
from zcube_deploy.analysis.failures import RoutedCounter, State, monte_carlo, path_statistics, physical_lost_pairs
from zcube_deploy.analysis.single import bridges, single_failures
from zcube_deploy.inventory import resolve_inventory
from zcube_deploy.plan import build_plan


class Reference:
    """Exhaustive: walk every port pair through the plan's route tables; BFS for physical paths."""

    def __init__(self, plan: dict):
        self.routes, self.fabric_if, self.host_nets = {}, {}, {}
        for sw in plan["switches"]:
            self.routes[sw["name"]] = [(ipaddress.ip_network(r["prefix"]), r["next_hop"]) for r in sw["routes"] if not r.get("fallback")]
            self.fabric_if[sw["name"]] = {i["peer"]["address"]: (i["cable"], i["peer"]["device"]) for i in sw["interfaces"] if i["kind"] == "fabric"}
        self.gpus = []
        for srv in plan["servers"]:
            by_gpu = {}
            for nic in srv["nics"]:
                by_gpu.setdefault(nic["gpu"], {})[nic["nic_port"]] = nic
            self.gpus += [by_gpu[g] for g in sorted(by_gpu)]
        self.fabric = [(c["id"], c["a"]["device"], c["b"]["device"]) for c in plan["cables"] if c["kind"] == "fabric"]
        self.switches = [s["name"] for s in plan["switches"]]

    def one_way(self, x: dict, y: dict, down: set) -> bool:
        if x["cable"] in down or y["cable"] in down or x["switch"] in down or y["switch"] in down:
            return False
        dst = ipaddress.ip_address(y["address"])
        best = max((r for r in self.routes[x["switch"]] if dst in r[0]), key=lambda r: r[0].prefixlen, default=None)
        if best is None:
            return False
        cable, peer = self.fabric_if[x["switch"]][best[1]]
        return cable not in down and peer not in down and peer == y["switch"]

    def port_pair(self, x: dict, y: dict, down: set) -> bool:
        return self.one_way(x, y, down) and self.one_way(y, x, down)

    def routed(self, a: int, b: int, down: set) -> bool:
        ga, gb = self.gpus[a], self.gpus[b]
        return self.port_pair(ga[1], gb[2], down) or self.port_pair(ga[2], gb[1], down)

    def dist(self, down: set) -> dict:
        adj = {s: set() for s in self.switches if s not in down}
        for cid, u, v in self.fabric:
            if cid not in down and u in adj and v in adj:
                adj[u].add(v)
                adj[v].add(u)
        out = {}
        for s in adj:
            d = {s: 1}
            q = deque([s])
            while q:
                u = q.popleft()
                for v in adj[u]:
                    if v not in d:
                        d[v] = d[u] + 1
                        q.append(v)
            out[s] = d
        return out

    def alive(self, nic: dict, down: set) -> bool:
        return nic["cable"] not in down and nic["switch"] not in down

    def gpu_dist(self, a: int, b: int, down: set, dist: dict) -> int:
        best = 0
        for x in self.gpus[a].values():
            for y in self.gpus[b].values():
                if self.alive(x, down) and self.alive(y, down):
                    d = dist[x["switch"]].get(y["switch"], 0)
                    if d and (not best or d < best):
                        best = d
        return best

    def scenario(self, down: set) -> dict:
        n = len(self.gpus)
        dist = self.dist(down)
        routed_lost = phys_lost = port_lost = port_detour = gpu_detour = 0
        losing = set()
        for a in range(n):
            for b in range(n):
                if a == b:
                    continue
                x, y = self.gpus[a][1], self.gpus[b][2]
                if not self.port_pair(x, y, down):
                    port_lost += 1
                    losing |= {(a, 1), (b, 2)}
                    if self.alive(x, down) and self.alive(y, down):
                        port_detour = max(port_detour, dist[x["switch"]].get(y["switch"], 0))
                if a < b:
                    d = self.gpu_dist(a, b, down, dist)
                    phys_lost += d == 0
                    if not self.routed(a, b, down):
                        routed_lost += 1
                        gpu_detour = max(gpu_detour, d)
        return {"gpu_pairs_without_routed_path": routed_lost, "gpu_pairs_disconnected": phys_lost, "port_pairs_lost": port_lost,
                "gpu_ports_losing_paths": len(losing),
                "longest_port_detour_switches": port_detour, "longest_gpu_detour_switches": gpu_detour}


def small_plan(G: int, capacity: int, servers: int, cages: int, lanes: int, over: float) -> dict:
    return build_plan(resolve_inventory(make_inventory(servers, capacity, over, 2), catalog=make_catalog(cages, lanes, G, 2)))


SHAPES = {  # (G, capacity servers, installed servers, cages, lanes, oversubscription) -> m
    "m4": (2, 8, 6, 16, 2, 1.0),
    "m2-partial": (4, 6, 5, 16, 2, 1.0),
    "m3": (2, 6, 5, 16, 2, 1.0),
}


@pytest.fixture(scope="module", params=["lab-64", *(pytest.param(s, marks=pytest.mark.slow) for s in SHAPES)])
def shaped(request, lab64_plan):
    plan = lab64_plan if request.param == "lab-64" else small_plan(*SHAPES[request.param])
    return request.param, plan


def test_shapes_cover_split_blocks():
    assert [small_plan(*s)["sizing"]["m"] for s in SHAPES.values()] == [4, 2, 3]


def test_single_failures_match_exhaustive(shaped):
    name, plan = shaped
    fab, rt = zcube_from_plan(plan)
    ref = Reference(plan)
    rows = single_failures(fab, rt)
    assert len(rows) == len(plan["switches"]) + sum(c["kind"] == "fabric" for c in plan["cables"])
    for row in rows:
        want = ref.scenario({row["element"]})
        got = {k: row[k] for k in want}
        assert got == want, (name, row["element"])


def test_random_failures_match_exhaustive(shaped):
    """The Monte-Carlo counters, on random states with host, fabric and switch failures."""
    name, plan = shaped
    fab, rt = zcube_from_plan(plan)
    ref = Reference(plan)
    counter = RoutedCounter(fab, rt)
    rng = random.Random(7)
    host = [[g[1]["cable"], g[2]["cable"]] for g in ref.gpus]
    for trial in range(6):
        p = (0.05, 0.15, 0.3)[trial % 3]
        st = State.healthy(fab)
        down = set()
        for gi, cables in enumerate(host):
            for k, c in enumerate(cables):
                if rng.random() < p:
                    st.host_up[gi, k] = False
                    down.add(c)
        for li, cid in enumerate(fab.link_ids):
            if rng.random() < p:
                st.link_up[li] = False
                down.add(cid)
        if trial >= 3:
            s = rng.randrange(fab.n_switches)
            st.switch_up[s] = False
            down.add(fab.switch_names[s])
        want = ref.scenario(down)
        assert counter.lost(st) == want["gpu_pairs_without_routed_path"], (name, trial)
        assert counter.ports_losing_paths(st, counter.fd(st)) == want["gpu_ports_losing_paths"], (name, trial)
        assert physical_lost_pairs(fab, st) == want["gpu_pairs_disconnected"], (name, trial)


@pytest.mark.slow
def test_fast_link_path_equals_general(shaped):
    """The fabric-link fast path gives the same rows as the general computation."""
    fab, rt = zcube_from_plan(shaped[1])
    assert single_failures(fab, rt, fast=True) == single_failures(fab, rt, fast=False)


@pytest.mark.slow
def test_fast_link_path_equals_general_glm1k(glm1k_plan):
    """The same on glm-1k, once (the general computation takes ~17 s there; it used to be repeated for each shaped plan)."""
    fab, rt = zcube_from_plan(glm1k_plan)
    assert single_failures(fab, rt, fast=True) == single_failures(fab, rt, fast=False)


def test_bridges():
    # a path 0-1-2 with a double link 2=3 and a triangle 3-4-5: the single links 0-1 and 1-2 are bridges
    u = np.array([0, 1, 2, 2, 3, 4, 5])
    v = np.array([1, 2, 3, 3, 4, 5, 3])
    assert bridges(6, u, v) == {0, 1}
    assert bridges(4, np.array([0, 2]), np.array([1, 3])) == {0, 1}


def test_lab64_single_failure_figures(lab64_plan):
    """Worked by hand for lab-64 (S = K = 8, m = 1, one GPU on each (odd, even) switch pair)."""
    fab, rt = zcube_from_plan(lab64_plan)
    rows = {r["element"]: r for r in single_failures(fab, rt)}
    sw = rows["ZC-O001"]
    # its 8 ports are cut off; their 8 GPUs keep port 2, but pairs of them have no cross-group route
    assert sw["gpu_ports_cut_off"] == 8 and sw["gpu_pairs_without_routed_path"] == 28 and sw["gpu_pairs_disconnected"] == 0
    assert sw["longest_gpu_detour_switches"] == 3  # even -> odd -> even
    assert sw["cut_off_ports"] == [f"gpu0{i}:ens1f0np0" for i in range(1, 9)]  # GPU 0 (rail 0) of each server
    link = rows["F00001"]
    assert link["gpu_ports_cut_off"] == 0 and link["gpu_pairs_without_routed_path"] == 0
    assert link["port_pairs_lost"] == 8 * 8 - 1  # rail 0 on O001 x server 1 on E002, minus GPU 0 itself
    assert link["longest_port_detour_switches"] == 4  # O -> E' -> O' -> E
    assert {w["switch"] for w in link["routes_withdrawn"]} == {"ZC-O001", "ZC-E002"}


def test_path_statistics(shaped):
    name, plan = shaped
    fab, rt = zcube_from_plan(plan)
    ps = path_statistics(fab, rt)
    cg = ps["cross_group"]
    assert cg["every_pair_has_exactly_one_shortest_switch_path"] and cg["routed_paths_per_port_pair"] == 1
    assert cg["path_switches"] == {"min": 2, "max": 2, "mean": 2.0}
    assert cg["shortest_link_paths"]["max"] == plan["sizing"]["m"]  # the m parallel links, of which routing pins one
    ref = Reference(plan)
    dist = ref.dist(set())
    n = len(ref.gpus)
    mean = sum(ref.gpu_dist(a, b, set(), dist) for a in range(n) for b in range(a + 1, n)) / (n * (n - 1) / 2)
    assert ps["gpu_pairs"]["mean_shortest_path_switches"] == pytest.approx(mean)


@pytest.mark.slow
def test_monte_carlo_seeded_and_zcube_about_half_of_clos(glm1k_plan):
    fab, rt = zcube_from_plan(glm1k_plan)
    clos = dual_plane_clos(fab.n_gpus, 256, 128)
    assert clos.n_switches == 24 and len(clos.link_u) == 2 * 8 * 64
    a = monte_carlo(fab, rt, clos, [0.05], 60, seed=3)
    assert a == monte_carlo(fab, rt, clos, [0.05], 60, seed=3)
    r = a[0]
    # zcube.md section 8: about 2p^2 against about 4p^2
    assert r["zcube"]["mean"] == pytest.approx(2 * 0.05 ** 2, rel=0.25)
    assert r["dual_plane_clos"]["mean"] == pytest.approx(4 * 0.05 ** 2, rel=0.25)
    assert 0.4 < r["ratio_zcube_to_clos"]["ratio"] < 0.62
    lo, hi = r["ratio_zcube_to_clos"]["ci95"]
    assert lo < r["ratio_zcube_to_clos"]["ratio"] < hi


@pytest.mark.slow
def test_analyze_cli_glm1k(tmp_path, glm1k_plan):
    from zcube_deploy.plan.io import write_plan

    write_plan(glm1k_plan, tmp_path)
    out = tmp_path / "an"
    r = run_zcube("analyze", str(tmp_path / "plan.json"), "-o", str(out), "--samples", "20", "--probabilities", "0.01,0.05")
    assert r.returncode == 0, r.stderr
    assert "single failures" in r.stdout and "random link failures" in r.stdout
    doc = json.loads((out / "analyze.json").read_text())
    assert doc["plan"]["gpus"] == 1024 and len(doc["random_link_failures"]) == 2
    sf = doc["single_failures"]
    assert sf["switch"]["elements"] == 16 and sf["fabric_link"]["elements"] == 1024
    assert sf["switch"]["every_gpu_keeps_a_path"] and sf["fabric_link"]["every_gpu_keeps_a_path"]
    png = (out / "unreachability.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # same plan, same seed: same bytes
    r2 = run_zcube("analyze", str(tmp_path / "plan.json"), "-o", str(tmp_path / "an2"), "--samples", "20", "--probabilities", "0.01,0.05")
    assert r2.returncode == 0
    assert (tmp_path / "an2" / "analyze.json").read_bytes() == (out / "analyze.json").read_bytes()
    assert (tmp_path / "an2" / "unreachability.png").read_bytes() == png
    bad = run_zcube("analyze", str(tmp_path / "plan.json"), "--probabilities", "2")
    assert bad.returncode == 2 and "--probabilities" in bad.stderr and "Traceback" not in bad.stderr


def fabric_bfs_lost(fab, st) -> int:
    """Reference for any Fabric: BFS from every GPU over live ports, links and switches."""
    n_sw = fab.n_switches
    adj = [[] for _ in range(n_sw)]
    for k, (u, v) in enumerate(zip(fab.link_u, fab.link_v)):
        if st.link_up[k] and st.switch_up[u] and st.switch_up[v]:
            adj[u].append(v)
            adj[v].append(u)
    comp = [-1] * n_sw
    for s in range(n_sw):
        if comp[s] < 0:
            comp[s] = s
            q = deque([s])
            while q:
                u = q.popleft()
                for v in adj[u]:
                    if comp[v] < 0:
                        comp[v] = s
                        q.append(v)
    sets = [{comp[fab.port_switch[g, k]] for k in (0, 1) if st.host_up[g, k] and st.switch_up[fab.port_switch[g, k]]}
            for g in range(fab.n_gpus)]
    return sum(1 for a in range(fab.n_gpus) for b in range(a + 1, fab.n_gpus) if not sets[a] & sets[b])


def test_physical_count_when_the_fabric_splits(shaped):
    """No fabric links at all (every switch alone), and random heavy failures on the dual-plane Clos."""
    name, plan = shaped
    fab, rt = zcube_from_plan(plan)
    st = State.healthy(fab)
    st.link_up[:] = False
    st.host_up[0, 0] = False
    assert physical_lost_pairs(fab, st) == fabric_bfs_lost(fab, st) == Reference(plan).scenario(set(fab.link_ids) | {ref_cable(plan)})["gpu_pairs_disconnected"]
    clos = dual_plane_clos(200, 32, 16)  # 13 leaves and 7 spines per plane
    rng = np.random.default_rng(5)
    for p in (0.1, 0.4, 0.8):
        cst = State(rng.random((200, 2)) >= p, rng.random(len(clos.link_u)) >= p, rng.random(clos.n_switches) >= p / 4)
        assert physical_lost_pairs(clos, cst) == fabric_bfs_lost(clos, cst)


def ref_cable(plan: dict) -> str:
    """The host cable of GPU 0's port 1 (State index [0, 0])."""
    srv = plan["servers"][0]
    return next(n["cable"] for n in srv["nics"] if n["gpu"] == min(x["gpu"] for x in srv["nics"]) and n["nic_port"] == 1)


def _lab64_without_same_group_fallback() -> dict:
    from pathlib import Path

    import yaml

    from zcube_deploy.inventory.load import resolve_inventory
    from zcube_deploy.plan import build_plan

    inventories = Path(__file__).resolve().parents[1] / "inventories"
    data = yaml.safe_load((inventories / "lab-64.yaml").read_text())
    data["routing"] = {"mode": "static", "same_group_fallback": False}
    return build_plan(resolve_inventory(data, base=inventories))


@pytest.mark.parametrize("same_group", [True, False])
def test_sparse_routed_count_equals_the_dense_one(lab64_plan, same_group):
    """RoutedModel.lost (candidate pairs from the port classes, same-group probes evaluated for
    them only) counts exactly what the dense delivery-table count does, under random host/fabric
    link failures at several rates and with each switch down; with the same-group fallback and without."""
    from zcube_deploy.analysis.failures import _draw
    from zcube_deploy.analysis.routed import RoutedModel

    plan = lab64_plan if same_group else _lab64_without_same_group_fallback()
    fab, rt = zcube_from_plan(plan)
    model = RoutedModel(plan, fab, rt)
    assert model.mode == "static" and bool(model.same_group) is same_group
    rng = np.random.default_rng(5)
    states = [_draw(fab, p, rng) for p in (0.01, 0.05, 0.2, 0.5) for _ in range(15)]
    for s in range(fab.n_switches):
        st = State.healthy(fab)
        st.switch_up[s] = False
        states.append(st)
    losses = 0
    for st in states:
        want = model.counts(st)["gpu_pairs"]
        assert model.lost(st) == want
        losses += want > 0
    assert losses > len(states) // 2  # the states do lose pairs


def test_single_failures_recounted_above_the_dense_limit(lab64_plan, monkeypatch):
    """Above DENSE_GPU_LIMIT (lowered here to below lab-64's size) the single failures are still
    counted with the host fallbacks (same rows as below the limit); only the Monte-Carlo routed
    figures fall back to the switch routes, and the document says so."""
    from zcube_deploy.analysis import report

    below = report.analyze_plan(lab64_plan, probabilities=(0.01,), samples=3, seed=1)
    assert below["routing"]["routed_means"] == "the static switch routes and the host fallbacks"
    monkeypatch.setattr(report, "DENSE_GPU_LIMIT", 8)
    above = report.analyze_plan(lab64_plan, probabilities=(0.01,), samples=3, seed=1)
    assert above["single_failures"] == below["single_failures"]
    rows = above["single_failures"]["elements"]
    assert any(r["gpu_pairs_without_routed_path_switch_routes_only"] > r["gpu_pairs_without_routed_path"] for r in rows)
    assert "upper bound" in above["routing"]["routed_means"] and "above 8 GPUs" in above["routing"]["routed_means"]
    assert below["routing"]["routed_exact"] is True and above["routing"]["routed_exact"] is False
    from zcube_deploy.cli.analyze import print_analysis
    from zcube_deploy.cli.common import out

    with out.capture() as cap:
        print_analysis(above, 3, 1, "a.json", "a.png")
    assert "note: ZCube (static routing) counts the static switch routes" in cap.get() and "upper bound" in cap.get()
    with out.capture() as cap:
        print_analysis(below, 3, 1, "a.json", "a.png")
    assert "note:" not in cap.get()
