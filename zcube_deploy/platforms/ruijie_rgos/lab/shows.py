"""The simulated switch's show outputs (layouts from ruijie.md): version, interface status, IP routes."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network
from typing import Callable

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
        lines.append(f"{itf.name:<40} {'up' if up else 'down':<8}  {vlan:<6} {duplex:<8} {speed:<9} {'copper' if itf.name.startswith('Mgmt') else 'fiber'}")
    return "\n".join(lines)


def _speed_of(name: str) -> str:
    for kw, speed in (("EightHundred", "800G"), ("FourHundred", "400G"), ("TwoHundred", "200G"), ("Hundred", "100G"),
                      ("TFGigabit", "25G"), ("TenGigabit", "10G"), ("Mgmt", "1000M")):
        if name.startswith(kw):
            return speed
    return "Unknown"


def show_ip_route(sw: SwitchState, link_up: Callable[[SwitchState, str], bool], extra: list | None = None) -> str:
    """Connected, local and static routes; a static route is installed only when its next hop is on an up subnet."""
    lines = ["", "Codes:  C - Connected, L - Local, S - Static", "        R - RIP, O - OSPF, B - BGP, I - IS-IS", "",
             "Gateway of last resort is no set"]
    connected: list[tuple[IPv4Network, str, str]] = []
    for itf in sw.interfaces.values():
        if not itf.address or itf.shutdown:
            continue
        if itf.physical and not itf.name.startswith("Mgmt") and not link_up(sw, itf.name):
            continue
        net = IPv4Network(f"{itf.address[0]}/{itf.address[1]}", strict=False)
        connected.append((net, itf.address[0], itf.name))
    entries = []
    for net, addr, name in connected:
        entries.append((net, f"C     {net} is directly connected, {name}"))
        entries.append((IPv4Network(f"{addr}/32"), f"L     {addr}/32 is directly connected, {name}"))
    for text in sw.routes:
        _, _, n, m, nh = text.split()[:5]
        if nh == "Null":
            net = IPv4Network(f"{n}/{m}", strict=False)
            entries.append((net, f"S     {net} is directly connected, Null 0"))
            continue
        nh_ip = IPv4Address(nh)
        if any(nh_ip in net for net, _, _ in connected):
            net = IPv4Network(f"{n}/{m}", strict=False)
            entries.append((net, f"S     {net} [1/0] via {nh}"))
    entries += extra or []  # B routes (lab/bgp.py), as (network, text)
    entries.sort(key=lambda e: (int(e[0].network_address), e[0].prefixlen))
    return "\n".join(lines + [e[1] for e in entries])
