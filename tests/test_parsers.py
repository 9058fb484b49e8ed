"""TextFSM parsers, NAPALM mocked-data style: tests/mocked/<command>/<case>/{raw.txt, expected.json}."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zcube_deploy.platforms.ruijie_rgos.names import long_name, short_name
from zcube_deploy.platforms.ruijie_rgos.parsers import parse

MOCKED = Path(__file__).resolve().parent / "mocked"
CASES = sorted(p.parent for p in MOCKED.rglob("raw.txt"))


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_mocked_case(case):
    command = case.parent.name.replace("_", " ")
    raw = (case / "raw.txt").read_bytes().decode()
    assert parse(command, raw) == json.loads((case / "expected.json").read_text())


def rows(command, case):
    return parse(command.replace("_", " "), (MOCKED / command / case / "raw.txt").read_bytes().decode())


def test_real_lldp_brief_port_ids_with_spaces():
    r = rows("show_lldp_neighbors", "ruijie_md_sample")
    assert [(x["system_name"], long_name(x["local_interface"]), x["port_id"]) for x in r] == [
        ("stl-ds-07", "TenGigabitEthernet 0/47", "eth-0-21"),
        ("openshift-core1", "HundredGigabitEthernet 0/55", "HundredGigabitEthernet 0/55")]


def test_real_lldp_detail_crlf_and_wrapped_description():
    (r,) = rows("show_lldp_neighbors_detail", "ruijie_md_sample_crlf")
    assert r["local_interface"] == "TFGigabitEthernet 0/48" and r["system_name"] == "SU-QSW-6900-56F-02"
    assert r["chassis_id"] == "001f.ce62.1e4e" and r["port_id"] == "TFGigabitEthernet 0/48"
    assert r["system_description"][1].startswith("Running on Software")
    assert not any("\r" in v for v in r.values() if isinstance(v, str))


def test_second_neighbour_on_a_port_is_kept_with_old_header_and_local_chassis():
    r = rows("show_lldp_neighbors_detail", "two_neighbors_one_port_lldp_header")
    assert [x["neighbor_index"] for x in r] == ["1", "2"]
    assert {x["local_interface"] for x in r} == {"TFGigabitEthernet 0/48"}
    assert r[1]["chassis_id_type"] == "Locally assigned" and r[1]["chassis_id"] == "SU-QSW-6900-56F-03"


def test_lab_detail_has_nic_and_switch_neighbours():
    r = rows("show_lldp_neighbors_detail", "lab_nic_and_switch_neighbors")
    assert len(r) == 16
    nic = r[0]
    assert nic["system_name"] == "gpu01" and nic["port_id"] == "ens1f0np0" and nic["port_id_type"] == "Interface name"
    sw = next(x for x in r if x["port_id"].startswith("TwoHundred"))
    assert sw["system_name"] == "Ruijie" and len(sw["system_description"]) == 2


def test_interface_status_and_version():
    st = rows("show_interface_status", "ruijie_md_sample")
    assert [(x["interface"], x["status"], x["vlan"]) for x in st][2] == ("TFGigabitEthernet 0/48", "up", "routed")
    assert st[-1]["interface"] == "AggregatePort 1"
    (v,) = rows("show_version", "ruijie_md_sample")
    assert v["serial"] == "G1RL71S00XXXX" and v["uptime"] == "185:19:37:28"


def test_ip_route():
    r = rows("show_ip_route", "lab_output")
    static = [x for x in r if x["protocol"] == "S"]
    assert static == [{"protocol": "S", "network": "10.0.0.128", "prefix_length": "28", "distance": "1", "metric": "0",
                       "nexthop_ip": "10.0.0.1", "nexthop_if": ""}]


@pytest.mark.parametrize("given,long,short", [
    ("Hu0/55", "HundredGigabitEthernet 0/55", "Hu0/55"),
    ("Te0/47", "TenGigabitEthernet 0/47", "Te0/47"),
    ("TF0/48", "TFGigabitEthernet 0/48", "TF0/48"),
    ("tfgigabitethernet0/48", "TFGigabitEthernet 0/48", "TF0/48"),
    ("AggregatePort 1", "AggregatePort 1", "Ag1"),
    ("TH0/1:2", "TwoHundredGigabitEthernet 0/1:2", "TH0/1:2"),
    ("TwoHundredGigabitEthernet 0/1:2", "TwoHundredGigabitEthernet 0/1:2", "TH0/1:2"),
    ("Mgmt 0", "Mgmt 0", "Mg0"),
])
def test_interface_names(given, long, short):
    assert long_name(given) == long and short_name(given) == short


# ---- the platform's neutral parse (render's self-check and the routing proof read it)

def _golden_configs():
    from pathlib import Path

    root = Path(__file__).resolve().parent / "golden"
    return sorted(root.glob("lab-64*/configs/*.cfg"))[::7]


@pytest.mark.parametrize("path", _golden_configs(), ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_config_facts_agree_with_hier_config(path):
    """The regex reading and the hier_config tree (an independent parser) see the same addresses and routes."""
    from zcube_deploy.platforms.ruijie_rgos import config_facts, l3_facts

    text = path.read_text()
    facts, tree = config_facts(text), l3_facts(text)
    assert sorted(facts.addresses) == sorted((n, a) for n, addrs in tree["interfaces"].items() for a in addrs)
    assert sorted(r for r in facts.routes if r[1]) == sorted(tree["routes"])
    assert facts.interfaces == list(tree["interfaces"])


def test_config_facts_edge_cases():
    from zcube_deploy.platforms.ruijie_rgos import config_facts

    text = ("hostname  S1 \r\ninterface HundredGigabitEthernet 0/1 \r\n description ip address 1.2.3.4 in a description\r\n"
            " no switchport\r\n ip address 10.0.0.0 255.255.255.254\r\n ip address 10.9.0.1 255.255.255.0 secondary\r\n"
            " shutdown\r\n bfd interval 300 min_rx 300 multiplier 3\r\n!\r\ninterface Loopback 0\r\n ip address 10.1.0.1 255.255.255.255\r\n"
            "interface HundredGigabitEthernet 0/2\r\n ip address 10.0.0.2 255.0.255.0\r\n no shutdown\r\n"
            "ip route 10.2.0.0 255.255.0.0 HundredGigabitEthernet 0/1 10.0.0.1\r\nip route 10.3.0.0 255.255.0.0 Null 0\r\n"
            "router bgp 65001\r\n neighbor 10.0.0.1 remote-as 65002\r\n neighbor 10.0.0.1 fall-over bfd\r\n address-family ipv4 unicast\r\n"
            "  network 10.1.0.1 mask 255.255.255.255\r\n  network 10.5.0.0\r\n exit-address-family\r\nend")
    f = config_facts(text)
    hu1, hu2 = "HundredGigabitEthernet 0/1", "HundredGigabitEthernet 0/2"
    assert f.hostnames == ["S1"]
    assert f.interfaces == [hu1, "Loopback 0", hu2]
    assert f.addresses == [(hu1, "10.0.0.0/31"), (hu1, "10.9.0.1/24"), ("Loopback 0", "10.1.0.1/32"), (hu2, "10.0.0.2/?255.0.255.0")]
    assert f.shutdown == [hu1] and f.bfd == [hu1] and f.routed == [hu1, "Loopback 0"]
    assert f.routes == [("10.2.0.0/16", "10.0.0.1"), ("10.3.0.0/16", None)]
    assert f.bgp == [{"asn": 65001, "neighbors": [("10.0.0.1", 65002)], "bfd_neighbors": ["10.0.0.1"],
                         "networks": ["10.1.0.1/32", "10.5.0.0/32"]}]


_MUTATIONS = (
    lambda ls, i, r: ls[:i] + ls[i + 1:],                                   # a line lost
    lambda ls, i, r: ls[:i] + [ls[i]] + ls[i:],                             # a line twice
    lambda ls, i, r: ls[:i] + [ls[i] + " "] + ls[i + 1:],                   # a trailing blank
    lambda ls, i, r: ls[:i] + ["  " + ls[i].lstrip()] + ls[i + 1:],          # indented deeper
    lambda ls, i, r: ls[:i] + [ls[i].lstrip()] + ls[i + 1:],                # not indented
    lambda ls, i, r: ls[:i] + [ls[i].replace("255.255.255.254", "255.0.255.254")] + ls[i + 1:],  # a mask that is no mask
    lambda ls, i, r: ls[:i] + [ls[i] + " secondary"] + ls[i + 1:],
    lambda ls, i, r: ls[:i] + [ls[i] + "x"] + ls[i + 1:],                   # a word run on
    lambda ls, i, r: ls[:i] + [ls[i] + r.choice(["\xa0", "\x0c", "\xa0 ", " \x0c"])] + ls[i + 1:],  # other white space at the end
    lambda ls, i, r: ls[:i] + [r.choice([" shutdown", " no switchport", " bfd interval 300 min_rx 300 multiplier 3",
                                         " ip address 10.9.9.9 255.255.255.0", "", "!", "ip route 10.7.0.0 255.255.0.0 Null 0",
                                         "ip route 10.7.0.0 255.255.0.0 TwoHundredGigabitEthernet 0/1:1 10.0.0.1",
                                         "ip route 10.7.0.0 255.255.0.0 10.9.0.1", "ip route  10.7.0.0 255.255.0.0 10.9.0.1",
                                         "interface  Loopback 1", "interface Loopback 2 ", "hostname X"])] + ls[i:],  # a line inserted
    lambda ls, i, r: ls[:i] + [ls[i].replace("interface ", "interface\t")] + ls[i + 1:],
    lambda ls, i, r: ls[:i] + [ls[i].replace(" ", "  ", 1)] + ls[i + 1:],
)


def test_config_facts_fast_reader_equals_the_general_reader():
    """The fast reader (plain routed ports and routes by one pattern each) gives exactly the general
    reader's facts, on rendered configs (where it must be the one that reads) and on thousands of
    mutated ones (where it reads or gives up)."""
    import random

    from zcube_deploy.platforms.ruijie_rgos import config_facts
    from zcube_deploy.platforms.ruijie_rgos.fastparse import fast_facts
    from zcube_deploy.platforms.ruijie_rgos.reader import general_facts, prepared

    plain = "interface H 0/1\n description d\n no switchport\n ip address 10.0.0.0 255.255.255.254\n no shutdown"
    nbsp = "\ninterface H 0/1\xa0\n shutdown\ninterface H 0/2 \n shutdown\n"  # the reviewer's case: one name ends in a blank
    assert fast_facts(nbsp) == general_facts(nbsp) and general_facts(nbsp).interfaces == ["H 0/1\xa0", "H 0/2"]
    for tricky in (plain + "x\n shutdown\n!", plain + "\n shutdown\n!", plain + "\n\tbfd interval 300\n!",
                   plain.replace("H 0/1", "H 0/1 ") + "\n!", plain + "\n!\nip route 10.1.0.0 255.255.0.0 Null0",
                   plain + "\n!\nip route 10.1.0.0 255.255.0.0 Null 0\nip route 10.2.0.0 255.255.0.0 10.0.0.1",
                   "hostname \nrouter bgp \n neighbor 10.0.0.1 remote-as 1\nhostname S\n" + plain + "\n!\nrouter bgp 7\n network 10.0.0.0",
                   plain + "\n!\ninterface \n shutdown\n ip address 10.0.0.4 255.255.255.254\n!\n" + plain.replace("0/1", "0/2") + "\n!",  # a section with no name
                   "interface\t\n no switchport\n!\n" + plain):
        assert config_facts(tricky) == general_facts(prepared(tricky)), tricky  # (prepared: the sections push reads)
    assert fast_facts("\n" + plain + "\n!") is not None
    r = random.Random(13)
    fast_read = 0
    for path in _golden_configs():
        text = path.read_text()
        assert fast_facts("\n" + text) == general_facts("\n" + text), path  # rendered: the fast reader reads it
        lines = text.split("\n")
        for _ in range(300):
            ls = lines
            for _ in range(r.randint(1, 3)):
                i = r.randrange(len(ls))
                ls = r.choice(_MUTATIONS)(ls, i, r)
            mutated = "\n".join(ls)
            fast = fast_facts("\n" + mutated)
            fast_read += fast is not None
            assert config_facts(mutated) == general_facts(prepared(mutated)), (path, mutated)
            assert fast is None or fast == general_facts("\n" + mutated), (path, mutated)
    assert fast_read > 100  # the mutations leave many configs the fast reader reads, so they are compared


# ---- confirming expected facts (render's self-check): a text confirmed as facts E reads as E

def _static_configs():
    """Rendered configs in the shape the confirmation is for (mode static: lab-64, glm-1k), a few of each."""
    root = Path(__file__).resolve().parent / "golden"
    return sorted(root.glob("lab-64/configs/*.cfg"))[::9] + sorted(root.glob("glm-1k/configs/*.cfg"))[::5]


_DESCRIPTION_MUTATIONS = (  # changes that leave the facts as they are (the confirmation must still hold or give up)
    lambda ls, i, r: [x for x in ls if not x.startswith(" description ")],
    lambda ls, i, r: ls[:i] + [" description " + r.choice(["ip address 10.9.9.9 255.255.255.0", "shutdown", "no switchport", "",
                                                          "bfd interval 300 min_rx 300 multiplier 3", "x y  z"])] + ls[i + 1:],
    lambda ls, i, r: ls[:i] + [" description moved"] + ls[i:],
    lambda ls, i, r: ls[:i] + ["! a comment"] + ls[i:],
)


def _swap(facts, old: str, new: str):
    """``facts`` with ``old`` replaced by ``new`` in every name, address, prefix and next hop."""
    from dataclasses import fields, replace

    def sub(v):
        return v.replace(old, new) if isinstance(v, str) else v

    return replace(facts, **{f.name: [sub(v) for v in getattr(facts, f.name)] for f in fields(facts) if f.name != "bgp"})


def test_config_facts_confirm_is_used_on_rendered_configs():
    """A rendered static config is confirmed as its own facts, without being read (the speed of render's self-check)."""
    from zcube_deploy.platforms.ruijie_rgos import config_facts
    from zcube_deploy.platforms.ruijie_rgos.fastparse import confirms
    from zcube_deploy.platforms.ruijie_rgos.reader import general_facts, prepared

    for path in _static_configs():
        text = path.read_text()
        e = general_facts(prepared(text))
        assert confirms("\n" + text, e), path
        assert config_facts(text, expect=e) is e
        other = _swap(e, e.address_ips[-1], "10.99.99.99")  # one address the text does not have
        assert not confirms("\n" + text, other) and config_facts(text, expect=other) == e


def test_config_facts_with_an_expectation_read_as_without():
    """Whatever the text and whatever the expectation, ``config_facts(text, expect=e)`` is the text's
    facts: on thousands of mutated configs (some still confirmed: the mutation left the facts alone),
    and on values changed in both the text and the expectation into values the reader may read
    differently (a blank at the end of a name, white space in an address, a next hop that starts
    with a letter, a prefix length in another spelling)."""
    import random

    from zcube_deploy.platforms.ruijie_rgos import config_facts
    from zcube_deploy.platforms.ruijie_rgos.reader import general_facts, prepared

    r = random.Random(17)
    confirmed = 0
    for path in _static_configs():
        text = path.read_text()
        e = general_facts(prepared(text))
        lines = text.split("\n")
        for _ in range(200):
            ls = lines
            for _ in range(r.randint(1, 2)):
                ls = r.choice(_MUTATIONS + _DESCRIPTION_MUTATIONS * 3)(ls, r.randrange(len(ls)), r)
            mutated = "\n".join(ls)
            got, want = config_facts(mutated, expect=e), general_facts(prepared(mutated))
            assert got == want, (path, mutated)
            confirmed += got is e
        names = [n for n in e.address_interfaces if " " in n]
        values = [r.choice(names[2:]), r.choice(e.address_ips[2:]), e.address_ips[0], e.route_next_hops[0],
                  e.route_prefixes[-1].split("/")[0], e.interfaces[-1], "255.255.255.254", "/24"]
        for old in values:
            for new in (old + " ", " " + old, old + "\t", old + "\x0b", old + "\xa0", "", "x" + old, old + "\n x", old + "\nx",
                        old.replace(".", " "), old.replace(" ", "  "), old + "/024", "0" + old, old + " secondary"):
                t2, e2 = text.replace(old, new), _swap(e, old, new)
                assert config_facts(t2, expect=e2) == general_facts(prepared(t2)), (path, old, new)
        last_route = [x for x in lines if x.startswith("ip route ")][-1]
        last_bang = lines[max(i for i, x in enumerate(lines) if x == "!" and lines[i - 1] == " no shutdown")]
        assert last_bang == "!"
        for edit in ("x", "0", " 5", "\x0b", " Null 0", "/31"):  # text run on at the end of the routes and of the ports
            for t2 in (text.replace(last_route, last_route + edit), text.replace("no shutdown\n!\n", "no shutdown\n!" + edit + "\n")):
                assert config_facts(t2, expect=e) == general_facts(prepared(t2)), (path, edit)
    assert confirmed > 50  # mutations that leave the facts alone are confirmed, so the confirmed branch is tested


def test_config_facts_confirm_refuses_malformed_expectations():
    """An expectation no reader could give (columns of other lengths or types, a length that is a float or
    a bool, an empty or two-line next hop) is read, not confirmed, whatever the text (the review's cases)."""
    from dataclasses import replace

    from zcube_deploy.platforms.ruijie_rgos import config_facts
    from zcube_deploy.platforms.ruijie_rgos.reader import general_facts, prepared

    path = _static_configs()[0]
    text = path.read_text()
    e = general_facts(prepared(text))
    last = [x for x in text.split("\n") if x.startswith("ip route ")][-1]
    hop = last.split()[-1]
    cases = [
        (text.replace(last, last[: -len(hop)]), replace(e, route_next_hops=e.route_next_hops[:-1] + [""])),  # empty last hop
        (text.replace(last, last + "\n10.9.9.9"), replace(e, route_next_hops=e.route_next_hops[:-1] + [hop + "\n10.9.9.9"])),
        (text, replace(e, route_next_hops=e.route_next_hops + ["10.9.9.9"])),  # a hop more than prefixes
        ("\n".join(x for x in text.split("\n") if not x.startswith("ip route ")), replace(e, route_prefixes=[], route_next_hops=["10.9.9.9"])),
        (text, replace(e, address_ips=e.address_ips[:-1])),
        (text, replace(e, address_lens=[float(x) for x in e.address_lens])),
        (text, replace(e, address_lens=[True if x == 1 else x for x in e.address_lens][:-1] + [True])),
        (text, replace(e, address_interfaces=e.address_interfaces[:-1] + [7])),
        (text, replace(e, address_ips=e.address_ips[:-1] + [None])),
        (text, replace(e, route_prefixes=e.route_prefixes[:-1] + [None])),
        (text, replace(e, route_next_hops=e.route_next_hops[:-1] + [1])),
        (text, replace(e, address_interfaces=tuple(e.address_interfaces))),
        (text, replace(e, hostnames=tuple(e.hostnames))),
    ]
    for t, expect in cases:
        got = config_facts(t, expect=expect)
        assert got is not expect and got == general_facts(prepared(t)), expect
    assert config_facts(text, expect=e) is e  # the unchanged expectation is confirmed
