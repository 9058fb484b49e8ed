"""Routing modes (issue 14): the inventory section, mode bgp rendered and proven, host fallbacks,
and the routed models (predict.py's packet walk, routed.py's counts) against an exhaustive walk
written here from the design rules (docs/routing.md), independently of both."""

from __future__ import annotations

import json
import random
from collections import deque
from ipaddress import ip_address, ip_network
from pathlib import Path

import numpy as np
import pytest

from conftest import GOLDEN, ROOT, check_golden, run_zcube
from test_invariants_property import make_catalog, make_inventory
from zcube_deploy.analysis.fabric import zcube_from_plan
from zcube_deploy.analysis.failures import State
from zcube_deploy.analysis.predict import path_switches, predict_gpu_pairs, predict_pairs
from zcube_deploy.analysis.routed import RoutedModel
from zcube_deploy.inventory import resolve_inventory
from zcube_deploy.plan import build_plan

BGP_INVENTORY = ROOT / "tests" / "inventories" / "lab-64-bgp.yaml"


@pytest.fixture(scope="module")
def bgp_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("lab64bgp")
    r = run_zcube("build", "tests/inventories/lab-64-bgp.yaml", "-o", str(out), cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def small_plan(routing: dict, G=2, capacity=8, servers=6, cages=16, lanes=2) -> dict:
    cat = make_catalog(cages, lanes, G, 2)
    data = cat.model_dump()
    data["switch_models"]["T-SW"]["bgp"] = cat.switch_models["RG-S6990-128QC2XS"].bgp.model_dump()
    inv = make_inventory(servers, capacity, 1.0, 2)
    inv["routing"] = routing
    return build_plan(resolve_inventory(inv, catalog=type(cat).model_validate(data)))


# ---------------------------------------------------------------- the exhaustive reference
class Walk:
    """Every probe walked from the design rules: the host picks its own switch across groups and on
    its own switch, its partner port's switch within its group (its own switch when the partner has
    no carrier, if the switches route within a group); switches forward by their static routes
    (ECMP: every live branch must deliver) or, in mode bgp, reach everything in their component."""

    def __init__(self, plan: dict):
        self.mode = plan["routing"]["mode"]
        self.sgf = plan["routing"]["same_group_fallback"]
        self.group = {s["name"]: s["group"] for s in plan["switches"]}
        self.adj = {s["name"]: [(i["peer"]["device"], i["cable"]) for i in s["interfaces"] if i["kind"] == "fabric"]
                    for s in plan["switches"]}
        self.nh = {s["name"]: {i["peer"]["address"]: (i["peer"]["device"], i["cable"]) for i in s["interfaces"] if i["kind"] == "fabric"}
                   for s in plan["switches"]}
        self.routes = {s["name"]: [(ip_network(r["prefix"]), r["next_hop"]) for r in s["routes"]] for s in plan["switches"]}
        self.gpus = []
        for srv in plan["servers"]:
            by = {}
            for nic in srv["nics"]:
                by.setdefault(nic["gpu"], {})[nic["nic_port"]] = nic
            self.gpus += [by[g] for g in sorted(by)]

    def alive(self, nic, down):
        return nic["cable"] not in down and nic["switch"] not in down

    def deliver(self, s, dst, down, depth=0):
        if s in down or depth > 6:
            return False
        if s == dst["switch"]:
            return True
        if self.mode == "bgp":
            seen, q = {s}, deque([s])
            while q:
                u = q.popleft()
                for v, cable in self.adj[u]:
                    if cable not in down and v not in down and v not in seen:
                        seen.add(v)
                        q.append(v)
            return dst["switch"] in seen
        addr = ip_address(dst["address"])
        live = [(net, self.nh[s][h][0]) for net, h in self.routes[s]
                if addr in net and self.nh[s][h][1] not in down and self.nh[s][h][0] not in down]
        if not live:
            return False
        best = max(net.prefixlen for net, _ in live)
        return all(self.deliver(v, dst, down, depth + 1) for net, v in live if net.prefixlen == best)

    def first(self, src, partner, dst, down):
        if self.group[src["switch"]] != self.group[dst["switch"]] or src["switch"] == dst["switch"]:
            return src["switch"]
        if self.alive(partner, down):
            return partner["switch"]
        return src["switch"] if (self.mode == "bgp" or self.sgf) else None

    def leg(self, src, partner, dst, down):
        h = self.first(src, partner, dst, down)
        return h is not None and self.alive(dst, down) and self.deliver(h, dst, down)

    def probe(self, a, x, b, z, down):
        src, dst = self.gpus[a][x], self.gpus[b][z]
        return (self.alive(src, down) and self.leg(src, self.gpus[a][3 - x], dst, down)
                and self.leg(dst, self.gpus[b][3 - z], src, down))

    def counts(self, down) -> tuple[int, int]:
        n, gpu_bad, port_bad = len(self.gpus), 0, 0
        ok = np.zeros((n, n), bool)
        for a in range(n):
            for b in range(n):
                if a != b:
                    for x in (1, 2):
                        for z in (1, 2):
                            good = self.probe(a, x, b, z, down)
                            port_bad += not good
                            ok[a, b] |= good
        gpu_bad = int((~(ok | ok.T))[np.triu_indices(n, 1)].sum())
        return gpu_bad, port_bad


def _state(plan, fab, down):
    st = State.healthy(fab)
    names = {n: i for i, n in enumerate(fab.switch_names)}
    for s in down & set(names):
        st.switch_up[names[s]] = False
    for k, cid in enumerate(fab.link_ids):
        st.link_up[k] = cid not in down
    port_of = {f"{srv['name']}:{nic['port']}": nic["cable"] for srv in plan["servers"] for nic in srv["nics"]}
    for g, pair in enumerate(fab.port_names):
        for k, name in enumerate(pair):
            st.host_up[g, k] = port_of[name] not in down
    return st


ROUTINGS = [{"mode": "static"}, {"mode": "static", "same_group_fallback": True}, {"mode": "bgp"}]
SHAPES = [dict(G=2, capacity=8, servers=6), dict(G=4, capacity=6, servers=5), dict(G=2, capacity=6, servers=5)]


@pytest.mark.parametrize("routing", ROUTINGS, ids=["static", "static-sgf", "bgp"])
@pytest.mark.parametrize("shape", SHAPES, ids=["m4", "m2-partial", "m3"])
def test_models_match_the_exhaustive_walk(routing, shape):
    plan = small_plan(routing, **shape)
    ref = Walk(plan)
    fab, rt = zcube_from_plan(plan)
    model = RoutedModel(plan, fab, rt)
    cables = [c["id"] for c in plan["cables"]]
    switches = [s["name"] for s in plan["switches"]]
    rnd = random.Random(14)
    seen_loss = 0
    for trial in range(10):
        down = set(rnd.sample(cables, trial % 7)) | set(rnd.sample(switches, trial % 3))
        want = ref.counts(down)
        got = predict_gpu_pairs(plan, down & set(cables), down & set(switches))
        assert (got["gpu_pairs_unreachable"], got["port_pairs_unreachable"]) == want, (trial, down)
        st = _state(plan, fab, down)
        c = model.counts(st)
        assert (c["gpu_pairs"], c["port_pairs"]) == want, (trial, down)
        assert model.lost(st) == want[0], (trial, down)
        seen_loss += want[0] > 0
    assert seen_loss  # the trials do exercise losses


@pytest.mark.parametrize("shape", SHAPES, ids=["m4", "m2-partial", "m3"])
def test_bgp_survives_every_single_failure(shape):
    """Mode bgp: no single switch or fabric link failure leaves a GPU pair without a routed path;
    without failure every cross-group port pair uses exactly its 2 switches (AS-path length 1)."""
    plan = small_plan({"mode": "bgp"}, **shape)
    ref = Walk(plan)
    for s in plan["switches"]:
        assert predict_gpu_pairs(plan, failed_switches={s["name"]})["gpu_pairs_unreachable"] == 0
    for c in plan["cables"]:
        if c["kind"] == "fabric":
            assert predict_gpu_pairs(plan, failed_cables={c["id"]})["gpu_pairs_unreachable"] == 0
            assert ref.counts({c["id"]})[0] == 0
    for g in ref.gpus:
        for h in ref.gpus:
            if g is not h:
                assert path_switches(plan, g[1]["address"], h[2]["address"]) == 2
                assert path_switches(plan, g[2]["address"], h[1]["address"]) == 2


def test_static_without_fallback_loses_pairs_on_a_switch_failure():
    """Mode static: a switch failure is not rerouted by the switches; without the same-group fallback
    routes (off here, on by default) the pairs the walk loses are really lost, with them none are."""
    off = small_plan({"mode": "static", "same_group_fallback": False})
    lost = [predict_gpu_pairs(off, failed_switches={s["name"]})["gpu_pairs_unreachable"] for s in off["switches"]]
    assert max(lost) > 0
    on = small_plan({"mode": "static"})
    assert on["routing"]["same_group_fallback"] is True
    assert [predict_gpu_pairs(on, failed_switches={s["name"]})["gpu_pairs_unreachable"] for s in on["switches"]] == [0] * len(lost)


# ---------------------------------------------------------------- plan, render, proof (mode bgp)
def test_golden_bgp_build(bgp_build, update_golden):
    files = [bgp_build / "plan.json"] + sorted((bgp_build / "configs").glob("*.cfg")) + sorted((bgp_build / "hosts").iterdir())
    assert len(files) == 1 + 16 + 16
    for f in files:
        rel = f.name if f.name == "plan.json" else f"{f.parent.name}/{f.name}"
        check_golden(GOLDEN / "lab-64-bgp" / rel, f.read_text(), update_golden)


def test_bgp_plan_sessions(bgp_build):
    plan = json.loads((bgp_build / "plan.json").read_text())
    rt = plan["routing"]
    assert rt["mode"] == "bgp" and rt["bfd"] == {"interval_ms": 300, "multiplier": 3} and plan["schema_version"] == 2
    asn = {s["name"]: s["asn"] for s in plan["switches"]}
    assert len(set(asn.values())) == len(asn) and all(4200000000 <= a <= 4294967294 for a in asn.values())
    for s in plan["switches"]:
        assert s["routes"] == []
        cfg = (bgp_build / "configs" / f"{s['name']}.cfg").read_text()
        assert f"\nrouter bgp {s['asn']}\n" in cfg
        for itf in s["interfaces"]:
            if itf["kind"] == "fabric":
                peer = itf["peer"]
                assert f" neighbor {peer['address']} remote-as {asn[peer['device']]}\n" in cfg
                assert f" neighbor {peer['address']} fall-over bfd\n" in cfg
        assert cfg.count(" bfd interval 300 min_rx 300 multiplier 3\n") == sum(1 for i in s["interfaces"] if i["kind"] == "fabric")


def test_check_routing_bgp_from_the_files(bgp_build, tmp_path):
    r = run_zcube("check-routing", str(bgp_build), "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(r.stdout)
    assert rep["ok"] and rep["max_switches"] == 2 and rep["path_kinds"]["via own switch"] == 64 * 64 * 2
    # one end of one session with the wrong ASN: the session is down, and the proof finds the loss
    import shutil

    shutil.copytree(bgp_build, tmp_path / "b")
    cfg = tmp_path / "b" / "configs" / "ZC-O001.cfg"
    text = cfg.read_text()
    line = next(ln for ln in text.splitlines() if " remote-as " in ln)
    cfg.write_text(text.replace(line + "\n", line.rsplit(" ", 1)[0] + " 65000\n"))
    r = run_zcube("check-routing", str(tmp_path / "b"), "--json")
    assert r.returncode == 1
    assert not json.loads(r.stdout)["ok"]


def test_selfcheck_catches_a_missing_neighbour(bgp_build):
    from zcube_deploy.render.selfcheck import check_switch_config
    from zcube_deploy.render.views import PlanIndex, switch_view

    plan = json.loads((bgp_build / "plan.json").read_text())
    sw = plan["switches"][0]
    view = switch_view(PlanIndex(plan), sw)
    text = (bgp_build / "configs" / f"{sw['name']}.cfg").read_text()
    args = (sw, [u["name"] for u in view["unused"]], view["mgmt"]["name"], plan["settings"]["mgmt_prefix_len"], view["bgp"])
    assert check_switch_config(text, *args) == []
    bad = "".join(ln for ln in text.splitlines(True) if "fall-over bfd" not in ln or "10.200.0.1 " not in ln)
    assert any("BFD fall-over" in p for p in check_switch_config(bad, *args))


def test_host_fallbacks_and_sysctl(bgp_build):
    import yaml

    doc = yaml.safe_load((bgp_build / "hosts" / "gpu01.yaml").read_text())
    eth = doc["network"]["ethernets"]
    t101 = [(name, r) for name, e in eth.items() for r in e["routes"] if r.get("table") == 101 and "type" not in r]
    # port 1 of GPU 0: cross-group and same switch via its own port, own group via the other port
    # (metric 200), own group via its own switch (metric 300, mode bgp)
    assert sorted((name, r["to"], r["metric"]) for name, r in t101) == [
        ("ens1f0np0", "10.0.0.0/25", 300), ("ens1f0np0", "10.0.0.0/28", 100), ("ens1f0np0", "10.0.0.128/25", 100),
        ("ens1f1np1", "10.0.0.0/25", 200)]
    # ... and ends in "unreachable" for both group aggregates, so it never falls through to the main table
    ends = [(name, r["to"], r["metric"]) for name, e in eth.items() for r in e["routes"] if r.get("table") == 101 and "type" in r]
    assert sorted(ends) == [("ens1f0np0", "10.0.0.0/25", 1000), ("ens1f0np0", "10.0.0.128/25", 1000)]
    assert all(r["type"] == "unreachable" and "via" not in r for e in eth.values() for r in e["routes"] if "type" in r)
    sysctl = (bgp_build / "hosts" / "gpu01.sysctl.conf").read_text()
    for key in ("ignore_routes_with_linkdown = 1", "arp_ignore = 1", "arp_announce = 2", "rp_filter = 2"):
        assert f"net.ipv4.conf.all.{key}\n" in sysctl and f"net.ipv4.conf.ens1f0np0.{key}\n" in sysctl


def test_predict_pairs_contract(bgp_build):
    plan = json.loads((bgp_build / "plan.json").read_text())
    a = plan["servers"][0]["nics"][0]
    b = plan["servers"][1]["nics"][1]
    fab = next(c["id"] for c in plan["cables"] if c["kind"] == "fabric" and c["a"]["device"] == a["switch"] and c["b"]["device"] == b["switch"])
    assert predict_pairs(plan, [(a["address"], b["address"])]) == [True]
    assert predict_pairs(plan, [(a["address"], b["address"])], failed_cables={fab}) == [True]  # rerouted
    assert predict_pairs(plan, [(a["address"], b["address"])], failed_cables={a["cable"]}) == [False]  # its port is dead
    assert predict_pairs(plan, [(a["address"], b["address"])], failed_switches={b["switch"]}) == [False]


# ---------------------------------------------------------------- inventory and plan errors
def _inventory_with(tmp_path: Path, routing: str) -> Path:
    text = (ROOT / "inventories" / "lab-64.yaml").read_text().replace("topology:", routing + "\ntopology:", 1)
    p = tmp_path / "inv.yaml"
    p.write_text(text)
    return p


@pytest.mark.parametrize("routing, path", [
    ("routing: {mode: ospf}", "routing.mode"),
    ("routing: {mode: bgp, same_group_fallback: true}", "routing.same_group_fallback"),
    ("routing: {mode: bgp, asn_base: 65530}", "routing.asn_base"),
    ("routing: {mode: bgp, bfd: {interval_ms: 10}}", "routing.bfd.interval_ms"),
    ("routing: {mode: static, maximum_paths: 8}", "routing.maximum_paths"),
])
def test_bad_routing_sections(tmp_path, routing, path):
    r = run_zcube("plan", str(_inventory_with(tmp_path, routing)), "-o", str(tmp_path / "out"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert path in r.stdout + r.stderr and "Traceback" not in r.stderr


def test_older_plan_is_refused_with_a_clear_message(tmp_path, bgp_build):
    plan = json.loads((bgp_build / "plan.json").read_text())
    plan["schema_version"] = 1
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    r = run_zcube("render", str(tmp_path / "plan.json"), "-o", str(tmp_path / "r"))
    assert r.returncode == 2
    assert "schema version 1" in r.stdout + r.stderr and "zcube plan" in r.stdout + r.stderr


def test_plan_summary_says_the_mode(tmp_path):
    r = run_zcube("plan", str(_inventory_with(tmp_path, "")), "-o", str(tmp_path / "s"))
    assert r.returncode == 0 and "NOTHING reroutes" in r.stdout
    r = run_zcube("plan", str(BGP_INVENTORY), "-o", str(tmp_path / "b"))
    assert r.returncode == 0 and "eBGP + BFD (300 ms x 3)" in r.stdout


@pytest.mark.slow
def test_analyze_bgp_lab64(tmp_path, bgp_build):
    r = run_zcube("analyze", str(bgp_build / "plan.json"), "-o", str(tmp_path), "--samples", "40")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "analyze.json").read_text())
    assert doc["routing"]["mode"] == "bgp"
    for kind in ("switch", "fabric_link"):
        assert doc["single_failures"][kind]["max_gpu_pairs_without_routed_path"]["value"] == 0
    # with a connected fabric, bgp loses exactly the pairs of GPUs with both ports dead: "any live path"
    for row in doc["random_link_failures"]:
        assert row["zcube_routed"]["mean"] == pytest.approx(row["zcube"]["mean"])
        assert "ratio_zcube_routed_to_clos" in row
