"""The lab's BGP/BFD model and verify in mode bgp.

Pure tests drive the simulated switches through their CLI (no SSH) with the configs rendered for
lab-64 in routing mode bgp, then check sessions, BFD and the B routes of `show ip route` against
shortest AS paths computed here, independently (Floyd-Warshall over the plan's fabric cables).
One test goes over SSH: push to a lab, verify clean, then a lab with a fabric cable removed.
"""

from __future__ import annotations

import json
from itertools import product
from pathlib import Path

import pytest

from conftest import ROOT, run_zcube
from zcube_deploy.platforms.ruijie_rgos.parsers import parse
from zcube_deploy.platforms.ruijie_rgos.lab import bgp
from zcube_deploy.lab.core import LabModel
from zcube_deploy.verify.classify import classify as compare
from zcube_deploy.platforms import platform_module
from zcube_deploy.verify.observe import observe

COMMANDS = platform_module("ruijie_rgos").VERIFY_COMMANDS  # what verify runs on the lab's platform

SECRET = "en"


@pytest.fixture(scope="module")
def bgp64(tmp_path_factory):
    """lab-64 with `routing: {mode: bgp}`, built as a user does."""
    d = tmp_path_factory.mktemp("bgp64")
    text = (ROOT / "inventories" / "lab-64.yaml").read_text()
    (d / "lab-64-bgp.yaml").write_text("routing:\n  mode: bgp\n" + text)
    r = run_zcube("build", str(d / "lab-64-bgp.yaml"), "-o", str(d / "out"), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return d / "out", json.loads((d / "out" / "plan.json").read_text())


def session(model, name):
    s = model.new_session(name)
    s.feed("enable")
    s.feed(SECRET)
    return s


def configure(model, name, lines):
    s = session(model, name)
    s.feed("configure terminal")
    for ln in lines:
        out = s.feed(ln)
        assert not out.strip(), f"{name}: {ln!r} -> {out}"
    s.feed("end")


def lab(out: Path, plan: dict) -> LabModel:
    m = LabModel(plan)
    m.enable_secret = SECRET
    for sw in plan["switches"]:
        text = (out / "configs" / f"{sw['name']}.cfg").read_text()
        configure(m, sw["name"], [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("!") and ln != "end"])
    return m


def show(model, name, cmd):
    out = session(model, name).feed(cmd)
    return out if isinstance(out, str) else "".join(out)  # the LLDP detail comes as a stream of chunks


# ---------------------------------------------------------------- independent reference
def shortest(plan, removed=frozenset()):
    """All-pairs switch hop counts (Floyd-Warshall) over the plan's fabric cables minus ``removed``."""
    names = [s["name"] for s in plan["switches"]]
    inf = float("inf")
    d = {(a, b): (0 if a == b else inf) for a, b in product(names, names)}
    for c in plan["cables"]:
        if c["kind"] == "fabric" and c["id"] not in removed:
            d[c["a"]["device"], c["b"]["device"]] = d[c["b"]["device"], c["a"]["device"]] = 1
    for k, i, j in product(names, names, names):
        if d[i, k] + d[k, j] < d[i, j]:
            d[i, j] = d[i, k] + d[k, j]
    return d


def expected_b_routes(plan, name, removed=frozenset()):
    """prefix -> set of next hops: the peer addresses of the links to every neighbour on a shortest path."""
    d = shortest(plan, removed)
    sw = {s["name"]: s for s in plan["switches"]}
    links = [(i["peer"]["device"], i["peer"]["address"]) for i in sw[name]["interfaces"]
             if i["kind"] == "fabric" and i["cable"] not in removed]
    out = {}
    for dst, t in sw.items():
        if dst == name or d[name, dst] == float("inf"):
            continue
        hops = {addr for nb, addr in links if d[nb, dst] == d[name, dst] - 1}
        out[t["host_block"]] = hops
        out[t["loopback"] + "/32"] = hops
    return out


def installed_b_routes(model, name):
    rows = parse("show ip route", show(model, name, "show ip route"))
    out: dict[str, set[str]] = {}
    for r in rows:
        if r["protocol"] == "B":
            out.setdefault(f"{r['network']}/{r['prefix_length']}", set()).add(r["nexthop_ip"])
    return out


def sessions(model, name):
    return {r["neighbor"]: r for r in parse("show ip bgp summary", show(model, name, "show ip bgp summary"))}


def observed(model):
    return {name: observe({cmd: show(model, name, cmd) for cmd in COMMANDS}) for name in model.switches}


# ---------------------------------------------------------------- the lab's model
def test_every_planned_session_established_with_bfd_up(bgp64):
    out, plan = bgp64
    m = lab(out, plan)
    for sw in plan["switches"]:
        fabric = {i["peer"]["address"]: i for i in sw["interfaces"] if i["kind"] == "fabric"}
        asn = {s["name"]: s["asn"] for s in plan["switches"]}
        got = sessions(m, sw["name"])
        assert set(got) == set(fabric)
        for addr, r in got.items():
            assert r["state_pfxrcd"].isdigit(), (sw["name"], addr, r)  # a prefix count: Established
            assert int(r["remote_as"]) == asn[fabric[addr]["peer"]["device"]] and int(r["local_as"]) == sw["asn"]
        bfd = parse("show bfd neighbors", show(m, sw["name"], "show bfd neighbors"))
        assert {r["neigh_addr"] for r in bfd} == set(fabric) and {r["state"] for r in bfd} == {"Up"}


def test_b_routes_are_the_shortest_as_paths_with_ecmp(bgp64):
    out, plan = bgp64
    m = lab(out, plan)
    for sw in plan["switches"]:
        want = expected_b_routes(plan, sw["name"])
        assert installed_b_routes(m, sw["name"]) == want
    # cross-group destinations: one AS hop; same-group ones: two, through every switch of the other group
    o1 = installed_b_routes(m, "ZC-O001")
    e2 = next(s for s in plan["switches"] if s["name"] == "ZC-E002")
    o3 = next(s for s in plan["switches"] if s["name"] == "ZC-O003")
    assert len(o1[e2["host_block"]]) == 1 and len(o1[o3["host_block"]]) == plan["sizing"]["S"]


def test_removed_cable_takes_its_session_down_and_routes_go_around(bgp64):
    out, plan = bgp64
    m = lab(out, plan)
    cable = next(c for c in plan["cables"] if c["kind"] == "fabric")
    a, b = cable["a"]["device"], cable["b"]["device"]
    m.wiring.remove(cable["id"])
    sw_a = next(s for s in plan["switches"] if s["name"] == a)
    peer_addr = next(i["peer"]["address"] for i in sw_a["interfaces"] if i["cable"] == cable["id"])
    assert sessions(m, a)[peer_addr]["state_pfxrcd"] == "Idle"
    assert sum(r["state_pfxrcd"].isdigit() for r in sessions(m, a).values()) == len(sessions(m, a)) - 1
    bfd = {r["neigh_addr"]: r["state"] for r in parse("show bfd neighbors", show(m, a, "show bfd neighbors"))}
    assert bfd[peer_addr] == "Down"
    for name in (a, b, "ZC-O003", "ZC-E004"):
        assert installed_b_routes(m, name) == expected_b_routes(plan, name, {cable["id"]})
    # a detour: a reaches b's block in 3 AS hops now
    d = shortest(plan, {cable["id"]})
    assert d[a, b] == 3


def _peer(plan, name, k=0):
    sw = next(s for s in plan["switches"] if s["name"] == name)
    return [i for i in sw["interfaces"] if i["kind"] == "fabric"][k]


def test_wrong_asn_missing_neighbour_and_wrong_addresses(bgp64):
    out, plan = bgp64
    m = lab(out, plan)
    asn = {s["name"]: s["asn"] for s in plan["switches"]}
    i0, i1, i2, i3 = (_peer(plan, "ZC-O001", k) for k in range(4))
    configure(m, "ZC-O001", [f"router bgp {asn['ZC-O001']}",
                             f" neighbor {i0['peer']['address']} remote-as 65000",          # wrong ASN
                             f" no neighbor {i1['peer']['address']} remote-as {asn[i1['peer']['device']]}",  # missing neighbour
                             f" no neighbor {i2['peer']['address']} remote-as {asn[i2['peer']['device']]}",
                             f" neighbor 10.254.0.9 remote-as {asn[i2['peer']['device']]}", "exit"])  # wrong peer address
    model = m.bgp_model()
    by_addr = {s.neighbor: s for s in model.sessions["ZC-O001"]}
    assert by_addr[i0["peer"]["address"]].state == "Idle" and by_addr[i0["peer"]["address"]].reason == "bad_as"
    assert i1["peer"]["address"] not in by_addr and by_addr["10.254.0.9"].reason == "no_interface"
    back = {s.neighbor: s for s in model.sessions[i1["peer"]["device"]]}[i1["address"]]
    assert back.state == "Active" and back.reason == "peer_not_configured"
    # the wrong ASN does not stop BFD (no AS in BFD)
    assert {b.neighbor: b.up for b in model.bfd["ZC-O001"]}[i0["peer"]["address"]]
    # a wrong address on the far port: nobody answers at the planned address
    configure(m, i3["peer"]["device"], [f"interface {i3['peer']['port']}", " ip address 10.200.9.9 255.255.255.254", "exit"])
    near = {s.neighbor: s for s in m.bgp_model().sessions["ZC-O001"]}[i3["peer"]["address"]]
    far = {s.neighbor: s for s in m.bgp_model().sessions[i3["peer"]["device"]]}[i3["address"]]
    assert (near.state, near.reason) == ("Active", "no_answer") and (far.state, far.reason) == ("Idle", "no_interface")
    # verify reads the same from the switches' show outputs and names each cause
    findings = [f for f in compare(plan, observed(m)) if f["kind"] == "bgp"]
    cause = {f["cables"][0]: f["cause"] for f in findings}
    assert cause == {i0["cable"]: "wrong_asn", i1["cable"]: "not_configured", i2["cable"]: "wrong_peer_address",
                     i3["cable"]: "wrong_address"}, [f["what"] for f in findings]
    assert all(f["ends"][0]["device"] == "ZC-O001" for f in findings)
    assert i3["peer"]["device"] in next(f for f in findings if f["cause"] == "wrong_address")["instruction"]
    routes = [f for f in compare(plan, observed(m)) if f["kind"] == "route"]
    assert routes == []  # the B routes follow the sessions that are up: nothing else is wrong


def test_verify_wrong_peer_address_and_cable_reference(bgp64):
    out, plan = bgp64
    m = lab(out, plan)
    asn = {s["name"]: s["asn"] for s in plan["switches"]}
    i0, i1 = _peer(plan, "ZC-E002", 0), _peer(plan, "ZC-E002", 1)
    configure(m, "ZC-E002", [f"router bgp {asn['ZC-E002']}", f" no neighbor {i0['peer']['address']}",
                             f" neighbor 10.200.99.1 remote-as {asn[i0['peer']['device']]}", "exit"])
    m.wiring.remove(i1["cable"])
    fs = compare(plan, observed(m))
    down = next(f for f in fs if f["kind"] == "down")
    b = {f["cables"][0]: f for f in fs if f["kind"] == "bgp"}
    assert b[i0["cable"]]["cause"] == "wrong_peer_address" and "10.200.99.1" in b[i0["cable"]]["what"]
    assert b[i1["cable"]]["cause"] == "cabling" and b[i1["cable"]]["refers_to"] == down["id"] and down["cables"] == [i1["cable"]]
    assert not [f for f in fs if f["kind"] == "route"], [f["what"] for f in fs]


def test_verify_flags_routes_the_plan_does_not_predict(bgp64):
    out, plan = bgp64
    m = lab(out, plan)
    # ECMP cut to one path on one switch: sessions stay up, the same-group routes lose their equal-cost paths
    configure(m, "ZC-O001", [f"router bgp {plan['switches'][0]['asn']}", " address-family ipv4 unicast", "  maximum-paths 1",
                             " exit-address-family", "exit"])
    fs = compare(plan, observed(m))
    assert [f["kind"] for f in fs] == ["route"] and fs[0]["ends"][0]["device"] == "ZC-O001"
    assert len(fs[0]["routes_wrong"]) == 2 * (plan["sizing"]["S"] - 1)  # block + loopback of each same-group switch


def test_cli_grammar_prompts_errors_and_no_forms(bgp64):
    out, plan = bgp64
    m = LabModel(plan)
    m.enable_secret = SECRET
    s = session(m, "ZC-O001")
    before = s.feed("show running-config")
    s.feed("configure terminal")
    assert s.feed("router bgp 4294967296").endswith("marker.")
    assert s.feed("router bgp 4200000000") == "" and s.prompt().endswith("(config-router)#")
    assert "remote-as" in s.feed("neighbor 10.0.0.1 fall-over bfd")  # before remote-as: refused
    for ln in ("bgp router-id 10.201.0.1", "bgp bestpath as-path multipath-relax", "neighbor 10.0.0.1 remote-as 4200000001",
               "neighbor 10.0.0.1 fall-over bfd", "address-family ipv4 unicast"):
        assert s.feed(ln) == "", ln
    assert s.prompt().endswith("(config-router-af)#")
    assert s.feed("network 10.0.0.1 mask 255.255.255.240").startswith("% Invalid")  # not a network address
    for ln in ("network 10.0.0.0 mask 255.255.255.240", "maximum-paths 64", "exit-address-family"):
        assert s.feed(ln) == ""
    assert s.prompt().endswith("(config-router)#")
    assert s.feed("show version").endswith("marker.") and s.prompt().endswith("(config-router)#")  # invalid: mode kept
    assert s.feed("interface TwoHundredGigabitEthernet 0/5:1") == "" and "config-if" in s.prompt()  # falls back to config
    assert s.feed("no switchport") == "" and s.feed("bfd interval 300 min_rx 300 multiplier 3") == ""
    assert s.feed("bfd interval 300 min_rx 300").startswith("% Incomplete")
    s.feed("exit")
    assert s.feed("ip route 10.0.0.0 255.255.255.240 Null 0") == ""
    s.feed("end")
    run = s.feed("show running-config")
    for ln in (" bfd interval 300 min_rx 300 multiplier 3", "router bgp 4200000000", " neighbor 10.0.0.1 fall-over bfd",
               " address-family ipv4 unicast", "  network 10.0.0.0 mask 255.255.255.240", "  maximum-paths 64",
               " exit-address-family", "ip route 10.0.0.0 255.255.255.240 Null 0"):
        assert ln in run.splitlines(), ln
    s.feed("configure terminal")
    for ln in ("router bgp 4200000000", "address-family ipv4 unicast", "no maximum-paths 64", "no network 10.0.0.0 mask 255.255.255.240",
               "exit-address-family", "no neighbor 10.0.0.1 fall-over bfd", "no bgp bestpath as-path multipath-relax"):
        assert s.feed(ln) == "", ln
    run = s.feed("do show running-config")
    assert "fall-over" not in run and "maximum-paths" not in run and "multipath-relax" not in run and " neighbor 10.0.0.1 remote-as" in run
    for ln in ("no router bgp 4200000000", "interface TwoHundredGigabitEthernet 0/5:1", "no bfd interval", "switchport", "exit",
               "no ip route 10.0.0.0 255.255.255.240 Null 0"):
        assert s.feed(ln) == "", ln
    s.feed("end")
    strip = lambda t: [ln for ln in t.splitlines() if not ln.startswith("Current configuration")]  # noqa: E731
    assert strip(s.feed("show running-config")) == strip(before)


def test_model_is_cached_per_generation_and_parses_config_text(bgp64):
    out, plan = bgp64
    m = lab(out, plan)
    first = m.bgp_model()
    assert m.bgp_model() is first
    show(m, "ZC-O001", "show ip route")  # shows do not change the configuration
    assert m.bgp_model() is first
    configure(m, "ZC-O001", ["interface Loopback 0", " description x", "exit"])
    assert m.bgp_model() is not first
    # the model reads running-config text (CRLF too), as verify does
    cfg = bgp.parse_config(show(m, "ZC-O001", "show running-config").replace("\n", "\r\n"))
    assert cfg.bgp.asn == plan["switches"][0]["asn"] and len(cfg.bgp.neighbors) == plan["sizing"]["S"]
    assert all(n.fall_over_bfd for n in cfg.bgp.neighbors.values()) and cfg.bgp.multipath_relax


# ---------------------------------------------------------------- over SSH
@pytest.mark.lab  # about 15 s: lab-64 pushed twice over SSH
def test_push_verify_clean_then_fabric_cable_removed_over_ssh(bgp64, tmp_path):
    from zcube_deploy.lab.server import lab_credentials, running_lab
    from zcube_deploy.push import Credentials, PushOptions, push_all, select_targets
    from zcube_deploy.verify.collect import collect

    out, plan = bgp64
    creds = Credentials(*lab_credentials())
    cable = next(c for c in plan["cables"] if c["kind"] == "fabric" and c["a"]["device"] == "ZC-O003")
    for faults, name in (({"cabling": []}, "clean"), ({"cabling": [{"remove": cable["id"]}]}, "removed")):
        with running_lab(plan, faults=faults, out_dir=tmp_path / name) as lb:
            kh = str(tmp_path / name / "known_hosts")
            rep = push_all(select_targets(plan, out, None, lb.endpoints), creds, PushOptions(concurrency=8, known_hosts=kh), tmp_path / name)
            assert rep["ok"], rep["summary"]
            obs, err = collect([(n, *lb.endpoints[n]) for n in sorted(lb.endpoints)], creds, kh, concurrency=8)
            assert not err
            findings = compare(plan, obs)
            states = [s["state"] for o in obs.values() for s in o["bgp"]["sessions"].values()]
            if name == "clean":
                assert findings == [] and len(states) == 2 * sum(c["kind"] == "fabric" for c in plan["cables"])
                assert set(states) == {"Established"}
            else:
                kinds = sorted((f["kind"], tuple(f["cables"])) for f in findings)
                assert kinds == [("bgp", (cable["id"],)), ("down", (cable["id"],))], [f["what"] for f in findings]
                b = next(f for f in findings if f["kind"] == "bgp")
                assert b["cause"] == "cabling" and b["refers_to"] == next(f["id"] for f in findings if f["kind"] == "down")
                assert states.count("Established") == len(states) - 2


def test_link_rule_is_the_labs(bgp64):
    """lab/bgp.py's port state equals what the lab's `show interface status` reports, faults included."""
    from zcube_deploy.lab.inject import apply_faults, load_faults

    out, plan = bgp64
    m = lab(out, plan)
    fab = [c for c in plan["cables"] if c["kind"] == "fabric"]
    faults = load_faults("random:7", plan, seed=3)
    faults["cabling"] += [{"remove": fab[0]["id"]}, {"down": fab[1]["b"]}]
    expected = apply_faults(m, faults)
    assert ("bgp", [fab[0]["id"]]) in [(e["kind"], e["cables"]) for e in expected]
    links = m.bgp_model().links
    n = 0
    for name, st in m.switches.items():
        status = {r["interface"]: r["status"] for r in parse("show interface status", show(m, name, "show interface status"))}
        for port, itf in st.interfaces.items():
            if itf.physical and not port.startswith("Mgmt"):
                assert ((name, port) in links.up) == (status[port] == "up"), (name, port)
                n += status[port] == "up"
    assert n > len(plan["cables"])  # most ports are up
    for c in fab[:2]:  # the removed cable and the forced-down one: both ends down
        for e in (c["a"], c["b"]):
            assert (e["device"], e["port"]) not in links.up


def test_recordings_without_bgp_outputs_give_no_bgp_findings(bgp64):
    """A recording made before verify collected BGP outputs: the sessions are not judged (no invented findings),
    and each switch says so (issue 23: not_checked, never a pass)."""
    out, plan = bgp64
    m = lab(out, plan)
    m.wiring.remove(next(c["id"] for c in plan["cables"] if c["kind"] == "fabric"))
    obs = {name: observe({cmd: show(m, name, cmd) for cmd in COMMANDS if "bgp" not in cmd and "bfd" not in cmd})
           for name in m.switches}
    assert all(o["bgp"] is None for o in obs.values())
    fs = compare(plan, obs)
    assert [f["kind"] for f in fs if f["kind"] != "not_checked"] == ["down"]
    assert sorted((f["ends"][0]["device"], *f["checks"]) for f in fs if f["kind"] == "not_checked") == \
        sorted(x for s in plan["switches"] for x in ((s["name"], "routes", "bgp"), (s["name"], "bfd")))


def test_bfd_not_up_on_an_established_session_is_a_bgp_finding(bgp64):
    out, plan = bgp64
    m = lab(out, plan)
    asn = {s["name"]: s["asn"] for s in plan["switches"]}
    i0, i1 = _peer(plan, "ZC-O005", 0), _peer(plan, "ZC-O005", 1)
    configure(m, "ZC-O005", [f"interface {i0['name']}", " no bfd interval", "exit",
                             f"router bgp {asn['ZC-O005']}", f" no neighbor {i1['peer']['address']} fall-over bfd", "exit"])
    model = m.bgp_model()
    assert {s.state for s in model.sessions["ZC-O005"]} == {"Established"}
    for i in (i0, i1):  # the far ends' BFD sessions stay down
        assert {b.neighbor: b.up for b in model.bfd[i["peer"]["device"]]}[i["address"]] is False
    fs = compare(plan, observed(m))
    assert sorted((f["kind"], f["cause"], f["cables"][0]) for f in fs) == [("bgp", "bfd", i0["cable"]), ("bgp", "bfd", i1["cable"])]
    why = {f["cables"][0]: f["what"] for f in fs}
    assert "has no BFD configured on the port" in why[i0["cable"]] and "BFD fall-over" in why[i1["cable"]]


def test_a_switch_without_bgp_answers_as_the_whole_labs_model_says(bgp64):
    """LabModel.routing answers a switch without `router bgp` from its own model (the simulator's ``alone``): its
    three routing outputs equal the whole lab model's for it, also while its former peers still name it; a switch
    with BGP keeps the whole model."""
    out, plan = bgp64
    m = lab(out, plan)
    asn = next(ln.split()[2] for ln in (out / "configs" / "ZC-O001.cfg").read_text().splitlines() if ln.startswith("router bgp "))
    configure(m, "ZC-O001", [f"no router bgp {asn}"])
    bgp = m.sim.bgp
    assert not bgp.speaks_bgp(m.switches["ZC-O001"]) and bgp.speaks_bgp(m.switches["ZC-E002"])
    assert m.routing(m.switches["ZC-E002"])[0] is m.bgp_model()
    whole = m.bgp_model()
    for cmd in ("show ip bgp summary", "show bfd neighbors", "show ip route"):
        mine = show(m, "ZC-O001", cmd)
        m.routing = lambda st: (whole, m.name_of(st))  # every switch from the whole lab's model
        try:
            assert show(m, "ZC-O001", cmd) == mine, cmd
        finally:
            del m.routing
    assert show(m, "ZC-O001", "show ip bgp summary") == "% BGP instance is not running."
    assert any(s.state != "Established" for ss in whole.sessions.values() for s in ss)  # its peers lost their sessions to it
