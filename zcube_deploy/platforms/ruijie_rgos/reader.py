"""The general reader of RGOS config text: text -> its neutral facts (platforms/facts.py), every line
accounted for by regular expressions over the whole text and substring tests per section.

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

from zcube_deploy.ipv4 import MASK_LENS
from zcube_deploy.platforms.facts import ConfigFacts

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
    """The facts of ``text`` (with a "\\n" put in front and no CR: :func:`prepared`)."""
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


def prepared(text: str) -> str:
    """``text`` as the readers take it: a "\\n" in front (every pattern starts with one), CRs dropped."""
    return "\n" + (text.replace("\r", "") if "\r" in text else text)
