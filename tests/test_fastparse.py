"""The single-pass readers verify uses (platforms/ruijie_rgos/fastparse.py) give what the TextFSM templates
and l3_facts give, on the mocked outputs, on tricky hand-written ones and on configs rendered for lab-64."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zcube_deploy.platforms.ruijie_rgos.parsers import parse
from zcube_deploy.platforms.ruijie_rgos import l3_facts
from zcube_deploy.platforms.ruijie_rgos.reader import interface_addresses

MOCKED = Path(__file__).parent / "mocked" / "show_lldp_neighbors_detail"

def test_interface_addresses_are_l3_facts_interfaces(lab64_build):
    configs = sorted((lab64_build / "configs").glob("*.cfg"))
    assert configs
    for c in configs:
        text = c.read_text()
        assert interface_addresses(text) == l3_facts(text)["interfaces"], c.name
    odd = ("interface Mgmt 0\n ip address 172.16.0.11 255.255.255.0\n"
           " ip address 10.9.0.1 255.255.255.0 secondary\n!\ninterface Loopback 0\n ip address 10.201.0.1 255.255.255.255\n"
           "ip route 0.0.0.0 0.0.0.0 172.16.0.1\ninterface TwoHundredGigabitEthernet 0/1\n shutdown\n")
    assert interface_addresses(odd) == l3_facts(odd)["interfaces"] == {
        "Mgmt 0": ["172.16.0.11/24", "10.9.0.1/24"], "Loopback 0": ["10.201.0.1/32"], "TwoHundredGigabitEthernet 0/1": []}


# ---------------------------------------------------------------- show ip route, show interface status, the running config
ROUTES_TRICKY = """Codes:  C - Connected, L - Local, S - Static, B - BGP

Gateway of last resort is 172.16.0.1 to network 0.0.0.0
        [20/0] via 10.9.9.9, 00:00:01
S*    0.0.0.0/0 [1/0] via 172.16.0.1
B     10.0.0.16/28 [20/0] via 10.200.0.1, 00:01:00, TwoHundredGigabitEthernet 0/5
                   [20/0] via 10.200.0.3, 1d02h
                   [20/0] via 10.200.0.5, 1w2d, HundredGigabitEthernet 0/7:2
C     10.200.0.0/31 is directly connected, TwoHundredGigabitEthernet 0/5
L     10.200.0.0/32 is directly connected, TwoHundredGigabitEthernet 0/5  \r
S     10.0.0.32/28 [1/0] via 10.200.0.1, not-a-time
O E2  10.1.0.0/16 [110/20] via 10.200.0.7
S     10.0.0.48/28 is directly connected, Null 0
        [1/0] via 10.200.0.9
"""

STATUS_TRICKY = """garbage before the header
TwoHundredGigabitEthernet 0/9:1          up        routed Full     200G      fiber
Interface                                Status    Vlan   Duplex   Speed     Type
---------------------------------------- --------  ----   -------  --------- ------
Mgmt 0                                   down      routed Unknown  Unknown   copper
TwoHundredGigabitEthernet 0/1:1          up        routed Full     200G      fiber
TwoHundredGigabitEthernet 0/1:2          up        1      Full     200G
   -----
HundredGigabitEthernet0/2 disabled 10 Full 100G fiber  \r
not an interface row
"""


@pytest.mark.parametrize("text", [p.read_text() for p in sorted((MOCKED.parent / "show_ip_route").glob("*/raw.txt"))] + [
    ROUTES_TRICKY, ROUTES_TRICKY.replace("\n", "\r\n"), ROUTES_TRICKY.replace("\n", "\r"), ""])
def test_ip_route_is_the_templates_rows(text):
    from zcube_deploy.platforms.ruijie_rgos.fastparse import ip_route, ip_route_static_bgp

    assert ip_route(text) == parse("show ip route", text)
    assert ip_route_static_bgp(text) == [r for r in parse("show ip route", text) if r["protocol"][:1] in ("S", "B")]


def test_ip_route_reads_the_tricky_routes():
    from zcube_deploy.platforms.ruijie_rgos.fastparse import ip_route

    rows = ip_route(ROUTES_TRICKY)
    b = [(r["network"], r["nexthop_ip"], r["nexthop_if"]) for r in rows if r["protocol"] == "B"]
    assert b == [("10.0.0.16", "10.200.0.1", "TwoHundredGigabitEthernet 0/5"), ("10.0.0.16", "10.200.0.3", ""),
                 ("10.0.0.16", "10.200.0.5", "HundredGigabitEthernet 0/7:2")]
    assert rows[0]["protocol"] == "" and rows[0]["nexthop_ip"] == "10.9.9.9"  # a continuation before any route
    assert ("S", "10.0.0.48", "10.200.0.9") in [(r["protocol"], r["network"], r["nexthop_ip"]) for r in rows]


@pytest.mark.parametrize("text", [p.read_text() for p in sorted((MOCKED.parent / "show_interface_status").glob("*/raw.txt"))] + [
    STATUS_TRICKY, STATUS_TRICKY.replace("\n", "\r\n"), STATUS_TRICKY.split("Interface ", 1)[0], ""])
def test_interface_status_is_the_templates_rows(text):
    from zcube_deploy.platforms.ruijie_rgos.fastparse import interface_status

    assert interface_status(text) == parse("show interface status", text)


def test_interface_status_reads_the_tricky_rows():
    from zcube_deploy.platforms.ruijie_rgos.fastparse import interface_status

    assert [(r["interface"], r["status"], r["type"]) for r in interface_status(STATUS_TRICKY)] == [
        ("Mgmt 0", "down", "copper"), ("TwoHundredGigabitEthernet 0/1:1", "up", "fiber"),
        ("TwoHundredGigabitEthernet 0/1:2", "up", ""), ("HundredGigabitEthernet0/2", "disabled", "fiber")]


CONFIG_TRICKY = """hostname SW-O1
interface Mgmt 0
 ip address 172.16.0.11 255.255.255.0
 ip address 10.9.0.1 255.255.255.0 secondary
!
interface  TwoHundredGigabitEthernet 0/5
 ip address 10.200.0.0 255.255.255.254
 bfd interval 100 min_rx 100 multiplier 3
interface TwoHundredGigabitEthernet 0/6
 ip address 10.200.0.2 255.255.255.254
 ip address 10.200.0.4 31
 bfd interval 100 min_rx x multiplier 3
interface Loopback 0
 ip address 10.201.0.1 255.255.255.255
ip route 10.0.0.16 255.255.255.240 10.200.0.1
router bgp 4200000001
 neighbor 10.200.0.1 remote-as 4200000002
 neighbor 10.200.0.1 fall-over bfd
 neighbor 10.200.0.3 fall-over bfd
 neighbor 10.200.0.9 description not-a-session
 address-family ipv6
  neighbor 10.200.0.7 remote-as 4200000007
 exit-address-family
 address-family ipv4 unicast
  neighbor 10.200.0.5 remote-as 4200000005
 exit-address-family
router bgp x
 neighbor 10.200.0.11 remote-as 4200000011
interface TwoHundredGigabitEthernet 0/5
 shutdown
"""


def _config_readers(text):
    """The general reader's projections running_config gives in one pass (reader.interface_addresses, bgp_parse)."""
    from zcube_deploy.platforms.ruijie_rgos.bgp_parse import parse_config
    from zcube_deploy.platforms.ruijie_rgos.fastparse import bgp_config_of

    return interface_addresses(text), bgp_config_of(parse_config(text))


@pytest.fixture(scope="module")
def bgp64_configs(tmp_path_factory):
    """lab-64's configs in mode bgp (plan + render, as a user runs them)."""
    from conftest import ROOT, run_zcube

    d = tmp_path_factory.mktemp("bgp64cfg")
    (d / "lab-64-bgp.yaml").write_text("routing:\n  mode: bgp\n" + (ROOT / "inventories" / "lab-64.yaml").read_text())
    for args in (("plan", str(d / "lab-64-bgp.yaml"), "-o", str(d)), ("render", str(d / "plan.json"), "-o", str(d))):
        r = run_zcube(*args, cwd=ROOT)
        assert r.returncode == 0, r.stderr
    return sorted((d / "configs").glob("*.cfg"))


def test_running_config_is_the_two_readers(lab64_build, bgp64_configs):
    """One pass gives interface_addresses' result and parse_config's BGP part: on lab-64's configs in both
    routing modes (with CRLF, and with tabs, which both readers treat their own way), and on a tricky one."""
    from zcube_deploy.platforms.ruijie_rgos.fastparse import running_config

    configs = sorted((lab64_build / "configs").glob("*.cfg")) + bgp64_configs
    assert bgp64_configs and all("router bgp" in c.read_text() for c in bgp64_configs)
    for c in configs:
        text = c.read_text()
        for t in (text, text.replace("\n", "\r\n"), text.replace("\n ", "\n\t"), text.replace("\n", "\r")):
            assert running_config(t) == _config_readers(t), c.name
    for t in (CONFIG_TRICKY, CONFIG_TRICKY.replace("\n", "\r\n"), CONFIG_TRICKY.replace("\n ", "\n\t"), ""):
        assert running_config(t) == _config_readers(t)


def test_running_config_reads_the_tricky_config():
    from zcube_deploy.platforms.ruijie_rgos.fastparse import running_config

    addrs, bgp = running_config(CONFIG_TRICKY)
    assert addrs["Mgmt 0"] == ["172.16.0.11/24", "10.9.0.1/24"] and addrs["TwoHundredGigabitEthernet 0/6"] == ["10.200.0.2/31"]
    assert bgp == {"asn": 4200000001,
                   "neighbors": {"10.200.0.1": 4200000002, "10.200.0.3": None, "10.200.0.5": 4200000005},
                   "addresses": {"Mgmt 0": "172.16.0.11", " TwoHundredGigabitEthernet 0/5": "10.200.0.0",
                                 "TwoHundredGigabitEthernet 0/6": "10.200.0.4", "Loopback 0": "10.201.0.1"},
                   "bfd_ports": [" TwoHundredGigabitEthernet 0/5"], "fall_over_bfd": ["10.200.0.1", "10.200.0.3"]}


@pytest.mark.parametrize("line", [" ip address 010.200.0.8 255.255.255.254", " ip address 10.200.0.8 255.0.255.0"])
def test_running_config_rejects_what_interface_addresses_rejects(line):
    """A leading-zero address or a non-contiguous mask is no address to either reader: both raise alike."""
    from zcube_deploy.platforms.ruijie_rgos.fastparse import running_config

    text = "interface TwoHundredGigabitEthernet 0/7\n" + line + "\n"
    with pytest.raises(ValueError) as a:
        interface_addresses(text)
    with pytest.raises(ValueError) as b:
        running_config(text)
    assert str(a.value) == str(b.value)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.lists(st.integers(0, 300).map(str) | st.text("0123456789", min_size=1, max_size=4), min_size=3, max_size=5).map(".".join),
                 st.text("0123456789.²٣ -", max_size=18)))
def test_the_canonical_address_test_is_ntoa_of_parse(text):
    """running_config takes an address as written when it is the dotted quad ntoa writes (no leading zero, octets <=
    255, ASCII digits): exactly when ntoa(parse(text)) == text."""
    from zcube_deploy.ipv4 import ntoa, parse
    from zcube_deploy.platforms.ruijie_rgos.fastparse import _canonical

    a = parse(text) if all(c in "0123456789." for c in text) else None
    assert bool(_canonical(text)) == (a is not None and ntoa(a) == text)


_RT_PIECES = st.lists(st.one_of(
    st.builds("{}{}{}/{}{}[{}/{}]{}via{}{}{}{}{}".format, st.sampled_from(["S", "C", "B", "O*", "s", "*", "", "S*", "Bx"]),
              st.sampled_from([" ", "     ", "\t", ""]), st.sampled_from(["10.0.0.0", "10.2.0.16", "1.2.3", "10.0.0.256"]),
              st.sampled_from(["23", "31", "x"]), st.sampled_from([" ", "  ", ""]), st.sampled_from(["1", "20"]),
              st.sampled_from(["0", "5"]), st.sampled_from([" ", "  ", ""]), st.sampled_from([" ", "\t "]),
              st.sampled_from(["10.64.0.0", "10.1.1.1"]), st.sampled_from(["", ", 00:01:00", ", 1d02h", ", x"]),
              st.sampled_from(["", ", TwoHundredGigabitEthernet 0/1:2", ", Hu0/7", ", Eth 1/2/3:4", ", 9x"]),
              st.sampled_from(["", "  ", " \x0c", "x"])),
    st.builds("{}{}{}/{}is directly connected, {}{}".format, st.sampled_from(["C", "L", "", "S", "B"]), st.sampled_from([" ", "  "]),
              st.sampled_from(["10.2.0.0", "10.2.0.0/31"]), st.sampled_from(["31 ", "32  ", "32"]),
              st.sampled_from(["TwoHundredGigabitEthernet 0/1:1", "Loopback 0", "Mgmt0", "0/1"]), st.sampled_from(["", " ", " x", "x"])),
    st.builds("{}[{}/0] via {}{}".format, st.sampled_from([" ", "      ", "", "\t"]), st.sampled_from(["20", "x"]),
              st.sampled_from(["10.200.0.1", "10.200.0"]), st.sampled_from(["", ", 00:00:07", ", HundredGigabitEthernet 0/7:2"])),
    st.sampled_from(["", "Codes:  C - Connected, L - Local, S - Static", "Gateway of last resort is no set", "   ", "\x85x", "é"])),
    max_size=14)


@settings(max_examples=400, deadline=None)
@given(_RT_PIECES, st.sampled_from(["\n", "\r\n", "\r"]), st.booleans())
def test_ip_route_read_whole_is_the_templates_rows(lines, newline, last):
    """The whole-text reader gives the template's rows or refuses the text (None: a tab, another odd white space,
    a character that is not ASCII), never other rows; ip_route (whole or line by line) is the template's."""
    from zcube_deploy.platforms.ruijie_rgos.fastparse import ip_route, ip_route_static_bgp, ip_route_whole

    text = newline.join(lines) + (newline if last else "")
    want = parse("show ip route", text)
    whole = ip_route_whole(text)
    assert whole is None or whole == want
    assert ip_route(text) == want
    assert ip_route_static_bgp(text) == [r for r in want if r["protocol"][:1] in ("S", "B")]


@settings(max_examples=400, deadline=None)
@given(_RT_PIECES, st.sampled_from(["\n", "\r\n"]), st.booleans(), st.booleans())
def test_static_and_bgp_routes_without_continuations_are_the_templates(lines, newline, last, plain):
    """Without a line that continues a route, ip_route_static_bgp reads the S and B lines alone: still the
    template's S and B rows (a line that is no route's, an odd line end; ``plain``: without the lines that hold a
    tab, a form feed or a character that is not ASCII, which send the text to the line reader)."""
    from zcube_deploy.platforms.ruijie_rgos.fastparse import ip_route_static_bgp

    text = newline.join(ln for ln in lines if not ln.lstrip(" \t").startswith("[")
                        and not (plain and (not ln.isascii() or "\t" in ln or "\x0c" in ln))) + (newline if last else "")
    assert ip_route_static_bgp(text) == [r for r in parse("show ip route", text) if r["protocol"][:1] in ("S", "B")]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([
    "hostname A", "interface X 0/1", " description d\x0cx", " no shutdown", " shutdown", "!", " ! c", "end", "version 11",
    "Building configuration...", "Current configuration : 1 bytes", "banner motd ^Chi^C", "banner motd #", "banner x", "",
    "   ", "ip route 10.0.0.0 255.0.0.0 10.1.1.1", " ip address 10.0.0.1 255.255.255.254", "\tindented", "é line",
    "a\x0bb", "a\x1cb", " c\x1ed", "x\x85y", "endx", "\x0c"]), max_size=16), st.sampled_from(["\n", "\r\n", "\r"]))
def test_config_sections_in_one_pass_are_strip_volatiles_split(lines, newline):
    """config_sections (one pass over the lines) gives strip_volatile's text split into sections, also on lines holding
    another line separator of str.splitlines (read the two-pass way), banners and volatile lines."""
    from zcube_deploy.platforms.ruijie_rgos.fastparse import _sections_of, config_sections
    from zcube_deploy.platforms.ruijie_rgos.hconfig import strip_volatile

    text = newline.join(lines)
    assert config_sections(text) == _sections_of(strip_volatile(text).splitlines())
