"""The general reader of RGOS config text, in two views of the same text:

- :func:`read_sections`: the text as numbered sections (a top-level line and the indented lines
  after it), the one structure every other view of a config's lines is projected from: push's
  config-file check (sections.py), the BGP and BFD records (bgp_parse.py), the interface addresses
  verify and push's guard read (:func:`interface_addresses`, :func:`l3_view`), the top-level lines
  of push's and audit's scope (hconfig.py) and audit's running sections (drift.py). The fast readers
  (fastparse.py) are confirmed against these projections (tests/test_rgos_sections.py);
- :func:`general_facts`: text -> its neutral facts (platforms/facts.py), every line accounted for by
  regular expressions over the whole text and substring tests per section.

This is the one reader every other reading of a config's facts is confirmed against: the fast
reader and the confirmation of expected facts (fastparse.py, render's self-check and the routing
proof go through them) give exactly its facts, which tests/test_parsers.py checks on generated
configs (hypothesis) and on the rendered configs of every bundled example. A section is its line
and the lines after it that start with white space. A port is routed when it carries ``no
switchport``; the loopback and the management port always are; it is shut down when it carries
``shutdown``. An unreadable mask is kept verbatim (``"?mask"``) so that a comparison with the plan
fails instead of the line being lost.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Interface, IPv4Network
from operator import itemgetter
from typing import NamedTuple

from zcube_deploy.ipv4 import MASK_LENS
from zcube_deploy.platforms.facts import ConfigFacts, UnreadableOutput, line_number

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


def _bgp_facts(instances: list[tuple[str, str]]) -> list[dict]:
    """(AS text, section body) of each `router bgp` section -> its facts."""
    return [{"asn": _asn(asn), "neighbors": [(a, _asn(x)) for a, x in _NEIGHBOR.findall(body)],
             "bfd_neighbors": _FALL_OVER.findall(body),
             # `network A mask M`; a bare `network A` is read as the host route A/32
             "networks": [_prefix(a, m or None) for a, m in _NETWORK.findall(body)]}
            for asn, body in instances]


def general_facts(text: str) -> ConfigFacts:
    """The facts of ``text`` (with a "\\n" put in front and no CR: :func:`prepared`, which also gives it the
    sections of :func:`read_sections`, push's: the regular expressions below end a section at the first line
    that does not start with a blank, and read an interface's name as written)."""
    sections = _SECTION.findall(text)
    if any(n[-1:] in (" ", "\t") for n, _ in sections):  # trailing blanks are no part of a name (prepared() folds inner runs)
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


def prepared(text: str) -> str:
    """``text`` as the readers take it: a "\\n" in front (every pattern starts with one), CRs dropped, and the
    sections of :func:`read_sections` where the facts' regular expressions would read others.

    One section rule for what a config holds: push (its scope, hier_config's tree, the device's own CLI) reads a
    blank line, a comment, ``end`` or a shown-config line between two lines of a section as no part of it, and
    an interface's name with its runs of blanks as one (``interface X  0/1`` opens X 0/1); the patterns end a
    section at such a line and keep the blanks. Where the text has either (a hand-edited file, a recording;
    never a rendered config), it is rewritten from ``read_sections`` first, so the facts are of the sections
    push sends (tests/test_rgos_sections.py pins the two readings on generated configs).

    >>> prepared("interface  X   0/1\\n no switchport\\n!\\n shutdown\\n")
    '\\ninterface X 0/1\\n no switchport\\n shutdown\\n'
    """
    text = "\n" + (text.replace("\r", "") if "\r" in text else text)
    if _GAP.search(text) or _SPACED_NAME.search(text):
        return _as_sections(text)
    return text


# a line no part of any section (blank, a comment, `end`, a shown-config line) at the start of a line, then an indented
# line (the last of a run of them is followed by one): where the patterns end a section read_sections goes on with it
_GAP = re.compile(r"\n(?:![^\n]*+|end|Building configuration[^\n]*+|Current configuration[^\n]*+|version [^\n]*+)?\n[ \t]")
# an interface's name with a blank other than one space between its words (or two at its end), or no name at all:
# push folds the blanks, and opens no interface with no name
_SPACED_NAME = re.compile(r"\ninterface[ \t]++(?:(?:\S++ )*+\S*+[^\S\n]|(?![^\n]))")
_INTERFACE_HEAD = re.compile(r"interface[ \t]++(.*)")


def _as_sections(text: str) -> str:
    """``text`` (prepared) written back from its sections (:func:`read_sections`): only their lines, an interface's
    name with its blanks folded (as ``sections.section_interface`` reads it), a stray line kept indented."""
    out = [""]
    for s in read_sections(text):
        head = _INTERFACE_HEAD.fullmatch(s.text)
        out.append(" " + s.text if s.stray else f"interface {' '.join(head.group(1).split())}" if head else s.text)
        out += [c for _, c in s.children]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- the sections: the one structure of a config's lines
# The rules, once: lines end at "\n" (a CR before it is dropped: CRLF); blank lines, comments (``!``),
# ``end`` and the lines RGOS adds to a shown config (``Building configuration``, ``Current configuration``,
# ``version``) are no part of any section and end none; a line starting with a blank (space or tab) belongs
# to the section above; an indented line before any section is a section of its own (``stray``), so that a
# reader judging lines sees it.
_SKIP = re.compile(r"^(?:!|end$|Building configuration|Current configuration|version )")


class Section(NamedTuple):
    """One top-level line (``number``: 1-based line number in the file; ``text``: trailing blanks dropped)
    and its indented lines (their numbers and the lines as written, CR dropped). A tuple: audit reads the
    sections of every rendered config."""

    number: int
    text: str
    children: tuple[tuple[int, str], ...]
    stray: bool = False  # an indented line before any section (``text`` stripped): no top-level line

    def lines(self) -> list[str]:
        """The section as text lines, sub-lines stripped of their indentation (how two sections are compared)."""
        return [self.text] + [c.strip() for _, c in self.children]


def read_sections(text: str) -> list[Section]:
    """The sections of RGOS config ``text`` in file order.

    >>> [(s.number, s.text, s.children) for s in read_sections("! c\\nhostname A\\n!\\ninterface X 0/1\\n ip address 1.1.1.1 255.255.255.255\\n !\\nend\\n")]
    [(2, 'hostname A', ()), (4, 'interface X 0/1', ((5, ' ip address 1.1.1.1 255.255.255.255'),))]
    """
    out: list[Section] = []
    head: tuple[int, str, bool] | None = None
    children: list[tuple[int, str]] = []
    lines = text.split("\n")
    if "\r" in text:
        lines = [line.removesuffix("\r") for line in lines]
    for number, line in enumerate(lines, 1):
        rest = line.lstrip()
        if not rest or rest[0] == "!" or (rest[0] in "eBCv" and _SKIP.match(rest)):  # (the first letters _SKIP matches)
            continue
        if line[0] in " \t":
            if head is not None:
                children.append((number, line))
                continue
        if head is not None:
            out.append(Section(head[0], head[1], tuple(children), head[2]))
        head, children = (number, rest.rstrip(), True) if line[0] in " \t" else (number, line.rstrip(), False), []
    if head is not None:
        out.append(Section(head[0], head[1], tuple(children), head[2]))
    return out


# ---------------------------------------------------------------- projections of the sections
_ADDR = re.compile(r"^ip address (\d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+)(?:\s+secondary)?$")
_L3_ROUTE = re.compile(r"^ip route (\d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+) (?:(\S+ \S+) )?(\d+\.\d+\.\d+\.\d+)\b")


def interface_name(head: str) -> str | None:
    """The interface a top-level line opens (``interface X`` -> ``X``, blanks around it dropped), else None."""
    return head[len("interface "):].strip() if head.startswith("interface ") else None


def _address(address: str, mask: str, line: str, text: str, command: str) -> str:
    """"a.b.c.d/len" of an address line; an address or mask out of range (a hand-edited recording) is
    :class:`UnreadableOutput` naming the line, not a traceback."""
    try:
        return str(IPv4Interface(f"{address}/{mask}"))
    except ValueError as exc:
        raise UnreadableOutput(command, line_number(text, line), line, str(exc)) from None


def interface_addresses(config_text: str, command: str = "show running-config") -> dict[str, list[str]]:
    """{interface: ["a.b.c.d/len", ...]} of every `interface` section (an `ip address A M [secondary]` line
    each; verify reads the running config through it, fastparse.running_config being its fast twin)."""
    out: dict[str, list[str]] = {}
    for s in read_sections(config_text):
        name = None if s.stray else interface_name(s.text)
        if name is None:
            continue
        addrs = out.setdefault(name, [])
        for _, line in s.children:
            m = _ADDR.match(line.strip())
            if m:
                addrs.append(_address(m.group(1), m.group(2), line.rstrip(), config_text, command))
    return out


def l3_view(config_text: str) -> dict:
    """``{"interfaces": {name: ["a.b.c.d/len", ...]}, "routes": [("net/len", "next hop"), ...]}`` with the
    lines read as hier_config reads them (runs of blanks as one), what push's management guard compares."""
    interfaces: dict[str, list[str]] = {}
    routes: list[tuple[str, str]] = []
    for s in read_sections(config_text):
        if s.stray:
            continue
        head = " ".join(s.text.split())
        name = interface_name(head)
        if name is not None:
            addrs = interfaces.setdefault(name, [])
            for _, line in s.children:
                m = _ADDR.match(" ".join(line.split()))
                if m:
                    addrs.append(str(IPv4Interface(f"{m.group(1)}/{m.group(2)}")))
        elif (m := _L3_ROUTE.match(head)):
            routes.append((str(IPv4Network(f"{m.group(1)}/{m.group(2)}", strict=False)), m.group(4)))
    return {"interfaces": interfaces, "routes": routes}


_LINE = itemgetter(1)  # a numbered line's text
_ODD_BLANKS = ("  ", " \n", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")  # (with non-ASCII: all str.split splits at)


def top_level(config_text: str) -> list[str] | None:
    """The top-level lines (blanks normalised) when no two lines of one section (top level or sub-lines,
    blanks normalised) are alike and no line is stray; None otherwise (the caller's tree then decides).
    In a text whose only blanks are single spaces between words (no run, none at a line's end) a line is
    its normalised form, and the lines are compared as they are."""
    plain = config_text.isascii() and not config_text.endswith(" ") and not any(b in config_text for b in _ODD_BLANKS)
    tops: list[str] = []
    for s in read_sections(config_text):
        if s.stray:
            return None
        if len(s.children) > 1:
            lines = map(_LINE, s.children) if plain else map(tuple, map(str.split, map(_LINE, s.children)))
            if len(set(lines)) != len(s.children):
                return None
        tops.append(s.text if plain else " ".join(s.text.split()))
    return tops if len(set(tops)) == len(tops) else None


def sections_by_head(config_text: str) -> dict[str, list[str]]:
    """The config as top-level line -> its sub-lines (stripped), in order (a repeated top-level line: one
    entry, its sub-lines joined); stray lines left out."""
    out: dict[str, list[str]] = {}
    for s in read_sections(config_text):
        if not s.stray:
            out.setdefault(s.text, []).extend(c.strip() for _, c in s.children)
    return out
