"""The simulated switch's show outputs (layouts from ruijie.md): version, interface status, IP routes."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network
from typing import Callable

from zcube_deploy.ipv4 import MASK_LENS, MASKS, ntoa, parse
from zcube_deploy.platforms.ruijie_rgos.lab.state import VERSION, SwitchState


def show_version(sw: SwitchState) -> str:
    return "\n".join([
        f"System description      : Ruijie Networks Data Center Switch({sw.model}) By Ruijie Networks",
        "System start time       : 2024-01-01 00:00:00",
        "System uptime           : 0:01:00:00",
        "System hardware version : 1.00",
        f"System software version : {sw.model.split('-')[1] if '-' in sw.model else 'RGOS'}_RGOS {VERSION.split()[1]}",
        "System patch number     : NA",
        f"System serial number    : {sw.serial}",
        "System boot version     : 1.3.11",
    ])


def show_interface_status(sw: SwitchState, link_up: Callable[[SwitchState, str], bool]) -> str:
    lines = ["Interface                                Status    Vlan   Duplex   Speed     Type",
             "---------------------------------------- --------  ----   -------  --------- ------"]
    for itf in sw.interfaces.values():
        if not itf.physical:
            continue
        up = (not itf.shutdown) and link_up(sw, itf.name)
        vlan = "routed" if itf.routed else "1"
        speed = _speed_of(itf.name) if up else "Unknown"
        duplex = "Full" if up else "Unknown"
        status = "disabled" if itf.shutdown else "up" if up else "down"  # a port shut in its config reads disabled
        lines.append(f"{itf.name:<40} {status:<8}  {vlan:<6} {duplex:<8} {speed:<9} {'copper' if itf.name.startswith('Mgmt') else 'fiber'}")
    return "\n".join(lines)


def _speed_of(name: str) -> str:
    for kw, speed in (("EightHundred", "800G"), ("FourHundred", "400G"), ("TwoHundred", "200G"), ("Hundred", "100G"),
                      ("TFGigabit", "25G"), ("TenGigabit", "10G"), ("Mgmt", "1000M")):
        if name.startswith(kw):
            return speed
    return "Unknown"


def show_ip_route(sw: SwitchState, link_up: Callable[[SwitchState, str], bool], extra: list | None = None) -> str:
    """Connected, local and static routes; a static route is installed only when its next hop is on an up subnet.

    Addresses as integers (zcube_deploy.ipv4): a 512-port switch has ~1,000 connected and static routes, and the
    next hop of each static route is looked up by its network under each connected prefix length, not tried
    against every connected subnet in turn."""
    lines = ["", "Codes:  C - Connected, L - Local, S - Static", "        R - RIP, O - OSPF, B - BGP, I - IS-IS", "",
             "Gateway of last resort is no set"]
    entries: list[tuple[tuple[int, int], str]] = []  # ((network, prefix length), text): sorted as ip route sorts
    connected: set[tuple[int, int]] = set()
    for itf in sw.interfaces.values():
        if not itf.address or itf.shutdown:
            continue
        if itf.physical and not itf.name.startswith("Mgmt") and not link_up(sw, itf.name):
            continue
        addr, plen = _address(itf.address[0]), _prefix_len(itf.address[1])
        net = addr & MASKS[plen]
        connected.add((net, plen))
        entries.append(((net, plen), f"C     {ntoa(net)}/{plen} is directly connected, {itf.name}"))
        entries.append(((addr, 32), f"L     {ntoa(addr)}/32 is directly connected, {itf.name}"))
    lens = sorted({plen for _, plen in connected})
    for text in sw.routes:
        _, _, n, m, nh = text.split()[:5]
        plen = _prefix_len(m)
        net = _address(n) & MASKS[plen]
        if nh == "Null":
            entries.append(((net, plen), f"S     {ntoa(net)}/{plen} is directly connected, Null 0"))
            continue
        hop = _address(nh)
        if any((hop & MASKS[k], k) in connected for k in lens):
            entries.append(((net, plen), f"S     {ntoa(net)}/{plen} [1/0] via {nh}"))
    entries += [((int(net.network_address), net.prefixlen), text) for net, text in extra or ()]  # B routes (lab/bgp.py)
    entries.sort(key=lambda e: e[0])
    return "\n".join(lines + [e[1] for e in entries])


def _address(text: str) -> int:
    """An address the CLI took (``ipaddress`` read it there), as an integer."""
    value = parse(text)
    return int(IPv4Address(text)) if value is None else value


def _prefix_len(mask: str) -> int:
    """The prefix length of a mask the CLI took: a netmask, or a host mask as ``ipaddress`` reads one."""
    plen = MASK_LENS.get(mask)
    return IPv4Network(f"0.0.0.0/{mask}").prefixlen if plen is None else plen
