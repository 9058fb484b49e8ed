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
BGP_SESSIONS_COMMAND = "show ip bgp summary"  # named in verify's fix texts
port_name = long_name  # a port id as LLDP reports it (abbreviated) -> the name the plan uses
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


def _plen(mask: str) -> int | None:
    """'255.255.255.254' -> 31; None for a string that is not a contiguous dotted mask."""
    return _PLEN.get(mask)


# Every pattern starts with a literal "\n" (the text is read with one put in front): a pattern
# that starts with a literal is searched for at C speed, where `^` with re.M tries every position.
# Possessive quantifiers: a failing match never backtracks through a section's lines.
_EOL = r"[ \t]*(?![^\n])"  # trailing blanks, then the end of the line
_SECTION = re.compile(r"\ninterface[ \t]++([^\n]*+)((?:\n[ \t][^\n]*+)*+)")  # (name, its lines)
_ADDRESS_IN = re.compile(r"\n[ \t]+ip address (\S+) (\S+)")
_ADDRESS_LINE = re.compile(r"\n ip address (\S+) (\S+)")  # as RGOS shows it: indented by one space
_BFD_IN = re.compile(r"\n[ \t]+bfd interval ")
_HOSTNAME = re.compile(r"\nhostname[ \t]++([^\n]*+)")
_ROUTE = re.compile(r"\nip route (\S+) (\S+) (\S+)(?: (\S+))?(?: (\S+))?")
_BGP = re.compile(r"\nrouter bgp[ \t]++([^\n]*+)((?:\n[ \t][^\n]*+)*+)")
_NEIGHBOR = re.compile(r"\n[ \t]+neighbor (\S+) remote-as (\S+)" + _EOL)
_FALL_OVER = re.compile(r"\n[ \t]+neighbor (\S+) fall-over bfd" + _EOL)
_NETWORK = re.compile(r"\n[ \t]+network (\S+)(?: mask (\S+))?" + _EOL)


def _has(body: str, line: str) -> bool:
    """Does a section's ``body`` (its lines, each after a "\\n") hold ``line`` exactly (RGOS indents by one space)?"""
    return f"\n {line}\n" in body or body.endswith(f"\n {line}")


_LOGICAL = ("Loopback", "Mgmt")  # routed without `no switchport`


def _prefix(address: str, mask: str | None) -> str:
    plen = _PLEN.get(mask) if mask is not None else 32
    return f"{address}/{plen}" if plen is not None else f"{address}/?{mask}"


def _route(m: tuple[str, ...]) -> tuple[str, str | None] | None:
    net, mask, a, b, c = m
    if a == "Null":
        return _prefix(net, mask), None
    if a[0].isdigit():
        return _prefix(net, mask), a
    if c and c[0].isdigit():  # via an interface: ip route N M <type> <number> <next hop>
        return _prefix(net, mask), c
    return None


_SUFFIX = {mask: f"/{plen}" for mask, plen in _PLEN.items()}


def _addresses(text: str, sections: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(interface, "a.b.c.d/len") of every address line of every interface section."""
    holders = [n for n, body in sections if "ip address " in body]
    found = _ADDRESS_LINE.findall(text)
    if len(holders) == len(found) == text.count("ip address "):
        # every occurrence is a well-formed address line, and each holder has exactly one: pair them in order
        return [(n, a + (_SUFFIX.get(m) or "/?" + m)) for n, (a, m) in zip(holders, found)]
    return [(n, _prefix(a, m)) for n, body in sections if "ip address " in body for a, m in _ADDRESS_IN.findall(body)]


def _asn(text: str) -> int | str:
    text = text.strip()
    return int(text) if text.isdigit() else text


def config_facts(text: str) -> dict:
    """RGOS config text -> neutral facts (no RGOS syntax in the result), as flat lists:

    ``{"hostnames": [name, ...],                       # every hostname line (one expected)
       "interfaces": [name, ...],                      # every interface section, in order
       "addresses": [(interface, "a.b.c.d/len"), ...], # every address line
       "shutdown": [interface, ...], "routed": [interface, ...], "bfd": [interface, ...],
       "routes": [("net/len", next hop or None), ...], # None: a discard (null) route
       "bgp": [{"asn": int, "neighbors": [(address, remote AS), ...], "bfd_neighbors": [address, ...],
                "networks": ["net/len", ...]}, ...]}   # one entry per BGP instance (one expected)``

    A section is its line and the lines after it that start with white space. A port is routed
    when it carries ``no switchport``; the loopback and the management port always are; it is
    shut down when it carries ``shutdown``. An unreadable mask is kept verbatim
    (``"a.b.c.d/?mask"``) so that a comparison with the plan fails instead of the line being lost.
    Regular expressions over the whole text and substring tests per section, no per-line Python:
    this is what makes the render self-check cheap (hier_config stays for push's remediation).

    >>> f = config_facts("hostname S1\\ninterface Loopback 0\\n ip address 10.1.0.1 255.255.255.255\\n"
    ...                  "interface TwoHundredGigabitEthernet 0/1:1\\n no switchport\\n ip address 10.0.0.0 255.255.255.254\\n"
    ...                  "ip route 10.0.0.0 255.255.255.0 Null 0\\nip route 10.2.0.0 255.255.0.0 10.200.0.1\\n")
    >>> f["hostnames"], f["addresses"], f["routed"], f["routes"]
    (['S1'], [('Loopback 0', '10.1.0.1/32'), ('TwoHundredGigabitEthernet 0/1:1', '10.0.0.0/31')], \
['Loopback 0', 'TwoHundredGigabitEthernet 0/1:1'], [('10.0.0.0/24', None), ('10.2.0.0/16', '10.200.0.1')])
    """
    text = "\n" + (text.replace("\r", "") if "\r" in text else text)
    return _fast_facts(text) or _general_facts(text)


# The fast reader: a routed port in exactly the shape render writes it (description, `no switchport`,
# one address, `no shutdown`, nothing else, no blank after its name) is read by one branch of one pattern, every other section
# by the general branch; routes in the plain form `ip route N M <next hop>|Null 0` by one pattern.
# Its facts are the general reader's (tests/test_parsers.py compares the two over mutated configs);
# it gives up (None) on anything it does not account for, and the general reader reads the text.
_SECTION_FAST = re.compile(
    r"\ninterface(?: ([^\s](?:[^\n]*+(?<![ \t]))?)\n description [^\n]*+\n no switchport\n ip address (\S+) (\S+)\n no shutdown(?![^\n])(?!\n[ \t])"
    r"|[ \t]++([^\n]*+)((?:\n[ \t][^\n]*+)*+))")
_ROUTE_FAST = re.compile(r"\nip route (?:(\S+) (\S+) (\d\S*+|Null(?!\S))|())")  # the last group: a route in another form
_TOP_FAST = re.compile(r"\n(?:hostname([ \t]++)([^\n]*+)|router bgp[ \t]++([^\n]*+)((?:\n[ \t][^\n]*+)*+))")  # (blank, name) or BGP


def _fast_facts(text: str) -> dict | None:
    rows = _ROUTE_FAST.findall(text)
    if any(not n for n, _, _, _ in rows):
        return None
    sections = _SECTION_FAST.findall(text)
    try:
        routes = [(n + _SUFFIX[m], None if h == "Null" else h) for n, m, h, _ in rows]
        plain = [(n, a + _SUFFIX[m]) for n, a, m, _, _ in sections if n]
    except KeyError:  # a mask that is not a contiguous dotted mask
        return None
    if len(plain) == len(sections):  # every section is a plain routed port
        names = [n for n, _ in plain]
        addresses, shutdown, routed, bfd = plain, [], names, []
    else:
        plain_addresses = iter(plain)  # in section order
        # (name, body or None for a plain routed port)
        rows2 = [(n, None) if n else ((g.rstrip(" \t") if g[-1:] in (" ", "\t") else g), body) for n, _, _, g, body in sections]
        names = [n for n, _ in rows2]
        addresses = []
        for n, body in rows2:
            if body is None:
                addresses.append(next(plain_addresses))
            elif "ip address " in body:
                addresses += [(n, _prefix(x, y)) for x, y in _ADDRESS_IN.findall(body)]
        shutdown = [n for n, body in rows2 if body is not None and _has(body, "shutdown")]
        routed = [n for n, body in rows2 if body is None or n.startswith(_LOGICAL) or _has(body, "no switchport")]
        bfd = [n for n, body in rows2 if body is not None and "bfd interval " in body and _BFD_IN.search(body)]
    top = _TOP_FAST.findall(text)
    return {"hostnames": [h.rstrip() for blank, h, _, _ in top if blank], "interfaces": names, "addresses": addresses,
            "shutdown": shutdown, "routed": routed, "bfd": bfd, "routes": routes,
            "bgp": _bgp_facts([(asn, body) for blank, _, asn, body in top if not blank])}


def _bgp_facts(instances: list[tuple[str, str]]) -> list[dict]:
    """(AS text, section body) of each `router bgp` section -> its facts."""
    return [{"asn": _asn(asn), "neighbors": [(a, _asn(x)) for a, x in _NEIGHBOR.findall(body)],
             "bfd_neighbors": _FALL_OVER.findall(body),
             # `network A mask M`; a bare `network A` is read as the host route A/32
             "networks": [_prefix(a, m or None) for a, m in _NETWORK.findall(body)]}
            for asn, body in instances]


def _general_facts(text: str) -> dict:
    """:func:`config_facts` of ``text`` (with a "\\n" put in front) by the general reader."""
    sections = _SECTION.findall(text)
    if any(n[-1:] in (" ", "\t") for n, _ in sections):  # trailing blanks are no part of a name (other white space is)
        sections = [(n.rstrip(" \t"), body) for n, body in sections]
    routes = [r for r in map(_route, _ROUTE.findall(text)) if r is not None]
    return {"hostnames": [h.rstrip() for h in _HOSTNAME.findall(text)],
            "interfaces": [n for n, _ in sections],
            "addresses": _addresses(text, sections),
            "shutdown": [n for n, body in sections if _has(body, "shutdown")],
            "routed": [n for n, body in sections if n.startswith(_LOGICAL) or _has(body, "no switchport")],
            "bfd": [n for n, body in sections if "bfd interval " in body and _BFD_IN.search(body)],
            "routes": routes, "bgp": _bgp_facts(_BGP.findall(text))}


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
