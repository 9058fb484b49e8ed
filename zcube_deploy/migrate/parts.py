"""The parts a stage's switch work needs: for each rebreak row, the optics fitted, kept, swapped or taken out of its
cages and the breakout cables plugged there, named from the cabling catalog as the BOM names them (cabling/sheets.py
``bill_of_materials``: one switch-side optic per cage whose cables' medium has optics, the cage form factor's part;
a copper or AOC breakout counted per leg, the cable's own part).

What a cage holds before is read from FROM's plan (the switch under its FROM name), what it needs from TO's plan (the
role). Pure: no I/O.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from zcube_deploy.catalog.cabling import CablingCatalog
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.migrate.racks import SwitchWork
from zcube_deploy.plan.roles import port_map_for


class CageParts:
    """Per switch and cage of one plan: the optic there (its part, or None when its cables' medium has none) and the
    parts of the breakout legs plugged there (cables whose medium has no optics)."""

    def __init__(self, plan: dict, cat: CablingCatalog):
        ff = plan["models"]["switch"]["cage_form_factor"]
        optic = cat.optics.switch_cage.get(ff)
        groups = {s["name"]: s["group"] for s in plan["switches"]}
        maps = {g: port_map_for(plan, g) for g in set(groups.values())} if plan.get("port_map") or plan.get("port_maps") else {}
        self.optic: dict[tuple[str, int], str] = {}
        self.legs: dict[tuple[str, int], list[str]] = defaultdict(list)
        for c in plan["cables"]:
            medium = cat.media[c["medium"]]
            for e in (c["a"], c["b"]):
                pm = maps.get(groups.get(e["device"], ""))
                if pm is None or e["port"] not in pm["cage_of"]:
                    continue  # a server's NIC port
                at = (e["device"], pm["cage_of"][e["port"]][1])
                if not medium.optics:
                    self.legs[at].append(c["part"])
                elif optic is None:
                    raise InputErrors(Problem("cabling_catalog.optics.switch_cage", f"no optic for cage form factor {ff}",
                                              f"cable {c['id']} ({c['medium']}) needs one at {e['device']} {e['port']}"))
                else:
                    self.optic[at] = optic.part
        self.known = bool(maps)  # False: the plan has no port map, so what its cages hold is not known


def _counted(counts: Counter) -> str:
    return ", ".join(f"{n} x {part}" for part, n in sorted(counts.items()))


def rebreak_parts(w: SwitchWork, before: CageParts, after: CageParts) -> str:
    """The parts of one rebreak row: optics to fit, keep, swap or take out, then the breakout legs to plug (their rows
    follow in the plug phase). "" for another kind of row."""
    if w.action != "rebreak":
        return ""
    fit, keep, out, swap, legs = Counter(), Counter(), Counter(), Counter(), Counter()
    role = w.new.device if w.new else ""
    for cage in w.cages:
        now = after.optic.get((role, cage))
        was = before.optic.get((w.switch, cage)) if before.known else None
        if now and was:
            (keep if now == was else swap)[now if now == was else f"{was} for {now}"] += 1
        elif now:
            fit[now] += 1
        elif was:
            out[was] += 1
        legs.update(after.legs.get((role, cage), ()))
    parts = [f"{verb} {_counted(c)}" for verb, c in (("fit optic", fit), ("swap optic", swap), ("keep optic", keep),
                                                      ("take out optic", out), ("breakout legs", legs)) if c]
    if not before.known:
        parts.append("what the cages hold now is not known (FROM's plan has no port map)")
    return "; ".join(parts) or "none (no cable here in the new role, no optic before)"


__all__ = ["CageParts", "rebreak_parts"]
