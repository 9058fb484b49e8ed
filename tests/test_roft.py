"""ROFT as a design of the same pipeline (issue 27 item 1, docs/roft.md, docs/designs.md): the seam,
the ROFT planner and its sizing against `zcube compare`, and the plan through the real CLI."""

from __future__ import annotations

import json

import pytest

from conftest import INVENTORIES, ROOT, run_zcube
from zcube_deploy import designs
from zcube_deploy.analysis.designs import Params, roft
from zcube_deploy.inventory import load_inventory
from zcube_deploy.plan.io import read_plan, write_plan
from zcube_deploy.plan.roles import design_of, port_map_for

SMALL = ROOT / "tests" / "inventories" / "roft-small.yaml"


@pytest.fixture(scope="module")
def small_plan():
    return designs.build_plan(load_inventory(SMALL))


@pytest.fixture(scope="module")
def glm_roft_plan():
    return designs.build_plan(load_inventory(INVENTORIES / "glm-1k-roft.yaml"))


def test_glm1k_roft_is_what_compare_counts(glm_roft_plan):
    """16 leaves + 8 spines, 1,024 leaf-spine links at 400G: `zcube compare`'s ROFT column for glm-1k."""
    sz = glm_roft_plan["sizing"]
    inv = load_inventory(INVENTORIES / "glm-1k.yaml")
    want = roft(Params(gpus=1024, capacity_gbps=51200, nic_port_gbps=200, gpus_per_server=8, cages=inv.switch_model.cages))
    assert want.layers == {"leaves": sz["leaves_per_plane"], "spines": sz["spines_per_plane"]} == {"leaves": 16, "spines": 8}
    assert glm_roft_plan["counts"]["fabric_cables"] == want.switch_links == 1024
    assert sz["fabric_speed"] == f"{want.switch_link_gbps}G" == "400G"
    assert glm_roft_plan["counts"]["switches"] == want.switches == 24


def test_glm1k_roft_keeps_the_glm1k_servers_and_stays_out_of_its_pools(glm_roft_plan, glm1k_plan):
    key = [(s["name"], s["rack"], s["u"], s.get("serial")) for s in glm1k_plan["servers"]]
    assert [(s["name"], s["rack"], s["u"], s.get("serial")) for s in glm_roft_plan["servers"]] == key
    import ipaddress

    for pool in ("host_pool", "fabric_pool", "loopback_pool"):
        for other in ("host_pool", "fabric_pool", "loopback_pool"):
            a = ipaddress.ip_network(glm_roft_plan["addressing"][pool])
            assert not a.overlaps(ipaddress.ip_network(glm1k_plan["addressing"][other])), (pool, other)
    # the same management network and gateway; no address both plans hand out
    assert glm_roft_plan["addressing"]["management_network"] == glm1k_plan["addressing"]["management_network"]
    assert glm_roft_plan["settings"]["mgmt_gateway"] == glm1k_plan["settings"]["mgmt_gateway"]
    assert not {s["mgmt_address"] for s in glm_roft_plan["switches"]} & {s["mgmt_address"] for s in glm1k_plan["switches"]}


def test_rail_leaves_per_pod(small_plan):
    """GPU i of every server in pod q on leaf (q, i); both NIC ports on it with planes 1."""
    sz = small_plan["sizing"]
    by_name = {s["name"]: s for s in small_plan["switches"]}
    for srv in small_plan["servers"]:
        for nic in srv["nics"]:
            leaf = by_name[nic["switch"]]
            assert (leaf["group"], leaf["pod"], leaf["index"], leaf["plane"]) == ("leaf", srv["index"] // sz["servers_per_pod"], nic["gpu"], 0)
    assert [c["status"] for c in small_plan["checks"]] == ["passed"] * len(small_plan["checks"])
    spines = [s for s in small_plan["switches"] if s["group"] == "spine"]
    assert len({s["asn"] for s in spines}) == 1 and all(s["host_block"] is None and "pod" not in s for s in spines)
    leaves = [s for s in small_plan["switches"] if s["group"] == "leaf"]
    assert len({s["asn"] for s in leaves}) == len(leaves)


def test_two_planes_put_one_nic_port_on_each(tmp_path):
    text = SMALL.read_text().replace("  planes: 1\n", "  planes: 2\n  fabric_speed: 200G\n")  # 2 x 200G up per leaf
    inv = tmp_path / "roft2.yaml"
    inv.write_text(text)
    plan = designs.build_plan(load_inventory(inv))
    assert plan["sizing"]["planes"] == 2 and plan["sizing"]["spines_per_plane"] == 2
    by_name = {s["name"]: s for s in plan["switches"]}
    for nic in plan["servers"][0]["nics"]:
        assert by_name[nic["switch"]]["plane"] == nic["nic_port"] - 1 == nic["plane"]
        assert [r["role"] for r in nic["routes"]] == ["plane"]  # the other port is on the other plane
    assert all(c["status"] == "passed" for c in plan["checks"])


def test_a_plan_says_its_design_and_an_old_one_is_zcube(small_plan, lab64_plan, tmp_path):
    assert small_plan["design"] == "roft" and lab64_plan["design"] == "zcube"
    old = {k: v for k, v in lab64_plan.items() if k != "design"}
    path = write_plan(old, tmp_path)
    back = read_plan(path)
    assert "design" not in back and design_of(back) == "zcube"
    assert [r["status"] for r in designs.evaluate(back)] == [r["status"] for r in lab64_plan["checks"]]


def test_written_roft_plan_reads_back_and_passes_its_invariants(small_plan, tmp_path):
    path = write_plan(small_plan, tmp_path)
    back = read_plan(path)
    assert back == json.loads(path.read_text())
    assert [r["status"] for r in designs.evaluate(back)] == ["passed"] * 6
    assert port_map_for(back, "spine")["host_ports"] == [] and port_map_for(back, "leaf") == back["port_map"]


def test_roft_plan_is_deterministic(tmp_path):
    for n in (1, 2):
        r = run_zcube("plan", str(SMALL), "-o", str(tmp_path / str(n)))
        assert r.returncode == 0, r.stderr
        assert "ROFT plan: roftsmall" in r.stdout and "16 rail leaves + 2 spines per plane" in r.stdout
    assert (tmp_path / "1" / "plan.json").read_bytes() == (tmp_path / "2" / "plan.json").read_bytes()


def test_register_refuses_an_unknown_role():
    with pytest.raises(ValueError, match="unknown role"):
        designs.register(designs.Design("odd-one", ("core",), None, lambda plan: []))


def test_consistency_lets_a_plane_s_spines_share_an_asn_and_no_one_else(small_plan):
    from zcube_deploy.plan.consistency import plan_problems

    assert plan_problems(small_plan) == []
    bad = json.loads(json.dumps(small_plan))
    bad["switches"][1]["asn"] = bad["switches"][0]["asn"]  # two leaves
    assert [p.path for p in plan_problems(bad)] == ["switches[1].asn"]


def test_a_switch_s_own_routing_mode(lab64_plan):
    """A migration stage mixes eBGP and static switches: each judged and forwarded by its own mode."""
    from zcube_deploy.plan.consistency import plan_problems
    from zcube_deploy.topology.forwarding import switch_tables

    plan = json.loads(json.dumps(lab64_plan))
    sw = plan["switches"][0]
    sw["routing_mode"] = "bgp"
    assert {p.path for p in plan_problems(plan)} == {"switches[0].asn", "routing.asn_last", "routing.maximum_paths"}
    sw["routing_mode"] = "static"
    tables = switch_tables(plan["routing"], plan["switches"])
    assert len(tables[sw["name"]]) == len(sw["routes"])


def test_a_stage_plan_holds_some_of_its_sizing_s_switches(lab64_plan):
    from zcube_deploy.plan.consistency import plan_problems

    plan = json.loads(json.dumps(lab64_plan))
    plan["switches"] = plan["switches"][:-1]
    gone = lab64_plan["switches"][-1]["name"]
    plan["cables"] = [c for c in plan["cables"] if gone not in (c["a"]["device"], c["b"]["device"])]
    for sw in plan["switches"]:
        sw["interfaces"] = [i for i in sw["interfaces"] if i["peer"]["device"] != gone]
    for srv in plan["servers"]:
        srv["nics"] = [n for n in srv["nics"] if n["switch"] != gone]
    plan["counts"].update(switches=len(plan["switches"]), cables=len(plan["cables"]),
                          host_cables=sum(c["kind"] == "host" for c in plan["cables"]),
                          fabric_cables=sum(c["kind"] == "fabric" for c in plan["cables"]))
    assert any("2 x S x planes" in p.message for p in plan_problems(plan))
    plan["design"] = "stage"
    assert not any("2 x S x planes" in p.message or "S x m" in p.message for p in plan_problems(plan))


@pytest.fixture(scope="module")
def small_build(tmp_path_factory):
    """roft-small built as a user does (`zcube build`: plan, configs, cabling, hall)."""
    out = tmp_path_factory.mktemp("roft-small")
    r = run_zcube("build", str(SMALL), "-o", str(out), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return out, json.loads((out / "plan.json").read_text())


@pytest.mark.lab  # about 10 s: roft-small pushed twice over SSH
def test_roft_lab_push_verify_clean_then_miscabled_over_ssh(small_build, tmp_path):
    """The lab built from a ROFT plan: verify clean after push; a swapped host pair and a removed leaf-spine cable found."""
    from zcube_deploy.lab.server import lab_credentials, running_lab
    from zcube_deploy.push import Credentials, PushOptions, push_all, select_targets
    from zcube_deploy.verify.classify import classify
    from zcube_deploy.verify.collect import collect

    out, plan = small_build
    creds = Credentials(*lab_credentials())
    host = [c for c in plan["cables"] if c["kind"] == "host" and c["b"]["device"] == "R-L003"]
    uplink = next(c for c in plan["cables"] if c["kind"] == "fabric" and c["b"]["device"] == "R-S002")
    faults = {"cabling": [{"swap": [host[0]["id"], host[1]["id"]]}, {"remove": uplink["id"]}]}
    for fault, name in (({"cabling": []}, "clean"), (faults, "miscabled")):
        with running_lab(plan, faults=fault, out_dir=tmp_path / name) as lb:
            kh = str(tmp_path / name / "known_hosts")
            rep = push_all(select_targets(plan, out, None, lb.endpoints), creds, PushOptions(concurrency=8, known_hosts=kh), tmp_path / name)
            assert rep["ok"], rep["summary"]
            obs, err = collect([(n, *lb.endpoints[n]) for n in sorted(lb.endpoints)], creds, kh, concurrency=8)
            assert not err
            findings = classify(plan, obs)
            states = [s["state"] for o in obs.values() for s in o["bgp"]["sessions"].values()]
            if name == "clean":
                assert findings == [] and set(states) == {"Established"} and len(states) == 2 * plan["counts"]["fabric_cables"]
            else:
                got = sorted((f["kind"], tuple(f["cables"])) for f in findings)
                assert got == sorted([("swapped", (host[0]["id"], host[1]["id"])), ("down", (uplink["id"],)),
                                      ("bgp", (uplink["id"],))]), [f["what"] for f in findings]


def test_roft_host_files_say_rail_leaf_not_odd_switch(small_build):
    """A ROFT host's netplan and sysctl headers speak of the ROFT (its rail leaf, its plane's aggregate), never of
    ZCube's odd (rail) switch or even group (known-bad: the ZCube words the header had before)."""
    out, plan = small_build
    for srv in plan["servers"]:
        head = (out / "hosts" / f"{srv['name']}.yaml").read_text().split("network:")[0]
        assert f"{srv['name']} (rack {srv['rack']} U{srv['u']}): ROFT NIC ports" in head and "rail leaf" in head
        assert "odd" not in head and "even group" not in head and "ZCube" not in head, srv["name"]
        assert "kernel settings for the ROFT NIC ports" in (out / "hosts" / f"{srv['name']}.sysctl.conf").read_text()


def test_roft_cut_sheets_and_labels(small_build):
    """Cabling on a ROFT plan: every cable on the sheets with its short port names, leaf rows in the rail colour, spines'
    ports named from the spine's own port map, and the summary telling the ROFT's shape."""
    import csv

    from openpyxl import load_workbook

    out, plan = small_build
    rows = list(csv.DictReader((out / "cables.csv").open()))
    assert sorted(r["cable"] for r in rows) == sorted(c["id"] for c in plan["cables"])
    assert {r["group"] for r in rows} == {"leaf", "fabric"}
    labels = list(csv.DictReader((out / "labels.csv").open()))
    spine_end = next(lb for lb in labels if lb["device"] == "R-S001")
    assert spine_end["port"].startswith("FH0/")  # the short name, from the spine's port map
    assert {lb["colour"] for lb in labels} == {"blue", "orange"}
    ws = load_workbook(out / "cabling.xlsx", read_only=True)["Summary"]
    cells = [c for row in ws.iter_rows(values_only=True) for c in row if c]
    assert "ROFT cabling: roftsmall" in cells
    assert any(str(c).startswith("2 pod(s) of 2 servers, 16 rail leaves + 2 spines per plane") for c in cells)
    assert "NIC port to a ROFT rail leaf; label colour blue" in cells and "ROFT leaf to spine; label colour orange" in cells


def _broken(plan: dict, how) -> dict:
    bad = json.loads(json.dumps(plan))
    how(bad)
    return {r["name"]: r for r in designs.evaluate(bad)}


def _off_rail(p):
    """A host cable, its NIC row and the leaf ports moved, consistently, to a leaf of another rail."""
    c = next(c for c in p["cables"] if c["kind"] == "host")
    other = next(s for s in p["switches"] if s["group"] == "leaf" and s["name"] != c["b"]["device"])
    c["b"]["device"] = other["name"]
    nic = next(n for s in p["servers"] for n in s["nics"] if n["cable"] == c["id"])
    nic["switch"] = other["name"]


def _spine_on_host_port(p):
    sp = next(s for s in p["switches"] if s["group"] == "spine")
    sp["interfaces"][0]["name"] = p["port_map"]["host_ports"][0]


def _link_missing(p):
    p["cables"] = [c for c in p["cables"] if c["kind"] != "fabric" or c["link"] != 0]


def _spine_own_asn(p):
    next(s for s in p["switches"] if s["group"] == "spine")["asn"] += 100


def _peer_off_its_31(p):
    """A leaf uplink readdressed out of its /31, its spine told so: both ends agree, the /31 does not."""
    leaf = p["switches"][0]
    itf = next(i for i in leaf["interfaces"] if i["kind"] == "fabric")
    itf["address"] = "10.99.0.5"
    spine = next(s for s in p["switches"] if s["name"] == itf["peer"]["device"])
    next(i for i in spine["interfaces"] if i["name"] == itf["peer"]["port"])["peer"]["address"] = "10.99.0.5"


def _no_route_on_a_port(p):
    p["servers"][0]["nics"][0]["routes"] = []


@pytest.mark.parametrize("check, how", [
    ("rail_leaf_per_gpu_port", _off_rail), ("port_budget_and_cages", _spine_on_host_port), ("leaf_spine_mesh", _link_missing),
    ("asn_per_leaf_spines_share", _spine_own_asn), ("addresses_unique_peers_connected", _peer_off_its_31),
    ("rail_paths", _no_route_on_a_port),
])
def test_each_roft_invariant_catches_its_known_bad_case(small_plan, check, how):
    rows = _broken(small_plan, how)
    assert rows[check]["status"] == "failed", rows[check]
    assert rows[check]["violations"]


def test_every_roft_invariant_has_a_known_bad_case():
    from zcube_deploy.designs.roft.checks import INVARIANTS

    covered = {"rail_leaf_per_gpu_port", "port_budget_and_cages", "leaf_spine_mesh", "asn_per_leaf_spines_share",
               "addresses_unique_peers_connected", "rail_paths"}
    assert {f.__name__ for f in INVARIANTS} == covered


def _brute_routed_lost(plan: dict, st, rf) -> int:
    """GPU pairs without a routed path, pair by pair (the rule of analysis/roft.py written out plainly)."""
    fab = rf.fab
    live_link = {}
    for k in range(len(fab.link_u)):
        if st.link_up[k] and st.switch_up[fab.link_u[k]] and st.switch_up[fab.link_v[k]]:
            live_link.setdefault(int(fab.link_u[k]), set()).add(int(fab.link_v[k]))
    ports = [[int(fab.port_switch[g, p]) for p in range(2) if st.host_up[g, p] and st.switch_up[fab.port_switch[g, p]]]
             for g in range(fab.n_gpus)]
    lost = 0
    for a in range(fab.n_gpus):
        for b in range(a + 1, fab.n_gpus):
            ok = any(x == y or live_link.get(x, set()) & live_link.get(y, set()) for x in ports[a] for y in ports[b])
            lost += not ok
    return lost


def test_roft_routed_count_is_the_pairwise_rule(small_plan):
    import numpy as np

    from zcube_deploy.analysis.failures import State
    from zcube_deploy.analysis.roft import RoftFabric

    rf = RoftFabric(small_plan)
    rng = np.random.default_rng(7)
    for p in (0.0, 0.1, 0.3):
        for _ in range(5):
            st = State(rng.random((rf.fab.n_gpus, 2)) >= p, rng.random(len(rf.fab.link_u)) >= p, rng.random(rf.fab.n_switches) >= p / 2)
            assert rf.routed_lost_pairs(st) == _brute_routed_lost(small_plan, st, rf)


def test_roft_analyze_over_the_cli(small_build, tmp_path):
    out, plan = small_build
    r = run_zcube("analyze", str(out / "plan.json"), "-o", str(tmp_path), "--samples", "20")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "analyze.json").read_text())
    leaf = next(x for x in doc["single_failures"]["elements"] if x["element"] == "R-L001")
    n, k = 32, 2  # 32 GPUs; leaf (pod 0, rail 0) holds GPU 0 of the pod's 2 servers
    assert leaf["gpu_ports_cut_off"] == 2 * k and leaf["gpu_pairs_without_routed_path"] == k * (n - k) + 1
    spine = next(x for x in doc["single_failures"]["elements"] if x["element"] == "R-S001")
    assert spine["gpu_pairs_without_routed_path"] == 0  # the other spine carries every leaf pair
    assert set(doc["not_applicable"]) == {"cross_group_paths", "dual_plane_clos"}
    assert "not applicable: cross_group_paths" in r.stdout and "ROFT (eBGP routing)" in r.stdout


def test_predict_refuses_a_path_over_two_spines_as_bgp_does(small_plan):
    """Leaf 1 left with spine 2 only and leaf 2 with spine 1 only: cabled paths remain (over another leaf and both
    spines) but the spines share an AS, so eBGP has none; predict (the twin's reference) and analyze agree."""
    import numpy as np

    from zcube_deploy.analysis import predict
    from zcube_deploy.analysis.failures import State
    from zcube_deploy.analysis.roft import RoftFabric

    fab = [c for c in small_plan["cables"] if c["kind"] == "fabric"]
    cut = [next(c["id"] for c in fab if (c["a"]["device"], c["b"]["device"]) == pair) for pair in (("R-L001", "R-S001"), ("R-L002", "R-S002"))]
    port = {(s["name"], n["switch"]): n["address"] for s in small_plan["servers"] for n in s["nics"]}
    a, b = port[("gpu01", "R-L001")], port[("gpu01", "R-L002")]
    fw = predict.Forwarding(small_plan, failed_cables=cut)
    assert not fw.probe(a, b) and not fw.probe(b, a)
    assert fw.probe(a, port[("gpu01", "R-L003")])
    got = predict.predict_gpu_pairs(small_plan, failed_cables=cut)["gpu_pairs_unreachable"]
    rf = RoftFabric(small_plan)
    st = State.healthy(rf.fab)
    st.link_up[[rf.fab.link_ids.index(c) for c in cut]] = False
    assert got == rf.routed_lost_pairs(st) > 0
    from zcube_deploy.analysis.failures import physical_lost_pairs

    assert physical_lost_pairs(rf.fab, st) == 0 and np.all(st.host_up)  # every pair still has a cabled path


@pytest.mark.xdist_group("twin")  # namespaces, FRR, ARP sysctls: one twin at a time (docs/tests.md)
@pytest.mark.slow  # about 90 s: 18 FRR switches and 4 servers in namespaces
def test_roft_twin_end_to_end(tmp_path, small_build):
    """The twin of a ROFT: every same-plane port pair of different servers reachable over its predicted path (one
    leaf, or leaf-spine-leaf), and a leaf, a spine and a leaf-spine link failed: measured = predicted."""
    from zcube_deploy.platforms.frr import runtime
    from zcube_deploy.twin import build, netns

    why = build.netns.missing_support() or runtime.missing()
    if why:
        pytest.skip(why)
    out, plan = small_build
    d = tmp_path / "twin"
    try:
        r = run_zcube("twin", "up", str(out / "plan.json"), "-o", str(d))
        assert r.returncode == 0, r.stderr
        state = json.loads((d / "twin.json").read_text())
        assert len(state["links"]) == plan["counts"]["cables"] == 96
        uplink = next(c["id"] for c in plan["cables"] if c["kind"] == "fabric")
        r = run_zcube("twin", "test", str(d), "--fail", "switch:R-L003", "--fail", "switch:R-S001", "--fail", f"link:{uplink}")
        rep = json.loads((d / "test-report.json").read_text())
        b = rep["baseline"]
        assert b["pairs_tested"] == b["pairs_total"] == 64 * 63 - 4 * 16 * 15 == 3072  # less the pairs inside a server
        assert b["unreachable"] == 0 and b["fewer_than_2_switches"] == 0 and b["predicted_not_2_switches"] == 0
        leaf, spine, link = rep["failures"]
        for f in rep["failures"]:
            assert f["disagreements"] == 0 and f["restored"], f
        # the leaf's 2 GPUs (on 2 servers; both ports on it) lose their 24 peers on other servers each, one pair shared
        assert leaf["gpu_pairs_unreachable"] == 2 * 24 - 1
        assert spine["gpu_pairs_unreachable"] == link["gpu_pairs_unreachable"] == 0
        assert link["probe_flows"] and link["converged"]
        assert r.returncode == 0 and rep["ok"], r.stdout
    finally:
        if (d / "twin.json").exists():
            r = run_zcube("twin", "down", str(d))
            assert r.returncode == 0, r.stderr
    assert not [n for n in netns.existing_namespaces() if n.startswith(state["prefix"])]


def mixed_plan(zcube: dict, roft_plan: dict) -> dict:
    """A plan holding a static ZCube (lab-64) and an eBGP ROFT (roft-small) side by side, as a migration stage holds
    its two islands: the ROFT's servers and cables renamed apart, its switches on their own routing_mode."""
    r = json.loads(json.dumps(roft_plan))
    ren = {s["name"]: "r" + s["name"] for s in r["servers"]}
    cid = {c["id"]: "R" + c["id"] for c in r["cables"]}
    for s in r["servers"]:
        s["name"], s["index"] = ren[s["name"]], s["index"] + len(zcube["servers"])
        for n in s["nics"]:
            n["cable"] = cid[n["cable"]]
    for c in r["cables"]:
        c["id"] = cid[c["id"]]
        c["a"]["device"] = ren.get(c["a"]["device"], c["a"]["device"])
    for sw in r["switches"]:
        sw["routing_mode"] = "bgp"
        for i in sw["interfaces"]:
            i["cable"] = cid[i["cable"]]
            i["peer"]["device"] = ren.get(i["peer"]["device"], i["peer"]["device"])
    p = json.loads(json.dumps(zcube))
    p["design"] = "stage"
    for k in ("switches", "servers", "cables"):
        p[k] += r[k]
        p["counts"][k] = len(p[k])
    p["port_maps"] = {"odd": zcube["port_map"], "even": zcube["port_map"], **r["port_maps"]}
    p["routing"].update({k: r["routing"][k] for k in ("asn_base", "asn_last", "maximum_paths")})
    p["layout"]["racks"] += [x for x in r["layout"]["racks"] if x["name"] not in {y["name"] for y in zcube["layout"]["racks"]}]
    p["counts"].update(host_cables=sum(c["kind"] == "host" for c in p["cables"]), fabric_cables=sum(c["kind"] == "fabric" for c in p["cables"]),
                       gpus=zcube["counts"]["gpus"] + r["counts"]["gpus"])
    p["sizing"].update(installed_servers=len(p["servers"]), installed_gpus=p["counts"]["gpus"])
    p["addressing"]["other_pools"] = [r["addressing"][k] for k in ("host_pool", "fabric_pool", "loopback_pool")]
    return p


@pytest.mark.lab  # about 15 s: 34 switches pushed over SSH
def test_a_mixed_plan_works_switch_by_switch(lab64_plan, small_plan, tmp_path):
    """ZCube switches (static) and ROFT switches (eBGP) in one plan: read back consistent, rendered each by its role and
    mode, cabled, pushed to a lab and verified clean."""
    from zcube_deploy.lab.server import lab_credentials, running_lab
    from zcube_deploy.push import Credentials, PushOptions, push_all, select_targets
    from zcube_deploy.verify.classify import classify
    from zcube_deploy.verify.collect import collect

    path = write_plan(mixed_plan(lab64_plan, small_plan), tmp_path)
    plan = read_plan(path)
    r = run_zcube("render", str(path), "-o", str(tmp_path))
    assert r.returncode == 0, r.stderr
    odd, leaf, spine = ((tmp_path / "configs" / f"{n}.cfg").read_text() for n in ("ZC-O001", "R-L001", "R-S001"))
    assert "router bgp" not in odd and odd.count("\nip route ") > 1
    assert "router bgp" in leaf and "router bgp" in spine and "TwoHundredGigabitEthernet" not in spine.split("router bgp")[0]
    r = run_zcube("cabling", str(path), "-o", str(tmp_path))
    assert r.returncode == 0, r.stderr
    creds = Credentials(*lab_credentials())
    with running_lab(plan, faults={"cabling": []}, out_dir=tmp_path / "lab") as lb:
        kh = str(tmp_path / "lab" / "known_hosts")
        rep = push_all(select_targets(plan, tmp_path, None, lb.endpoints), creds, PushOptions(concurrency=8, known_hosts=kh), tmp_path)
        assert rep["ok"], rep["summary"]
        obs, err = collect([(n, *lb.endpoints[n]) for n in sorted(lb.endpoints)], creds, kh, concurrency=8)
        assert not err
        assert classify(plan, obs) == []
        states = [s["state"] for n, o in obs.items() if n.startswith("R-") for s in o["bgp"]["sessions"].values()]
        assert states and set(states) == {"Established"}


def test_cabling_hall_and_diff_of_the_bundled_roft_plan_over_the_cli(glm_roft_plan, tmp_path):
    """The bundled ROFT as a user runs it: cabling (was exit 2, 'a leaf switch without a pod': its projection did not
    read the pod), hall (was exit 3, KeyError 'leaf' on a bundle across rows) and diff against the ZCube plan of the
    same servers (was exit 3, KeyError 'S': a ROFT's sizing has no S/K/m)."""
    write_plan(glm_roft_plan, tmp_path / "roft")
    plan = tmp_path / "roft" / "plan.json"
    r = run_zcube("cabling", str(plan), "-o", str(tmp_path / "c"))
    assert r.returncode == 0 and "3,072 cables" in r.stdout, r.stdout + r.stderr
    r = run_zcube("hall", str(plan), "-o", str(tmp_path / "h"))
    assert r.returncode == 0 and "rack-to-rack cable bundles" in r.stdout, r.stdout + r.stderr
    assert run_zcube("plan", str(INVENTORIES / "glm-1k.yaml"), "-o", str(tmp_path / "z")).returncode == 0
    r = run_zcube("diff", str(plan), str(tmp_path / "z" / "plan.json"), "--json")
    assert r.returncode in (0, 1), r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["sizing_changed"]["design"] == ["roft", "zcube"] and d["sizing_changed"]["S"] == [None, 8]
