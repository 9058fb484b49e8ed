"""predict.py (the routing contract's reference model) against independent walks."""

from __future__ import annotations

import random

import pytest

from test_analysis import SHAPES, Reference, small_plan
from zcube_deploy.analysis.predict import path_switches, predict_gpu_pairs, predict_pairs


@pytest.fixture(scope="module", params=["lab-64", "m2-partial", "m3"])
def plan(request, lab64_plan):
    return lab64_plan if request.param == "lab-64" else small_plan(*SHAPES[request.param])


def _cross_pairs(ref: Reference):
    out = []
    for a, ga in enumerate(ref.gpus):
        for b, gb in enumerate(ref.gpus):
            if a != b:
                out += [(ga[1], gb[2]), (ga[2], gb[1])]
    return out


def test_failure_free_cross_group_paths_use_two_switches(plan):
    ref = Reference(plan)
    pairs = _cross_pairs(ref)
    rnd = random.Random(3)
    for x, y in rnd.sample(pairs, min(200, len(pairs))):
        assert path_switches(plan, x["address"], y["address"]) == 2
    assert all(predict_pairs(plan, [(x["address"], y["address"]) for x, y in pairs]))
    counts = predict_gpu_pairs(plan)
    n = len(ref.gpus)
    assert counts["gpu_pairs_unreachable"] == 0 and counts["gpu_pairs_total"] == n * (n - 1) // 2


def test_cross_group_probes_match_the_static_route_walk(plan):
    """Cross-group port pairs only use the primary host route and the static routes: the probe must
    agree with test_analysis.Reference (an independent walk of the route tables) under failures."""
    if plan.get("routing", {}).get("mode", "static") != "static":
        pytest.skip("static plans only")
    ref = Reference(plan)
    pairs = _cross_pairs(ref)
    cables = [c["id"] for c in plan["cables"]]
    switches = [s["name"] for s in plan["switches"]]
    rnd = random.Random(7)
    for trial in range(12):
        down_c = set(rnd.sample(cables, 1 + trial % 4))
        down_s = set(rnd.sample(switches, 1)) if trial % 3 == 0 else set()
        got = predict_pairs(plan, [(x["address"], y["address"]) for x, y in pairs], down_c, down_s)
        want = [ref.port_pair(x, y, down_c | down_s) for x, y in pairs]
        assert got == want, (trial, down_c, down_s)


# --- failure modes: carrier loss against silent failures (data-plane twin, docs/twin.md) -----------------

def _bgp(tmp_path):
    import re

    from conftest import INVENTORIES
    from zcube_deploy.inventory import load_inventory
    from zcube_deploy.plan import build_plan

    text = (INVENTORIES / "lab-64.yaml").read_text()
    text = re.sub(r"^platform: (\S+)$", r"platform: \1\nrouting:\n  mode: bgp", text, count=1, flags=re.M)
    (tmp_path / "bgp.yaml").write_text(text)
    return build_plan(load_inventory(tmp_path / "bgp.yaml"))


def _ports(plan):
    return [(srv["name"], n) for srv in plan["servers"] for n in srv["nics"]]


def _all_pairs(plan):
    ports = _ports(plan)
    return [(a[1]["address"], b[1]["address"]) for a in ports for b in ports
            if (a[0], a[1]["gpu"]) != (b[0], b[1]["gpu"]) and a[1]["plane"] == b[1]["plane"]]


def test_silent_fabric_failures_in_mode_bgp_are_carrier_loss(tmp_path):
    """BFD runs on every fabric session: a silently dead fabric link or switch is routed around like a cut one,
    except that a host keeps its (carrier-up) port on the dead switch."""
    plan = _bgp(tmp_path)
    pairs = _all_pairs(plan)
    fab = next(c["id"] for c in plan["cables"] if c["kind"] == "fabric")
    assert predict_pairs(plan, pairs, {fab}, failure_mode="silent") == predict_pairs(plan, pairs, {fab})
    dead = plan["switches"][2]["name"]
    on_dead = {(s, n["gpu"]) for s, n in _ports(plan) if n["switch"] == dead}
    gpu_of = {n["address"]: (s, n["gpu"]) for s, n in _ports(plan)}
    far = [p for p in pairs if gpu_of[p[0]] not in on_dead and gpu_of[p[1]] not in on_dead]
    assert far and predict_pairs(plan, far, failed_switches={dead}, failure_mode="silent") == \
        predict_pairs(plan, far, failed_switches={dead})


def test_a_silently_dead_host_cable_blackholes_what_its_port_carries(tmp_path):
    """No BFD on host cables: the host keeps routing into a silently dead port. A GPU's port 1 sends to its own
    group through the NIC's other port (role other-port, metric 200); with port 2's cable cut it falls back to
    its own port (same-group, metric 300), with port 2's cable silently dead those packets are lost (ports on
    its own switch are reached directly, role same-switch)."""
    plan = _bgp(tmp_path)
    srv = plan["servers"][0]
    p1, p2 = sorted((n for n in srv["nics"] if n["gpu"] == 0), key=lambda n: n["nic_port"])
    same_group = [n for s in plan["servers"][1:] for n in s["nics"] if n["group"] == p1["group"] and n["switch"] != p1["switch"]]
    pairs = [(p1["address"], q["address"]) for q in same_group]
    assert all(predict_pairs(plan, pairs, {p2["cable"]}))
    assert not any(predict_pairs(plan, pairs, {p2["cable"]}, failure_mode="silent"))
    # the GPU pair survives anyway: port 1 still reaches the other group's ports of the same GPUs
    assert predict_gpu_pairs(plan, {p2["cable"]}, failure_mode="silent")["gpu_pairs_unreachable"] == 0


def test_a_silently_dead_ecmp_member_in_mode_static_loses_its_flows(lab64_plan):
    """Static routes stay on a silently dead link. A switch's same-group fallback is ECMP over several links:
    cut one and the others carry everything; kill one silently and the flows hashing onto it are lost, so a
    packet entering that switch for the group counts as lost (the analysis' every-branch rule)."""
    from zcube_deploy.analysis.predict import Forwarding
    from zcube_deploy.ipv4 import aton

    sw = lab64_plan["switches"][0]
    fallback = [r for r in sw["routes"] if r.get("fallback")]
    assert len({r["next_hop"] for r in fallback}) > 1
    cable_of = {i["peer"]["address"]: i["cable"] for i in sw["interfaces"] if i["kind"] == "fabric"}
    dead = cable_of[fallback[0]["next_hop"]]
    # a port of sw's own group on another switch, reached from sw only through the fallback routes
    dst = next(n for s in lab64_plan["servers"] for n in s["nics"] if n["group"] == sw["group"] and n["switch"] != sw["name"])
    assert Forwarding(lab64_plan).delivers(sw["name"], aton(dst["address"]))
    assert Forwarding(lab64_plan, {dead}).delivers(sw["name"], aton(dst["address"]))
    assert not Forwarding(lab64_plan, {dead}, failure_mode="silent").delivers(sw["name"], aton(dst["address"]))
