"""zcube_deploy/ipv4.py: its doctests run, and its fast forms agree with the standard library's ipaddress."""

from __future__ import annotations

import doctest
from ipaddress import IPv4Address, IPv4Network

from hypothesis import given
from hypothesis import strategies as st

from zcube_deploy import ipv4

addresses = st.integers(min_value=0, max_value=2**32 - 1)
lengths = st.integers(min_value=0, max_value=32)


def test_doctests_run_and_pass():
    """The module's examples are tests (the equivalent of ``pytest --doctest-modules zcube_deploy/ipv4.py``)."""
    result = doctest.testmod(ipv4, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted >= 15  # every public function carries examples: a lost docstring shows here


@given(addresses)
def test_round_trip_matches_ipaddress(value):
    text = str(IPv4Address(value))
    assert ipv4.ntoa(value) == text
    assert ipv4.aton(text) == value
    assert ipv4.parse(text) == value


@given(lengths)
def test_masks_match_ipaddress(plen):
    net = IPv4Network(f"0.0.0.0/{plen}")
    assert ipv4.mask(plen) == int(net.netmask)
    assert ipv4.dotted_mask(plen) == str(net.netmask)
    assert ipv4.mask_len(str(net.netmask)) == plen


@given(addresses, lengths)
def test_network_matches_ipaddress(value, plen):
    assert ipv4.network(value, plen) == int(IPv4Network(f"{IPv4Address(value)}/{plen}", strict=False).network_address)


def test_only_contiguous_masks_and_strict_quads():
    assert len(ipv4.MASK_LENS) == 33
    for bad in ("0.0.0.255", "255.0.255.0", "24", "255.255.255.0 ", ""):
        assert ipv4.mask_len(bad) is None
    for bad in ("10.1", "1.2.3.4.5", "1.2.3.256", "+1.2.3.4", "1.2.3.4 ", "01234.1.1.1", "a.b.c.d", ""):
        assert ipv4.parse(bad) is None
