"""The single-pass readers verify uses (platforms/ruijie_rgos/fastparse.py) give what the TextFSM template
and l3_facts give, on the mocked outputs, on tricky hand-written ones and on configs rendered for lab-64."""

from __future__ import annotations

from pathlib import Path

import pytest

from zcube_deploy.platforms.ruijie_rgos.parsers import parse
from zcube_deploy.platforms.ruijie_rgos import l3_facts
from zcube_deploy.platforms.ruijie_rgos.fastparse import (
    _KEYS,
    interface_addresses,
    lldp_detail,
)

MOCKED = Path(__file__).parent / "mocked" / "show_lldp_neighbors_detail"

TRICKY = """----------------------------------------------------------------------------
Lldp neighbor-information of port [TwoHundredGigabitEthernet 0/1:1]
----------------------------------------------------------------------------
  Neighbor index                    : 1
  Chassis ID type                   : MAC address
  Chassis ID                        : 0244.41eb.c20e
  System name                       : gpu00001
  System description                : Ubuntu 22.04.4 LTS
  Port ID                           : not-a-field-inside-the-description
  ---------------------------------------------
  System capabilities supported     : Bridge, Router
  Management address                : 172.16.0.11
  Port ID type                      : MAC address
  Port  ID                          : 02:44:41:eb:c2:0e
  Port description                  :   ens1f1np1  \r
----------------------------------------------------------------------------
  Neighbor index                    : 2
  System name                       : stray
  Neighbor index                    : 9
  Port ID                           : eth0
----------------------------------------------------------------------------
LLDP neighbor-information of port [TwoHundredGigabitEthernet 0/2:1]
----------------------------------------------------------------------------
"""


def textfsm_rows(text: str) -> list[dict]:
    return [{k: r[k] for k in _KEYS} for r in parse("show lldp neighbors detail", text)]


@pytest.mark.parametrize("text", [p.read_text() for p in sorted(MOCKED.glob("*/raw.txt"))] + [
    TRICKY, TRICKY.replace("\n", "\r\n"), TRICKY.rsplit("-" * 76, 2)[0], TRICKY + "  Neighbor index : 1\n  System name : x\n", ""])
def test_lldp_detail_is_the_templates_rows(text):
    assert lldp_detail(text) == textfsm_rows(text)


def test_the_tricky_text_holds_what_it_should():
    rows = lldp_detail(TRICKY)
    assert [(r["local_interface"], r["system_name"], r["port_id"]) for r in rows] == [
        ("TwoHundredGigabitEthernet 0/1:1", "gpu00001", "02:44:41:eb:c2:0e"),
        ("TwoHundredGigabitEthernet 0/1:1", "stray", "eth0"),
        ("TwoHundredGigabitEthernet 0/2:1", "", "")]  # a port header at the end: the template's last (empty) record


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
