"""Where TO's switches could stand so that every switch the migration reuses keeps its place (pure).

A migration whose roles are re-racked, or stand in temporary places until their own free (places.py), costs
touches the racks cause, not the fabrics: glm-1k's placement rule racks its switches where serving ROFT leaves
stand. The remedy is TO's inventory naming its switches' places (``layout.placement.switches``, docs/inventory.md):
each role at the FROM place of the switch this migration gives it. Then no role's place is held by another FROM
switch, and a switch taking a role is not re-racked. Roles that cannot go there stay where TO places them, each
with the reason: a bought spare (it stands nowhere yet), no switch takes it, or the FROM place would collide in
TO's racks (rack missing or holding no switches, over its top, a server there, another suggested place there).
A role kept at TO's place that overlaps a suggested place is left out: the rule then places it around them.

run.py writes the result as DIR/suggested-places.yaml, re-plans TO with it and reports what that migration costs.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from zcube_deploy.migrate.places import overlaps
from zcube_deploy.migrate.planner import Migration
from zcube_deploy.migrate.roles import physicals, reracked

SUGGESTED_PLACES = "suggested-places.yaml"


@dataclass(frozen=True)
class Suggested:
    role: str
    rack: str | None  # None: left to the placement rule
    u: int | None
    kind: str  # "from": at its switch's FROM place; "to": at TO's place (``why`` says why); "rule": left to the rule
    moved: bool  # at its switch's FROM place, where TO places it elsewhere
    why: str


def _collision(mig: Migration, spot: tuple[str, int], held: dict[str, tuple[str, int]]) -> str | None:
    """Why a switch cannot stand at ``spot`` (rack, lowest U) in TO's racks; None when it can."""
    space = mig.space
    height = space.switch_u
    rack = space.racks.get(spot[0])
    if rack is None:
        return f"rack {spot[0]} is not in TO's layout"
    if not rack[1]:
        return f"rack {spot[0]} holds no switches in TO"
    if spot[1] + height - 1 > rack[0]:
        return f"U{spot[1]}-U{spot[1] + height - 1} is over rack {spot[0]}'s {rack[0]}U"
    servers = sorted(s for s, at in space.servers.items() if overlaps(at, space.server_u, spot, height))
    if servers:
        return f"server {servers[0]} stands there in TO"
    roles = sorted(r for r, at in held.items() if overlaps(at, height, spot, height))
    return f"the suggested place of {roles[0]} overlaps it" if roles else None


def suggest_places(mig: Migration) -> list[Suggested] | None:
    """Every TO role's suggested place, in role order; None when every reused switch keeps its place already (no
    role re-racked, none in a temporary place): nothing to suggest."""
    phys = {p.name: p for p in physicals(mig.src, mig.options.spares)}
    if mig.space is None or not (mig.temp or any(reracked(phys[x], mig.dst, r) for r, x in mig.bind.items())):
        return None
    held: dict[str, tuple[str, int]] = {}
    stay: dict[str, str] = {}
    for role in sorted(mig.dst.switches):
        x = mig.bind.get(role)
        if x is None or phys[x].spare:
            stay[role] = "no switch takes it" if x is None else "a bought spare takes it (it stands nowhere yet)"
            continue
        spot = (phys[x].rack, phys[x].u)
        why = _collision(mig, spot, held)
        if why is None:
            held[role] = spot
        else:
            stay[role] = f"{x}'s place {spot[0]} U{spot[1]}: {why}"
    out: dict[str, Suggested] = {}
    for role, spot in held.items():
        own = (mig.dst.switches[role].rack, mig.dst.switches[role].u)
        temp = mig.temp.get(role)
        was = "" if spot == own else (f"; TO's plan: {own[0]} U{own[1]} (re-racked" + (f"; a temporary place {temp.rack} U{temp.u} until stage "
                                                                                    f"{temp.until}" if temp else "") + ")")
        out[role] = Suggested(role, spot[0], spot[1], "from", spot != own, f"{mig.bind[role]} stands here{was}")
    for role, why in stay.items():
        own = (mig.dst.switches[role].rack, mig.dst.switches[role].u)
        clash = sorted(r for r, at in held.items() if overlaps(at, mig.space.switch_u, own, mig.space.switch_u))
        if clash:
            out[role] = Suggested(role, None, None, "rule", False, f"{why}; TO's place {own[0]} U{own[1]} overlaps {clash[0]}'s: left to the rule")
        else:
            out[role] = Suggested(role, own[0], own[1], "to", False, f"TO's place: {why}")
    return [out[r] for r in sorted(out)]


def places_section(suggested: list[Suggested]) -> dict[str, dict[str, str | int]]:
    """The ``layout.placement.switches`` mapping the suggestion gives (roles left to the rule are not in it)."""
    return {s.role: {"rack": s.rack, "u": s.u} for s in suggested if s.rack is not None}


def _scalar(text: str) -> str:
    """``text`` as a YAML scalar that reads back as this string ('1e3', 'no' and the like quoted)."""
    return text if yaml.safe_load(text) == text else f'"{text}"'


def places_yaml(suggested: list[Suggested], header: list[str]) -> str:
    """DIR/suggested-places.yaml: ``header`` as comment lines, then the section as it stands in an inventory, one line
    per role with why it stands there as a comment (roles left to the rule: a comment line)."""
    lines = [f"# {h}" for h in header] + ["layout:", "  placement:", "    switches:"]
    for s in suggested:
        if s.rack is None:
            lines.append(f"      # {s.role}: {s.why}")
        else:
            lines.append(f"      {_scalar(s.role)}: {{rack: {_scalar(s.rack)}, u: {s.u}}}  # {s.why}")
    return "\n".join(lines) + "\n"


__all__ = ["SUGGESTED_PLACES", "Suggested", "places_section", "places_yaml", "suggest_places"]
