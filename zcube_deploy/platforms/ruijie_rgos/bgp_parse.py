"""The BGP and BFD part of an RGOS running config, read into records (pure; no device, no simulator).

``parse_config(text)`` reads what the lab's BGP model (``lab/bgp.py``) and verify's readers
(``fastparse.py``) need: the hostname, each interface's address, shutdown and ``bfd interval``,
the static routes, and ``router bgp`` (neighbours with remote AS and ``fall-over bfd``, ``network
A mask M``, ``maximum-paths``, multipath-relax, router ID, ``redistribute connected``; inside
``address-family ipv4 [unicast]`` or at the top of the instance). CRLF is accepted and lines it
does not know are ignored. The records are a projection of the general reader's sections
(reader.py :func:`read_sections`). It lives in the platform, not the simulator, so verify reads a config
without importing the lab.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from ipaddress import IPv4Interface, IPv4Network

from zcube_deploy.ipv4 import parse as _aton  # dotted quad -> int, None when not one
from zcube_deploy.platforms.ruijie_rgos.reader import read_sections

DEFAULT_MAXIMUM_PATHS = 1


@dataclass(frozen=True, slots=True)
class Neighbor:
    address: str
    remote_as: int | None = None
    fall_over_bfd: bool = False


@dataclass(slots=True)
class Itf:
    name: str
    address: IPv4Interface | None = None
    ip: str | None = None  # the address as text (compared often)
    shutdown: bool = False
    bfd: tuple[int, int, int] | None = None  # interval, min_rx, multiplier (ms, ms, n)


@dataclass(slots=True)
class Router:
    asn: int
    router_id: str | None = None
    neighbors: dict[str, Neighbor] = field(default_factory=dict)
    networks: list[IPv4Network] = field(default_factory=list)
    maximum_paths: int = DEFAULT_MAXIMUM_PATHS
    multipath_relax: bool = False
    redistribute_connected: bool = False


@dataclass(slots=True)
class SwitchConfig:
    hostname: str = ""
    interfaces: dict[str, Itf] = field(default_factory=dict)
    static: list[tuple[IPv4Network, str | None]] = field(default_factory=list)  # (prefix, next hop or None for Null 0)
    bgp: Router | None = None


_ITF = re.compile(r"^interface (.+?)\s*$")
_NET_MASK = re.compile(r"^network (\S+) mask (\S+)$")


def _net(addr: str, mask: str) -> IPv4Network | None:
    try:
        return IPv4Network(f"{addr}/{mask}", strict=False)
    except ValueError:
        return None


def parse_config(text: str) -> SwitchConfig:
    """The parts of an RGOS running config this model reads (CRLF accepted, unknown lines ignored): a
    projection of the general reader's sections (reader.py)."""
    cfg = SwitchConfig()
    for s in read_sections(text):
        if s.stray:
            continue
        line = s.text
        words = line.split()
        if words[0] == "hostname" and len(words) == 2:
            cfg.hostname = words[1]
        elif (m := _ITF.match(line)):
            itf = cfg.interfaces.setdefault(m.group(1), Itf(m.group(1)))
            for _, raw in s.children:
                _interface_line(itf, raw.strip().split())
        elif words[:2] == ["router", "bgp"] and len(words) == 3 and words[2].isdigit():
            cfg.bgp = Router(int(words[2]))
            _router_lines(cfg.bgp, [raw.strip() for _, raw in s.children])
        elif words[:2] == ["ip", "route"] and len(words) >= 5:
            net = _net(words[2], words[3])
            if net is not None:
                nh = None if words[4].lower().startswith("null") else words[4]
                cfg.static.append((net, nh))
    return cfg


def _interface_line(itf: Itf, words: list[str]) -> None:
    """One line of an ``interface`` section: its address, ``shutdown``, ``bfd interval``."""
    if words[:2] == ["ip", "address"] and len(words) == 4:
        a, plen = _aton(words[2]), prefix_len(words[3])
        if a is not None and plen is not None:
            itf.address, itf.ip = IPv4Interface((a, plen)), words[2]
    elif words == ["shutdown"]:
        itf.shutdown = True
    elif words[0] == "bfd" and len(words) == 7 and words[1] == "interval" and words[3] == "min_rx" and words[5] == "multiplier":
        if all(w.isdigit() for w in (words[2], words[4], words[6])):
            itf.bfd = (int(words[2]), int(words[4]), int(words[6]))


def _router_lines(r: Router, lines: list[str]) -> None:
    """The lines of a ``router bgp`` section (those of an address family other than IPv4 unicast skipped)."""
    in_af = af_ok = False
    for line in lines:
        words = line.split()
        if words[0] == "address-family":
            in_af = True
            af_ok = words[1:2] == ["ipv4"] and (len(words) == 2 or words[2] == "unicast")
            continue
        if words[0] == "exit-address-family":
            in_af = False
            continue
        if in_af and not af_ok:
            continue
        if words[0] == "neighbor" and len(words) >= 3:
            addr = words[1]
            n = r.neighbors.get(addr, Neighbor(addr))
            if words[2] == "remote-as" and len(words) == 4 and words[3].isdigit():
                r.neighbors[addr] = Neighbor(addr, int(words[3]), n.fall_over_bfd)
            elif words[2:] == ["fall-over", "bfd"]:
                r.neighbors[addr] = Neighbor(addr, n.remote_as, True)
        elif (m := _NET_MASK.match(line)):
            net = _net(m.group(1), m.group(2))
            if net is not None:
                r.networks.append(net)
        elif words[0] == "maximum-paths" and words[-1].isdigit():
            r.maximum_paths = int(words[-1])
        elif words == ["bgp", "bestpath", "as-path", "multipath-relax"]:
            r.multipath_relax = True
        elif words[:2] == ["bgp", "router-id"] and len(words) == 3:
            r.router_id = words[2]
        elif words[:2] == ["redistribute", "connected"]:
            r.redistribute_connected = True


@lru_cache(maxsize=64)
def prefix_len(mask: str) -> int | None:
    """Prefix length of a mask as ``ipaddress`` reads it after ``0.0.0.0/`` (a netmask, a host mask or a length)."""
    try:
        return IPv4Network(f"0.0.0.0/{mask}").prefixlen
    except ValueError:
        return None
