"""Verify cabling and state against the plan: collect (or replay), compare, report."""

from __future__ import annotations

import fnmatch

from zcube_deploy.errors import InputErrors, Problem, names_hint
from zcube_deploy.plan.model import projection

# what verify reads of a plan
PLAN_FIELDS = projection(switches={"name", "group", "index", "plane", "rack", "u", "mgmt_address", "interfaces", "routes", "asn",
                                   "host_block", "loopback"}, routing=None,
                         servers={"name": None, "rack": None, "u": None, "nics": {"port", "mac"}},
                         cables=None, cluster=None, inputs=None, tool_version=None,
                         addressing=None, models=None, settings=None)


def scope_of(plan: dict, only: str | None) -> list[str]:
    """Switch names matched by --only: globs on switch names, or 'rack:GLOB'; a rack pattern also takes
    the switches whose cables end in those racks' servers. Each pattern that matches nothing is a problem
    with a did-you-mean (a typo in a list must not verify the rest silently as if it were the whole scope)."""
    names = [s["name"] for s in plan["switches"]]
    if not only:
        return names
    pats = [p.strip() for p in only.split(",") if p.strip()]
    racks = {s["name"]: s["rack"] for s in plan["switches"]}
    srv_rack = {s["name"]: s["rack"] for s in plan["servers"]}
    chosen, problems = set(), []
    for p in pats:
        if p.startswith("rack:"):
            g = p[5:]
            took = {n for n in names if fnmatch.fnmatchcase(racks[n], g)}
            for c in plan["cables"]:
                if c["kind"] == "host" and fnmatch.fnmatchcase(srv_rack.get(c["a"]["device"], ""), g):
                    took.add(c["b"]["device"])
            if not took:
                problems.append(Problem("--only", f"{p!r} matches no rack", names_hint(g, sorted(set(racks.values())), "rack")))
        else:
            took = {n for n in names if fnmatch.fnmatchcase(n, p)}
            if not took:
                problems.append(Problem("--only", f"{p!r} matches no switch", names_hint(p, names, "switch") + " (globs: 'ZC-E0*'; racks: 'rack:A0*')"))
        chosen |= took
    if problems or not chosen:
        raise InputErrors(problems or [Problem("--only", f"{only!r} names no switch or rack", "e.g. 'ZC-E0*' or 'rack:A0*'")])
    return [n for n in names if n in chosen]
