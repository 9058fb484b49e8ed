"""The design seam (docs/designs.md): a fabric design is a planner and the invariants its plans are
checked against, registered here by name, the way a platform is a folder under platforms/.

- ``zcube`` (the default): the planner of plan/build.py and the invariants of plan/checks.py, where
  they have always been;
- ``roft``: designs/roft/ (a rail-optimized fat tree);
- another design (``stage``, a migration stage's plan) registers itself with :func:`register`.

The inventory's ``design`` picks the planner (:func:`build_plan`); a plan's ``design`` picks the
invariants it is checked against (:func:`evaluate`). Consumers of a plan (render, cabling, lab,
verify, analyze, twin) do not come here: they branch on each switch's role (plan/roles.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

from zcube_deploy.designs.roft import build as roft_build
from zcube_deploy.designs.roft import checks as roft_checks
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.inventory import ResolvedInventory
from zcube_deploy.plan import build as zcube_build
from zcube_deploy.plan import checks as zcube_checks
from zcube_deploy.plan.roles import ROLES, design_of


@dataclass(frozen=True)
class Design:
    """One design: its name, the switch roles its plans hold, its planner (inventory -> plan dict; None for a
    design whose plans are written by another command) and its invariants (plan dict -> check rows)."""

    name: str
    roles: tuple[str, ...]
    plan: Callable[[ResolvedInventory], dict] | None
    check: Callable[[dict], list[dict]]
    summary: str = ""


def zcube_invariants(plan: dict) -> list[dict]:
    """ZCube's invariants (plan/checks.py) on a written plan: its rows as the planner's accumulator."""
    sz = plan["sizing"]
    sizing = SimpleNamespace(**sz)
    servers = plan["servers"]
    acc = {"sizing": sizing, "switches": plan["switches"], "cables": plan["cables"], "nics": {s["name"]: s["nics"] for s in servers},
           "port_map": plan["port_map"], "routing": plan["routing"]}
    inv = SimpleNamespace(planes=sz["planes"], servers=servers)
    return [check(zcube_checks.Facts(inv, acc)) for check in zcube_checks.INVARIANTS]


def roft_invariants(plan: dict) -> list[dict]:
    """ROFT's invariants (designs/roft/checks.py) on a written plan."""
    return roft_checks.evaluate(roft_checks.facts_from_plan(plan))


DESIGNS: dict[str, Design] = {
    "zcube": Design("zcube", ("odd", "even"), zcube_build.build_plan, zcube_invariants, "ZCube(n,2): odd and even switches (zcube.md)"),
    "roft": Design("roft", ("leaf", "spine"), roft_build.build_plan, roft_invariants, "rail-optimized fat tree: rail leaves, spines"),
}


def register(design: Design) -> None:
    """Add a design (a migration stage registers ``stage``); its roles must be roles plan/roles.py knows."""
    unknown = [r for r in design.roles if r not in ROLES]
    if unknown:
        raise ValueError(f"design {design.name}: unknown role(s) {unknown}; roles: {sorted(ROLES)}")
    DESIGNS[design.name] = design


def design_named(name: str) -> Design:
    if name not in DESIGNS:
        raise InputErrors(Problem("design", f"unknown design {name!r}", "known: " + ", ".join(sorted(DESIGNS))), "unknown design")
    return DESIGNS[name]


def build_plan(inv: ResolvedInventory) -> dict:
    """The plan of ``inv`` by its design's planner (``design:`` in the inventory; zcube when absent)."""
    design = design_named(inv.spec.design)
    if design.plan is None:
        raise InputErrors(Problem("design", f"design {design.name!r} is not planned from an inventory"), "unknown design")
    return design.plan(inv)


def evaluate(plan: dict) -> list[dict]:
    """The invariant rows of a written plan, by its design (a plan without ``design`` is a ZCube plan)."""
    return design_named(design_of(plan)).check(plan)


__all__ = ["DESIGNS", "Design", "build_plan", "design_named", "evaluate", "register"]
