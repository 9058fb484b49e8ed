"""The twin's continuous prober and the drain measured in the twin (issue 26, item 2).

The pure parts run anywhere; the twin tests build one lab-64 twin in mode bgp (root, network
namespaces, FRR) shared by the module and are skipped with the reason printed where that cannot be
done (CI runs them: root, FRR installed).
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import time
from array import array
from pathlib import Path

import pytest

from conftest import INVENTORIES
from zcube_deploy.twin import build, probe
from zcube_deploy.twin.test import Ports


# --- pure ---------------------------------------------------------------------------------------
def _rfc1071(data: bytes) -> int:
    s = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s >> 16) + (s & 0xFFFF)
    return ~s & 0xFFFF


@pytest.mark.parametrize("k,r", [(0, 0), (1, 70000), (65535, 1), (123456, 65535), (2**31, 2**32 - 1)])
def test_echo_checksums_are_right(k, r):
    pkt = probe._echo(0xBEEF, k, r)
    assert len(pkt) == 16 and pkt[0] == 8
    assert _rfc1071(pkt) == 0  # a correct ICMP checksum sums the packet to zero


def test_loss_intervals_from_the_answered_flags():
    sent = array("d", [100.0 + 0.01 * i for i in range(10)])
    got = bytearray([1, 1, 0, 0, 0, 1, 1, 0, 1, 0])
    out = probe._intervals(sent, got, 0.01)
    assert [(round(a, 2), round(b, 2), n) for a, b, n in out] == [(100.02, 100.05, 3), (100.07, 100.08, 1), (100.09, 100.1, 1)]
    assert probe._intervals(sent, bytearray([1] * 10), 0.01) == []


def test_a_result_counts_losses_where_they_start():
    p = probe.PairProbe("a", "b", 100, 96, (probe.LossInterval(10.0, 10.03, 3), probe.LossInterval(20.0, 20.01, 1)), True)
    assert p.lost == 4 and p.lost_between(9.0, 11.0) == 3 and p.lost_between(11.0, 30.0) == 1 and not p.back
    r = probe.ProbeResult(10, 1000, 0.0, 30.0, 25.0, (p, probe.PairProbe("c", "d", 100, 100)))
    assert r.sent == 200 and r.lost == 4 and not r.kept_rate and r.as_dict()["lossy_pairs"][0]["lost"] == 4


def test_the_drain_benchmark_expands_all_switches_to_every_switch_of_the_plan(glm1k_plan, monkeypatch):
    """`benchmarks/twin_drain.py --elements all-switches` drains each of the plan's switches, in the plan's order, with
    the other items kept where they stand (the target is for any one switch: the run covers all, not a sample)."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    own = ("twin_drain", "twin", "_measure")  # the benchmarks' top-level modules: imported here, dropped after
    assert not set(own) & set(sys.modules)
    try:
        bench = importlib.import_module("twin_drain")
    finally:
        for name in own:
            sys.modules.pop(name, None)
    names = [s["name"] for s in glm1k_plan["switches"]]
    assert len(names) == 16 and bench.elements("all-switches", glm1k_plan) == [f"switch:{n}" for n in names]
    mixed = bench.elements("switch:ZC-O003@no-hosts,all-switches,link:F00001", glm1k_plan)
    assert mixed[0] == "switch:ZC-O003@no-hosts" and mixed[-1] == "link:F00001" and len(mixed) == 18
    assert bench.elements("switch:ZC-O001", glm1k_plan) == ["switch:ZC-O001"]


# --- in a twin ----------------------------------------------------------------------------------
def _twin_unavailable() -> str | None:
    try:
        return build.netns.missing_support() or build.runtime.missing()
    except OSError as exc:
        return str(exc)


@pytest.fixture(scope="module")
def twin64(tmp_path_factory):
    """A lab-64 twin in mode bgp, up for the module, taken down after it."""
    why = _twin_unavailable()
    if why:
        print(f"twin test skipped: {why}")
        pytest.skip(why)
    from zcube_deploy.inventory import load_inventory
    from zcube_deploy.plan import build_plan
    from zcube_deploy.plan.io import write_plan

    tmp = tmp_path_factory.mktemp("twindrain")
    text = (INVENTORIES / "lab-64.yaml").read_text()
    text = re.sub(r"^platform: (\S+)$", r"platform: \1\nrouting:\n  mode: bgp", text, count=1, flags=re.M)
    (tmp / "inv.yaml").write_text(text)
    plan_path = write_plan(build_plan(load_inventory(tmp / "inv.yaml")), tmp / "plan")
    d = tmp / "twin"
    try:
        build.up(json.loads(Path(plan_path).read_text()), str(plan_path), d, log=lambda *_: None)
        yield d
    finally:
        if (d / build.TWIN_FILE).exists():
            build.down(d, log=lambda *_: None)


def _nft_drop(ns: str, itf: str, on: bool) -> None:
    script = (f'table netdev zcube_probe_test {{ chain c {{ type filter hook ingress device "{itf}" priority -500; policy drop; }}\n}}\n'
              if on else "delete table netdev zcube_probe_test\n")
    subprocess.run(["nsenter", f"--net=/run/netns/{ns}", "nft", "-f", "-"], input=script, text=True, check=True)


@pytest.mark.xdist_group("twin")  # namespaces, FRR, ARP sysctls: one twin at a time (docs/tests.md)
@pytest.mark.slow
def test_the_prober_finds_exactly_the_pairs_that_lost_and_when(twin64):
    """A host cable drops everything for ~0.5 s (nftables on its switch end): the pairs from that port lose
    one echo per 10 ms of the drop, in one interval that lines up with it, every other pair loses none."""
    state = build.load(twin64)
    plan = json.loads(Path(state["plan"]).read_text())
    ports = Ports(plan, state)
    pairs, _ = ports.cross_group_pairs(60, 3)
    victim = pairs[0][0]
    nic = ports.by_addr[victim]
    link = next(l for l in state["links"] if l["cable"] == nic["cable"])
    end = link["a"] if link["a"]["device"] in state["switches"] else link["b"]
    ns = state["namespaces"][end["device"]]
    with probe.Prober(pairs, ports.ns_of, period_ms=10) as pr:
        time.sleep(1.0)
        t_drop = time.time()
        _nft_drop(ns, end["ifname"], True)
        t_on = time.time()      # dropping for sure from here ...
        time.sleep(0.5)
        t_off = time.time()     # ... to here; perhaps from t_drop to t_back
        _nft_drop(ns, end["ifname"], False)
        t_back = time.time()
        time.sleep(1.0)
        res = pr.stop()
    lag = res.max_lag_ms / 1000  # a loaded machine delays sends: the times below allow for it (measured, not assumed)
    assert lag < 0.25, res.max_lag_ms
    by = {(p.src, p.dst): p for p in res.pairs}
    hit = [p for (s, d), p in by.items() if victim in (s, d)]
    assert hit and all(p.back for p in res.pairs)
    for p in hit:
        assert len(p.intervals) == 1, p
        i = p.intervals[0]
        assert t_drop - 0.02 <= i.start <= t_on + 0.02 + lag and t_off <= i.end <= t_back + 0.05 + lag, (p, t_drop, t_on, t_off, t_back)
        assert (t_off - t_on) / 0.01 - 3 <= p.lost <= (t_back - t_drop) / 0.01 + 3, (p, t_drop, t_on, t_off, t_back)
    assert sum(p.lost for (s, d), p in by.items() if victim not in (s, d)) == 0
    assert res.sent >= len(pairs) * 200  # ~2.5 s at 10 ms


# --- the drain in the twin ----------------------------------------------------------------------
def test_fib_diff_lists_every_changed_line():
    from zcube_deploy.drain import twin as drain_twin

    before = {"sw": ("10.0.0.0/28 proto bgp metric 20 | nexthop via 10.200.0.1 dev a weight 1", "rule 0: from all lookup local"),
              "srv": ("rule 0: from all lookup local",)}
    same = {k: tuple(v) for k, v in before.items()}
    assert drain_twin.fib_diff(before, same) == []
    after = {**same, "sw": ("10.0.0.0/28 proto bgp metric 20 | nexthop via 10.200.0.3 dev b weight 1", "rule 0: from all lookup local")}
    d = drain_twin.fib_diff(before, after)
    assert [(x.device, x.before) for x in d] == [("sw", True), ("sw", False)] and "10.200.0.1" in d[0].line


def _session(d):
    from zcube_deploy.twin import test as twin_test

    return twin_test.open_session(d, "carrier", 1, 200, lambda *_: None)


@pytest.mark.xdist_group("twin")  # namespaces, FRR, ARP sysctls: one twin at a time (docs/tests.md)
@pytest.mark.slow
def test_drain_of_a_switch_in_the_twin_meets_every_target(twin64, tmp_path):
    """zcube drain's order under continuous probes: 0 echoes lost on the pairs clear of the switch, at most the
    echoes in flight at the carrier loss on those that crossed it, 0 GPU pairs unreachable (= predicted), every FIB
    back after the undrain; the exit code follows the target (0 lost on every pair not ending on its ports)."""
    from conftest import run_zcube

    r = run_zcube("twin", "test", str(twin64), "--pairs", "100", "--gpu-pairs", "200", "--drain", "switch:ZC-O001",
                  "--settle", "3", "--report", str(tmp_path / "rep.json"))
    rep = json.loads((tmp_path / "rep.json").read_text())
    m = rep["measurements"][0]
    assert m["element"] == "switch:ZC-O001" and m["order"] == "drain"
    assert [s["name"] for s in m["steps"]] == ["steer", "hosts", "host ports", "fabric ports",  # then zcube undrain's stages
                                               "undrain fabric ports", "undrain host ports", "undrain hosts", "undrain steer"]
    assert m["through_pairs"] > 0 and m["ending_pairs"] > 0 and m["gpu_pairs_probed_touching"] > 0
    assert m["probe_kept_rate"], m["probe_max_lag_ms"]
    # nothing lost on the pairs not ending on its ports, those whose packets crossed it included (a host's other-port
    # route through one of its GPU ports: the host moved it before the switch's side went down); the switch's own
    # prefixes were not tagged, so the pairs ending there lost nothing before a port went down
    assert m["through_lost"] == 0 and m["crossing_pairs"] > 0, m["through_lossy"]
    assert m["hosts_moved"] and m["steered"] and m["steer_ms"] <= 3000 and m["ending_lost_before_ports"] == 0
    assert m["ports_down"] and m["comparison"]["gpu_unreachable"] == 0 == m["predicted_gpu_pairs_without_path"]
    assert m["comparison"]["disagreement_count"] == 0
    assert m["fib_diff_count"] == 0 and m["fib_namespaces"] == 24
    assert r.returncode == (0 if rep["ok"] else 1), r.stdout + r.stderr
    assert rep["ok"] == (m["through_lost"] == 0) and "pairs not ending on its ports" in r.stdout


@pytest.mark.xdist_group("twin")  # namespaces, FRR, ARP sysctls: one twin at a time (docs/tests.md)
@pytest.mark.slow
def test_ports_shut_before_transit_is_steered_lose_packets_and_fail(twin64):
    """Known bad: the fabric ports shut first (no graceful shutdown), the host ports only after the settle time:
    the hosts keep sending their other-port traffic into a switch that has no way out."""
    from zcube_deploy.drain import twin as drain_twin

    m = drain_twin.measure(_session(twin64), "switch:ZC-O001", order="ports-first", settle_s=2.0, undrain_order="one-push")
    assert [s.name for s in m.steps] == ["fabric ports", "host ports", "undrain"]
    assert m.through_lost > 0 and not m.checks()[0].ok and not m.ok
    assert not m.fib_diffs  # the twin is back as it was


@pytest.mark.xdist_group("twin")  # namespaces, FRR, ARP sysctls: one twin at a time (docs/tests.md)
@pytest.mark.slow
def test_an_undrain_that_leaves_a_port_shut_fails_the_fib_check(twin64, monkeypatch):
    """Known bad: the undrain forgets one port (its `no shutdown`): the FIBs differ and the check fails; the test
    then brings the port back and the FIBs are as before again."""
    from zcube_deploy.drain import twin as drain_twin
    from zcube_deploy.platforms import frr

    real = frr.drain_commands
    forgotten = []

    def forgetful(asn, shut, opened, graceful, own=()):
        opened = list(opened)
        if opened and not forgotten:
            forgotten.append(opened.pop())
        return real(asn, shut, opened, graceful, own)

    monkeypatch.setattr(frr, "drain_commands", forgetful)
    # the routes over the forgotten port never come back: wait 15 s for them, not the 180 s (wait_converged) and 60 s
    # (_settle) limits meant for a twin that converges; a correct undrain of one cable converges within ~5 s here
    settle, converged = drain_twin._settle, build.wait_converged
    monkeypatch.setattr(drain_twin, "_settle", lambda s, limit=15.0, want=None: settle(s, min(limit, 15.0), want))
    monkeypatch.setattr(build, "wait_converged", lambda plan, state, timeout=15.0: converged(plan, state, min(timeout, 15.0)))
    s = _session(twin64)
    before = drain_twin.snapshot(s.state)
    m = drain_twin.measure(s, "link:F00001", settle_s=1.0)
    assert forgotten and m.fib_diffs and not m.checks()[3].ok and not m.ok
    sw = next(n for n, ports in s.state["interfaces"].items() if forgotten[0] in ports.values() and n in s.state["switches"])
    # the difference is the forgotten port's: routes over it on its switch are gone (not a twin still converging)
    assert any(d.before and d.device == sw and f"dev {forgotten[0]} " in f"{d.line} " for d in m.fib_diffs), m.fib_diffs
    monkeypatch.setattr(frr, "drain_commands", real)
    monkeypatch.setattr(build, "wait_converged", converged)
    frr_run = Path(s.state["switches"][sw]["run_dir"])
    build.runtime.vtysh(frr_run, *real(None, [], forgotten, None))
    build.wait_converged(s.plan, s.state)
    assert drain_twin._settle(s, want={k: before[k] for k in s.state["switches"]})
    assert drain_twin.fib_diff(before, drain_twin.snapshot(s.state)) == []


def test_steer_problems_want_transit_tagged_and_own_prefixes_not():
    from zcube_deploy.drain.twin import steer_problems

    own = ["10.0.0.128/28", "10.201.0.2/32"]
    good = {"10.0.0.128/28": False, "10.201.0.2/32": False, "10.0.0.16/28": True, "10.201.0.3/32": True}
    assert steer_problems(good, own) == []
    assert steer_problems({**good, "10.0.0.128/28": True}, own) == ["10.0.0.128/28: own prefix tagged GRACEFUL_SHUTDOWN"]
    assert steer_problems({**good, "10.0.0.16/28": False}, own) == ["10.0.0.16/28: transit not tagged"]
    assert steer_problems({"10.201.0.2/32": False}, own) == ["10.0.0.128/28: own prefix not received", "no transit received from it"]


@pytest.mark.xdist_group("twin")  # namespaces, FRR, ARP sysctls: one twin at a time (docs/tests.md)
@pytest.mark.slow
def test_transit_only_graceful_shutdown_as_a_neighbour_sees_it(twin64):
    """The drain's steer on ZC-E002 (platforms/frr: a route-map tags what it does not originate): its neighbour's BGP
    table holds every transit route from it with GRACEFUL_SHUTDOWN and its own host block and loopback without;
    steer off: no tag left. Known bad, in the same twin: `bgp graceful-shutdown` tags everything, which the same check
    finds (the switch's own prefixes tagged)."""
    from zcube_deploy.drain import twin as drain_twin
    from zcube_deploy.platforms import frr

    s = _session(twin64)
    name, neighbour = "ZC-E002", "ZC-O001"
    own = drain_twin.own_prefixes(s.plan, name)
    sw = s.state["switches"][name]
    run = Path(sw["run_dir"])

    def tags_when(done, limit=30.0):
        """The neighbour's tags once ``done(tags)`` holds (polled: FRR applies a route-map change after its delay
        timer, 5 s by default), else the last ones read."""
        deadline = time.monotonic() + limit
        while True:
            tags = drain_twin.gshut_tags(s, neighbour, name)
            if done(tags) or time.monotonic() > deadline:
                return tags
            time.sleep(0.5)

    try:
        build.runtime.vtysh(run, *frr.drain_commands(sw["asn"], [], [], True, own=own))
        assert drain_twin._wait_steered(s, name, 10.0) is not None
        tags = tags_when(lambda x: not drain_twin.steer_problems(x, own))
        assert drain_twin.steer_problems(tags, own) == [], tags
        # transit: at least the other odd switches' host blocks (ZC-O001's 2-switch paths to them through ZC-E002)
        odd = {x["host_block"] for x in s.plan["switches"] if x["group"] == "odd" and x["name"] != neighbour}
        assert len(odd) == 7 and odd <= {p for p, tagged in tags.items() if tagged}, tags
        build.runtime.vtysh(run, *frr.drain_commands(sw["asn"], [], [], False))
        assert not any(tags_when(lambda x: not any(x.values())).values())
        # known bad: everything tagged (the switch's own prefixes too)
        build.runtime.vtysh(run, "configure terminal", f"router bgp {sw['asn']}", "bgp graceful-shutdown", "end")
        bad = drain_twin.steer_problems(tags_when(lambda x: all(x.values())), own)
        assert sorted(bad) == sorted(f"{p}: own prefix tagged GRACEFUL_SHUTDOWN" for p in own), bad
    finally:
        build.runtime.vtysh(run, *frr.drain_commands(sw["asn"], [], [], False))
        build.runtime.vtysh(run, "configure terminal", f"router bgp {sw['asn']}", "no bgp graceful-shutdown", "end")
    assert not any(tags_when(lambda x: not any(x.values())).values())
    build.wait_converged(s.plan, s.state)
