"""A hier_config driver for Ruijie RGOS: how RGOS configs are parsed, compared and negated.

RGOS has no candidate configuration, so the difference between the running and the intended
config is computed here, hierarchically (interface blocks stay whole), and pushed line by line.
Push's management guard and scope read the general reader's sections as this tree reads them
(:func:`l3_facts`, :func:`top_level_lines`; tests/test_rgos_sections.py compares them with the tree's
own reading): what push compares before and after a change is what its remediation changes.

hier_config stays the one reader of its own trees (remediation, push's read-back, the config after a
change): its loader nests lines by their indentation depth, keeps a banner whole, refuses duplicate
siblings and applies the driver's rules; giving it the general reader's sections would mean writing its
loader again. What it loads is the text :func:`strip_volatile` prepares.
"""

from __future__ import annotations

import re

from hier_config import get_hconfig
from hier_config.models import IdempotentCommandsRule, MatchRule, OrderingRule
from hier_config.platforms.driver_base import HConfigDriverBase, HConfigDriverRules
from hier_config.root import HConfig

from zcube_deploy.platforms.ruijie_rgos.reader import l3_view, top_level

# lines RGOS shows by default or that are volatile: never part of a comparison
VOLATILE = (
    r"^Building configuration.*",
    r"^Current configuration.*",
    r"^version .*",
    r"^end$",
    r"^\s*!.*",
    r"^\s*no shutdown$",  # the default state of a port: RGOS does not show it in running-config
)


_VOLATILE_RE = re.compile("|".join(f"(?:{v})" for v in VOLATILE))  # the rule; strip_volatile tests it with string methods
_HEADS = ("Building configuration", "Current configuration", "version ")


_ONE_LINE_BANNER = re.compile(r"^banner (\S+ )?(\^C|\S)(?=.*\2\s*$)")


def strip_volatile(text: str) -> str:
    """Drop volatile and default lines (``VOLATILE``), blank lines and CRs, in one pass.

    A banner on one line (``banner motd ^Ctext^C``) is kept as one ordinary line: hier_config would
    otherwise wait for a closing line that never comes. The lines dropped are exactly those
    ``_VOLATILE_RE`` matches, tested with string methods (twice as fast: audit strips every running
    and rendered config; tests/test_push_scope.py proves the two the same).
    """
    out = []
    for line in text.replace("\r", "").splitlines():
        rest = line.lstrip()
        if not rest or rest[0] == "!" or rest == "no shutdown" or line == "end" or line.startswith(_HEADS):
            continue
        if line.startswith("banner ") and _ONE_LINE_BANNER.match(line):
            line = "banner\t" + line[len("banner "):]
        out.append(line)
    return "\n".join(out)


class HConfigDriverRuijieRGOS(HConfigDriverBase):
    """Ruijie RGOS 11: Cisco-like indentation, `no` negation, interface prompts per block.

    Volatile lines are removed by :func:`strip_volatile` before parsing (see parse_config).
    """

    @staticmethod
    def _instantiate_rules() -> HConfigDriverRules:
        return HConfigDriverRules(
            idempotent_commands=[
                IdempotentCommandsRule(match_rules=(MatchRule(startswith="hostname "),)),
                IdempotentCommandsRule(match_rules=(MatchRule(startswith="mtu forwarding "),)),
                IdempotentCommandsRule(match_rules=(MatchRule(startswith="interface "), MatchRule(startswith="description "))),
                IdempotentCommandsRule(match_rules=(MatchRule(startswith="interface "), MatchRule(startswith="ip address "))),
            ],
            ordering=[
                # routes after the interfaces they resolve over; removals of routes before re-addressing
                OrderingRule(match_rules=(MatchRule(startswith="ip route "),), weight=100),
                OrderingRule(match_rules=(MatchRule(startswith="no ip route "),), weight=-100),
                OrderingRule(match_rules=(MatchRule(startswith="interface "), MatchRule(startswith="shutdown")), weight=200),
                OrderingRule(match_rules=(MatchRule(startswith="interface "), MatchRule(startswith="no shutdown")), weight=200),
            ],
        )


_DRIVER = HConfigDriverRuijieRGOS()


def parse_config(text: str) -> HConfig:
    """Parse RGOS config text (running or intended) into a hier_config tree."""
    return get_hconfig(_DRIVER, strip_volatile(text))


def config_drift(have: str, want: str) -> list[str]:
    """The lines in which config ``have`` differs from ``want``, volatile lines aside: ``+ line`` in ``have`` only,
    ``- line`` in ``want`` only, a sub-line after its section's line and " / " (push's read-back after a rollback).

    >>> config_drift("hostname A\\ninterface X 0/1\\n shutdown\\nbfd interval 300\\n", "hostname A\\ninterface X 0/1\\nlogging on\\n")
    ['+ interface X 0/1 / shutdown', '+ bfd interval 300', '- logging on']
    """
    a, b = parse_config(have), parse_config(want)
    return [f"+ {line}" for line in _paths(a.difference(b))] + [f"- {line}" for line in _paths(b.difference(a))]


def _paths(tree: HConfig) -> list[str]:
    """Every leaf of ``tree`` as its path of lines joined by " / ", in order."""
    out = []
    for child in tree.all_children_sorted():
        if not child.children:
            out.append(" / ".join(p.text for p in child.lineage()))
    return out


def l3_facts(config_text: str) -> dict:
    """Neutral layer-3 facts of an RGOS config (the general reader's sections, lines read as this tree reads
    them: reader.l3_view).

    Returns ``{"interfaces": {name: ["a.b.c.d/len", ...]}, "routes": [("net/len", "next hop"), ...]}``.

    >>> l3_facts("interface Mgmt 0\\n ip address 172.16.0.11 255.255.255.0\\nip route 0.0.0.0 0.0.0.0 172.16.0.1\\n")
    {'interfaces': {'Mgmt 0': ['172.16.0.11/24']}, 'routes': [('0.0.0.0/0', '172.16.0.1')]}
    """
    return l3_view(config_text)


# an indented `end`, `version ...` ...: no line to the sections, a line to the tree (strip_volatile drops them at the top only)
_INDENTED_SHOWN = re.compile(r"\n[^\S\n]++(?:end$|Building configuration|Current configuration|version )", re.M)


def top_level_lines(config_text: str) -> list[str]:
    """The top-level lines of an RGOS config (volatile lines and comments dropped), as hier_config reads them
    (spacing normalised), from the general reader's sections without building the tree: audit asks this of
    every rendered config. A config with a banner (its lines are one top-level line there), a duplicate line in
    a section, a top-level ``no shutdown`` (a volatile line to the tree), an indented ``end`` or ``version`` line
    (a line to the tree), a CR or an indented first line is read by hier_config itself.

    >>> top_level_lines("hostname  A\\n!\\ninterface X 0/1\\n description d\\nend\\n")
    ['hostname A', 'interface X 0/1']
    """
    if "banner" not in config_text and "\r" not in config_text and not _INDENTED_SHOWN.search("\n" + config_text):
        tops = top_level(config_text)
        if tops is not None and "no shutdown" not in tops:
            return tops
    return [c.text for c in parse_config(config_text).children]
