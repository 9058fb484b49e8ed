"""The data-plane twin and the FRR platform.

Unit tests need nothing special. The twin tests build real namespaces with FRR and need root,
network-namespace support and FRR; where namespaces cannot be created they are skipped with the
reason printed.
"""

from __future__ import annotations

import io
import ipaddress
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from conftest import INVENTORIES, run_zcube
from zcube_deploy.errors import InputErrors
from zcube_deploy.platforms import frr
from zcube_deploy.platforms.frr import runtime
from zcube_deploy.twin import build, failures, hostfiles
from zcube_deploy.twin.names import device_names, linux_name


def _bgp_plan(tmp_path: Path, inventory: str = "lab-64.yaml") -> dict:
    from zcube_deploy.inventory import load_inventory
    from zcube_deploy.plan import build_plan

    text = (INVENTORIES / inventory).read_text()
    text = re.sub(r"^platform: (\S+)$", r"platform: \1\nrouting:\n  mode: bgp", text, count=1, flags=re.M)
    path = tmp_path / inventory.replace(".yaml", "-bgp.yaml")
    path.write_text(text)
    return build_plan(load_inventory(path))


# --- names ------------------------------------------------------------------------------------

def test_linux_names_are_valid_unique_and_stable(lab64_plan):
    names = build.port_names(lab64_plan)
    for dev, mapping in names.items():
        assert len(set(mapping.values())) == len(mapping), dev
        for port, name in mapping.items():
            assert 1 <= len(name) <= 15 and not re.search(r"[/: ]", name), (port, name)
    assert build.port_names(lab64_plan) == names
    # NIC names that are valid already are kept, so the netplan files apply as they are
    srv = lab64_plan["servers"][0]
    assert all(names[srv["name"]][n["port"]] == n["port"] for n in srv["nics"])


def test_linux_names_of_colliding_long_ports_get_a_unique_hash():
    ports = [f"VeryLongInterfaceName {i}/1:{j}" for i in range(30) for j in range(4)]
    mapping = device_names(ports, {p: "X" * 20 for p in ports})
    assert len(set(mapping.values())) == len(ports)
    assert all(len(n) <= 15 for n in mapping.values())
    assert linux_name("ens1f0np0") == "ens1f0np0"


# --- FRR platform ----------------------------------------------------------------------------

def _config_blocks(text: str) -> dict:
    itfs, routes, neighbors, networks = {}, [], set(), set()
    cur = None
    for line in text.splitlines():
        if line.startswith("interface "):
            cur = line.split()[1]
        elif line.startswith(" ip address ") and cur:
            itfs[cur] = line.split()[2]
        elif line.startswith("ip route "):
            routes.append(tuple(line.split()[2:4]))
        elif re.match(r"^ neighbor \d+\.\d+\.\d+\.\d+ peer-group FABRIC$", line):
            neighbors.add(line.split()[1])
        elif line.startswith("  network "):
            networks.add(line.split()[1])
        elif line == "exit":
            cur = None
    return {"interfaces": itfs, "routes": routes, "neighbors": neighbors, "networks": networks}


def test_frr_static_config_carries_every_address_and_route(lab64_plan):
    names = build.port_names(lab64_plan)
    for sw in lab64_plan["switches"]:
        text = frr.render_switch(lab64_plan, sw, names[sw["name"]].__getitem__)
        got = _config_blocks(text)
        want = {names[sw["name"]][i["name"]]: f"{i['address']}/{i['prefix_len']}" for i in sw["interfaces"]}
        want["lo"] = f"{sw['loopback']}/32"
        assert got["interfaces"] == want
        assert sorted(got["routes"]) == sorted((r["prefix"], r["next_hop"]) for r in sw["routes"])
        assert "router bgp" not in text and not got["neighbors"]
        assert text == frr.render_switch(lab64_plan, sw, names[sw["name"]].__getitem__)


def test_frr_bgp_config_peers_with_every_fabric_neighbour(tmp_path):
    plan = _bgp_plan(tmp_path)
    names = build.port_names(plan)
    asns = [sw["asn"] for sw in plan["switches"]]
    assert len(set(asns)) == len(asns)
    for sw in plan["switches"]:
        text = frr.render_switch(plan, sw, names[sw["name"]].__getitem__)
        got = _config_blocks(text)
        peers = {i["peer"]["address"] for i in sw["interfaces"] if i["kind"] == "fabric"}
        assert got["neighbors"] == peers
        assert got["networks"] == {sw["host_block"], f"{sw['loopback']}/32"}
        assert f"router bgp {sw['asn']}\n" in text
        for line in ("bgp bestpath as-path multipath-relax", "bgp bestpath compare-routerid", "no bgp ebgp-requires-policy", "timers bgp 3 9",
                     "neighbor FABRIC remote-as external", "neighbor FABRIC advertisement-interval 0",
                     "neighbor FABRIC bfd profile fabric", "maximum-paths "):
            assert f" {line}" in text, line
        bfd = plan["routing"]["bfd"]
        assert f"  receive-interval {bfd['interval_ms']}\n" in text and f"  detect-multiplier {bfd['multiplier']}\n" in text
        # no fabric static routes in mode bgp, only the discard route that lets the block be originated
        assert got["routes"] == [(sw["host_block"], "blackhole")]


def test_frr_config_split_gives_each_daemon_exactly_its_blocks(tmp_path):
    plan = _bgp_plan(tmp_path)
    names = build.port_names(plan)
    sw = plan["switches"][0]
    text = frr.render_switch(plan, sw, names[sw["name"]].__getitem__, slow_bfd={"interval_ms": 1000, "multiplier": 3})
    parts = runtime.split_config(text)
    assert "router bgp" in parts["bgpd"] and "router bgp" not in parts["zebra"] + parts["staticd"] + parts["bfdd"]
    assert "ip address" in parts["zebra"] and "ip address" not in parts["bgpd"] + parts["bfdd"] + parts["staticd"]
    assert parts["staticd"].count("ip route") == text.count("\nip route")
    assert "profile fabric-slow" in parts["bfdd"] and "bfd profile fabric-slow" in parts["bgpd"]
    meaningful = [l for l in text.splitlines() if l.strip() and not l.strip().startswith("!") and l != "end"]
    joined = "\n".join(parts.values()).splitlines()
    assert all(l in joined for l in meaningful)
    with pytest.raises(ValueError):
        runtime.split_config("router ospf\n network 1.2.3.0/24 area 0\n")


# --- host files ----------------------------------------------------------------------------------

def test_netplan_commands_carry_every_address_route_and_rule(lab64_build, lab64_plan):
    srv = lab64_plan["servers"][0]
    cmds, problems = hostfiles.netplan_commands(lab64_build / "hosts" / f"{srv['name']}.yaml")
    assert not problems
    addrs = {c.split()[2] for c in cmds if c.startswith("address add")}
    assert addrs == {f"{n['address']}/{n['prefix_len']}" for n in srv["nics"]}
    rules = [c for c in cmds if c.startswith("rule add")]
    assert {r.split()[3] for r in rules} == {f"{n['address']}/32" for n in srv["nics"]}
    routes = [c for c in cmds if c.startswith("route add")]
    want = sum(len(n["routes"]) for n in srv["nics"])
    assert len([r for r in routes if "table main" not in r and " unicast " in r]) == want
    for r in routes:
        ipaddress.ip_network(r.split()[3])
    # every port table ends in "unreachable" routes that cover each of its destinations with a higher metric,
    # so a lookup never falls through to the main table (and out of another GPU's NIC); no device on them
    for n in srv["nics"]:
        ends = [c.split() for c in routes if c.startswith("route add unreachable") and c.split()[c.split().index("table") + 1] == str(n["table"])]
        assert ends and all("dev" not in e and "via" not in e for e in ends)
        nets = [(ipaddress.ip_network(e[3]), int(e[e.index("metric") + 1])) for e in ends]
        for r in n["routes"]:
            assert any(ipaddress.ip_network(r["to"]).subnet_of(net) and m > r["metric"] for net, m in nets), (n["port"], r)
    # links come up and get addresses before any route names a gateway on them
    assert max(i for i, c in enumerate(cmds) if c.startswith("address")) < min(i for i, c in enumerate(cmds) if c.startswith("route"))


def test_unknown_netplan_keys_are_reported_not_ignored(tmp_path):
    f = tmp_path / "h.yaml"
    f.write_text("network:\n  ethernets:\n    eth0:\n      addresses: [10.0.0.1/31]\n      nameservers: {addresses: [1.1.1.1]}\n")
    _, problems = hostfiles.netplan_commands(f)
    assert problems and "nameservers" in problems[0].message
    s = tmp_path / "h.sysctl.conf"
    s.write_text("# c\nnet.ipv4.conf.all.rp_filter = 2\n; x\nkernel.panic = 1\nbroken\n")
    got, problems = hostfiles.sysctl_settings(s)
    assert got == [("net.ipv4.conf.all.rp_filter", "2")] and len(problems) == 2


def test_failure_specs_are_checked_all_at_once():
    state = {"links": [{"cable": "F00001"}, {"cable": "H000001"}], "switches": {"ZC-O001": {}}}
    got = failures.parse(["link:F00001", "switch:ZC-O001", "random:2"], state, seed=1)
    assert [f.label for f in got][:2] == ["link:F00001", "switch:ZC-O001"] and len(got) == 4
    assert [f.label for f in failures.parse(["random:2"], state, 1)] == [f.label for f in failures.parse(["random:2"], state, 1)]
    with pytest.raises(InputErrors) as exc:
        failures.parse(["link:NOPE", "switch:X", "random:9", "cable:F00001"], state, seed=1)
    assert len(exc.value.problems) == 4


# --- measured against predicted (no root needed) ------------------------------------------------

REPORT_FIELDS = {"twin", "cluster", "routing", "failure_mode", "seed", "bfd", "checks", "baseline", "failures", "measurements", "ok"}
FAILURE_FIELDS = {"failure", "spec", "mode", "probe_flows", "converge_ms", "converged", "packets_lost", "fib_converge_ms",
                  "fib_switches_watched", "fib_dead_prefixes_ms", "fib_last_change_ms", "fib_next_hops_ms_per_switch",
                  "fib_dead_prefixes_ms_per_switch", "predicted_probes_survive", "gpu_pairs_measured", "port_pairs_measured",
                  "gpu_pairs_unreachable", "gpu_pairs_unreachable_predicted", "port_pairs_unreachable",
                  "port_pairs_unreachable_predicted", "disagreements", "disagreement_examples", "restored"}


def _measurement(measured: dict, predicted: dict, routing: str = "static"):
    """A failure measured with the given port-pair outcomes: two GPU pairs, two port pairs each (both directions)."""
    from zcube_deploy.twin import test as twin_test

    groups = [((("s1", 0), ("s2", 0)), [("10.0.0.1", "10.0.1.1"), ("10.0.1.1", "10.0.0.1")]),
              ((("s1", 0), ("s3", 0)), [("10.0.0.1", "10.0.2.1"), ("10.0.2.1", "10.0.0.1")])]
    comparison = twin_test.compare(groups, measured, predicted)
    return twin_test.FailureMeasurement(failures.Failure("link:F00001", cables=["F00001"]), "carrier", routing, [],
                                        twin_test.FibConvergence(), comparison, restored=True)


def _report(*measurements):
    from zcube_deploy.twin import test as twin_test

    base = twin_test.Baseline(pairs_tested=10, pairs_total=10, unreachable=0, fewer_than_2_switches=0, predicted_not_2_switches=0,
                              examples=[], seconds=0.5)
    return twin_test.TwinReport(twin="/tmp/t", cluster="lab64", routing="static", failure_mode="carrier", seed=1, bfd=None,
                                baseline=base, failures=list(measurements))


def test_a_measurement_that_disagrees_with_the_prediction_fails_its_check():
    """Issue 23 item 5, the known-bad case of the twin's comparison: one port pair answers although the
    analysis says the failure cuts it off. The disagreement is counted, named, and fails the check, the
    report and the table; the same measurement agreeing with the prediction passes."""
    from zcube_deploy.twin.report import twin_test_tables

    predicted = {("10.0.0.1", "10.0.1.1"): True, ("10.0.1.1", "10.0.0.1"): True,
                 ("10.0.0.1", "10.0.2.1"): False, ("10.0.2.1", "10.0.0.1"): False}
    measured = {**predicted, ("10.0.2.1", "10.0.0.1"): True}
    bad = _measurement(measured, predicted)
    c = bad.comparison
    assert [(d.src, d.dst, d.measured, d.predicted) for d in c.disagreements] == [("10.0.2.1", "10.0.0.1", True, False)]
    assert (c.gpu_unreachable, c.gpu_unreachable_predicted) == (0, 1)
    assert (c.port_unreachable, c.port_unreachable_predicted) == (1, 2)
    assert not bad.ok and not bad.check().ok
    rep = _report(bad)
    assert not rep.ok and [ch.ok for ch in rep.checks] == [True, False]
    doc = rep.as_dict()
    assert set(doc) == REPORT_FIELDS and set(doc["failures"][0]) == FAILURE_FIELDS
    assert doc["failures"][0]["disagreements"] == 1 and doc["ok"] is False
    assert doc["failures"][0]["disagreement_examples"] == [{"src": "10.0.2.1", "dst": "10.0.0.1", "measured": True, "predicted": False}]
    console = Console(width=80, record=True, file=io.StringIO())
    for t in twin_test_tables(rep):
        console.print(t)
    assert "FAIL" in console.export_text()

    good = _measurement(predicted, predicted)
    assert good.ok and not good.comparison.disagreements and _report(good).ok
    assert _report(good).as_dict()["failures"][0]["disagreements"] == 0


def test_a_slow_convergence_fails_in_mode_bgp_only():
    from zcube_deploy.twin import test as twin_test

    same = {("10.0.0.1", "10.0.1.1"): True, ("10.0.1.1", "10.0.0.1"): True, ("10.0.0.1", "10.0.2.1"): True, ("10.0.2.1", "10.0.0.1"): True}
    for routing, ok in (("static", True), ("bgp", False)):
        m = _measurement(same, same, routing)
        slow = twin_test.FibConvergence(switches_watched=2, converge_ms=twin_test.CONVERGE_LIMIT_MS + 1)
        m = twin_test.FailureMeasurement(m.failure, m.mode, routing, m.flows, slow, m.comparison, True)
        assert m.ok is ok, routing


# --- the twin on this machine ----------------------------------------------------------------------

def test_silent_failures_drop_at_one_place_in_one_transaction():
    """A silent failure is one nft ruleset per namespace: a failed switch drops on all its ports (ingress and
    egress) in its own namespace, a failed cable on its switch end; nothing else is touched."""
    def end(dev, itf):
        return {"device": dev, "ifname": itf}
    state = {"switches": {"S1": {}, "S2": {}}, "namespaces": {"S1": "n-s1", "S2": "n-s2", "h": "n-h"},
             "links": [{"cable": "F1", "a": end("S1", "f1"), "b": end("S2", "f1")},
                       {"cable": "F2", "a": end("S2", "f2"), "b": end("S1", "f2")},
                       {"cable": "H1", "a": end("S1", "h1"), "b": end("h", "eth0")},
                       {"cable": "H2", "a": end("S2", "h2"), "b": end("h", "eth1")}]}
    assert failures._silent_ends(state, failures.Failure("switch:S1", switches=["S1"])) == {"n-s1": ["f1", "f2", "h1"]}
    assert failures._silent_ends(state, failures.Failure("link:H2", cables=["H2"])) == {"n-s2": ["h2"]}
    assert failures._silent_ends(state, failures.Failure("link:F2", cables=["F2"])) == {"n-s2": ["f2"]}


def test_fib_timeline_replays_route_events():
    """Convergence read from route events replayed onto the table before the failure: the survivors' next hops
    are clean when the last dead next hop goes, the dead prefixes when the last of them goes (path hunting can
    bring one back), and later changes are neither."""
    from zcube_deploy.twin import fib

    t0 = 1000.0
    start = {"S": {("10.1.0.0/24", "20"): ("via 10.9.0.1 dev a", "via 10.9.0.3 dev b"),
                   ("10.2.0.0/24", "20"): ("via 10.9.0.1 dev a",)}}
    ev = [(t0 + 0.10, "10.1.0.0/24", False, ["10.1.0.0/24 proto bgp metric 20", "\tnexthop via 10.9.0.3 dev b weight 1"]),
          (t0 + 0.20, "10.2.0.0/24", False, ["10.2.0.0/24 via 10.9.0.3 dev b proto bgp metric 20"]),  # longer path
          (t0 + 0.30, "10.2.0.0/24", True, ["10.2.0.0/24 via 10.9.0.3 dev b proto bgp metric 20"]),
          (t0 + 0.40, "10.2.0.0/24", False, ["10.2.0.0/24 via 10.9.0.3 dev b proto bgp metric 20"]),  # hunted back
          (t0 + 0.60, "10.2.0.0/24", True, ["10.2.0.0/24 via 10.9.0.3 dev b proto bgp metric 20"]),
          (t0 + 0.90, "10.1.0.0/24", False, ["10.1.0.0/24 proto bgp metric 20", "\tnexthop via 10.9.0.3 dev b weight 1",
                                               "\tnexthop via 10.9.0.5 dev c weight 1"])]
    tl = fib.timeline(start, {"S": ev}, {"S": {"10.9.0.1"}}, {"10.2.0.0/24"}, t0)
    assert tl.next_hops == t0 + 0.20 and tl.prefixes == t0 + 0.60 and tl.last_change == t0 + 0.90
    # never clean: None; clean from the start (carrier loss, nothing to change): the failure time
    assert fib.timeline(start, {"S": ev[:1]}, {"S": {"10.9.0.1"}}, set(), t0).next_hops is None
    assert fib.timeline(start, {"S": []}, {"S": {"10.7.7.7"}}, set(), t0).next_hops == t0
    # no event, yet clean at the end: the kernel skips a linkdown next hop silently, from the failure on
    assert fib.timeline(start, {"S": []}, {"S": {"10.9.0.1"}}, set(), t0).next_hops is None
    assert fib.timeline(start, {"S": []}, {"S": {"10.9.0.1"}}, set(), t0, {"S": True}).next_hops == t0


def test_two_twins_never_take_each_others_arp_limits_for_the_machines(tmp_path, monkeypatch):
    """Twins up at the same time share the machine's own ARP limits (one file): the second twin finds them
    raised and must not restore those; the machine gets its own values back when the last twin goes down."""
    values = {k: "1024" for k in build.netns.ARP_GC}
    spaces: list[str] = []
    monkeypatch.setattr(build, "SAVED_SYSCTLS", tmp_path / "saved.json")
    monkeypatch.setattr(build.netns, "read_sysctl", lambda k: values[k])
    monkeypatch.setattr(build.netns, "write_sysctl", lambda k, v: values.__setitem__(k, v))
    monkeypatch.setattr(build.netns, "existing_namespaces", lambda: list(spaces))
    build._raise_arp_limits()
    spaces += ["zt000001-S1"]
    build._raise_arp_limits()
    spaces += ["zt000002-S1"]
    assert values == build.netns.ARP_GC
    spaces.remove("zt000001-S1")  # the first twin goes down while the second is up: nothing restored yet
    assert build._restore_arp_limits({"zt000001-S1"}) == {} and values == build.netns.ARP_GC
    spaces.remove("zt000002-S1")
    assert build._restore_arp_limits({"zt000002-S1"}) and values == {k: "1024" for k in build.netns.ARP_GC}
    assert not (tmp_path / "saved.json").exists()


def _twin_unavailable() -> str | None:
    try:
        return build.netns.missing_support() or runtime.missing()
    except OSError as exc:
        return str(exc)


@pytest.mark.xdist_group("twin")  # a twin up that must stop before it builds anything (and a fixed folder in /tmp)
def test_twin_without_root_exits_2_with_what_is_missing(lab64_build):
    if os.geteuid() != 0:
        r = run_zcube("twin", "up", str(lab64_build / "plan.json"), "-o", str(lab64_build / "twin-x"))
    else:
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *__import__("conftest").zcube_exe(),
                            "twin", "up", str(lab64_build / "plan.json"), "-o", "/tmp/zcube-twin-nonroot"],
                           capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 2, r.stderr
    assert "root" in r.stderr and "Traceback" not in r.stderr


def _machine_snapshot() -> dict:
    from zcube_deploy.twin import netns

    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return {"netns": netns.existing_namespaces(), "links": sorted(l.split(":")[1].strip() for l in links.splitlines()),
            "sysctls": {k: netns.read_sysctl(k) for k in netns.ARP_GC},
            "frr": subprocess.run(["pgrep", "-f", "/usr/lib/frr/"], capture_output=True, text=True).stdout.split()}


@pytest.mark.xdist_group("twin")  # namespaces, FRR, ARP sysctls: one twin at a time (docs/tests.md)
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["static", "bgp"])
def test_twin_lab64_end_to_end(tmp_path, lab64_build, mode):
    why = _twin_unavailable()
    if why:
        print(f"twin test skipped: {why}")
        pytest.skip(why)
    if mode == "static":
        plan_path = lab64_build / "plan.json"
    else:
        from zcube_deploy.plan.io import write_plan

        plan_path = write_plan(_bgp_plan(tmp_path), tmp_path / "bgp")
    before = _machine_snapshot()
    d = tmp_path / "twin"
    try:
        r = run_zcube("twin", "up", str(plan_path), "-o", str(d))
        assert r.returncode == 0, r.stderr
        state = json.loads((d / "twin.json").read_text())
        assert state["state"] == "up" and len(state["namespaces"]) == 24 and len(state["links"]) == 192
        ifindexes = [e["ifindex"] for l in state["links"] for e in (l["a"], l["b"])]
        assert len(set(ifindexes)) == len(ifindexes)
        # nothing of the twin in the machine's own namespace
        assert _machine_snapshot()["links"] == before["links"]
        fail = ["--fail", "link:F00001", "--mode", "silent"] if mode == "bgp" else ["--fail", "link:F00001"]
        r = run_zcube("twin", "test", str(d), *fail)
        assert (d / "test-report.json").exists(), r.stderr
        rep = json.loads((d / "test-report.json").read_text())
        b = rep["baseline"]
        assert b["pairs_tested"] == b["pairs_total"] == 7168  # 8,192 cross-group port pairs less the 1,024 inside a server
        assert b["unreachable"] == 0 and b["fewer_than_2_switches"] == 0
        for f in rep["failures"]:
            assert f["disagreements"] == 0, f["disagreement_examples"]
            assert f["gpu_pairs_unreachable"] == f["gpu_pairs_unreachable_predicted"]
            assert f["restored"]
        if mode == "bgp":
            f = rep["failures"][0]
            assert f["probe_flows"] and f["converged"] and f["packets_lost"] > 0  # BFD had to notice: packets were lost
        else:
            assert rep["failures"][0]["port_pairs_unreachable"] > 0  # no static route around a cut fabric link
        assert r.returncode == (0 if rep["ok"] else 1)
        # convergence times are measured, not asserted here (timings belong in benchmarks/): every check but
        # the time limit must hold
        assert rep["checks"][0]["ok"] and all(f["converged"] for f in rep["failures"])
        # both failure modes on a switch and a host cable: what the ports experience equals the analysis'
        # prediction for that mode (silent: the hosts keep sending into the dead ports, nothing runs BFD there)
        unreachable = {}
        for fmode in ("carrier", "silent"):
            run_zcube("twin", "test", str(d), "--pairs", "200", "--gpu-pairs", "400", "--fail", "switch:ZC-O003",
                      "--fail", "link:H000001", "--mode", fmode)
            rep = json.loads((d / "test-report.json").read_text())
            assert rep["failure_mode"] == fmode
            for f in rep["failures"]:
                assert f["disagreements"] == 0, (fmode, f["failure"], f["disagreement_examples"])
                assert f["port_pairs_unreachable"] > 0 and f["restored"]
            unreachable[fmode] = [f["gpu_pairs_unreachable"] for f in rep["failures"]]
        assert unreachable["carrier"][0] == 0 < unreachable["silent"][0]  # switch: fallbacks work only on carrier loss
    finally:
        if (d / "twin.json").exists():
            r = run_zcube("twin", "down", str(d))
            assert r.returncode == 0, r.stderr
    after = _machine_snapshot()
    assert after["netns"] == before["netns"] and after["links"] == before["links"]
    assert after["sysctls"] == before["sysctls"] and after["frr"] == before["frr"]


def test_platform_frr_in_the_inventory_renders_frr_configs(tmp_path):
    inv = (INVENTORIES / "lab-64.yaml").read_text()
    inv = re.sub(r"^platform: \S+$", "platform: frr", inv, flags=re.M)
    inv = re.sub(r"^switch_model: \S+$", "switch_model: FRR-64x400G", inv, flags=re.M)
    (tmp_path / "inv.yaml").write_text(inv)
    r = run_zcube("build", str(tmp_path / "inv.yaml"), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    plan = json.loads((tmp_path / "out" / "plan.json").read_text())
    assert plan["cluster"]["platform"] == "frr"
    for sw in plan["switches"]:
        text = (tmp_path / "out" / "configs" / f"{sw['name']}.conf").read_text()
        got = _config_blocks(text)
        # the catalog's port names are Linux names: used as they are, on the box and in the twin
        assert set(got["interfaces"]) == {i["name"] for i in sw["interfaces"]} | {"lo"}
        assert build.port_names(plan)[sw["name"]] == {i["name"]: i["name"] for i in sw["interfaces"]}
    assert not list((tmp_path / "out" / "configs").glob("*.cfg"))


def test_twin_test_reads_its_plan_validated(tmp_path):
    """`zcube twin test` reads the twin's plan.json through read_plan, as every command does: a plan edited or
    replaced since `twin up` (here a lab.json in its place) is exit 2 with what is wrong, not a crash mid-test.
    (No namespace is needed to get there: a twin description naming none is "up" with all of them present.)"""
    bad = tmp_path / "plan.json"
    bad.write_text(json.dumps({"switches": {"ZC-O001": {"host": "127.0.0.1", "port": 2201}}}))
    twin = {"version": 1, "plan": str(bad), "cluster": "c", "mode": "static", "prefix": "zt000000-", "dir": str(tmp_path),
            "run_base": str(tmp_path / "run"), "namespaces": {}, "interfaces": {}, "links": [], "switches": {}, "state": "up"}
    (tmp_path / build.TWIN_FILE).write_text(json.dumps(twin))  # (a whole twin description: its shape is checked first)
    r = run_zcube("twin", "test", str(tmp_path))
    assert r.returncode == 2, r.stderr
    assert f"{bad}: not a zcube plan" in r.stderr and "Traceback" not in r.stderr and "internal error" not in r.stderr
