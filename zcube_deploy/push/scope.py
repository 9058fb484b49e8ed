"""What push owns on a device: the managed scope, from the platform's rules and the plan (pure).

A device carries configuration the tool does not own (users, AAA, vty lines, SSH, SNMP, NTP,
logging, banners, ACLs, management routes, an operator's own routes). Push compares and changes
only the top-level sections inside the managed scope; everything else is left out of both sides
of the comparison, so it can never be negated, reordered or rewritten.

The rules are platform data (``platforms/<name>/platform.yaml``, key ``managed_scope``); this
module applies them. See that file for what each ``owned`` test means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from ipaddress import IPv4Network

from zcube_deploy.ipv4 import MASK_LENS, MASKS, parse
from zcube_deploy.plan.roles import port_map_for
from zcube_deploy.platforms import platform_data

OWNED_TESTS = ("always", "planned_interface", "route_in_pools", "rendered_section", "intended_line")


# (the rules' patterns) -> {an intended top-level line: (its _key, the index of the first rule matching it)}: a
# function of the line and the rules alone, and most lines recur on every switch (interfaces, global settings), so
# a fabric's scopes are built from lines read once (audit: 2.4 of the 2.5 ms a switch's scope took at 512 switches)
_LINE_FACTS: dict[tuple[str, ...], dict[str, tuple[str, int | None]]] = {}
_LINE_FACTS_MAX = 1 << 18


@dataclass(frozen=True)
class ScopeRule:
    match: re.Pattern
    owned: str


@dataclass(frozen=True)
class ManagedScope:
    """The scope of one switch: which top-level config lines push owns."""

    rules: tuple[ScopeRule, ...]
    interfaces: frozenset[str]
    pools: tuple[IPv4Network, ...]
    intended_keys: frozenset[str]
    intended_sections: frozenset[int]  # indexes of rendered_section rules the intended config uses

    @classmethod
    def for_switch(cls, plan: dict, switch: dict, intended_top: list[str], platform: str | None = None) -> "ManagedScope":
        """The scope of ``switch`` (a plan switch) given the top-level lines of its intended config."""
        data = platform_data(platform or plan["cluster"]["platform"])
        rules = tuple(ScopeRule(re.compile(r["match"]), r["owned"]) for r in data["managed_scope"])
        for r in rules:
            if r.owned not in OWNED_TESTS:
                raise ValueError(f"managed_scope rule {r.match.pattern!r}: unknown test {r.owned!r}")
        pm = (port_map_for(plan, switch["group"]) if plan.get("port_map") and "group" in switch else plan.get("port_map")) or {}
        ports = set(pm.get("host_ports", ())) | set(pm.get("fabric_ports", ())) | set(pm.get("unused_ports", ()))
        ports |= set(pm.get("reserved_ports", ()))
        ports |= {i["name"] for i in switch.get("interfaces", ())}
        ports.add(data["loopback_interface"])
        mgmt = (plan.get("models", {}).get("switch") or {}).get("mgmt_interface")
        ports.discard(mgmt)
        addressing = plan.get("addressing", {})
        pools = tuple(IPv4Network(addressing[k]) for k in ("host_pool", "fabric_pool", "loopback_pool") if addressing.get(k))
        pools += tuple(IPv4Network(p) for p in addressing.get("other_pools") or ())  # a migration stage's other island
        scope = cls(rules, frozenset(_norm(p) for p in ports), pools, frozenset(), frozenset())
        memo = _LINE_FACTS.setdefault(tuple(r.match.pattern for r in rules), {})
        if len(memo) > _LINE_FACTS_MAX:  # bounded: a long-lived process (audit --every) reads ever new lines
            memo.clear()
        facts = [memo.get(line) or memo.setdefault(line, (_key(line), scope._rule_index(line))) for line in intended_top]
        return cls(rules, scope.interfaces, pools, frozenset(k for k, _ in facts),
                   frozenset(i for _, i in facts if i is not None and rules[i].owned == "rendered_section"))

    def _rule_index(self, line: str) -> int | None:
        for i, rule in enumerate(self.rules):
            if rule.match.search(line):
                return i
        return None

    def owns(self, line: str) -> bool:
        """Is the top-level config line ``line`` (with its sub-commands) inside the scope?"""
        return self.why_not(line) is None

    def why_not(self, line: str) -> str | None:
        """None when the top-level line ``line`` is inside the scope; else the rule that leaves it out, in words."""
        for i, rule in enumerate(self.rules):
            m = rule.match.search(line)
            if not m:
                continue
            test = rule.owned
            said = _Said(rule)
            if test == "always":
                return None
            if test == "planned_interface":
                return None if _norm(m.group("interface")) in self.interfaces else f"{said}: not a port the plan names"
            if test == "route_in_pools":
                inside = self._route_inside(m.group("network"), m.group("mask"))
                if inside is None:
                    return f"{said}: not a network and mask"
                if inside:
                    return None
                net = IPv4Network(f"{m.group('network')}/{m.group('mask')}", strict=False)
                return f"{said}: {net} lies outside the plan's pools ({', '.join(map(str, self.pools))})"
            if test == "rendered_section":
                return None if i in self.intended_sections else f"{said}: the plan renders no such section"
            if _key(line) in self.intended_keys:
                return None
            return f"{said}: the plan renders no line with its key (the line without its last word)"
        return "no rule of the managed scope matches it"

    @cached_property
    def _pool_ints(self) -> tuple[tuple[int, int], ...]:
        return tuple((int(p.network_address), p.prefixlen) for p in self.pools)

    def _route_inside(self, network: str, mask: str) -> bool | None:
        """Does the route's network lie inside one of the plan's pools (None: not a network and mask)?

        A plain dotted quad with a contiguous dotted mask, the common case, is tested on integers (owns()
        runs for every route of every switch an audit reads); anything else is read by ``ipaddress``,
        whose reading (host masks, leading zeros refused) decides.
        """
        plen, addr = MASK_LENS.get(mask), parse(network)
        if plen is None or addr is None or any(len(o) > 1 and o[0] == "0" for o in network.split(".")):
            try:
                net = IPv4Network(f"{network}/{mask}", strict=False)
            except ValueError:
                return None
            return any(net.subnet_of(p) for p in self.pools)
        net_int = addr & MASKS[plen]
        return any(plen >= pl and net_int & MASKS[pl] == pn for pn, pl in self._pool_ints)


class _Said:
    """A rule named in a refusal (built only when a refusal is worded: owns() runs for every line of a config)."""

    def __init__(self, rule: ScopeRule):
        self.rule = rule

    def __format__(self, spec: str) -> str:
        return f"rule `{self.rule.match.pattern}` ({self.rule.owned})"


@lru_cache(maxsize=1 << 16)  # the same port names on every switch of a group
def _norm(interface: str) -> str:
    """An interface name with its spacing normalised ('X  0' and 'X 0' are one interface)."""
    return " ".join(interface.split())


def _key(line: str) -> str:
    """A global setting's key: the line without its value (its last word)."""
    words = line.split()
    return " ".join(words[:-1]) if len(words) > 1 else line.strip()
