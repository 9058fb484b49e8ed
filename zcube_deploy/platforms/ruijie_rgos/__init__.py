"""Ruijie RGOS 11: everything zcube-deploy knows about this network OS, in one package.

What the rest of the tool asks a platform (the seam, see docs/platforms.md), and where it lives here:

- ``NAPALM_DRIVER``: the name ``napalm.get_network_driver`` resolves (``driver.py``, the entry
  point ``napalm_ruijie_rgos`` in pyproject); push and verify use only the NAPALM contract.
- ``CONFIG_SUFFIX``, ``LOOPBACK``, ``MASK_STYLE``: syntax facts the views and readers need.
- :func:`config_facts`: config text -> the neutral facts (hostname, interfaces with addresses in
  prefix-length form, static routes, BGP) that render's self-check and the routing proof read.
- :func:`l3_facts`, :func:`top_level_lines`, :func:`parse_config`: push's management guard and scope;
  :func:`numbered_sections`, :func:`section_interface`, ``NEGATION`` (``sections.py``): push's check of a
  config file before it is sent; :func:`config_drift` (``hconfig.py``): push's read-back after a rollback.
- ``VERIFY_COMMANDS`` and :func:`observe` (``observations.py``): what verify runs and how it is read.
- ``names.py`` (interface names and abbreviations: the one table), ``parsers.py`` (TextFSM),
  ``hconfig.py`` (the hier_config driver for push remediation), ``lab/`` (the simulated switch).
- :func:`console_bootstrap`, :func:`access_line_refusal`, :func:`ssh_gaps` (``bootstrap.py``): the console lines
  of a factory-fresh unit (`zcube replace`).
- ``platform.yaml``: the managed scope, the loopback push owns, the secret patterns.
"""

from __future__ import annotations

import re
from itertools import compress, repeat
from operator import not_
from ipaddress import IPv4Interface, IPv4Network

from zcube_deploy.ipv4 import DOTTED_MASKS, MASK_LENS
from zcube_deploy.platforms.facts import ConfigFacts
from zcube_deploy.platforms.ruijie_rgos.bootstrap import access_line_refusal, console_bootstrap, ssh_gaps  # noqa: F401 (a fresh unit's console lines)
from zcube_deploy.platforms.ruijie_rgos.drain import GRACEFUL_SHUTDOWN_CONFIRMED, drained_config  # noqa: F401 (the platform's drain edits)
from zcube_deploy.platforms.ruijie_rgos.hconfig import config_drift, parse_config
from zcube_deploy.platforms.ruijie_rgos.names import long_name, short_name
from zcube_deploy.platforms.ruijie_rgos.sections import NEGATION, numbered_sections, section_interface

NAME = "ruijie_rgos"
NAPALM_DRIVER = "ruijie_rgos"
CONFIG_SUFFIX = ".cfg"
LOOPBACK = "Loopback 0"
BGP_SESSIONS_COMMAND = "show ip bgp summary"  # named in verify's fix texts
RUNNING_CONFIG_COMMAND = "show running-config"  # what audit compares with the rendered config
port_name = long_name  # a port id as LLDP reports it (abbreviated) -> the name the plan uses
MASK_STYLE = "dotted"  # addresses are written `ip address A.B.C.D M.M.M.M`: the views give both mask and prefix length

__all__ = ["CONFIG_SUFFIX", "access_line_refusal", "console_bootstrap", "ssh_gaps", "FACT_COMMANDS", "LOOPBACK", "MASK_STYLE", "NAME", "NAPALM_DRIVER", "NEGATION", "RUNNING_CONFIG_COMMAND",
           "VERIFY_COMMANDS", "command_error", "config_drift", "config_facts", "drained_config", "drift_rows", "l3_facts", "long_name",
           "numbered_sections", "observe", "parse_config", "section_interface", "short_name", "top_level_lines"]

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


def drift_rows(running: str, intended: str, owns=None) -> list:
    """Config drift of ``running`` from ``intended`` inside ``owns``, as neutral rows (drift.py; audit's kinds).

    (drift.py is imported here, when asked, not at the top: through the driver's remediation it
    loads netmiko and napalm, which render, plan and the offline commands never need.)
    """
    from zcube_deploy.platforms.ruijie_rgos.drift import drift_rows as rows

    return rows(running, intended, owns)


SECTION_END = "exit"  # the line a remediation (``remediation``) sends after a section's lines


def remediation(running: str, intended: str, owns=None) -> list[str]:
    """The lines push sends to take ``running`` to ``intended`` inside ``owns`` (the driver's
    ``remediation_lines``: what `zcube push --dry-run` writes to DIR/push/<switch>.diff); `zcube
    expand` computes its change sets with it, offline.

    (driver.py is imported here, when asked: it loads netmiko and napalm, which render, plan and the
    offline commands never need.)
    """
    from zcube_deploy.platforms.ruijie_rgos.driver import remediation_lines

    return remediation_lines(running, intended, owns)


def top_level_lines(config_text: str) -> list[str]:
    """The top-level lines of an RGOS config (volatile lines and comments dropped)."""
    return [c.text for c in parse_config(config_text).children]


# ---- the neutral parsed form (render's self-check, the routing proof)

_PLEN = MASK_LENS  # dotted mask -> prefix length, the 33 contiguous masks only


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


def _len(mask: str | None) -> int | str:
    """A mask's prefix length (a missing mask: a host, 32); "?mask" when it is no contiguous mask."""
    if mask is None:
        return 32
    plen = _PLEN.get(mask)
    return plen if plen is not None else "?" + mask


def _prefix(address: str, mask: str | None) -> str:
    return f"{address}/{_len(mask)}"


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


def _addresses(text: str, sections: list[tuple[str, str]]) -> list[tuple[str, str, int | str]]:
    """(interface, address, prefix length) of every address line of every interface section."""
    holders = [n for n, body in sections if "ip address " in body]
    found = _ADDRESS_LINE.findall(text)
    if len(holders) == len(found) == text.count("ip address "):
        # every occurrence is a well-formed address line, and each holder has exactly one: pair them in order
        return [(n, a, _len(m)) for n, (a, m) in zip(holders, found)]
    return [(n, a, _len(m)) for n, body in sections if "ip address " in body for a, m in _ADDRESS_IN.findall(body)]


def _asn(text: str) -> int | str:
    text = text.strip()
    return int(text) if text.isdigit() else text


def config_facts(text: str, expect: ConfigFacts | None = None) -> ConfigFacts:
    """RGOS config text -> its neutral facts (platforms/facts.py: no RGOS syntax in them).

    A section is its line and the lines after it that start with white space. A port is routed
    when it carries ``no switchport``; the loopback and the management port always are; it is
    shut down when it carries ``shutdown``. An unreadable mask is kept verbatim (``"?mask"``) so
    that a comparison with the plan fails instead of the line being lost. Regular expressions
    over the whole text and substring tests per section, no per-line Python: this is what makes
    the render self-check cheap (hier_config stays for push's remediation).

    With ``expect`` (the facts the caller believes the text has, e.g. render's self-check from the
    plan), a text in the shape render writes is confirmed to read as exactly ``expect`` without
    building the facts (:func:`_confirms`), and ``expect`` itself is returned; anything else is read.
    The result is the same either way (tests/test_parsers.py).

    >>> f = config_facts("hostname S1\\ninterface Loopback 0\\n ip address 10.1.0.1 255.255.255.255\\n"
    ...                  "interface TwoHundredGigabitEthernet 0/1:1\\n no switchport\\n ip address 10.0.0.0 255.255.255.254\\n"
    ...                  "ip route 10.0.0.0 255.255.255.0 Null 0\\nip route 10.2.0.0 255.255.0.0 10.200.0.1\\n")
    >>> f.hostnames, f.addresses, f.routed, f.routes
    (['S1'], [('Loopback 0', '10.1.0.1/32'), ('TwoHundredGigabitEthernet 0/1:1', '10.0.0.0/31')], \
['Loopback 0', 'TwoHundredGigabitEthernet 0/1:1'], [('10.0.0.0/24', None), ('10.2.0.0/16', '10.200.0.1')])
    """
    text = "\n" + (text.replace("\r", "") if "\r" in text else text)
    if expect is not None and _confirms(text, expect):
        return expect
    return _read(text)


def _read(text: str) -> ConfigFacts:
    return _fast_facts(text) or _general_facts(text)


# The fast reader: a routed port in exactly the shape render writes it (description, `no switchport`,
# one address, in mode bgp a BFD line, `no shutdown`, nothing else, no blank after its name) is read
# by one branch of one pattern, every other section by the general branch; routes in the plain form
# `ip route N M <next hop>|Null 0` by one pattern. The matches are turned into columns at C speed
# (zip, map, filter); only the other sections (the management port, the loopback, unused ports)
# are looked at one by one. Its facts are the general reader's (tests/test_parsers.py compares the
# two over mutated configs); it gives up (None) on anything it does not account for, and the
# general reader reads the text.
_SECTION_FAST = re.compile(
    r"\ninterface(?: ([^\s](?:[^\n]*+(?<![ \t]))?)\n description [^\n]*+\n no switchport\n ip address (\S+) (\S+)(\n bfd interval [^\n]*+)?"
    r"\n no shutdown(?![^\n])(?!\n[ \t])"
    r"|[ \t]++([^\n]*+)((?:\n[ \t][^\n]*+)*+))")
_ROUTE_FAST = re.compile(r"\nip route (?:(\S+) (\S+) (\d\S*+|Null(?!\S))|())")  # the last group: a route in another form


def _fast_facts(text: str) -> ConfigFacts | None:
    rows = _ROUTE_FAST.findall(text)
    if rows:
        nets, masks, hops, _ = zip(*rows)
        suffixes = list(map(_SUFFIX.get, masks))
        if "" in nets or None in suffixes:  # a route in another form, or a mask that is no contiguous mask
            return None
        prefixes = list(map(str.__add__, nets, suffixes))
        next_hops = list(hops) if "Null" not in hops else [None if h == "Null" else h for h in hops]
    else:
        prefixes, next_hops = [], []
    sections = _SECTION_FAST.findall(text)
    if sections:
        plain_names, plain_ips, plain_masks, plain_bfd, other_names, bodies = zip(*sections)
    else:
        plain_names = plain_ips = plain_masks = plain_bfd = other_names = bodies = ()
    lens = list(map(_PLEN.get, filter(None, plain_masks)))
    if None in lens:
        return None
    names = list(plain_names)
    ips = list(filter(None, plain_ips))
    others = list(compress(range(len(plain_names)), map(not_, plain_names)))  # the sections that are not plain routed ports
    with_bfd = list(map(bool, plain_bfd))
    if not others:
        addr_names, addr_ips, addr_lens, shutdown, routed = list(names), ips, lens, [], list(names)
    else:
        plain = list(filter(None, plain_names))
        addr_names, addr_ips, addr_lens, shutdown = [], [], [], []
        is_routed = list(map(bool, plain_names))
        done = 0  # plain ports whose address is taken
        last = -1
        for k in others:
            n = k - last - 1  # plain ports between the last other section and this one
            if n:
                addr_names += plain[done:done + n]
                addr_ips += ips[done:done + n]
                addr_lens += lens[done:done + n]
                done += n
            last = k
            name = other_names[k]
            if name[-1:] in (" ", "\t"):  # trailing blanks are no part of a name (other white space is)
                name = name.rstrip(" \t")
            names[k] = name
            body = bodies[k]
            if "ip address " in body:
                for a, m in _ADDRESS_IN.findall(body):
                    addr_names.append(name)
                    addr_ips.append(a)
                    addr_lens.append(_len(m))
            if _has(body, "shutdown"):
                shutdown.append(name)
            is_routed[k] = name.startswith(_LOGICAL) or _has(body, "no switchport")
            with_bfd[k] = "bfd interval " in body and _BFD_IN.search(body) is not None
        addr_names += plain[done:]
        addr_ips += ips[done:]
        addr_lens += lens[done:]
        routed = list(compress(names, is_routed))
    bfd = list(compress(names, with_bfd)) if any(with_bfd) else []
    # hostname and BGP lines: rfind from the end costs a fraction of a forward search through a text without them
    first = text.find("\nhostname")
    if first < 0:
        hostnames = []
    elif first == text.rfind("\nhostname"):
        m = _HOSTNAME.match(text, first)
        hostnames = [m.group(1).rstrip()] if m else []
    else:
        hostnames = [h.rstrip() for h in _HOSTNAME.findall(text)]
    bgp = _bgp_facts(_BGP.findall(text)) if text.rfind("\nrouter bgp") >= 0 else []
    return ConfigFacts(hostnames=hostnames, interfaces=names, address_interfaces=addr_names, address_ips=addr_ips,
                       address_lens=addr_lens, shutdown=shutdown, routed=routed, bfd=bfd, route_prefixes=prefixes,
                       route_next_hops=next_hops, bgp=bgp)


def _bgp_facts(instances: list[tuple[str, str]]) -> list[dict]:
    """(AS text, section body) of each `router bgp` section -> its facts."""
    return [{"asn": _asn(asn), "neighbors": [(a, _asn(x)) for a, x in _NEIGHBOR.findall(body)],
             "bfd_neighbors": _FALL_OVER.findall(body),
             # `network A mask M`; a bare `network A` is read as the host route A/32
             "networks": [_prefix(a, m or None) for a, m in _NETWORK.findall(body)]}
            for asn, body in instances]


def _general_facts(text: str) -> ConfigFacts:
    """:func:`config_facts` of ``text`` (with a "\\n" put in front) by the general reader."""
    sections = _SECTION.findall(text)
    if any(n[-1:] in (" ", "\t") for n, _ in sections):  # trailing blanks are no part of a name (other white space is)
        sections = [(n.rstrip(" \t"), body) for n, body in sections]
    routes = [r for r in map(_route, _ROUTE.findall(text)) if r is not None]
    addresses = _addresses(text, sections)
    return ConfigFacts(hostnames=[h.rstrip() for h in _HOSTNAME.findall(text)],
                       interfaces=[n for n, _ in sections],
                       address_interfaces=[r[0] for r in addresses],
                       address_ips=[r[1] for r in addresses],
                       address_lens=[r[2] for r in addresses],
                       shutdown=[n for n, body in sections if _has(body, "shutdown")],
                       routed=[n for n, body in sections if n.startswith(_LOGICAL) or _has(body, "no switchport")],
                       bfd=[n for n, body in sections if "bfd interval " in body and _BFD_IN.search(body)],
                       route_prefixes=[p for p, _ in routes], route_next_hops=[h for _, h in routes],
                       bgp=_bgp_facts(_BGP.findall(text)))


# ---- confirming expected facts (render's self-check)
#
# A config in the shape render writes is, once its description lines are taken out (they carry no
# fact), a head (comments, hostname, global lines, the management port and the loopback), a run of
# routed ports, each exactly `interface N / no switchport / ip address A M / no shutdown / !`, the
# unused ports, the static routes, each exactly `ip route NET MASK HOP`, and a tail. The run and the
# routes are written out from the expected facts in that shape (their canonical text) and compared
# with the config as two strings; the head, the unused ports and the tail are read (they are
# short). This is sound because
# - the reader reads a text piecewise: cut at the start of top-level lines, the facts of the whole
#   are the facts of the parts, in order (a section ends at the next top-level line);
# - the canonical text of facts F reads as F: every value put in it is one the reader reads back
#   unchanged (a name on one line with no blank at either end; an address, network and next hop
#   without white space, a next hop starting with a digit; a mask from the reader's own table), or
#   the confirmation gives up;
# - a description line carries no fact wherever it stands.
# tests/test_parsers.py checks that a confirmed text reads as the expected facts over mutated configs.

_MASK = dict(enumerate(DOTTED_MASKS))  # prefix length -> dotted mask: the reader's table, inverted
_DESCRIPTION = re.compile(r"\n description [^\n]*+")  # a description line (a port's): no fact in it
_WHITE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"  # the ASCII characters that are white space to the reader's \S and \s
_NOT_DIGIT_START = re.compile(r"\n[^0-9]")
_PORT = ("\ninterface ", "", "\n no switchport\n ip address ", "", " ", "", "\n no shutdown\n!")
_ROUTE_LINE = ("\nip route ", "", " ", "", " ", "")
_MASK_OF_LEN = {str(plen): mask for plen, mask in _MASK.items()}  # "31" -> its mask


def _has_white(text: str) -> bool:
    return any(c in text for c in _WHITE)


def _read_part(text: str) -> ConfigFacts:
    """The facts of a part of a text cut at the start of top-level lines (none when no line could carry one)."""
    if "\ninterface" in text or "\nip route" in text or "\nhostname" in text or "\nrouter bgp" in text:
        return _read(text)
    return ConfigFacts([], [], [], [], [], [], [], [], [], [], [])


def _route_block(prefixes: list[str], hops: list[str | None]) -> str | None:
    """The canonical text of these static routes (each a line `ip route NET MASK HOP` after a "\\n", a
    discard route's hop `Null 0`), or None when a value would not read back unchanged."""
    nets, _, lens = zip(*map(str.partition, prefixes, repeat("/")))  # "NET/LEN": split at the first "/"
    masks = list(map(_MASK_OF_LEN.get, lens))  # LEN in decimal as the reader writes it, else None
    if None in masks or "" in nets or _has_white("".join(nets)):
        return None
    real = [h for h in hops if h is not None] if None in hops else hops
    if real:  # each a word starting with a digit (the reader takes a word starting otherwise for an interface)
        hop_text = "\n" + "\n".join(real)
        if "" in real or hop_text.count("\n") != len(real) or _has_white(hop_text.replace("\n", "")) or _NOT_DIGIT_START.search(hop_text):
            return None
    parts = list(_ROUTE_LINE) * len(prefixes)
    parts[1::6] = nets
    parts[3::6] = masks
    parts[5::6] = hops if len(real) == len(hops) else ["Null 0" if h is None else h for h in hops]
    return "".join(parts)


def _confirms(text: str, e: ConfigFacts) -> bool:
    """Does ``text`` ("\\n" in front, no CR) read as exactly ``e``? True only when it is in the shape render
    writes and its run of routed ports and its static routes are the canonical text of ``e``'s; False
    also when it may read as ``e`` in another way (the caller then reads it)."""
    if not text.isascii() or not _well_formed(e):
        return False
    try:
        return _confirms_facts(text, e)
    except TypeError:  # a value that is no string where one is written out: not what a reader gives
        return False


def _well_formed(e: ConfigFacts) -> bool:
    """The columns the canonical text is written from are lists, the parallel ones of one length, and the
    prefix lengths ints (a float or a bool would find a mask, and read back as another value)."""
    columns = (e.address_interfaces, e.address_ips, e.address_lens, e.route_prefixes, e.route_next_hops)
    return (all(type(c) is list for c in columns) and len(e.address_interfaces) == len(e.address_ips) == len(e.address_lens)
            and len(e.route_prefixes) == len(e.route_next_hops) and set(map(type, e.address_lens)) <= {int})


def _confirms_facts(text: str, e: ConfigFacts) -> bool:
    t = _DESCRIPTION.sub("", text)
    p = t.find("\n no switchport\n ip address ")
    if p < 0:
        return False
    s = t.rfind("\n", 0, p)
    if not t.startswith("\ninterface ", s):
        return False
    head = _read_part(t[:s])
    i0 = len(head.address_interfaces)
    names, ips = e.address_interfaces[i0:], e.address_ips[i0:]
    masks = list(map(_MASK.get, e.address_lens[i0:]))
    if not names or None in masks:
        return False
    joined = "\n" + "\n".join(names) + "\n"  # each name on one line, with no blank at either end
    if joined.count("\n") != len(names) + 1 or "\n\n" in joined or "\n " in joined or " \n" in joined or "\n\t" in joined or "\t\n" in joined:
        return False
    if "" in ips or _has_white("".join(ips)):
        return False
    parts = list(_PORT) * len(names)
    parts[1::7] = names
    parts[3::7] = ips
    parts[5::7] = masks
    run = "".join(parts)
    if not t.startswith(run, s):
        return False
    rest = t[s + len(run):]  # (it may start in the middle of the run's last line, `!`: a comment either way)
    h0 = len(head.route_prefixes)
    routes = e.route_prefixes[h0:]
    if routes:
        r = rest.find("\nip route ")
        block = _route_block(routes, e.route_next_hops[h0:])
        if r < 0 or block is None or not rest.startswith(block, r):
            return False
        v = r + len(block)
        if rest[v:v + 1] not in ("", "\n"):  # the last next hop ends there (`10.0.0.1x` is another one)
            return False
        between, after = _read_part(rest[:r]), _read_part(rest[v:])
    else:
        between, after = _read_part(rest), _read_part("")
    return (e.hostnames == head.hostnames + between.hostnames + after.hostnames
            and e.interfaces == head.interfaces + names + between.interfaces + after.interfaces
            and e.address_interfaces[:i0] == head.address_interfaces and e.address_ips[:i0] == head.address_ips
            and e.address_lens[:i0] == head.address_lens and not between.address_interfaces and not after.address_interfaces
            and e.shutdown == head.shutdown + between.shutdown + after.shutdown
            and e.routed == head.routed + names + between.routed + after.routed
            and e.bfd == head.bfd + between.bfd + after.bfd
            and e.route_prefixes == head.route_prefixes + between.route_prefixes + routes + after.route_prefixes
            and e.route_next_hops == head.route_next_hops + between.route_next_hops + e.route_next_hops[h0:] + after.route_next_hops
            and e.bgp == head.bgp + between.bgp + after.bgp)


# what verify runs on every switch, each read by observe() (`show version`, which push's get_facts
# reads, is not among them: nothing verify compares comes from it)
VERIFY_COMMANDS = ("show running-config", "show interface status", "show lldp neighbors detail", "show ip route",
                   "show ip bgp summary", "show bfd neighbors")
# which command each part of verify's observation comes from (vocabulary.Fact's values): a part whose
# command was not collected, or was answered with a CLI error, is not observed (a not_checked finding)
FACT_COMMANDS = {"hostname": "show running-config", "addresses": "show running-config", "bgp_config": "show running-config",
                 "link": "show interface status", "lldp": "show lldp neighbors detail", "routes": "show ip route",
                 "bgp_sessions": "show ip bgp summary", "bfd": "show bfd neighbors"}
# the CLI's answers to a command it does not take (docs/ruijie.md): the command's data is not there.
# ("% BGP instance is not running." is an answer: no BGP process.)
_CLI_ERRORS = ("% Invalid input", "% Incomplete command", "% Ambiguous command", "% Unknown command", "% Unrecognized command")


def command_error(output: str) -> str | None:
    """The CLI's error line when ``output`` is a refusal of the command rather than its output, else None."""
    for line in output.replace("\r", "\n").split("\n")[:5]:
        line = line.strip()
        if line.startswith(_CLI_ERRORS):
            return line[:200]
    return None


def observe(outputs: dict[str, str]) -> dict:
    """{command: raw text} -> verify's neutral observation (observations.py)."""
    # imported here: the show-output readers load TextFSM templates, start-up that render and push never need
    from zcube_deploy.platforms.ruijie_rgos.observations import observe as _observe

    return _observe(outputs)
