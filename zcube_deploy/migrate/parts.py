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


VERBS = ("fit optic", "swap optic", "keep optic", "take out optic", "breakout legs")  # the order a rebreak row names them


def rebreak_counts(w: SwitchWork, before: CageParts, after: CageParts) -> dict[str, Counter]:
    """The parts of one rebreak row by what is done with them (VERBS): optics fitted, swapped ("old for new"), kept or
    taken out of its cages, and the breakout legs plugged there later in the stage (their rows follow in the plug
    phase). Empty for another kind of row."""
    out: dict[str, Counter] = {v: Counter() for v in VERBS}
    if w.action != "rebreak":
        return out
    role = w.new.device if w.new else ""
    for cage in w.cages:
        now = after.optic.get((role, cage))
        was = before.optic.get((w.switch, cage)) if before.known else None
        if now and was:
            out["keep optic" if now == was else "swap optic"][now if now == was else f"{was} for {now}"] += 1
        elif now:
            out["fit optic"][now] += 1
        elif was:
            out["take out optic"][was] += 1
        out["breakout legs"].update(after.legs.get((role, cage), ()))
    return out


def parts_text(counts: dict[str, Counter], known: bool = True) -> str:
    """A rebreak row's part cell: "fit optic 16 x P; breakout legs 32 x Q, ..." (what the cages hold now is said to be
    unknown when FROM's plan has no port map)."""
    parts = [f"{verb} {_counted(counts[verb])}" for verb in VERBS if counts.get(verb)]
    if not known:
        parts.append("what the cages hold now is not known (FROM's plan has no port map)")
    return "; ".join(parts) or "none (no cable here in the new role, no optic before)"


__all__ = ["VERBS", "CageParts", "parts_text", "rebreak_counts"]
