"""The traffic model's rates against real TCP flows on lab-64's twin with every veth shaped by `tc`
(zcube_deploy/twin/shaped.py, docs/traffic.md "Checked against the twin").

The unit tests need nothing special; the measurement builds a twin (root, namespaces, FRR, tc) and
is slow (about 70 s); it is skipped with the reason where a twin cannot be built."""

from __future__ import annotations

import dataclasses
import subprocess

import pytest

from zcube_deploy import workflow
from zcube_deploy.twin import netns, shaped

RATE_KBIT = 1000  # every veth end: 1 Mbit/s; the 72 flows carry about 12 Mbit/s in all, far from a CPU limit


def _gpus(plan: dict) -> list[tuple[str, int]]:
    """GPU 0 of the first four servers (one odd switch, O_0) and GPUs 1-3 of the eighth (one even
    switch): O_0's link to that even switch carries 12 sub-flows, a host port 6 at most."""
    names = [s["name"] for s in plan["servers"]]
    return [(names[0], 0), (names[1], 0), (names[2], 0), (names[3], 0), (names[7], 1), (names[7], 2), (names[7], 3)]


def test_model_rates_of_the_small_all_to_all(lab64_plan):
    """By hand: 12 sub-flows share the one O_0 <-> E_8 link each way (4 rail-0 GPUs x 3 GPUs of the
    eighth server): 200/12 Gbit/s each; every other sub-flow's tightest link is a host port with
    6 sub-flows (200/6) or fewer."""
    subs = shaped.model_rates(lab64_plan, _gpus(lab64_plan))
    eighth = lab64_plan["servers"][7]["name"]
    assert len(subs) == 72  # 7 x 6 ordered pairs less the 6 inside the eighth server, 2 sub-flows each
    for src, sp, dst, dp, rate in subs:
        crosses = (src[0] == eighth) != (dst[0] == eighth) and ((sp == 1) == (src[0] != eighth))
        assert rate == pytest.approx(200 / 12 if crosses else 200 / 6, rel=1e-9), (src, sp, dst, dp)


def _result(model: float, measured: float, src: str = "a") -> shaped.FlowResult:
    return shaped.FlowResult(src=src, dst="b", src_addr="10.0.0.1", dst_addr="10.0.0.2", model_kbit=model, measured_kbit=measured)


def test_summary_judges_levels_and_the_median_flow():
    good = [_result(100, 95), _result(100, 80, "c"), _result(200, 190), _result(200, 205, "c"), _result(200, 196)]
    s = shaped.summary(good)
    assert s["ok"] and s["within"] == 4 and s["levels"]["100"]["deviation"] == pytest.approx(-0.125)
    # known-bad: the levels measured the wrong way round (a model that mistook the bottleneck)
    bad = [dataclasses.replace(r, model_kbit=300 - r.model_kbit) for r in good]
    assert not shaped.summary(bad)["ok"]


def _twin_unavailable() -> str | None:
    from zcube_deploy.platforms.frr import runtime

    try:
        why = netns.missing_support() or runtime.missing()
    except OSError as exc:
        return str(exc)
    if why:
        return why
    probe = subprocess.run(["tc", "-V"], capture_output=True, text=True)
    return None if probe.returncode == 0 else "tc (iproute2) is missing"


@pytest.mark.xdist_group("twin")  # namespaces, FRR, ARP sysctls: one twin at a time (docs/tests.md)
@pytest.mark.slow
def test_twin_shaped_all_to_all_matches_the_model(tmp_path, lab64_build, lab64_plan):
    why = _twin_unavailable()
    if why:
        print(f"twin test skipped: {why}")
        pytest.skip(why)
    d = tmp_path / "twin"
    state = workflow.twin_up(str(lab64_build / "plan.json"), str(d))
    try:
        results = shaped.measure(state, lab64_plan, _gpus(lab64_plan), RATE_KBIT, warmup_s=15, window_s=30)
        qdiscs = subprocess.run(["nsenter", f"--net=/run/netns/{state['namespaces']['ZC-O001']}", "tc", "qdisc", "show"],
                                capture_output=True, text=True).stdout
    finally:
        workflow.twin_down(str(d))
    assert "htb" not in qdiscs  # the shaping is gone afterwards
    s = shaped.summary(results)
    print(s)
    assert len(results) == 72 and set(s["levels"]) == {"83.333", "166.667"}
    assert s["ok"], s
    # known-bad: the same measurements against a model that gives every flow the same rate
    flat = sum(r.model_kbit for r in results) / len(results)
    assert not shaped.summary([dataclasses.replace(r, model_kbit=flat) for r in results])["ok"]
