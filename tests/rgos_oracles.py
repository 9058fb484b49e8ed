"""The RGOS config readers as they were before issue 24 made them projections of the general reader's
sections (platforms/ruijie_rgos/reader.py ``read_sections``): kept here, verbatim, as test ORACLES
(tests/test_rgos_sections.py), so that a projection that reads a config otherwise fails a test.

- ``numbered_sections``: push's config-file check (sections.py);
- ``parse_config``: the BGP and BFD records (bgp_parse.py), the lab's BGP model and verify;
- ``interface_addresses``: verify's addresses of the running config (fastparse.py);
- ``l3_facts``, ``top_level_lines``: push's guard and push's and audit's scope, read from the hier_config tree (hconfig.py);
- ``running_sections``: audit's running sections (drift.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from ipaddress import IPv4Interface, IPv4Network

from zcube_deploy.ipv4 import parse as _aton
from zcube_deploy.platforms.facts import UnreadableOutput, line_number
from zcube_deploy.platforms.ruijie_rgos.bgp_parse import Itf, Neighbor, Router, SwitchConfig, prefix_len
from zcube_deploy.platforms.ruijie_rgos.hconfig import parse_config as hconfig_tree
from zcube_deploy.platforms.ruijie_rgos.hconfig import strip_volatile

# ---------------------------------------------------------------- sections.py
_SKIP = re.compile(r"^(?:!|end$|Building configuration|Current configuration|version )")


@dataclass(frozen=True)
class Section:
    """One top-level line (``number``: 1-based line number in the file) and its indented lines."""

    number: int
    text: str
    children: tuple[tuple[int, str], ...]

    def lines(self) -> list[str]:
        """The section as text lines, sub-lines stripped of their indentation (how two sections are compared)."""
        return [self.text] + [c.strip() for _, c in self.children]


def numbered_sections(text: str) -> list[Section]:
    """The sections of RGOS config ``text`` in file order.

    >>> [(s.number, s.text, s.children) for s in numbered_sections("! c\\nhostname A\\n!\\ninterface X 0/1\\n ip address 1.1.1.1 255.255.255.255\\n !\\nend\\n")]
    [(2, 'hostname A', ()), (4, 'interface X 0/1', ((5, ' ip address 1.1.1.1 255.255.255.255'),))]
    """
    out: list[Section] = []
    head: tuple[int, str] | None = None
    children: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if not line.strip() or _SKIP.match(line.lstrip()):
            continue
        if line[0] in " \t":
            if head is not None:
                children.append((number, line))
                continue
            # an indented line before any section: a section of its own, so that it is judged, not lost
        if head is not None:
            out.append(Section(head[0], head[1], tuple(children)))
        head, children = (number, line.strip()) if line[0] in " \t" else (number, line.rstrip()), []
    if head is not None:
        out.append(Section(head[0], head[1], tuple(children)))
    return out


# ---------------------------------------------------------------- bgp_parse.py
_ITF = re.compile(r"^interface (.+?)\s*$")
_NET_MASK = re.compile(r"^network (\S+) mask (\S+)$")


def _net(addr: str, mask: str) -> IPv4Network | None:
    try:
        return IPv4Network(f"{addr}/{mask}", strict=False)
    except ValueError:
        return None


def parse_config(text: str) -> SwitchConfig:
    """The parts of an RGOS running config this model reads (CRLF accepted, unknown lines ignored)."""
    cfg = SwitchConfig()
    block: str | None = None  # "itf", "bgp", "af" or None
    itf: Itf | None = None
    af_ok = False
    for raw in text.replace("\r", "").split("\n"):
        if not raw.strip() or raw.lstrip().startswith("!"):
            continue
        depth = len(raw) - len(raw.lstrip(" "))
        line = raw.strip()
        words = line.split()
        if depth == 0:
            block, itf = None, None
            if words[0] == "hostname" and len(words) == 2:
                cfg.hostname = words[1]
            elif (m := _ITF.match(line)):
                itf = cfg.interfaces.setdefault(m.group(1), Itf(m.group(1)))
                block = "itf"
            elif words[:2] == ["router", "bgp"] and len(words) == 3 and words[2].isdigit():
                cfg.bgp = Router(int(words[2]))
                block = "bgp"
            elif words[:2] == ["ip", "route"] and len(words) >= 5:
                net = _net(words[2], words[3])
                if net is not None:
                    nh = None if words[4].lower().startswith("null") else words[4]
                    cfg.static.append((net, nh))
            continue
        if block == "itf" and itf is not None:
            if words[:2] == ["ip", "address"] and len(words) == 4:
                a, plen = _aton(words[2]), prefix_len(words[3])
                if a is not None and plen is not None:
                    itf.address, itf.ip = IPv4Interface((a, plen)), words[2]
            elif words == ["shutdown"]:
                itf.shutdown = True
            elif words[0] == "bfd" and len(words) == 7 and words[1] == "interval" and words[3] == "min_rx" and words[5] == "multiplier":
                if all(w.isdigit() for w in (words[2], words[4], words[6])):
                    itf.bfd = (int(words[2]), int(words[4]), int(words[6]))
            continue
        if block in ("bgp", "af") and cfg.bgp is not None:
            r = cfg.bgp
            if words[0] == "address-family":
                block = "af"
                af_ok = words[1:2] == ["ipv4"] and (len(words) == 2 or words[2] == "unicast")
                continue
            if words[0] == "exit-address-family":
                block = "bgp"
                continue
            if block == "af" and not af_ok:
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
    return cfg



# ---------------------------------------------------------------- fastparse.py
_ADDR = re.compile(r"^ip address (\d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+)(?:\s+secondary)?$")


def _interface(address: str, mask: str, line: str, text: str) -> str:
    """"a.b.c.d/len" of an address line; an address or mask out of range (a hand-edited recording) is
    :class:`UnreadableOutput` naming the line, not a traceback."""
    try:
        return str(IPv4Interface(f"{address}/{mask}"))
    except ValueError as exc:
        raise UnreadableOutput("show running-config", line_number(text, line), line, str(exc)) from None


def interface_addresses(config_text: str) -> dict[str, list[str]]:
    """{interface: ["a.b.c.d/len", ...]} of every `interface` block of an RGOS config (l3_facts' "interfaces")."""
    out: dict[str, list[str]] = {}
    cur: str | None = None
    for raw in config_text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.rstrip()
        if not line or line.lstrip().startswith("!"):
            continue
        if not line[0].isspace():
            cur = line[len("interface "):].strip() if line.startswith("interface ") else None
            if cur is not None:
                out.setdefault(cur, [])
            continue
        if cur is not None:
            m = _ADDR.match(line.strip())
            if m:
                out[cur].append(_interface(m.group(1), m.group(2), line, config_text))
    return out



# ---------------------------------------------------------------- hconfig.py (the tree's reading)
_ADDR_RE = re.compile(r"^ip address (\d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+)(?:\s+secondary)?$")
_ROUTE_RE = re.compile(r"^ip route (\d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+) (?:(\S+ \S+) )?(\d+\.\d+\.\d+\.\d+)\b")


def l3_facts(config_text: str) -> dict:
    """Neutral layer-3 facts of an RGOS config.

    Returns ``{"interfaces": {name: ["a.b.c.d/len", ...]}, "routes": [("net/len", "next hop"), ...]}``.

    >>> l3_facts("interface Mgmt 0\\n ip address 172.16.0.11 255.255.255.0\\nip route 0.0.0.0 0.0.0.0 172.16.0.1\\n")
    {'interfaces': {'Mgmt 0': ['172.16.0.11/24']}, 'routes': [('0.0.0.0/0', '172.16.0.1')]}
    """
    tree = hconfig_tree(config_text)
    interfaces: dict[str, list[str]] = {}
    routes: list[tuple[str, str]] = []
    for child in tree.children:
        text = child.text
        if text.startswith("interface "):
            addrs = interfaces.setdefault(text[len("interface "):].strip(), [])
            for sub in child.children:
                m = _ADDR_RE.match(sub.text.strip())
                if m:
                    addrs.append(str(IPv4Interface(f"{m.group(1)}/{m.group(2)}")))
        else:
            m = _ROUTE_RE.match(text)
            if m:
                routes.append((str(IPv4Network(f"{m.group(1)}/{m.group(2)}", strict=False)), m.group(4)))
    return {"interfaces": interfaces, "routes": routes}



def top_level_lines(config_text: str) -> list[str]:
    """The top-level lines of an RGOS config (volatile lines and comments dropped), as hier_config reads them
    (spacing normalised), without building its tree: audit asks this of every rendered config. A config with a
    banner (its lines are one top-level line there), a duplicate top-level line or an indented first line is read
    by hier_config itself.

    >>> top_level_lines("hostname  A\\n!\\ninterface X 0/1\\n description d\\nend\\n")
    ['hostname A', 'interface X 0/1']
    """
    text = strip_volatile(config_text)
    tops: list[str] = []
    seen: set[tuple[int, str]] = set()  # (section, line): no two alike, so no two siblings alike (hier_config refuses those)
    if "banner" not in text and text[:1] not in (" ", "\t"):  # (else hier_config's banner and indentation rules decide)
        for line in text.splitlines():
            norm = " ".join(line.split())
            top = line[0] not in " \t"
            key = (-1 if top else len(tops), norm)
            if key in seen:
                break
            seen.add(key)
            if top:
                tops.append(norm)
        else:
            return tops
    return [c.text for c in hconfig_tree(config_text).children]


# ---------------------------------------------------------------- drift.py
def running_sections(text: str) -> dict[str, list[str]]:
    """The running config as top-level line -> its sub-lines (stripped), in order."""
    out: dict[str, list[str]] = {}
    head = None
    for raw in text.replace("\r", "").splitlines():
        if not raw.strip() or raw.lstrip().startswith("!"):
            continue
        if raw[0] == " ":
            if head is not None:
                out[head].append(raw.strip())
            continue
        head = raw.rstrip()
        out.setdefault(head, [])
    return out
