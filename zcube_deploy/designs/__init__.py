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
from zcube_deploy.designs.roft import paths as roft_paths
from zcube_deploy.designs.switchroles import SwitchRoles
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.inventory import ResolvedInventory
from zcube_deploy.plan import build as zcube_build
from zcube_deploy.plan import checks as zcube_checks
from zcube_deploy.plan.roles import ROLES, design_of


@dataclass(frozen=True)
class PathRule:
    """What a design's routing must do between NIC ports of its switches (``zcube check-routing``, the twin).

    ``reaches``: a NIC port's switch role -> the roles whose NIC ports (same plane) its table must route to;
    ``expected(roles, first, last)``: every switch path from a packet's first switch to the destination port's
    switch (a frozenset of name tuples), or what is wrong with the pair; ``switches_per_path``: the path lengths
    of the ``reaches`` pairs; ``max_switches``: the longest path of the design."""

    reaches: dict[str, tuple[str, ...]]
    expected: Callable[[SwitchRoles, str, str], frozenset[tuple[str, ...]] | str]
    switches_per_path: frozenset[int]
    max_switches: int


@dataclass(frozen=True)
class Design:
    """One design: its name, the switch roles its plans hold, its planner (inventory -> plan dict; None for a
    design whose plans are written by another command), its invariants (plan dict -> check rows) and its
    path rule (None: a design whose switches are all of other designs' roles, as a migration stage's)."""

    name: str
    roles: tuple[str, ...]
    plan: Callable[[ResolvedInventory], dict] | None
    check: Callable[[dict], list[dict]]
    summary: str = ""
    paths: PathRule | None = None


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


def zcube_paths(roles: SwitchRoles, first: str, last: str) -> frozenset[tuple[str, ...]]:
    """ZCube's one path (zcube.md section 6): the packet's first switch (the source port's, or for a same-group
    pair its other port's) and then the destination port's switch; one switch when they are the same."""
    return frozenset({(first,)} if first == last else {(first, last)})


ZCUBE_PATHS = PathRule({"odd": ("even",), "even": ("odd",)}, zcube_paths, frozenset({2}), 2)
ROFT_PATHS = PathRule(roft_paths.REACHES, roft_paths.expected_paths, roft_paths.SWITCHES_PER_PATH, roft_paths.MAX_SWITCHES)

DESIGNS: dict[str, Design] = {
    "zcube": Design("zcube", ("odd", "even"), zcube_build.build_plan, zcube_invariants, "ZCube(n,2): odd and even switches (zcube.md)",
                    ZCUBE_PATHS),
    "roft": Design("roft", ("leaf", "spine"), roft_build.build_plan, roft_invariants, "rail-optimized fat tree: rail leaves, spines",
                   ROFT_PATHS),
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


def island_of(role: str) -> str:
    """The design a switch of ``role`` belongs to: its island in a plan mixing designs (a migration stage's FROM
    and TO sides), the design whose path rule holds among that island's switches."""
    if role not in ROLES:
        raise InputErrors(Problem("role", f"unknown switch role {role!r}", "known: " + ", ".join(sorted(ROLES))), "unknown role")
    return ROLES[role][0]


def path_rule(island: str) -> PathRule:
    """The path rule of an island's design (every design a role belongs to has one)."""
    rule = design_named(island).paths
    if rule is None:
        raise ValueError(f"design {island!r} has no path rule")
    return rule


def evaluate(plan: dict) -> list[dict]:
    """The invariant rows of a written plan, by its design (a plan without ``design`` is a ZCube plan)."""
    return design_named(design_of(plan)).check(plan)


__all__ = ["DESIGNS", "Design", "PathRule", "SwitchRoles", "build_plan", "design_named", "evaluate", "island_of", "path_rule", "register"]
