"""Ruijie RGOS 11: everything zcube-deploy knows about this network OS, in one package.

What the rest of the tool asks a platform (the seam, see docs/platforms.md), and where it lives here:

- ``NAPALM_DRIVER``: the name ``napalm.get_network_driver`` resolves (``driver.py``, the entry
  point ``napalm_ruijie_rgos`` in pyproject); push and verify use only the NAPALM contract.
- ``CONFIG_SUFFIX``, ``LOOPBACK``, ``MASK_STYLE``: syntax facts the views and readers need.
- :func:`config_facts`: config text -> the neutral facts (hostname, interfaces with addresses in
  prefix-length form, static routes, BGP) that render's self-check and the routing proof read.
- :func:`l3_facts`, :func:`top_level_lines`, :func:`parse_config`: push's management guard and scope.
- ``VERIFY_COMMANDS`` and :func:`observe` (``observations.py``): what verify runs and how it is read.
- ``names.py`` (interface names and abbreviations: the one table), ``parsers.py`` (TextFSM),
  ``hconfig.py`` (the hier_config driver for push remediation), ``lab/`` (the simulated switch).
- ``platform.yaml``: the managed scope, the loopback push owns, the secret patterns.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Interface, IPv4Network

from zcube_deploy.platforms.ruijie_rgos.hconfig import parse_config
from zcube_deploy.platforms.ruijie_rgos.names import long_name, short_name

NAME = "ruijie_rgos"
NAPALM_DRIVER = "ruijie_rgos"
CONFIG_SUFFIX = ".cfg"
LOOPBACK = "Loopback 0"
MASK_STYLE = "dotted"  # addresses are written `ip address A.B.C.D M.M.M.M`: the views give both mask and prefix length

__all__ = ["CONFIG_SUFFIX", "LOOPBACK", "MASK_STYLE", "NAME", "NAPALM_DRIVER", "VERIFY_COMMANDS", "config_facts", "l3_facts", "long_name",
           "observe", "parse_config", "short_name", "simulator", "top_level_lines"]

_ADDR_RE = re.compile(r"^ip address (\d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+)(?:\s+secondary)?$")
_ROUTE_RE = re.compile(r"^ip route (\d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+) (?:(\S+ \S+) )?(\d+\.\d+\.\d+\.\d+)\b")


def l3_facts(config_text: str) -> dict:
    """Neutral layer-3 facts of an RGOS config.

    Returns ``{"interfaces": {name: ["a.b.c.d/len", ...]}, "routes": [("net/len", "next hop"), ...]}``.

    >>> l3_facts("interface Mgmt 0\\n ip address 172.16.0.11 255.255.255.0\\nip route 0.0.0.0 0.0.0.0 172.16.0.1\\n")
    {'interfaces': {'Mgmt 0': ['172.16.0.11/24']}, 'routes': [('0.0.0.0/0', '172.16.0.1')]}
    """
    tree = parse_config(config_text)
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
    """The top-level lines of an RGOS config (volatile lines and comments dropped)."""
    return [c.text for c in parse_config(config_text).children]


# ---- the neutral parsed form (render's self-check, the routing proof)

_PLEN = {".".join(str((((0xFFFFFFFF << (32 - n)) & 0xFFFFFFFF) >> s) & 255) for s in (24, 16, 8, 0)): n for n in range(33)}
_QUAD = re.compile(r"^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$")


def _plen(mask: str) -> int | None:
    """'255.255.255.254' -> 31; None for a string that is not a contiguous dotted mask."""
    return _PLEN.get(mask)


def config_facts(text: str) -> dict:
    """RGOS config text -> neutral facts (no RGOS syntax in the result).

    ``{"hostnames": [name, ...],                  # every hostname line (one expected)
       "interfaces": {name: {"addresses": ["a.b.c.d/len", ...], "shutdown": bool, "routed": bool,
                             "bfd": bool, "description": str | None}},
       "routes": [("net/len", next hop or None), ...],   # None: a discard (null) route
       "bgp": [{"asn": int, "neighbors": [(address, remote AS), ...], "bfd_neighbors": [address, ...],
                "networks": ["net/len", ...]}, ...]}     # one entry per BGP instance (one expected)``

    A port is routed when it carries ``no switchport``; logical interfaces (loopback, management)
    always are. An unreadable address or mask is kept verbatim (``"a.b.c.d/?mask"``) so that a
    comparison with the plan fails instead of the line being lost. One pass over the lines: this
    is what makes the self-check cheap (hier_config stays for push's remediation).

    >>> f = config_facts("hostname S1\\ninterface Loopback 0\\n ip address 10.1.0.1 255.255.255.255\\n"
    ...                  "interface TwoHundredGigabitEthernet 0/1:1\\n no switchport\\n ip address 10.0.0.0 255.255.255.254\\n"
    ...                  "ip route 10.0.0.0 255.255.255.0 Null 0\\nip route 10.2.0.0 255.255.0.0 10.200.0.1\\n")
    >>> f["hostnames"], f["interfaces"]["TwoHundredGigabitEthernet 0/1:1"]["addresses"], f["routes"]
    (['S1'], ['10.0.0.0/31'], [('10.0.0.0/24', None), ('10.2.0.0/16', '10.200.0.1')])
    """
    hostnames: list[str] = []
    interfaces: dict[str, dict] = {}
    routes: list[tuple[str, str | None]] = []
    bgps: list[dict] = []
    itf: dict | None = None
    bgp: dict | None = None
    for raw in text.split("\n"):
        line = raw.rstrip("\r ")
        if not line or line.lstrip().startswith("!"):
            continue
        if line[0] != " ":  # a top-level line closes the section before it
            itf = bgp = None
            if line.startswith("interface "):
                name = line[10:].strip()
                itf = interfaces.get(name)
                if itf is None:
                    itf = interfaces[name] = {"addresses": [], "shutdown": False, "routed": name.startswith(("Loopback", "Mgmt")),
                                              "bfd": False, "description": None}
            elif line.startswith("ip route "):
                p = line.split()
                if len(p) >= 5:
                    plen = _plen(p[3])
                    prefix = f"{p[2]}/{plen if plen is not None else '?' + p[3]}"
                    if p[4] == "Null":
                        routes.append((prefix, None))
                    elif _QUAD.match(p[4]):
                        routes.append((prefix, p[4]))
                    elif len(p) >= 7 and _QUAD.match(p[6]):  # via an interface: ip route N M <type> <number> <next hop>
                        routes.append((prefix, p[6]))
            elif line.startswith("hostname "):
                hostnames.append(line[9:].strip())
            elif line.startswith("router bgp "):
                p = line.split()
                bgp = {"asn": int(p[2]) if len(p) == 3 and p[2].isdigit() else p[2:], "neighbors": [], "bfd_neighbors": [],
                       "networks": []}
                bgps.append(bgp)
            continue
        sub = line.strip()
        if itf is not None:
            if sub.startswith("ip address "):
                p = sub.split()
                plen = _plen(p[3]) if len(p) >= 4 else None
                itf["addresses"].append(f"{p[2]}/{plen if plen is not None else '?' + ' '.join(p[3:])}" if len(p) >= 3 else "?")
            elif sub == "shutdown":
                itf["shutdown"] = True
            elif sub == "no shutdown":
                itf["shutdown"] = False
            elif sub == "no switchport":
                itf["routed"] = True
            elif sub.startswith("bfd interval "):
                itf["bfd"] = True
            elif sub.startswith("description "):
                itf["description"] = sub[12:]
        elif bgp is not None:
            p = sub.split()
            if p[0] == "neighbor" and len(p) >= 3:
                if p[2] == "remote-as" and len(p) == 4:
                    bgp["neighbors"].append((p[1], int(p[3]) if p[3].isdigit() else p[3]))
                elif p[2:] == ["fall-over", "bfd"]:
                    bgp["bfd_neighbors"].append(p[1])
            elif p[0] == "network" and len(p) >= 2:
                # `network A mask M`; a bare `network A` is read as the host route A/32
                plen = _plen(p[3]) if len(p) >= 4 and p[2] == "mask" else 32
                bgp["networks"].append(f"{p[1]}/{plen if plen is not None else '?'}")
    return {"hostnames": hostnames, "interfaces": interfaces, "routes": routes, "bgp": bgps}


VERIFY_COMMANDS = ("show version", "show running-config", "show interface status", "show lldp neighbors detail", "show ip route",
                   "show ip bgp summary", "show bfd neighbors")


def observe(outputs: dict[str, str]) -> dict:
    """{command: raw text} -> verify's neutral observation (observations.py)."""
    from zcube_deploy.platforms.ruijie_rgos.observations import observe as _observe

    return _observe(outputs)


def simulator():
    """The simulated RGOS switch the lab runs (imported on demand: it is large)."""
    from zcube_deploy.platforms.ruijie_rgos import lab

    return lab
