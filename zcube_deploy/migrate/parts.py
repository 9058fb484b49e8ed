"""The parts a stage's switch work needs: for each rebreak row, the optics fitted, kept, swapped or taken out of its
cages and the breakout cables plugged there, named from the cabling catalog as the BOM names them (cabling/sheets.py
``bill_of_materials``: one switch-side optic per cage whose cables' medium has optics, the cage form factor's part;
a copper or AOC breakout counted per leg, the cable's own part).

What a cage holds is read from the plans' cables (racks.Contents): before a switch takes its role, FROM's plan (the
switch under its FROM name); after a stage, that stage's plan (the role; a cable laid to a temporary place is the
stand-in laid there, of its own medium and part: racks.cage_timeline). Pure: no I/O.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from zcube_deploy.catalog.cabling import CablingCatalog
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.migrate.racks import Contents, SwitchWork, cage_contents


class CageParts:
    """Per switch and cage (``contents``: racks.Contents): the optic there (its part, or None when its cables' medium
    has none) and the parts of the breakout legs plugged there (cables whose medium has no optics). ``known``: False
    when the plan read has no port map, so what its cages hold is not known."""

    def __init__(self, contents: Contents, form_factor: str, cat: CablingCatalog, known: bool = True):
        optic = cat.optics.switch_cage.get(form_factor)
        self.optic: dict[tuple[str, int], str] = {}
        self.legs: dict[tuple[str, int], list[str]] = defaultdict(list)
        for device, cages in contents.items():
            for cage, ends in cages.items():
                for medium, part in ends:
                    if not cat.media[medium].optics:
                        self.legs[(device, cage)].append(part)
                    elif optic is None:
                        raise InputErrors(Problem("cabling_catalog.optics.switch_cage", f"no optic for cage form factor {form_factor}",
                                                  f"a {medium} cable needs one at {device} cage {cage}"))
                    else:
                        self.optic[(device, cage)] = optic.part
        self.known = known

    @classmethod
    def of_plan(cls, plan: dict, cat: CablingCatalog) -> CageParts:
        """What the cages of ``plan``'s switches hold, from its cables."""
        return cls(cage_contents(plan, plan["cables"]), plan["models"]["switch"]["cage_form_factor"], cat,
                   bool(plan.get("port_map") or plan.get("port_maps")))


def _counted(counts: Counter) -> str:
    return ", ".join(f"{n} x {part}" for part, n in sorted(counts.items()))


VERBS = ("fit optic", "swap optic", "keep optic", "take out optic", "breakout legs")  # the order a rebreak row names them


def rebreak_counts(w: SwitchWork, before: CageParts, after: CageParts) -> dict[str, Counter]:
    """The parts of one rebreak row by what is done with them (VERBS): optics fitted, swapped ("old for new"), kept or
    taken out of its cages, and the breakout legs plugged there (their rows follow in the plug phase, of this stage or
    the one the cable comes in). ``before``: what the cages held (FROM's, the switch under its FROM name, for a switch
    taking its role; the stage before's, the role, for a row of a role in service: ``w.before``), ``after``: the
    stage's. Empty for another kind of row."""
    out: dict[str, Counter] = {v: Counter() for v in VERBS}
    if w.action != "rebreak":
        return out
    role = w.new.device if w.new else ""
    held_by = w.switch if w.before == 0 else role
    for cage in w.cages:
        now = after.optic.get((role, cage))
        was = before.optic.get((held_by, cage)) if before.known else None
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
