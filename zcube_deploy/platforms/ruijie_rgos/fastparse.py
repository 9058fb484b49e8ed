"""The fast readers of RGOS text, each confirmed against a general one (tests/test_parsers.py,
tests/test_config_readers.py, tests/test_rgos_sections.py, tests/test_compare_findings.py):

- :func:`config_facts`, the entry of every reading of a config's facts: a text in the shape render
  writes is confirmed to read as the facts expected of it (:func:`confirms`), else read by
  :func:`fast_facts` (rendered shapes by one pattern), else by the general reader (reader.py),
  whose facts the other two give exactly;
- :func:`running_config`, verify's one pass over a running config: the general reader's addresses
  (``reader.interface_addresses``) and BGP records (``bgp_parse.parse_config``, both projections of
  ``reader.read_sections``) at once (tests/test_rgos_sections.py, tests/test_fastparse.py);
- :func:`scoped_sections`, audit's test of two configs for drift, on every running config of every
  run: the general reader's sections as text (tests/test_rgos_sections.py);
- :func:`running_reading`, audit's one reading of a running config for both: :func:`config_sections` and
  :func:`running_config` at once, those two its oracles (tests/test_rgos_sections.py);
- verify's readers of the show outputs it parses on every switch (not config text): they give the
  same result as the TextFSM templates of `show ip route` and `show interface status`. `show lldp
  neighbors detail` has its own module (show_lldp.py).
"""

from __future__ import annotations

import re
from itertools import compress, repeat
from operator import not_

from zcube_deploy.ipv4 import MASK_LENS as _PLEN  # dotted mask -> prefix length: the one table
from zcube_deploy.ipv4 import DOTTED_MASKS, ntoa
from zcube_deploy.ipv4 import parse as _aton  # dotted quad -> int, None when not one
from zcube_deploy.platforms.ruijie_rgos.bgp_parse import parse_config
from zcube_deploy.platforms.ruijie_rgos.bgp_parse import prefix_len as _mask_len
from zcube_deploy.platforms.facts import ConfigFacts
from zcube_deploy.platforms.ruijie_rgos.hconfig import _HEADS, _ONE_LINE_BANNER, strip_volatile
from zcube_deploy.platforms.ruijie_rgos.reader import (_ADDR, _ADDRESS_IN, _BFD_IN, _BGP, _HOSTNAME, _LOGICAL, _SKIP, _SUFFIX, _address,
                                                      _bgp_facts, _has, _len, general_facts, interface_addresses, prepared)

# ---------------------------------------------------------------- config text: its neutral facts


def config_facts(text: str, expect: ConfigFacts | None = None) -> ConfigFacts:
    """RGOS config text -> its neutral facts (platforms/facts.py: no RGOS syntax in them), exactly as
    the general reader (reader.py) reads them, only faster: regular expressions over the whole text
    and substring tests per section, no per-line Python, which is what makes the render self-check
    cheap (hier_config stays for push's remediation).

    With ``expect`` (the facts the caller believes the text has, e.g. render's self-check from the
    plan), a text in the shape render writes is confirmed to read as exactly ``expect`` without
    building the facts (:func:`confirms`), and ``expect`` itself is returned; anything else is read.
    The result is the same either way (tests/test_parsers.py).

    >>> f = config_facts("hostname S1\\ninterface Loopback 0\\n ip address 10.1.0.1 255.255.255.255\\n"
    ...                  "interface TwoHundredGigabitEthernet 0/1:1\\n no switchport\\n ip address 10.0.0.0 255.255.255.254\\n"
    ...                  "ip route 10.0.0.0 255.255.255.0 Null 0\\nip route 10.2.0.0 255.255.0.0 10.200.0.1\\n")
    >>> f.hostnames, f.addresses, f.routed, f.routes
    (['S1'], [('Loopback 0', '10.1.0.1/32'), ('TwoHundredGigabitEthernet 0/1:1', '10.0.0.0/31')], \
['Loopback 0', 'TwoHundredGigabitEthernet 0/1:1'], [('10.0.0.0/24', None), ('10.2.0.0/16', '10.200.0.1')])
    """
    text = prepared(text)
    if expect is not None and confirms(text, expect):
        return expect
    return _read(text)


def _read(text: str) -> ConfigFacts:
    return fast_facts(text) or general_facts(text)


# The fast reader: a routed port in exactly the shape render writes it (description, `no switchport`,
# one address, in mode bgp a BFD line, `no shutdown`, nothing else, no blank after its name) is read
# by one branch of one pattern, every other section by the general branch; routes in the plain form
# `ip route N M <next hop>|Null 0` by one pattern. The matches are turned into columns at C speed
# (zip, map, filter); only the other sections (the management port, the loopback, unused ports)
# are looked at one by one. Its facts are the general reader's (tests/test_parsers.py compares the
# two over generated and mutated configs); it gives up (None) on anything it does not account for, and the
# general reader reads the text.
_SECTION_FAST = re.compile(
    r"\ninterface(?: ([^\s](?:[^\n]*+(?<![ \t]))?)\n description [^\n]*+\n no switchport\n ip address (\S+) (\S+)(\n bfd interval [^\n]*+)?"
    r"\n no shutdown(?![^\n])(?!\n[ \t])"
    r"|[ \t]++([^\n]*+)((?:\n[ \t][^\n]*+)*+))")
_ROUTE_FAST = re.compile(r"\nip route (?:(\S+) (\S+) (\d\S*+|Null(?!\S))|())")  # the last group: a route in another form


def fast_facts(text: str) -> ConfigFacts | None:
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


def confirms(text: str, e: ConfigFacts) -> bool:
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




# ---------------------------------------------------------------- show ip route, show interface status
# The TextFSM templates' rules, as the same regular expressions (TextFSM matches each rule's regex at the
# start of a line, in order; a Filldown value keeps its last assignment, the others are cleared after a
# record; an unmatched optional group is ''). Without the TextFSM engine around them they cost a fifth.
_IF_NAME = r"[A-Za-z][A-Za-z-]*\s?\d+(?:/\d+)*(?::\d+)?"
_RT_HEAD = r"(?P<protocol>[A-Z*][A-Za-z0-9*]*)\s+(?P<network>\d+\.\d+\.\d+\.\d+)/(?P<prefix_length>\d+)\s+"
_RT_VIA = (r"\[(?P<distance>\d+)/(?P<metric>\d+)\]\s+via\s+(?P<nexthop_ip>\d+\.\d+\.\d+\.\d+)(?:,\s+\d[\d:dhmsw]*)?"
           r"(?:,\s+(?P<nexthop_if>" + _IF_NAME + r"))?\s*$")
_RT_RULES = (re.compile(_RT_HEAD + _RT_VIA),  # a route with its (first) next hop
             re.compile(_RT_HEAD + r"is\s+directly\s+connected,\s+(?P<nexthop_if>" + _IF_NAME + r")\s*$"),
             re.compile(r"\s+" + _RT_VIA))  # an equal-cost next hop under the route above
_RT_KEYS = ("distance", "metric", "nexthop_ip", "nexthop_if")


def _lines(text: str) -> list[str]:
    """The lines as parsers.parse gives them to TextFSM (CRLF and CR accepted)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").splitlines()


# The three rules as one pattern over the whole text (re.M: each alternative anchored at a line start, in the
# rules' order; unnamed groups: 1-7 the first rule's, 8-11 the second's, 12-15 the third's). With a space for
# each \s it is the rules exactly when the lines hold no white space but spaces (:func:`_plain`); no group can
# then cross a line end.
_IF_SP = r"[A-Za-z][A-Za-z-]* ?\d+(?:/\d+)*(?::\d+)?"
_VIA_SP = r"\[(\d+)/(\d+)\] +via +(\d+\.\d+\.\d+\.\d+)(?:, +\d[\d:dhmsw]*)?(?:, +(" + _IF_SP + r"))? *$"
_HEAD_SP = r"([A-Z*][A-Za-z0-9*]*) +(\d+\.\d+\.\d+\.\d+)/(\d+) +"
_RT_WHOLE = re.compile("^(?:" + _HEAD_SP + _VIA_SP + "|" + _HEAD_SP + r"is +directly +connected, +(" + _IF_SP + r") *$"
                       + "|" + r" +" + _VIA_SP + ")", re.M)
_NOT_PLAIN = ("\t", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")


def _plain(text: str) -> bool:
    """ASCII, and no white space but spaces and newlines (str.splitlines and \\s then agree with a space and \\n)."""
    return text.isascii() and not any(c in text for c in _NOT_PLAIN)


def ip_route_whole(text: str) -> list[dict[str, str]] | None:
    """:func:`ip_route`'s rows read with one pattern over the whole text, or None when the text is not
    :func:`_plain` (then the per-line reader reads it)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not _plain(text):
        return None
    rows: list[dict[str, str]] = []
    p = n = ln = ""
    for m in _RT_WHOLE.findall(text):
        if m[0]:  # a route with its (first) next hop
            p, n, ln = m[0], m[1], m[2]
            rows.append({"protocol": p, "network": n, "prefix_length": ln, "distance": m[3], "metric": m[4],
                         "nexthop_ip": m[5], "nexthop_if": m[6]})
        elif m[7]:  # directly connected
            p, n, ln = m[7], m[8], m[9]
            rows.append({"protocol": p, "network": n, "prefix_length": ln, "distance": "", "metric": "",
                         "nexthop_ip": "", "nexthop_if": m[10]})
        else:  # an equal-cost next hop under the route above
            rows.append({"protocol": p, "network": n, "prefix_length": ln, "distance": m[11], "metric": m[12],
                         "nexthop_ip": m[13], "nexthop_if": m[14]})
    return rows


def ip_route(text: str) -> list[dict[str, str]]:
    """Rows of `show ip route` as ``parse("show ip route", text)`` gives them (one per next hop; protocol,
    network and prefix length filled down to the continuation lines): :func:`ip_route_whole`'s, or read line
    by line when that refuses the text."""
    whole = ip_route_whole(text)
    if whole is not None:
        return whole
    rows: list[dict[str, str]] = []
    head = {"protocol": "", "network": "", "prefix_length": ""}
    r1, r2, r3 = _RT_RULES
    for line in _lines(text):
        m = r1.match(line) or r2.match(line) or r3.match(line)
        if m is None:
            continue
        g = m.groupdict()
        if "protocol" in g:
            head = {"protocol": g["protocol"], "network": g["network"], "prefix_length": g["prefix_length"]}
        rows.append(head | {k: g.get(k) or "" for k in _RT_KEYS})
    return rows


_ST_HEADER = re.compile(r"\s*Interface\s+Status\s+Vlan")
_ST_SEP = re.compile(r"\s*-{4,}")
_ST_ROW = re.compile(r"(?P<interface>" + _IF_NAME + r")\s+(?P<status>\S+)\s+(?P<vlan>\S+)\s+(?P<duplex>\S+)\s+(?P<speed>\S+)\s*"
                     r"(?P<type>\S*)\s*$")


def interface_status(text: str) -> list[dict[str, str]]:
    """Rows of `show interface status` as ``parse("show interface status", text)`` gives them (the rows after
    the `Interface  Status  Vlan ...` header)."""
    rows: list[dict[str, str]] = []
    lines = iter(_lines(text))
    for line in lines:
        if _ST_HEADER.match(line):
            break
    for line in lines:
        if _ST_SEP.match(line):
            continue
        m = _ST_ROW.match(line)
        if m is not None:
            rows.append(m.groupdict())
    return rows


# ---------------------------------------------------------------- running config: addresses and BGP, one pass
_ODD_SPACE = re.compile(r"[^\S \n]")  # whitespace other than space and newline (a tab, a lone CR, ...)
_CFG_ITF = re.compile(r"^interface (.+?)\s*$")


# a dotted quad as ntoa writes it (four octets <= 255 without leading zeros): ntoa(parse(x)) == x exactly for these
_canonical = re.compile(r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])").fullmatch


def running_config(config_text: str) -> tuple[dict[str, list[str]], dict]:
    """(``interface_addresses(text)``, the BGP part of ``bgp_parse.parse_config(text)`` that verify reads:
    {"asn", "neighbors", "addresses", "bfd_ports", "fall_over_bfd"} as observations.observe_bgp gives it)
    in one pass over the text, without parse_config's work on everything else (its static routes, its
    ipaddress objects). Text whose whitespace is not only spaces and newlines (the two readers treat tabs
    and lone CRs differently) is read by the two readers themselves."""
    text = config_text.replace("\r\n", "\n")
    if _ODD_SPACE.search(text):
        return interface_addresses(config_text), bgp_config_of(parse_config(config_text))
    addrs: dict[str, list[str]] = {}
    itfs: dict[str, list] = {}  # parse_config's interfaces: name -> [address text or None, has bfd interval]
    asn: int | None = None
    neighbors: dict[str, list] = {}  # address -> [remote AS, fall-over bfd]
    cur_a: list[str] | None = None  # interface_addresses' current block
    cur_i: list | None = None  # parse_config's current interface
    block = None  # parse_config's block: "itf", "bgp", "af" or None
    af_ok = False
    masks: dict[str, int | None] = {}
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line[0] == "!":
            continue
        if raw[0] != " ":  # top level (only spaces indent here)
            if line[0] in "eBCv" and _SKIP.match(raw):  # `end`, `version`: no section, and the end of none (read_sections);
                continue  # indented, no rule below reads them
            cur_a = addrs.setdefault(line[len("interface "):].strip(), []) if line.startswith("interface ") else None
            block, cur_i = None, None
            if line[0] == "i" and (m := _CFG_ITF.match(line)):
                cur_i = itfs.setdefault(m.group(1), [None, False])
                block = "itf"
            elif line[0] == "r":
                words = line.split()
                if words[:2] == ["router", "bgp"] and len(words) == 3 and words[2].isdigit():
                    asn, neighbors, block = int(words[2]), {}, "bgp"
            continue
        if cur_a is not None:
            m = _ADDR.match(line)
            if m:
                cur_a.append(_address(m.group(1), m.group(2), line, text, "show running-config") if m.group(2) not in _PLEN
                             or not _canonical(m.group(1)) else f"{m.group(1)}/{_PLEN[m.group(2)]}")
        if block == "itf":
            words = line.split()
            if words[:2] == ["ip", "address"] and len(words) == 4:
                canonical = _canonical(words[2])
                a = 0 if canonical else _aton(words[2])
                plen = masks[words[3]] if words[3] in masks else masks.setdefault(words[3], _mask_len(words[3]))
                if a is not None and plen is not None:
                    cur_i[0] = words[2] if canonical else ntoa(a)
            elif words[0] == "bfd" and len(words) == 7 and words[1] == "interval" and words[3] == "min_rx" and words[5] == "multiplier":
                if all(w.isdigit() for w in (words[2], words[4], words[6])):
                    cur_i[1] = True
        elif block in ("bgp", "af"):
            words = line.split()
            if words[0] == "address-family":
                block = "af"
                af_ok = words[1:2] == ["ipv4"] and (len(words) == 2 or words[2] == "unicast")
            elif words[0] == "exit-address-family":
                block = "bgp"
            elif (block != "af" or af_ok) and words[0] == "neighbor" and len(words) >= 3:
                n = neighbors.get(words[1], [None, False])
                if words[2] == "remote-as" and len(words) == 4 and words[3].isdigit():
                    neighbors[words[1]] = [int(words[3]), n[1]]
                elif words[2:] == ["fall-over", "bfd"]:
                    neighbors[words[1]] = [n[0], True]
    return addrs, _bgp_part(asn, neighbors, itfs)


def _bgp_part(asn: int | None, neighbors: dict[str, list], itfs: dict[str, list]) -> dict:
    """running_config's BGP part of what it read (neighbors: address -> [remote AS, fall-over bfd]; itfs: name ->
    [address or None, has bfd interval])."""
    return {"asn": asn, "neighbors": {a: n[0] for a, n in sorted(neighbors.items())},
            "addresses": {name: i[0] for name, i in itfs.items() if i[0] is not None},
            "bfd_ports": sorted(name for name, i in itfs.items() if i[1]),
            "fall_over_bfd": sorted(a for a, n in neighbors.items() if n[1])}


def bgp_config_of(cfg) -> dict:
    """The BGP part of a parsed config (bgp_parse.SwitchConfig) that verify reads."""
    return {"asn": cfg.bgp.asn if cfg.bgp else None,
            "neighbors": {a: n.remote_as for a, n in sorted(cfg.bgp.neighbors.items())} if cfg.bgp else {},
            "addresses": {name: str(i.address.ip) for name, i in cfg.interfaces.items() if i.address is not None},
            "bfd_ports": sorted(name for name, i in cfg.interfaces.items() if i.bfd),
            "fall_over_bfd": sorted(a for a, n in cfg.bgp.neighbors.items() if n.fall_over_bfd) if cfg.bgp else []}


# ---------------------------------------------------------------- config text: the sections audit compares
def scoped_sections(text: str, owns=None) -> list[str]:
    """The config's top-level sections inside ``owns`` (volatile lines dropped, as hier_config's input:
    hconfig.strip_volatile), each as its text, sorted: audit's fast test of two configs for drift, on every
    running config of every run. The general reader's sections give the same (tests/test_rgos_sections.py)."""
    return sorted(sec for sec in config_sections(text) if owns is None or owns(sec.split("\n", 1)[0]))


def config_sections(text: str) -> list[str]:
    """Every top-level section of the config (volatile lines dropped: hconfig.strip_volatile), each as its text
    (its top-level line first), in the config's order.

    In one pass over the lines when splitting the text once splits it as strip_volatile's output is split again
    (no line separator but the newline and CR: ASCII without \\x0b, \\x0c, \\x1c-\\x1e; the test of each line is
    strip_volatile's); else strip_volatile's text, split."""
    if not text.isascii() or any(c in text for c in _SEPARATORS):
        return _sections_of(strip_volatile(text).splitlines())
    sections: list[list[str]] = []
    for line in text.replace("\r", "").split("\n"):
        rest = line.lstrip()
        if not rest or rest[0] == "!" or rest == "no shutdown" or line == "end" or line.startswith(_HEADS):
            continue
        if line[0] != " ":
            if line.startswith("banner ") and _ONE_LINE_BANNER.match(line):
                line = "banner\t" + line[len("banner "):]
            sections.append([line])
        elif sections:
            sections[-1].append(line)
    return ["\n".join(sec) for sec in sections]


_SEPARATORS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e")  # (ASCII line separators of str.splitlines besides \n, \r)


def _sections_of(lines: list[str]) -> list[str]:
    sections: list[list[str]] = []
    for line in lines:
        if not line.startswith(" "):
            sections.append([line])
        elif sections:
            sections[-1].append(line)
    return ["\n".join(sec) for sec in sections]


# ---------------------------------------------------------------- running config: sections, addresses and BGP, one reading
# Audit reads each running config twice: verify's observation (running_config: addresses and BGP) and config drift
# (config_sections). running_reading gives both from one reading of the text, at C speed where it can: on a text
# of spaces and newlines only (after CRLF -> LF) and ASCII, with no top-level `no shutdown` line (the one line
# config_sections drops that running_config takes for a top-level line, ending a section), the lines config_sections
# drops are cut out by one pattern (each is a line running_config skips without ending a section: blank, comment,
# `no shutdown`, `end`, the shown-config heads), the rest split at its top-level lines is config_sections' sections,
# and running_config's blocks are those very sections: an `interface` section in the shape a switch shows a rendered
# port (description, `no switchport`, one address, in mode bgp a BFD line) is read by one branch of one pattern,
# every other `interface` or `router` section by running_config itself (each alone: what it reads of one is the
# same in the whole text, merged in order as below). Anything else is read by the two functions, which stay the
# oracles (tests/test_rgos_sections.py compares the three over generated and mutated configs).
_DROPPED = re.compile(r"\n(?: *+(?:![^\n]*+)?| *+no shutdown|end|(?:" + "|".join(map(re.escape, _HEADS)) + r")[^\n]*+)(?![^\n])")
_TOP = re.compile(r"\n(?! )")
_RC_SECTION = re.compile(
    r"\ninterface (?:([^ \n][^\n]*+)(?<! )\n description [^\n]*+\n no switchport\n ip address (\S++) (\S++)"
    r"(\n bfd interval \d++ min_rx \d++ multiplier \d++)?(?![^\n])(?!\n )"
    r"|([^\n]*+)((?:\n [^\n]*+)*+))"
    r"|\n(router [^\n]*+(?:\n [^\n]*+)*+)")
_BANNER = re.compile(r"\nbanner ([^\n]*+)")
_ALL_CANONICAL = re.compile(r"(?:" + _canonical.__self__.pattern + r"\n)*+").fullmatch  # each line a canonical dotted quad
_NOT_PLAIN_CONFIG = ("\t", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")


def running_reading(text: str) -> tuple[list[str], dict[str, list[str]], dict]:
    """(``config_sections(text)``, ``*running_config(text)``) from one reading of the text (see above). The sections
    are kept for :func:`running_sections` until the next reading (audit's drift of the same text asks for them)."""
    try:
        got = _fast_reading(text)
    except ValueError:  # an address running_config refuses (UnreadableOutput): refused by the oracle, naming its line
        got = None
    if got is None:
        got = (config_sections(text), *running_config(text))
    global _LAST
    _LAST = (text, got[0])
    return got


_LAST: tuple[str | None, list[str]] = (None, [])  # the text running_reading read last (in this process) and its sections


def running_sections(text: str) -> list[str]:
    """``config_sections(text)``, without reading the text again when :func:`running_reading` has just read it (audit
    reads each switch's running config for verify's observation, then for config drift). Read-only: the list is kept."""
    last, sections = _LAST
    return sections if text == last else config_sections(text)


def _fast_reading(text: str) -> tuple[list[str], dict[str, list[str]], dict] | None:
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if not text.isascii() or any(c in text for c in _NOT_PLAIN_CONFIG) or text.startswith("no shutdown") or "\nno shutdown" in text:
        return None
    kept = _DROPPED.sub("", "\n" + text)  # "\n" + the kept lines, each after a "\n"
    if "\nbanner " in kept:  # a banner on one line, as config_sections writes it
        kept = _BANNER.sub(_one_line_banner, kept)
    sections = _TOP.split(kept)[1:]  # (the first part: lines indented before any section, or nothing)
    addrs: dict[str, list[str]] = {}
    itfs: dict[str, list] = {}
    asn, neighbors = None, {}
    rows = _RC_SECTION.findall(kept)
    names = [r[0] for r in rows]
    done = 0
    for k in [*compress(range(len(rows)), map(not_, names)), len(rows)]:  # each section that is no rendered port, then the end
        if k > done and not _plain_ports(rows[done:k], addrs, itfs):
            return None
        done = k + 1
        if k == len(rows):
            break
        _, _, _, _, head, body, router = rows[k]
        if router:
            sub = running_config(router)[1]
            if sub["asn"] is not None:  # (`router bgp N`: its neighbours replace those read before)
                asn, fall = sub["asn"], set(sub["fall_over_bfd"])
                neighbors = {x: [ras, x in fall] for x, ras in sub["neighbors"].items()}
            continue
        line = "interface " + head.rstrip()
        if line == "interface ":  # (`interface` alone: no section running_config reads)
            continue
        got, sub = running_config(line + body)
        for n, v in got.items():
            addrs.setdefault(n, []).extend(v)
        i = itfs.setdefault(_CFG_ITF.match(line).group(1), [None, False])
        i[0] = next(iter(sub["addresses"].values()), i[0])
        i[1] = i[1] or bool(sub["bfd_ports"])
    return sections, addrs, _bgp_part(asn, neighbors, itfs)


def _one_line_banner(m: re.Match) -> str:
    return "\nbanner\t" + m.group(1) if _ONE_LINE_BANNER.match("banner " + m.group(1)) else m.group(0)


def _plain_ports(rows: list[tuple], addrs: dict[str, list[str]], itfs: dict[str, list]) -> bool:
    """A run of rendered ports (_RC_SECTION's first branch) read into running_config's ``addrs`` and ``itfs``, in
    order; False when an address is one running_config does not take as written (the oracles then read the text)."""
    names, ips, masks, bfds = list(zip(*rows))[:4]
    if not set(masks) <= _SUFFIX.keys() or not _ALL_CANONICAL("\n".join(ips) + "\n"):
        return False
    cidrs = map(str.__add__, ips, map(_SUFFIX.__getitem__, masks))  # (_SUFFIX[m] == f"/{_PLEN[m]}")
    if len(set(names)) == len(names) and addrs.keys().isdisjoint(names) and itfs.keys().isdisjoint(names):  # (columns, in C)
        addrs.update(zip(names, map(list, zip(cidrs))))
        itfs.update(zip(names, map(list, zip(ips, map(bool, bfds)))))
        return True
    for name, a, cidr, bfd in zip(names, ips, cidrs, bfds):  # a port shown twice: merged as running_config merges it
        addrs.setdefault(name, []).append(cidr)
        i = itfs.setdefault(name, [None, False])
        i[0] = a
        i[1] = i[1] or bool(bfd)
    return True
