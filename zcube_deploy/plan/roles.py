"""Switch roles: what a consumer of a plan asks of a switch, whatever the plan's design (designs.md).

A plan's switches each carry their role in ``group``: ``odd``/``even`` (ZCube), ``leaf``/``spine``
(ROFT). A consumer (render, cabling, lab, verify, analyze, twin) branches on the switch's role,
never on the plan's ``design`` alone, so that a plan mixing roles (a migration stage) works switch
by switch. This module is the one place that says what each role is:

- :data:`ROLES`: role -> (design, what it is in a few words);
- :func:`design_of` the plan's design (``zcube`` when the plan has no ``design``, an older plan);
- :func:`port_map_for` the ports of a switch of a role (``port_maps``, else the plan's ``port_map``);
- :func:`cage_of` every used port name of every role's port map -> [short name, cage, lane].
"""

from __future__ import annotations

from zcube_deploy.plan.model import DESIGN_DEFAULT

# role -> (the design it belongs to, a few words said in configs, cut sheets and reports)
ROLES: dict[str, tuple[str, str]] = {
    "odd": ("zcube", "rail"),
    "even": ("zcube", "single-rail"),
    "leaf": ("roft", "rail leaf"),
    "spine": ("roft", "spine"),
}
ZCUBE_ROLES = frozenset(r for r, (d, _) in ROLES.items() if d == "zcube")
ROFT_ROLES = frozenset(r for r, (d, _) in ROLES.items() if d == "roft")
# the end of a fabric cable each role is: a ZCube cable runs odd (a) to even (b), a ROFT one leaf (a) to spine (b)
FABRIC_END = {"odd": "a", "even": "b", "leaf": "a", "spine": "b"}


def design_of(plan: dict) -> str:
    """The plan's design: ``zcube``, ``roft`` or ``stage``; a plan without the field is a ZCube plan."""
    return plan.get("design") or DESIGN_DEFAULT


def role_words(role: str) -> str:
    """What a role is, in a few words ("rail", "single-rail", "rail leaf", "spine")."""
    return ROLES.get(role, ("", role))[1]


def has_hosts(role: str) -> bool:
    """Whether switches of ``role`` carry host (NIC) links: every role but a ROFT spine."""
    return role != "spine"


def port_map_for(plan: dict, role: str) -> dict:
    """The port map of a switch of ``role``: the plan's ``port_maps[role]`` when it has one, else ``port_map``."""
    maps = plan.get("port_maps") or {}
    return maps.get(role) or plan["port_map"]


def cage_of(plan: dict) -> dict:
    """Every used port name of every port map -> [short name, cage, lane] (a name means the same cage everywhere)."""
    out = dict(plan["port_map"]["cage_of"])
    for pm in (plan.get("port_maps") or {}).values():
        out.update(pm["cage_of"])
    return out
