"""verify's observed-state check (verify/classify.py) on hand-written observation tables: no lab, no SSH.

A two-switch plan written out below (SW-O1 in rack R1, SW-E2 in rack R2, servers gpu1/gpu2, one fabric
cable F1), a clean observation table, and per test the few rows a real fault changes. The expected
findings (kinds, cables, instruction texts, fix operations) are written out by hand from what a
technician must do, not computed with the code under test.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
from pathlib import Path

import pytest

from zcube_deploy.lab.wiring import Wiring
from zcube_deploy.verify.classify import classify, summarize
from zcube_deploy.verify.observation import (
    Bgp,
    BgpConfig,
    Neighbour,
    Observation,
    Session,
)
from zcube_deploy.vocabulary import BgpCause, FaultKind, FindingKind, FixOp

ROOT = Path(__file__).resolve().parents[1]


def P(n: int) -> str:
    return f"TwoHundredGigabitEthernet 0/{n}"


UP, DOWN = True, False
ASN = {"SW-O1": 4200000001, "SW-E2": 4200000002}


def cable(cid, kind, a, b):
    return {"id": cid, "kind": kind, "a": {"device": a[0], "port": a[1]}, "b": {"device": b[0], "port": b[1]}}


def host_itf(port, cid, addr, server, nic, peer_addr):
    return {"name": port, "kind": "host", "cable": cid, "address": addr, "prefix_len": 31,
            "peer": {"device": server, "port": nic, "address": peer_addr}}


def fabric_itf(port, cid, addr, peer, peer_addr):
    return {"name": port, "kind": "fabric", "cable": cid, "address": addr, "prefix_len": 31,
            "peer": {"device": peer, "port": port, "address": peer_addr}}


def make_plan(mode: str = "static") -> dict:
    return {
        "cluster": {"name": "hand"},
        "routing": {"mode": mode, "maximum_paths": 1},
        "addressing": {"host_pool": "10.0.0.0/24", "fabric_pool": "10.200.0.0/24", "loopback_pool": "10.201.0.0/24"},
        "models": {"switch": {"mgmt_interface": "Mgmt 0"}},
        "settings": {"mgmt_prefix_len": 24},
        "switches": [
            {"name": "SW-O1", "rack": "R1", "u": 40, "mgmt_address": "172.16.0.11", "asn": ASN["SW-O1"], "host_block": "10.0.0.0/28",
             "loopback": "10.201.0.1",
             "interfaces": [host_itf(P(1), "H1", "10.0.0.0", "gpu1", "ens1", "10.0.0.1"),
                            host_itf(P(2), "H2", "10.0.0.2", "gpu2", "ens1", "10.0.0.3"),
                            fabric_itf(P(5), "F1", "10.200.0.0", "SW-E2", "10.200.0.1")],
             "routes": [{"prefix": "10.0.0.16/28", "next_hop": "10.200.0.1"}]},
            {"name": "SW-E2", "rack": "R2", "u": 40, "mgmt_address": "172.16.0.12", "asn": ASN["SW-E2"], "host_block": "10.0.0.16/28",
             "loopback": "10.201.0.2",
             "interfaces": [host_itf(P(1), "H3", "10.0.0.16", "gpu1", "ens2", "10.0.0.17"),
                            host_itf(P(2), "H4", "10.0.0.18", "gpu2", "ens2", "10.0.0.19"),
                            fabric_itf(P(5), "F1", "10.200.0.1", "SW-O1", "10.200.0.0")],
             "routes": [{"prefix": "10.0.0.0/28", "next_hop": "10.200.0.0"}]},
        ],
        "servers": [{"name": "gpu1", "rack": "R1", "u": 2, "nics": [{"port": "ens1"}, {"port": "ens2"}]},
                    {"name": "gpu2", "rack": "R1", "u": 4, "nics": [{"port": "ens1"}, {"port": "ens2"}]}],
        "cables": [cable("H1", "host", ("gpu1", "ens1"), ("SW-O1", P(1))), cable("H2", "host", ("gpu2", "ens1"), ("SW-O1", P(2))),
                   cable("H3", "host", ("gpu1", "ens2"), ("SW-E2", P(1))), cable("H4", "host", ("gpu2", "ens2"), ("SW-E2", P(2))),
                   cable("F1", "fabric", ("SW-O1", P(5)), ("SW-E2", P(5)))],
    }


# the clean observation table: switch -> port -> (link, neighbours as "system port")
CLEAN = {
    "SW-O1": {P(1): (UP, ["gpu1 ens1"]), P(2): (UP, ["gpu2 ens1"]), P(3): (DOWN, []), P(5): (UP, ["SW-E2 " + P(5)])},
    "SW-E2": {P(1): (UP, ["gpu1 ens2"]), P(2): (UP, ["gpu2 ens2"]), P(3): (DOWN, []), P(5): (UP, ["SW-O1 " + P(5)])},
}
STATIC = {"SW-O1": [("10.0.0.16/28", "10.200.0.1"), ("0.0.0.0/0", "172.16.0.1")],
          "SW-E2": [("10.0.0.0/28", "10.200.0.0"), ("0.0.0.0/0", "172.16.0.1")]}
MGMT = {"SW-O1": {"Mgmt 0": ("172.16.0.11/24",)}, "SW-E2": {"Mgmt 0": ("172.16.0.12/24",)}}
B_ROUTES = {"SW-O1": {"10.0.0.16/28": ("10.200.0.1",), "10.201.0.2/32": ("10.200.0.1",)},
            "SW-E2": {"10.0.0.0/28": ("10.200.0.0",), "10.201.0.1/32": ("10.200.0.0",)}}
PEER = {"SW-O1": ("10.200.0.1", "SW-E2"), "SW-E2": ("10.200.0.0", "SW-O1")}


def bgp_state(sw, state="Established", asn=None, bfd="Up", bfd_ports=None, fall_over=True):
    addr, peer = PEER[sw]
    bfd_ports = (P(5),) if bfd_ports is None else bfd_ports
    return Bgp(local_as=asn or ASN[sw], sessions={addr: Session(state, ASN[peer])}, bfd={addr: bfd},
               config=BgpConfig(asn or ASN[sw], {addr: ASN[peer]}, {P(5): PEER[peer][0]}, tuple(bfd_ports),
                                (addr,) if fall_over else ()))


def observe(ports=None, hostname=None, static=None, addresses=None, bgp=None, b_routes=None, unavailable=None,
            shut=None, silent=()) -> dict[str, Observation]:
    """The clean table with overrides: ports={switch: {port: (link, [neighbours])}}, hostname={switch: name}, ...;
    every port reads not shut in its config but shut={switch: [ports]}; ``silent``: switches whose reader
    does not tell whether a port is shut."""
    table = copy.deepcopy(CLEAN)
    for sw, rows in (ports or {}).items():
        table[sw].update(rows)
    out = {}
    for sw, rows in table.items():
        out[sw] = Observation(
            hostname=(hostname or {}).get(sw, sw),
            up={p: up for p, (up, _) in rows.items()},
            lldp={p: tuple(Neighbour(*n.split(" ", 1)) for n in ns) for p, (_, ns) in rows.items() if ns},
            addresses=(addresses or MGMT)[sw],
            static_routes=tuple((static or STATIC)[sw]),
            bgp_routes=(b_routes or {}).get(sw, {}) if bgp else {},
            bgp=(bgp or {}).get(sw),
            unavailable=(unavailable or {}).get(sw, {}),
            shut={} if sw in silent else {p: p in (shut or {}).get(sw, ()) for p in rows},
        )
    return out


def fid(kind, *parts):  # the finding ID, computed here from its documented definition
    return "V" + hashlib.sha1("|".join((kind, *sorted(parts))).encode()).hexdigest()[:10]


def end(device, port):
    where = {"SW-O1": ("R1", 40), "SW-E2": ("R2", 40), "gpu1": ("R1", 2), "gpu2": ("R1", 4)}
    return {"device": device, "port": port, "rack": where[device][0], "u": where[device][1]}


def move(cid, device, port):
    return {"op": "move", "cable": cid, "end": "b", "to": {"device": device, "port": port}}


def connect(cid):
    c = {x["id"]: x for x in make_plan()["cables"]}[cid]
    return {"op": "connect", "cable": cid, "a": c["a"], "b": c["b"]}


def only(findings):
    assert len(findings) == 1, [f["what"] for f in findings]
    return findings[0]


# ---------------------------------------------------------------- clean
def test_clean_table_has_no_finding():
    assert classify(make_plan(), observe()) == []
    assert classify(make_plan("bgp"), observe(bgp={s: bgp_state(s) for s in ASN}, b_routes=B_ROUTES)) == []


def test_plain_dicts_read_like_typed_observations():
    """The dict verify/observe.py produces gives the same findings as the typed observation."""
    obs = observe(ports={"SW-O1": {P(1): (UP, ["gpu2 ens1"]), P(2): (UP, ["gpu1 ens1"])}})
    as_dicts = {sw: {"hostname": o.hostname, "interfaces": {p: {"up": u} for p, u in o.up.items()},
                     "lldp": {p: [{"system_name": n.system_name, "port_id": n.port_id, "port_id_type": "Interface name",
                                   "chassis_id": "", "management_address": ""} for n in ns] for p, ns in o.lldp.items()},
                     "addresses": {k: list(v) for k, v in o.addresses.items()}, "static_routes": [list(r) for r in o.static_routes],
                     "bgp": None, "bgp_routes": {}} for sw, o in obs.items()}
    assert classify(make_plan(), as_dicts) == classify(make_plan(), obs) != []


# ---------------------------------------------------------------- cabling kinds
def test_swapped_pair_is_one_finding_with_both_moves():
    f = only(classify(make_plan(), observe(ports={"SW-O1": {P(1): (UP, ["gpu2 ens1"]), P(2): (UP, ["gpu1 ens1"])}})))
    assert f["kind"] == "swapped" and f["cables"] == ["H1", "H2"] and f["id"] == fid("swapped", "H1", "H2")
    assert f["ends"] == [end("SW-O1", P(1)), end("SW-O1", P(2))]
    assert f["instruction"] == (f"swap cables H1 and H2: at rack R1 U40 plug H1 (gpu1 ens1) into SW-O1 {P(1)} "
                                f"and at rack R1 U40 plug H2 (gpu2 ens1) into SW-O1 {P(2)}")
    assert f["fix"] == [move("H1", "SW-O1", P(1)), move("H2", "SW-O1", P(2))]


def test_cable_in_an_unused_port_moves_home():
    f = only(classify(make_plan(), observe(ports={"SW-O1": {P(1): (DOWN, []), P(3): (UP, ["gpu1 ens1"])}})))
    assert (f["kind"], f["cables"]) == ("wrong_peer", ["H1"])
    assert f["instruction"] == f"move cable H1 at rack R1 U40 from SW-O1 {P(3)} to SW-O1 {P(1)}"
    assert f["fix"] == [move("H1", "SW-O1", P(1))]
    assert f["ends"] == [end("SW-O1", P(3)), end("SW-O1", P(1)), end("gpu1", "ens1")]


def test_cable_in_another_cables_port_moves_home_and_the_displaced_one_is_missing():
    fs = classify(make_plan(), observe(ports={"SW-O1": {P(1): (DOWN, []), P(2): (UP, ["gpu1 ens1"])}}))
    assert [(f["kind"], f["cables"]) for f in fs] == [("missing", ["H2"]), ("wrong_peer", ["H1"])]  # same port: kind order
    missing, wrong = fs
    assert wrong["instruction"] == f"move cable H1 at rack R1 U40 from SW-O1 {P(2)} to SW-O1 {P(1)}"
    assert wrong["fix"] == [move("H1", "SW-O1", P(1))]
    assert missing["instruction"] == f"after moving cable H1 away, connect cable H2: gpu2 ens1 (rack R1 U4) to SW-O1 {P(2)} (rack R1 U40)"
    assert missing["fix"] == [connect("H2")]


def test_cable_moved_to_another_switch_names_both_racks():
    fs = classify(make_plan(), observe(ports={"SW-O1": {P(2): (UP, ["gpu1 ens2"])}, "SW-E2": {P(1): (DOWN, [])}}))
    wrong = next(f for f in fs if f["kind"] == "wrong_peer")
    assert wrong["cables"] == ["H3"]
    assert wrong["instruction"] == f"move cable H3 at rack R1 U40 from SW-O1 {P(2)} to SW-E2 {P(1)} (rack R2 U40)"
    assert wrong["fix"] == [move("H3", "SW-E2", P(1))]
    assert {(f["kind"], tuple(f["cables"])) for f in fs} == {("wrong_peer", ("H3",)), ("missing", ("H2",))}


def test_a_planned_device_on_a_port_that_ends_no_cable_is_a_wrong_peer_and_the_own_cable_missing():
    """SW-O1 P1 sees gpu1 ens3: gpu1 is planned, ens3 ends no planned cable (a spare NIC). Unplug that
    cable at P1 (a wrong_peer of the port) and connect H1 (missing: its far end gpu1 ens1 is nowhere)."""
    fs = classify(make_plan(), observe(ports={"SW-O1": {P(1): (UP, ["gpu1 ens3"])}}))
    assert [(f["kind"], f["cables"]) for f in fs] == [("missing", ["H1"]), ("wrong_peer", [])]
    missing, wrong = fs
    assert wrong["id"] == fid("wrong_peer", f"SW-O1 {P(1)}")
    assert wrong["ends"] == [end("SW-O1", P(1)), end("gpu1", "ens1"), end("gpu1", "ens3")]
    assert wrong["what"] == f"SW-O1 {P(1)} should see gpu1 ens1 (cable H1) but sees gpu1 ens3, a port that ends no planned cable"
    assert wrong["instruction"] == (f"at rack R1 U40: unplug the cable in SW-O1 {P(1)} (its other end is at gpu1 ens3, rack R1 U2); "
                                    "cable H1 to gpu1 ens1 belongs there")
    assert wrong["fix"] == [{"op": "unplug", "device": "SW-O1", "port": P(1)}]
    assert missing["instruction"] == (f"after unplugging it, connect cable H1: gpu1 ens1 (rack R1 U2) to SW-O1 {P(1)} (rack R1 U40)")
    assert missing["fix"] == [connect("H1")] and missing["id"] == fid("missing", "H1")


def test_a_cable_from_an_unused_switch_port_is_unplugged_once():
    """SW-O1 P1 and the unused SW-E2 P3 are cabled together: one wrong_peer (unplug at P1) and H1 missing;
    SW-E2 P3 adds nothing (the same cable)."""
    fs = classify(make_plan(), observe(ports={"SW-O1": {P(1): (UP, ["SW-E2 " + P(3)])}, "SW-E2": {P(3): (UP, ["SW-O1 " + P(1)])}}))
    assert [(f["kind"], f["cables"], f["ends"][0]) for f in fs] == [("missing", ["H1"], end("SW-O1", P(1))),
                                                                    ("wrong_peer", [], end("SW-O1", P(1)))]
    assert fs[1]["fix"] == [{"op": "unplug", "device": "SW-O1", "port": P(1)}]


def test_a_cable_from_an_unused_switch_port_with_the_own_cable_elsewhere():
    """SW-O1 P1 is cabled to the unused SW-E2 P3, and H1 (gpu1 ens1) is in the unused SW-O1 P4: unplug at P1,
    move H1 from P4 home; SW-E2 P3 repeats neither (it is the unplugged cable's other end)."""
    fs = classify(make_plan(), observe(ports={"SW-O1": {P(1): (UP, ["SW-E2 " + P(3)]), P(4): (UP, ["gpu1 ens1"])},
                                              "SW-E2": {P(3): (UP, ["SW-O1 " + P(1)])}}))
    assert [(f["kind"], f["cables"], f["ends"][0]["device"], f["ends"][0]["port"]) for f in fs] == [
        ("wrong_peer", [], "SW-O1", P(1)), ("wrong_peer", ["H1"], "SW-O1", P(4))]
    assert fs[1]["fix"] == [move("H1", "SW-O1", P(1))]


def test_off_plan_neighbour_with_the_own_cable_elsewhere_moves_it_home():
    """SW-O1 P1 sees gpu1 ens3 and H1's far end gpu1 ens1 is in the unused SW-O1 P3: unplug P1, move H1 home
    (no missing: H1 is found)."""
    fs = classify(make_plan(), observe(ports={"SW-O1": {P(1): (UP, ["gpu1 ens3"]), P(3): (UP, ["gpu1 ens1"])}}))
    assert sorted((f["kind"], tuple(f["cables"]), f["ends"][0]["port"]) for f in fs) == [("wrong_peer", (), P(1)),
                                                                                        ("wrong_peer", ("H1",), P(3))]
    assert next(f for f in fs if f["cables"])["fix"] == [move("H1", "SW-O1", P(1))]
    assert len({f["id"] for f in fs}) == 2


def test_link_down():
    f = only(classify(make_plan(), observe(ports={"SW-O1": {P(1): (DOWN, [])}})))
    assert (f["kind"], f["cables"], f["observed"], f["cause"]) == ("down", ["H1"], "link down", "link")
    assert f["instruction"] == (f"check cable H1 between SW-O1 {P(1)} (rack R1 U40) and gpu1 ens1 (rack R1 U2): "
                                "install it if absent, else reseat it and replace the cable or optics")
    assert f["fix"] == [{"op": "reseat", "device": "SW-O1", "port": P(1)}, connect("H1")]


def test_port_shut_in_config_is_no_cable_work():
    """A port the switch says is shut in its config: cause shut, a push (audit's port_shut), no physical fix
    (`zcube lab fix` would count a reseat it cannot make good)."""
    f = only(classify(make_plan(), observe(ports={"SW-O1": {P(1): (DOWN, [])}}, shut={"SW-O1": [P(1)]})))
    assert (f["kind"], f["cables"], f["cause"], f["fix"], f["observed"]) == ("down", ["H1"], "shut", [], f"shut: SW-O1 {P(1)}")
    assert f["instruction"] == (f"no cable work: SW-O1 {P(1)} is shut in its running config (zcube audit: port_shut); "
                                "push SW-O1's config (zcube push --only SW-O1) or bring the port up by hand")
    assert "cable H1" in f["what"] and "reseat" not in f["instruction"]


def test_far_end_shut_names_the_far_switch():
    """A switch-to-switch cable: SW-E2 reads down (not shut) because SW-O1 shut its end; SW-E2 sorts after
    SW-O1 but the finding, from whichever end, names the shut end."""
    for order in (("SW-O1", "SW-E2"), ("SW-E2", "SW-O1")):
        obs = observe(ports={"SW-O1": {P(5): (DOWN, [])}, "SW-E2": {P(5): (DOWN, [])}}, shut={"SW-O1": [P(5)]})
        fs = [f for f in classify(make_plan(), {k: obs[k] for k in order}) if f["kind"] == "down"]
        assert [(f["cables"], f["cause"], f["fix"]) for f in fs] == [(["F1"], "shut", [])]
        assert "push SW-O1's config (zcube push --only SW-O1)" in fs[0]["instruction"]


def test_down_reader_silent_names_both_causes():
    """A platform whose reader does not say whether a port is shut: never a confident cable instruction."""
    for silent in (("SW-O1",), ("SW-E2",)):  # this end's reader, or (a fabric cable) the far end's
        port, cid = (P(1), "H1") if silent == ("SW-O1",) else (P(5), "F1")
        ports = {"SW-O1": {port: (DOWN, [])}} | ({"SW-E2": {P(5): (DOWN, [])}} if cid == "F1" else {})
        f = next(f for f in classify(make_plan(), observe(ports=ports, silent=silent)) if f["kind"] == "down")
        assert (f["cables"], f["cause"]) == ([cid], "unknown")
        assert "do not say whether an end is shut" in f["instruction"] and "zcube push --only" in f["instruction"]
        assert "reseat it and replace the cable or optics" in f["instruction"]


def test_up_without_neighbour_is_missing_and_a_silent_server_is_one_finding():
    f = only(classify(make_plan(), observe(ports={"SW-O1": {P(1): (UP, [])}})))
    assert (f["kind"], f["cables"], f["fix"]) == ("missing", ["H1"], [{"op": "lldp_on", "server": "gpu1"}])
    f = only(classify(make_plan(), observe(ports={"SW-O1": {P(1): (UP, [])}, "SW-E2": {P(1): (UP, [])}})))
    assert (f["kind"], f["cables"], f["ends"][0]) == ("missing", ["H1", "H3"], end("gpu1", ""))
    assert f["instruction"] == "at rack R1 U2: start the LLDP agent (lldpd) on gpu1"
    assert f["what"] == "2 switch ports that should see gpu1 are up but have no LLDP neighbour (all of its ports)"


def test_a_neighbour_not_in_the_plan_is_a_wrong_peer_to_trace():
    f = only(classify(make_plan(), observe(ports={"SW-O1": {P(1): (UP, ["gpu1-spare ens1"])}})))
    assert (f["kind"], f["cables"], f["fix"]) == ("wrong_peer", ["H1"], [{"op": "fix_hostname", "cable": "H1"}])
    assert f["instruction"].startswith(f"at rack R1 U40: trace cable H1 from SW-O1 {P(1)}; it must end at gpu1 ens1 (rack R1 U2)")


def test_two_neighbours_on_one_port_is_a_duplicate():
    f = only(classify(make_plan(), observe(ports={"SW-O1": {P(1): (UP, ["gpu1 ens1", "stray eth0"])}})))
    assert (f["kind"], f["cables"]) == ("duplicate", ["H1"])
    assert f["instruction"] == f"at rack R1 U40 on SW-O1 {P(1)}: keep cable H1 to gpu1 ens1 and remove the other cable(s)"
    assert f["fix"] == [{"op": "unplug_except", "device": "SW-O1", "port": P(1), "keep": "H1"}]


def test_a_neighbour_on_an_unplanned_port_is_unexpected():
    f = only(classify(make_plan(), observe(ports={"SW-E2": {P(3): (UP, ["stray eth0"])}})))
    assert (f["kind"], f["cables"], f["ends"][0]) == ("unexpected", [], end("SW-E2", P(3)))
    assert f["instruction"] == f"remove the unplanned cable at rack R2 U40 from SW-E2 {P(3)} (its other end is at stray eth0)"
    assert f["fix"] == [{"op": "unplug", "device": "SW-E2", "port": P(3)}]
    assert f["id"] == fid("unexpected", f"SW-E2 {P(3)}")


def test_a_cable_between_two_unplanned_ports_is_one_unexpected_finding():
    """Seen from both of its ends, an extra cable between two spare switch ports is one finding, not two."""
    obs = observe(ports={"SW-O1": {P(3): (UP, ["SW-E2 " + P(3)])}, "SW-E2": {P(3): (UP, ["SW-O1 " + P(3)])}})
    f = only(classify(make_plan(), obs))
    assert (f["kind"], f["ends"][0]["device"], f["fix"]) == ("unexpected", "SW-E2", [{"op": "unplug", "device": "SW-E2", "port": P(3)}])


def test_switches_sharing_a_default_hostname_are_told_apart_by_their_management_address():
    """Both switches still run as 'Ruijie' (not unique: no alias): their LLDP management addresses say which is
    which, so the fabric cable is fine and the only findings are the two hostnames."""
    obs = observe(hostname={"SW-O1": "Ruijie", "SW-E2": "Ruijie"})
    for me, peer in (("SW-O1", "SW-E2"), ("SW-E2", "SW-O1")):
        lldp = dict(obs[me].lldp)
        lldp[P(5)] = (Neighbour("Ruijie", P(5), "Interface name", "", {"SW-O1": "172.16.0.11", "SW-E2": "172.16.0.12"}[peer]),)
        obs[me] = Observation(obs[me].hostname, obs[me].up, lldp, obs[me].addresses, obs[me].static_routes)
    assert [(f["kind"], f["ends"][0]["device"]) for f in classify(make_plan(), obs)] == [("hostname", "SW-O1"), ("hostname", "SW-E2")]


def test_findings_are_sorted_top_of_the_rack_first():
    """In rack R1, SW-O1's finding (U40) comes before gpu1's (U2)."""
    obs = observe(hostname={"SW-O1": "Ruijie"}, ports={"SW-O1": {P(1): (UP, [])}, "SW-E2": {P(1): (UP, [])}})
    assert [(f["kind"], f["ends"][0]["device"]) for f in classify(make_plan(), obs)] == [("hostname", "SW-O1"), ("missing", "gpu1")]


def test_a_b_route_with_fewer_equal_cost_next_hops_than_planned():
    """Two parallel fabric links and maximum_paths 2: a prefix installed over one of them only is a route finding."""
    plan = make_plan("bgp")
    plan["routing"]["maximum_paths"] = 2
    o1, e2 = plan["switches"]
    o1["interfaces"].append(fabric_itf(P(6), "F2", "10.200.0.2", "SW-E2", "10.200.0.3"))
    e2["interfaces"].append(fabric_itf(P(6), "F2", "10.200.0.3", "SW-O1", "10.200.0.2"))
    plan["cables"].append(cable("F2", "fabric", ("SW-O1", P(6)), ("SW-E2", P(6))))
    peers = {"SW-O1": ("10.200.0.1", "10.200.0.3"), "SW-E2": ("10.200.0.0", "10.200.0.2")}
    other = {"SW-O1": "SW-E2", "SW-E2": "SW-O1"}
    bgp = {sw: Bgp(ASN[sw], {a: Session("Established", ASN[other[sw]]) for a in peers[sw]}, {a: "Up" for a in peers[sw]},
                   BgpConfig(ASN[sw], {a: ASN[other[sw]] for a in peers[sw]}, {}, (P(5), P(6)), peers[sw])) for sw in ASN}
    both = {sw: {p: peers[sw] for p in r} for sw, r in B_ROUTES.items()}
    ports = {sw: {P(6): (UP, [f"{other[sw]} {P(6)}"])} for sw in ASN}
    assert classify(plan, observe(ports=ports, bgp=bgp, b_routes=both)) == []
    one = {**both, "SW-O1": {**both["SW-O1"], "10.0.0.16/28": ("10.200.0.1",)}}
    f = only(classify(plan, observe(ports=ports, bgp=bgp, b_routes=one)))
    assert (f["kind"], f["routes_wrong"]) == ("route", ["10.0.0.16/28"])


# ---------------------------------------------------------------- per switch kinds
def test_hostname_and_a_renamed_switch_does_not_cascade():
    """SW-O1 runs as 'Ruijie': one hostname finding; SW-E2 seeing 'Ruijie' on the fabric port is not a wrong peer."""
    obs = observe(hostname={"SW-O1": "Ruijie"}, ports={"SW-E2": {P(5): (UP, ["Ruijie " + P(5)])}})
    f = only(classify(make_plan(), obs))
    assert (f["kind"], f["expected"], f["observed"]) == ("hostname", "SW-O1", "Ruijie")
    assert f["instruction"] == "push the planned config to SW-O1 (zcube push --only SW-O1) so its hostname is SW-O1"


def test_management_address():
    f = only(classify(make_plan(), observe(addresses={**MGMT, "SW-O1": {"Mgmt 0": ("172.16.0.99/24",)}})))
    assert (f["kind"], f["expected"], f["observed"]) == ("management", "172.16.0.11/24", ["172.16.0.99/24"])
    assert f["what"] == "SW-O1 Mgmt 0 has 172.16.0.99/24; the plan gives 172.16.0.11/24"
    # a running config without addresses (collected): the management interface has none
    fs = classify(make_plan(), observe(addresses={"SW-O1": {}, "SW-E2": {}}))
    assert [(f["kind"], f["observed"]) for f in fs] == [("management", []), ("management", [])]


NO_RUN = "`show running-config` was not recorded"


def test_a_skipped_management_check_is_said_in_the_summary_and_the_report(tmp_path):
    """Not checking the management address is visible: a not_checked finding, which switches, how many, and why."""
    from openpyxl import load_workbook

    from zcube_deploy.verify.classify import check, notes
    from zcube_deploy.verify.report import write_reports

    findings, skipped = check(make_plan(), observe(addresses={**MGMT, "SW-E2": {}}, unavailable={"SW-E2": {"addresses": NO_RUN}}))
    f = only(findings)
    assert (f["kind"], f["checks"], f["reason"], f["ends"], f["cables"], f["fix"]) == \
        ("not_checked", ["management"], NO_RUN, [end("SW-E2", "")], [], [])
    assert f["what"] == f"the management check of SW-E2 could not run: {NO_RUN}" and f["id"] == fid("not_checked", "SW-E2", "management")
    s = summarize(findings, skipped)
    assert s["not_checked"] == {"management": [{"reason": NO_RUN, "switches": 1, "names": ["SW-E2"]}]}
    assert s["by_kind"] == {"not_checked": 1}
    assert notes(s) == [f"the management check was not run on 1 switch (SW-E2): {NO_RUN}"]
    plan = make_plan()
    del plan["settings"]["mgmt_prefix_len"]
    findings, skipped = check(plan, observe())
    assert [(f["kind"], f["ends"][0]["device"], f["checks"]) for f in findings] == \
        [("not_checked", "SW-O1", ["management"]), ("not_checked", "SW-E2", ["management"])]
    s = summarize(findings, skipped)
    assert [(r["switches"], r["names"], r["reason"].split(" (")[0]) for r in s["not_checked"]["management"]] == \
        [(2, ["SW-E2", "SW-O1"], "the plan has no management interface or prefix length")]
    write_reports(findings, s, {}, tmp_path, {"cluster": "hand"})
    assert json.loads((tmp_path / "verify.json").read_text())["summary"]["not_checked"] == s["not_checked"]
    wb = load_workbook(tmp_path / "verify.xlsx")
    assert [r[0] for r in wb["Notes"].iter_rows(values_only=True)] == ["Not checked", *notes(s)]
    # checked everywhere: no note, and the summary is as before
    assert "not_checked" not in summarize(*check(make_plan(), observe()))
    write_reports([], summarize([]), {}, tmp_path, {"cluster": "hand"})
    assert load_workbook(tmp_path / "verify.xlsx").sheetnames == ["Fixes"]


def _not_checked(findings):
    return [(f["ends"][0]["device"], f["checks"], f["reason"]) for f in findings if f["kind"] == "not_checked"]


def test_a_check_without_its_data_is_not_checked_never_passed():
    """Each per-switch check, its data not collected on SW-O1 while that data would show a fault: one not_checked
    finding naming the check and why, and no finding (true or invented) from the missing data."""
    why = "`x` was not recorded"
    nc = {"SW-O1": {"hostname": why}}
    assert _not_checked(classify(make_plan(), observe(hostname={"SW-O1": "Ruijie"}, unavailable=nc))) == [("SW-O1", ["hostname"], why)]
    swapped = {"SW-O1": {P(1): (UP, ["gpu2 ens1"]), P(2): (UP, ["gpu1 ens1"])}}
    for fact in ("lldp", "link"):
        fs = classify(make_plan(), observe(ports=swapped, unavailable={"SW-O1": {fact: why}}))
        assert [f["kind"] for f in fs] == ["not_checked"] and _not_checked(fs) == [("SW-O1", ["cabling"], why)]
    # a switch without link state: its routes are all compared (none taken as over a down link)
    fs = classify(make_plan(), observe(ports={"SW-O1": {P(5): (DOWN, [])}}, static={**STATIC, "SW-O1": STATIC["SW-O1"][1:]},
                                      unavailable={"SW-O1": {"link": why}}))
    assert sorted(f["kind"] for f in fs) == ["not_checked", "route"]
    fs = classify(make_plan(), observe(static={**STATIC, "SW-O1": []}, unavailable={"SW-O1": {"routes": why}}))
    assert [f["kind"] for f in fs] == ["not_checked"] and _not_checked(fs) == [("SW-O1", ["routes"], why)]
    fs = classify(make_plan(), observe(addresses={**MGMT, "SW-O1": {}}, unavailable={"SW-O1": {"addresses": why}}))
    assert _not_checked(fs) == [("SW-O1", ["management"], why)] and len(fs) == 1


def test_bgp_checks_without_session_or_bfd_state_are_not_checked():
    why = "`y` was not recorded"
    # SW-O1 reports no sessions: the session is judged from SW-E2 alone (Established), SW-O1's routes are not compared
    fs = classify(make_plan("bgp"), observe(bgp={s: bgp_state(s) for s in ASN}, b_routes={**B_ROUTES, "SW-O1": {}},
                                           unavailable={"SW-O1": {"bgp_sessions": why}}))
    assert [f["kind"] for f in fs] == ["not_checked"] and _not_checked(fs) == [("SW-O1", ["routes", "bgp"], why)]
    # no session state anywhere (bgp None): every switch says so; nothing is Established, nothing is invented
    fs = classify(make_plan("bgp"), observe(b_routes=B_ROUTES))
    assert _not_checked(fs) == [("SW-O1", ["routes", "bgp"], "no BGP session state was observed"),
                                ("SW-E2", ["routes", "bgp"], "no BGP session state was observed")] and len(fs) == 2
    # SW-O1's BFD not collected (its table would say Down): no bfd finding from it, one not_checked
    bgp = {s: bgp_state(s) for s in ASN} | {"SW-O1": bgp_state("SW-O1", bfd="Down")}
    fs = classify(make_plan("bgp"), observe(bgp=bgp, b_routes=B_ROUTES, unavailable={"SW-O1": {"bfd": why}}))
    assert [f["kind"] for f in fs] == ["not_checked"] and _not_checked(fs) == [("SW-O1", ["bfd"], why)]
    assert [f["cause"] for f in classify(make_plan("bgp"), observe(bgp=bgp, b_routes=B_ROUTES))] == ["bfd"]
    # a session down whose ends' configurations were not read: cause unknown, said so (not "configured as planned")
    down = {s: bgp_state(s, state="Active") for s in ASN}
    fs = classify(make_plan("bgp"), observe(bgp=down, b_routes={"SW-O1": {}, "SW-E2": {}},
                                           unavailable={s: {"bgp_config": why} for s in ASN}))
    f = next(f for f in fs if f["kind"] == "bgp")
    assert f["cause"] == "unknown" and "was not read: the cause is not known" in f["what"]


def test_missing_and_unplanned_static_routes():
    static = {**STATIC, "SW-O1": [("10.0.0.32/28", "10.200.0.1"), ("0.0.0.0/0", "172.16.0.1")]}
    f = only(classify(make_plan(), observe(static=static)))
    assert (f["kind"], f["routes_missing"], f["routes_extra"]) == ("route", [["10.0.0.16/28", "10.200.0.1"]], [["10.0.0.32/28", "10.200.0.1"]])
    assert f["what"] == "SW-O1: 1 planned static routes not installed, 1 unplanned installed (e.g. 10.0.0.16/28 via 10.200.0.1)"


@pytest.mark.parametrize("mode", ["static", "bgp"])
def test_expected_routes_come_from_the_forwarding_interface(mode, monkeypatch):
    """Both routing modes read the plan's forwarding state through topology/forwarding.py's switch_tables
    (one source of truth): whatever it says SW-O1 should install is what verify expects."""
    from zcube_deploy.topology import forwarding

    real, calls = forwarding.switch_tables, []

    def spy(routing, switches, *a, **k):
        calls.append(routing["mode"])
        tables = real(routing, switches, *a, **k)
        if "SW-O1" in tables:  # the interface says SW-O1 also forwards 10.0.0.48/28 via SW-E2
            e = forwarding.Entry(0x0A000030, 28, (0x0AC80001,), tables["SW-O1"][0].source)
            tables = {**tables, "SW-O1": [*tables["SW-O1"], e]}
        return tables

    monkeypatch.setattr(forwarding, "switch_tables", spy)
    if mode == "static":
        f = only(classify(make_plan(), observe()))
        assert f["routes_missing"] == [["10.0.0.48/28", "10.200.0.1"]]
    else:
        f = only(classify(make_plan("bgp"), observe(bgp={s: bgp_state(s) for s in ASN}, b_routes=B_ROUTES)))
        assert f["routes_missing"] == ["10.0.0.48/28"]
    assert f["kind"] == "route" and f["ends"][0]["device"] == "SW-O1" and calls == [mode]


def test_a_route_over_a_down_fabric_link_is_the_links_finding_only():
    static = {"SW-O1": [("0.0.0.0/0", "172.16.0.1")], "SW-E2": [("0.0.0.0/0", "172.16.0.1")]}
    fs = classify(make_plan(), observe(static=static, ports={"SW-O1": {P(5): (DOWN, [])}, "SW-E2": {P(5): (DOWN, [])}}))
    assert [(f["kind"], f["cables"]) for f in fs] == [("down", ["F1"])]


# ---------------------------------------------------------------- mode bgp
def test_bgp_session_down_because_of_a_cable_refers_to_the_cable_finding():
    obs = observe(ports={"SW-O1": {P(5): (DOWN, [])}, "SW-E2": {P(5): (DOWN, [])}},
                  bgp={s: bgp_state(s, state="Active") for s in ASN}, b_routes={})
    fs = classify(make_plan("bgp"), obs)
    assert sorted((f["kind"], tuple(f["cables"])) for f in fs) == [("bgp", ("F1",)), ("down", ("F1",))]
    down = next(f for f in fs if f["kind"] == "down")
    b = next(f for f in fs if f["kind"] == "bgp")
    assert (b["cause"], b["refers_to"]) == ("cabling", down["id"])
    assert b["instruction"] == f"fix finding {down['id']} first; the session comes up with the link"


def test_bgp_session_down_with_a_wrong_asn():
    obs = observe(bgp={"SW-O1": bgp_state("SW-O1", state="Active"), "SW-E2": bgp_state("SW-E2", state="Active", asn=4200000099)})
    f = only(classify(make_plan("bgp"), obs))
    assert (f["kind"], f["cause"], f["cables"]) == ("bgp", "wrong_asn", ["F1"])
    assert f["what"].endswith("SW-E2 runs AS 4200000099; the plan gives it AS 4200000002")
    assert f["instruction"] == "push the planned config to SW-E2 (zcube push --only SW-E2): its AS numbers differ from the plan"


def test_bgp_established_without_bfd():
    obs = observe(bgp={"SW-O1": bgp_state("SW-O1", bfd="Down", bfd_ports=()), "SW-E2": bgp_state("SW-E2", bfd="Down")}, b_routes=B_ROUTES)
    f = only(classify(make_plan("bgp"), obs))
    assert (f["kind"], f["cause"], f["expected"]) == ("bgp", "bfd", "Established, BFD Up")
    assert f["what"].endswith(f"is Established but its BFD is not Up: SW-O1 {P(5)} has no BFD configured on the port")


def test_missing_b_route():
    routes = {**B_ROUTES, "SW-O1": {"10.0.0.16/28": ("10.200.0.1",)}}
    f = only(classify(make_plan("bgp"), observe(bgp={s: bgp_state(s) for s in ASN}, b_routes=routes)))
    assert (f["kind"], f["routes_missing"]) == ("route", ["10.201.0.2/32"])
    assert f["what"] == ("SW-O1: 1 planned prefixes without a B route, 0 with other next hops than the shortest AS paths of the plan, "
                         "0 unplanned (e.g. 10.201.0.2/32: no B route)")


# ---------------------------------------------------------------- reports and the vocabulary
def test_scope_and_summary():
    obs = observe(ports={"SW-O1": {P(1): (DOWN, [])}, "SW-E2": {P(3): (UP, ["stray eth0"])}})
    assert [f["kind"] for f in classify(make_plan(), obs, {"SW-E2"})] == ["unexpected"]
    s = summarize(classify(make_plan(), obs))
    assert s == {"findings": 2, "by_kind": {"down": 1, "unexpected": 1}, "worst_racks": [("R1", 1), ("R2", 1)]}
    # the kinds are enum members and print as their plain strings
    assert json.dumps(s["by_kind"]) == '{"down": 1, "unexpected": 1}' and f"{FindingKind.DOWN}" == "down"


def test_every_fix_op_is_applied_by_the_lab_wiring():
    plan = make_plan()
    ops = {FixOp.MOVE: move("H1", "SW-O1", P(3)), FixOp.CONNECT: connect("H2"), FixOp.REMOVE: {"op": "remove", "cable": "H2"},
           FixOp.RESEAT: {"op": "reseat", "device": "SW-O1", "port": P(1)}, FixOp.LLDP_ON: {"op": "lldp_on", "server": "gpu1"},
           FixOp.FIX_HOSTNAME: {"op": "fix_hostname", "cable": "H1"}, FixOp.UNPLUG: {"op": "unplug", "device": "SW-O1", "port": P(3)},
           FixOp.UNPLUG_EXCEPT: {"op": "unplug_except", "device": "SW-O1", "port": P(2), "keep": "H2"}}
    assert set(ops) == set(FixOp)
    w = Wiring.from_plan(plan)
    for op in ops.values():
        w.apply(op)
    with pytest.raises(ValueError):
        w.apply({"op": "teleport"})


VOCAB = {m.value for e in (FindingKind, FaultKind, FixOp) for m in e}
USERS = {"zcube_deploy/verify/classify.py": VOCAB | set(BgpCause), "zcube_deploy/verify/bgp.py": VOCAB | set(BgpCause),
         "zcube_deploy/verify/report.py": VOCAB | set(BgpCause),
         # the lab's faults file has a `cabling:` section: BgpCause.CABLING is verify's word only
         "zcube_deploy/lab/inject.py": VOCAB, "zcube_deploy/lab/wiring.py": VOCAB}


def _bare_vocabulary_literals(source: str, vocab: set[str] = VOCAB) -> list[tuple[int, str]]:
    """String constants equal to a vocabulary word, outside docstrings and outside `... .get("mode") == "bgp"`
    (a routing mode, not a finding kind)."""
    tree = ast.parse(source)
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            skip.add(id(node.value))  # docstrings
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call) and node.left.args \
                and isinstance(node.left.args[0], ast.Constant) and node.left.args[0].value == "mode":
            skip.update(id(c) for c in node.comparators)
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in vocab and id(n) not in skip]


@pytest.mark.parametrize("path", sorted(USERS))
def test_no_bare_vocabulary_strings(path):
    assert _bare_vocabulary_literals((ROOT / path).read_text(), USERS[path]) == []


def test_the_vocabulary_check_finds_a_bare_string():
    assert _bare_vocabulary_literals('"""swapped"""\nx = {"kind": "swapped"}\nif p.get("mode") == "bgp": pass\n') == [(2, "swapped")]


def test_verify_names_no_default_platform_commands():
    """What verify runs is asked of the plan's platform (observe.commands(platform)); no module-level list of
    one platform's commands that a caller could use for another platform's switches."""
    import zcube_deploy.verify.observe as observe_module
    from zcube_deploy.platforms import platform_module

    assert not hasattr(observe_module, "COMMANDS")
    assert observe_module.commands("ruijie_rgos") == tuple(platform_module("ruijie_rgos").VERIFY_COMMANDS)


def test_every_classifier_mutant_is_killed():
    """tests/mutate_classify.py: every mutant of classify.py fails this file's tests (a survivor is an unguarded
    branch), and a mutant that changes nothing is reported as surviving (the runner itself can fail)."""
    import subprocess
    import sys

    script = ROOT / "tests" / "mutate_classify.py"
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert r.returncode == 0 and "survived: []" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
    noop = ("import sys; sys.path[:0] = [%r, %r]; import mutate_classify as m; "
            "m.MUTANTS['noop'] = ('        if h != sw:', '        if h != sw:'); sys.exit(m.main(['noop']))"
            % (str(ROOT / "tests"), str(ROOT)))
    r = subprocess.run([sys.executable, "-c", noop], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 1 and "MUTANT noop SURVIVED" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]


def test_a_check_not_run_names_every_switch_it_did_not_check():
    """The summary (verify.json, audit's not_checked findings) names all of them, however many; the terminal's
    note names the first 20 and says how many more and where they are."""
    from zcube_deploy.verify.classify import notes

    names = [f"SW-{i:03d}" for i in range(25)]
    s = summarize([], {"lldp": {"`show lldp neighbors detail` was not collected": names}})
    (row,) = s["not_checked"]["lldp"]
    assert (row["switches"], row["names"]) == (25, names)
    (note,) = notes(s)
    assert note == (f"the lldp check was not run on 25 switches ({', '.join(names[:20])} and 5 more (verify.json names every one)): "
                    "`show lldp neighbors detail` was not collected")
    assert notes(s, shown=None) == [f"the lldp check was not run on 25 switches ({', '.join(names)}): "
                                    "`show lldp neighbors detail` was not collected"]


# ---------------------------------------------------------------- the unmatched ports found per switch (audit's workers)
def _found_per_switch(plan, obs):
    """check() as audit runs it: what the checks read of each switch alone found first on a context of no observations."""
    from zcube_deploy.verify.classify import Context, check

    planned = Context(plan, {})
    for sw, o in obs.items():
        planned.unmatched[sw], gap = planned.per_switch(sw, o)
        if gap is not None:
            planned.route_gaps[sw] = gap
    return check(plan, obs, planned=planned)


RENAMED = {  # observed hostnames: a default name, a swap, a switch running under another switch's name
    "default": {"SW-O1": "Ruijie"}, "swapped": {"SW-O1": "SW-E2", "SW-E2": "SW-O1"}, "taken": {"SW-O1": "SW-E2", "SW-E2": "Ruijie"}}
PORTS = {
    "clean": {}, "swap": {"SW-O1": {P(1): (UP, ["gpu2 ens1"]), P(2): (UP, ["gpu1 ens1"])}},
    "unused": {"SW-O1": {P(1): (DOWN, []), P(3): (UP, ["gpu1 ens1"])}},
    "moved": {"SW-O1": {P(2): (UP, ["gpu1 ens2"])}, "SW-E2": {P(1): (DOWN, [])}},
    "fabric as E2": {"SW-O1": {P(5): (UP, ["SW-E2 " + P(5)])}, "SW-E2": {P(5): (UP, ["SW-O1 " + P(5)])}},
    "fabric as named": {"SW-O1": {P(5): (UP, ["Ruijie " + P(5)])}, "SW-E2": {P(5): (UP, ["SW-E2 " + P(5)])}},
    "two on one": {"SW-O1": {P(1): (UP, ["gpu1 ens1", "gpu2 ens1"])}}, "stranger": {"SW-O1": {P(1): (UP, ["lab-x eth0"])}},
    "fabric down": {"SW-O1": {P(5): (DOWN, [])}, "SW-E2": {P(5): (DOWN, [])}}}
ROUTES = {  # installed static routes: one planned missing and one unplanned (in the pools), one outside the pools
    "as planned": None, "missing and extra": {**STATIC, "SW-O1": [("10.0.0.32/28", "10.200.0.1"), ("0.0.0.0/0", "172.16.0.1")]},
    "none": {"SW-O1": [], "SW-E2": [("10.0.0.0/28", "10.200.0.0"), ("10.0.0.0/28", "10.200.0.9"), ("192.0.2.0/24", "172.16.0.1")]}}


@pytest.mark.parametrize("routes", list(ROUTES))
@pytest.mark.parametrize("names", [None, *RENAMED], ids=lambda n: f"hostnames {n or 'as planned'}")
@pytest.mark.parametrize("ports", list(PORTS))
def test_what_is_found_per_switch_gives_the_same_findings(names, ports, routes):
    """Audit's workers find each switch's unmatched planned ports on a context of no observations (no aliases); the
    cabling check then reads only those. The findings are the ones of the whole test, for every hostname mix: where
    an observed hostname names another switch (an alias that is not the switch's own name, "taken": SW-O1 runs as
    SW-E2, so SW-O1's fabric port seeing "SW-E2" is a loop to itself) the ports found so are not taken. The static
    routes against the plan's, found per switch too, give the same route findings (a fabric link down included)."""
    from zcube_deploy.verify.classify import check

    plan, obs = make_plan(), observe(ports=PORTS[ports], hostname=RENAMED.get(names), static=ROUTES[routes])
    found = _found_per_switch(plan, obs)
    assert found == check(plan, obs)
    assert (routes == "as planned" or ports == "fabric down") or any(f["kind"] == "route" for f in found[0])



@pytest.mark.parametrize("lldp", [{}, {"Hu 0/1": (Neighbour("gpu1", "ens1"),), "Hu 0/0": (Neighbour("ZC-O1", "Hu 0/9", "Interface name", "c", "m"),)},
                                  {"Hu 0/1": (Neighbour("a", "b"), Neighbour("c", "d"))}, {"Hu 0/1": ()}])
def test_an_observation_pickles_back_to_itself(lldp):
    """Audit's pool workers send observations pickled (the LLDP neighbours as columns when one a port): the same
    observation comes back, its ports in their order, each neighbour a Neighbour."""
    import pickle

    o = Observation("ZC-E1", {"Hu 0/1": True}, lldp, {"Hu 0/1": ("10.0.0.0/31",)}, (("0.0.0.0/0", "172.16.0.1"),))
    back = pickle.loads(pickle.dumps(o, pickle.HIGHEST_PROTOCOL))
    assert back == o and list(back.lldp) == list(lldp)
    assert all(type(n) is Neighbour for ns in back.lldp.values() for n in ns)
