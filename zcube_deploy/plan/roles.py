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
# what a host's NIC-port files say of the fabric its ports are on, by the design of their switches' roles (render's
# host files): the fabric's name and the lines saying what a port's routes reach
HOST_WORDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "zcube": ("ZCube", ("Each port has its /31; the port on the odd (rail) switch reaches the even group's aggregate and",
                        "vice versa; the policy rule \"from <port address>\" sends replies out of the port they came in on.")),
    "roft": ("ROFT", ("Each port has its /31 on the rail leaf of its GPU in its pod (with two planes, the leaf of its",
                      "plane) and reaches its plane's aggregate (every leaf's host block) through that leaf and the",
                      "spines; the policy rule \"from <port address>\" sends replies out of the port they came in on.")),
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


def host_words(roles: set[str]) -> tuple[str, list[str]]:
    """(the fabric's name, the lines saying what the ports' routes reach) for a host whose NIC ports are on switches of
    ``roles``: one design's words, or, for a host on both islands of a migration stage (instances of a server on
    either side), each design's words after a line saying which ports are which."""
    designs = sorted({ROLES[r][0] for r in roles if r in ROLES})
    if len(designs) == 1:
        name, lines = HOST_WORDS[designs[0]]
        return name, list(lines)
    names = " and ".join(HOST_WORDS[d][0] for d in designs)
    out = [f"Ports on two fabrics in a migration stage: {names} (each port's switch role below)."]
    for d in designs:
        first = HOST_WORDS[d][1][0]
        mine = ", ".join(sorted(r for r in roles if ROLES.get(r, ("",))[0] == d))
        out += [f"{HOST_WORDS[d][0]} ports ({mine}): {first[0].lower()}{first[1:]}", *HOST_WORDS[d][1][1:]]
    return names, out


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
