"""Verify cabling and state against the plan: collect (or replay), compare, report."""

from __future__ import annotations

import fnmatch

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.plan.model import projection
from zcube_deploy.plan.scope import matches, only_patterns

# what verify reads of a plan
PLAN_FIELDS = projection(switches={"name", "group", "index", "plane", "rack", "u", "mgmt_address", "interfaces", "routes", "asn",
                                   "host_block", "loopback"}, routing=None,
                         servers={"name": None, "rack": None, "u": None, "nics": {"port", "mac"}},
                         cables=None, cluster=None, inputs=None, tool_version=None,
                         addressing=None, models=None, settings=None)


def scope_of(plan: dict, only: str | None) -> list[str]:
    """Switch names matched by --only: globs on switch names, or 'rack:GLOB' (a rack of switches or of servers);
    a rack pattern also takes the switches whose cables end in those racks' servers. Each pattern that matches
    nothing is refused with a did-you-mean (plan/scope.py: one check for every --only)."""
    names = [s["name"] for s in plan["switches"]]
    pats = only_patterns(only, names, [d["rack"] for d in (*plan["switches"], *plan["servers"])])
    if not pats:
        return names
    racks = {s["name"]: s["rack"] for s in plan["switches"]}
    srv_rack = {s["name"]: s["rack"] for s in plan["servers"]}
    chosen = {n for n in names if matches(n, racks[n], pats)}
    for g in [p[5:] for p in pats if p.startswith("rack:")]:
        chosen |= {c["b"]["device"] for c in plan["cables"]
                   if c["kind"] == "host" and fnmatch.fnmatchcase(srv_rack.get(c["a"]["device"], ""), g)}
    if not chosen:
        raise InputErrors(Problem("--only", f"{only!r} matches no switch", "its racks hold servers cabled to no switch"))
    return [n for n in names if n in chosen]
