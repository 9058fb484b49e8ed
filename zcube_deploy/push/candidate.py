"""The scope binds the candidate too: every line of a config file push would send is checked first (pure).

The managed scope (push/scope.py) is derived from the plan, never from the file on disk: a line
added to a rendered file by hand does not make itself owned. Before any session opens, every
section of the file must be

- free of control characters and ``?`` (RGOS context help), e.g. a terminal escape in a description;
- a section the scope owns (a port the plan names, a route inside the plan's pools, a global line
  or section the plan renders), not a negation (a config file states the wanted config; push
  computes what to remove), and not repeated (hier_config cannot hold two sections with one line);
- clear of the management path: the management interface's section exactly as the plan renders it
  (push never sends it: it is in the file for a first, console-pasted config), no address inside
  the management subnet on another interface, no route through the management network.

Each refusal names the file, the line number, the line and the rule; push refuses the whole run
with exit 2 (InputErrors), in a dry run exactly as in a real push.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from ipaddress import IPv4Interface, IPv4Network

from zcube_deploy.errors import Problem
from zcube_deploy.push.scope import ManagedScope
from zcube_deploy.safety import redact_secrets

MAX_PER_FILE = 20  # refusals listed per file (the rest are counted)


@dataclass(frozen=True)
class Management:
    """The management path of one switch, as the plan has it."""

    interface: str  # e.g. "Mgmt 0"
    network: IPv4Network | None  # the management subnet (None: no management address in the plan)


def refusals(path: str, text: str, planned: list, scope: ManagedScope, mgmt: Management, plat, platform: str) -> list[Problem]:
    """Why the config file ``text`` (at ``path``) may not be pushed; [] when every line is in scope.

    ``planned``: the sections (``numbered_sections``) of the config the plan renders for this switch (its management
    section is the one allowed); ``plat``: the platform module (``numbered_sections``, ``section_interface``,
    ``NEGATION``, ``config_facts``); ``platform`` its name (whose secret patterns mask the lines quoted).
    """
    found = _control_characters(text)
    bad_lines = {n for n, _, _ in found}
    planned_mgmt = [s.lines() for s in planned if _names(s.text, mgmt.interface, plat)]
    seen: dict[str, int] = {}
    owned = []
    for sec in plat.numbered_sections(text):
        if sec.number in bad_lines:
            continue
        refused = _section_refusals(sec, seen, planned_mgmt, scope, mgmt, plat)
        found += refused
        if not refused and not _names(sec.text, mgmt.interface, plat):
            owned.append(sec)
    found += _management_refusals(owned, mgmt, plat)
    found.sort()
    problems = [Problem(f"{path}:{n}", f"{redact_secrets(line, platform)!r}: {why}") for n, line, why in found[:MAX_PER_FILE]]
    if len(found) > MAX_PER_FILE:
        problems.append(Problem(path, f"... and {len(found) - MAX_PER_FILE} more lines refused"))
    return problems


_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f?]")  # "\n" ends a line; a tab is white space


def _control_characters(text: str) -> list[tuple[int, str, str]]:
    """(line number, line, why) of every line of ``text`` with a control character or ``?``."""
    if not _UNSAFE.search(text):
        return []
    return [(n, line, why) for n, line in enumerate(text.split("\n"), 1) if (why := control_character(line))]


def control_character(line: str) -> str | None:
    """Why ``line`` may never reach a device CLI (a control character or ``?``), else None."""
    for ch in line:
        if ch == "?":
            return "contains '?', which a device CLI takes for a request for help"
        if (ord(ch) < 32 and ch != "\t") or ord(ch) == 127:
            return f"contains the control character {ord(ch):#04x}: never sent to a device"
    return None


def _section_refusals(sec, seen: dict[str, int], planned_mgmt: list[list[str]], scope: ManagedScope, mgmt: Management,
                      plat) -> list[tuple[int, str, str]]:
    """The refusals of one section: (line number, line, rule)."""
    line = sec.text
    n = len(sec.children)
    more = f" (with the {n} indented line{'s' if n > 1 else ''} after it)" if n else ""
    key = " ".join(line.split())
    if key in seen:
        return [(sec.number, line, f"repeats line {seen[key]}: one section per line{more}")]
    seen[key] = sec.number
    if _names(line, mgmt.interface, plat):
        if planned_mgmt and sec.lines() == planned_mgmt[0]:
            return []
        return [(sec.number, line, f"the management interface {mgmt.interface}: push never sends it, and this section differs "
                                   f"from the one the plan renders ({' / '.join(planned_mgmt[0]) if planned_mgmt else 'none'})")]
    if line.startswith(plat.NEGATION):
        if _names(line[len(plat.NEGATION):], mgmt.interface, plat):
            return [(sec.number, line, f"touches the management interface {mgmt.interface}")]
        return [(sec.number, line, "a negation: a config file states the wanted config, push computes what to remove")]
    why = scope.why_not(line)
    if why is not None:
        return [(sec.number, line, f"outside the managed scope: {why}{more}")]
    return []


def _management_refusals(sections: list, mgmt: Management, plat) -> list[tuple[int, str, str]]:
    """Owned sections that would reach into the management subnet: an address in it, a route through it.

    The facts of all of them are read at once; only when one reaches in are they read section by section, to
    name the line."""
    if mgmt.network is None or not sections:
        return []
    if not _reaches(_text(sections), mgmt.network, plat):
        return []
    out = []
    for sec in sections:
        facts = plat.config_facts(_text([sec]))
        for name, ip, plen in zip(facts.address_interfaces, facts.address_ips, facts.address_lens):
            if _in(f"{ip}/{plen}", mgmt.network):
                number, text = next(((n, c) for n, c in sec.children if ip in c), (sec.number, sec.text))
                out.append((number, text, f"puts {ip}/{plen} on {name}, inside the management subnet {mgmt.network}"))
        for hop in facts.route_next_hops:
            if hop is not None and _in(hop, mgmt.network):
                out.append((sec.number, sec.text, f"a route through the management network ({hop} lies in {mgmt.network})"))
    return out


def _text(sections: list) -> str:
    return "".join("\n".join([s.text] + [c for _, c in s.children]) + "\n" for s in sections)


def _reaches(text: str, network: IPv4Network, plat) -> bool:
    facts = plat.config_facts(text)
    return any(_in(f"{ip}/{plen}", network) for ip, plen in zip(facts.address_ips, facts.address_lens)) or \
        any(h is not None and _in(h, network) for h in facts.route_next_hops)


def _in(address: str, network: IPv4Network) -> bool:
    """Does ``address`` (an address, or "address/len") lie in or overlap ``network``? False when it is no address
    (the device rejects it, and push reports the device's words)."""
    try:
        return IPv4Interface(address).network.overlaps(network)
    except ValueError:
        return False


def _names(line: str, interface: str, plat) -> bool:
    """Does the top-level line ``line`` open the section of ``interface`` (spacing aside)?"""
    return plat.section_interface(line) == " ".join(interface.split())
