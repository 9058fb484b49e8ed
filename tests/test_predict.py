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
