"""The switches' own work in each stage: racks (taken out, parked, re-racked), cages broken out anew, console.

A switch that takes a TO role may stand elsewhere than the role's place (re-racked), and the role's place may be
held by a switch the FROM island has let go (taken away when retired, parked when its own role comes later) or
still uses (a conflict: the racks cannot hold both fabrics at that stage; the migration is refused with it). Its
cages are broken out as the role's port map says (a ROFT leaf's 400G uplink cages become 2 x 200G ZCube ports:
the optic or breakout cable in each changed cage is swapped), and its console file sets the role's hostname and
management address before the stage's push. A role whose place is still held when it enters service stands in
a temporary place (places.py) and moves to its own place in the stage the place frees. :class:`Racks` follows where each physical switch stands; work is
listed in the order it is done (every switch taken out before any is racked). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from zcube_deploy.migrate.fabric import Side
from zcube_deploy.migrate.moves import End
from zcube_deploy.migrate.places import Temp, overlaps
from zcube_deploy.plan.roles import port_map_for
from zcube_deploy.render.views import split_cages



@dataclass(frozen=True)
class SwitchWork:
    """One technician action on a switch (not a cable) in a stage."""

    stage: int
    action: str  # unrack | rack | rebreak | console
    switch: str  # the physical switch (its FROM name, or a spare's)
    old: End | None  # where it is taken out (unrack): the device as named then, its rack and U
    new: End | None  # where it goes (rack), or where the work is done (rebreak: port = the cages; console)
    detail: str
    medium: str = ""
    cages: tuple[int, ...] = ()  # rebreak: the cages the row covers (stagefiles names the parts they need)
    before: int = 0  # rebreak: the stage after which the cages held what the row starts from (0: the switch's FROM cables)


@dataclass(frozen=True)
class Space:
    """Who stands where before the migration: U heights, the servers' places (rack, lowest U)."""

    switch_u: int
    server_u: int
    servers: dict[str, tuple[str, int]]
    racks: dict[str, tuple[int, bool]] = field(default_factory=dict)  # rack -> (U height, allows switches)


def _lanes(pm: dict, split: range) -> dict[int, str]:
    """Each cage's mode in a port map: "2 x 200G" for a broken-out cage, the native speed for a whole one."""
    whole = pm.get("native_speed") or pm["speed"]
    return {c: f"{pm['lanes_per_cage']} x {pm['speed']}" if c in split else whole for c in range(1, pm["cages"] + 1)}


def cage_changes(pm_old: dict, pm_new: dict, split_old: range, split_new: range, media: dict[int, str],
                 media_old: dict[int, str] | None = None) -> list[tuple[str, str, str, tuple[int, ...]]]:
    """(cages, what changes, media, the cages) for each run of consecutive cages whose breakout changes between two port
    maps ("400G -> 2 x 200G") or, with ``media_old`` (cage -> the medium of the cables it takes before), whose medium
    changes under the same breakout ("2 x 200G stays": an optic fitted or taken out, another breakout cable). ``media``:
    cage -> the medium of the cables it takes in the new role. A run has one change and one medium before and after
    (so one part action per row); media reads "SMF -> DAC" when it changes, else the medium ("" for a cage with no
    cable in the new role)."""
    old, new = _lanes(pm_old, split_old), _lanes(pm_new, split_new)
    before = media_old or {}
    runs: list[list] = []
    for c in sorted(set(old) | set(new)):
        was, now = before.get(c, ""), media.get(c, "")
        if old.get(c) == new.get(c) and (media_old is None or was == now):
            continue
        change = f"{old.get(c, 'none')} -> {new.get(c, 'none')}" if old.get(c) != new.get(c) else f"{new[c]} stays"
        medium = f"{was or 'no cable'} -> {now or 'no cable'}" if media_old is not None and was != now else now
        if runs and runs[-1][1] == c - 1 and runs[-1][2:] == [change, medium]:
            runs[-1][1] = c
        else:
            runs.append([c, c, change, medium])
    return [(f"{a}" if a == b else f"{a}-{b}", change, medium, tuple(range(a, b + 1))) for a, b, change, medium in runs]


class Racks:
    """Where each physical switch stands, stage by stage, and the rack work that moves it (:meth:`stage`). A role in a
    temporary place (``temp``: places.Temp) stands there from the stage it enters service and moves to its own place
    in the stage ``until``."""

    def __init__(self, src: Side, dst: Side, bind: dict[str, str], space: Space, spares: list[str], temp: dict[str, Temp]):
        self.src, self.dst, self.bind, self.space, self.temp = src, dst, bind, space, temp
        self.at: dict[str, tuple[str, int] | None] = {s.name: (s.rack, s.u) for s in src.switches.values()}
        self.at.update({s: None for s in spares})
        self.name: dict[str, str] = {x: x for x in self.at}  # what each switch is called now
        self.role_of = {x: r for r, x in bind.items()}

    def place(self, role: str, t: int) -> tuple[str, int]:
        """Where ``role`` stands after stage ``t``: its temporary place before it moves, else its own."""
        tp = self.temp.get(role)
        return (tp.rack, tp.u) if tp is not None and t < tp.until else (self.dst.switches[role].rack, self.dst.switches[role].u)

    def _occupants(self, spot: tuple[str, int], me: str) -> list[str]:
        h = self.space.switch_u
        return sorted(x for x, at in self.at.items() if x != me and at is not None and overlaps(at, h, spot, h))

    def stage(self, t: int, takers: list[str], retiring: list[str], busy: set[str], need: dict[str, int]) -> tuple[list[SwitchWork], list[str]]:
        """The rack work of stage ``t`` (``takers``: roles taken in it; ``retiring``: switches leaving the FROM island
        for good; ``busy``: switches the FROM island still uses after it): every switch leaving its place is taken out
        first (a retired one taken away, one whose role comes later parked, a re-racked one moved, one leaving its
        temporary place), then each is racked at its role's place for the stage. Returns (work, conflicts: a role's
        place held by a switch still in use)."""
        out: list[SwitchWork] = []
        conflicts: list[str] = []
        moving = [r for r in takers if self.at[self.bind[r]] != self.place(r, t)]
        moving += sorted(r for r, tp in self.temp.items() if tp.until == t and r not in takers)
        leave: dict[str, str] = {x: "retired: take it away" for x in retiring if x not in self.role_of and self.at.get(x)}
        for r in moving:
            x = self.bind[r]
            spot = self.place(r, t)
            if self.at[x] is not None:
                why = "from its temporary place" if r in self.temp and self.temp[r].until == t else f"re-racked as {r}"
                tp = self.temp.get(r)
                leave[x] = f"{why}: to {spot[0]} U{spot[1]}" + (f" (a temporary place until stage {tp.until})" if tp and t < tp.until else "")
        for r in moving:
            x = self.bind[r]
            spot = self.place(r, t)
            for y in self._occupants(spot, x):
                if y in busy:
                    conflicts.append(f"{r}'s place {spot[0]} U{spot[1]}-{spot[1] + self.space.switch_u - 1} is held by {y}, "
                                     f"which the FROM island still uses in stage {t}")
                elif y not in leave:
                    later = self.role_of.get(y)
                    leave[y] = f"parked until stage {need[later]} ({later})" if later and need[later] > t else "retired: take it away"
        for x in sorted(leave, key=lambda x: (self.at[x] or ("", 0), x)):
            rack, u = self.at[x]
            out.append(SwitchWork(t, "unrack", x, End(self.name[x], "", rack, u), None, leave[x]))
            self.at[x] = None
        for r in moving:
            x = self.bind[r]
            spot = self.place(r, t)
            out.append(SwitchWork(t, "rack", x, None, End(r, "", *spot), f"{x} as {r}" + (" (temporary place)" if r in self.temp and t < self.temp[r].until else "")))
            self.at[x] = spot
        for r in takers:
            self.name[self.bind[r]] = r
        return out, conflicts


Contents = dict[str, dict[int, tuple[tuple[str, str], ...]]]  # switch -> cage -> (medium, part) of each cable end in it


def cage_contents(plan: dict, cables: Iterable[dict]) -> Contents:
    """Switch -> cage -> the (medium, part) of each end of ``cables`` in that cage of a switch of ``plan`` (its port
    map's cages; empty when ``plan`` has no port map: what its cages hold is not known)."""
    if not (plan.get("port_map") or plan.get("port_maps")):
        return {}
    groups = {s["name"]: s["group"] for s in plan["switches"]}
    maps = {g: port_map_for(plan, g)["cage_of"] for g in set(groups.values())}
    out: dict[str, dict[int, list[tuple[str, str]]]] = {}
    for c in cables:
        for e in (c["a"], c["b"]):
            cage_of = maps.get(groups.get(e["device"], ""))
            if cage_of is not None and e["port"] in cage_of:
                out.setdefault(e["device"], {}).setdefault(cage_of[e["port"]][1], []).append((c["medium"], c.get("part", "")))
    return {d: {cage: tuple(v) for cage, v in cages.items()} for d, cages in out.items()}


def cage_timeline(plan_to: dict, stages: list[list[dict]]) -> list[Contents]:
    """What each role's cages hold after each stage (index 0: stage 1), from the TO island's cables as each stage's plan
    has them (``stages``: stageplan.to_cables per stage; a cable laid to a temporary place with the laid medium and
    part). A cage that holds nothing yet holds what it takes next: a technician fits a cage for the cables it is to take
    (as the cages of a role taken are broken out for all its ports), and a cage's work is due again only where what it
    holds changes (a stand-in of another medium swapped for the planned cable)."""
    out: list[Contents] = []
    ahead: Contents = {}
    for cables in reversed(stages):
        now = cage_contents(plan_to, cables)
        ahead = {d: {**ahead.get(d, {}), **now.get(d, {})} for d in set(ahead) | set(now)}
        out.append(ahead)
    return out[::-1]


def _media(contents: Contents, device: str) -> dict[int, str]:
    """Cage -> the medium of the cables ``device`` holds there ("DAC/SMF" for a cage holding two)."""
    return {cage: "/".join(sorted({m for m, _ in ends})) for cage, ends in contents.get(device, {}).items()}


def _taken(t: int, x: str, r: str, where: End, pm_old: dict | None, pm_new: dict, now: dict[int, str], was: dict[int, str],
           spare: bool) -> list[SwitchWork]:
    """The rebreak rows of switch ``x`` taking role ``r`` in stage ``t``: each run of cages whose breakout or medium
    changes from what it holds (``was``: cage -> medium of its FROM cables) to what the role's cables need (``now``).
    A spare is new: its cages hold nothing and are whole at the native speed, as shipped."""
    if pm_old is None and not spare:  # FROM's plan has no port map (a hand-made one): every cage as the role's port map says
        return [SwitchWork(t, "rebreak", x, None, End(r, "every cage", where.rack, where.u),
                           "break out as the role's port map says (FROM's port map is not in its plan)",
                           cages=tuple(range(1, pm_new["cages"] + 1)))]
    out = []
    for cages, change, medium, run in cage_changes(pm_old or pm_new, pm_new, range(0) if spare else split_cages(pm_old),
                                                   split_cages(pm_new), now, {} if spare else was):
        what = f"break out anew: {change}" if "->" in change else f"breakout {change}, the cable type changes"
        first = "a spare, new (its cages empty, whole as shipped): " if spare else ""
        out.append(SwitchWork(t, "rebreak", x, None, End(r, f"cages {cages}", where.rack, where.u),
                              f"{first}{what} ({medium or 'no cable here yet'})", medium, run))
    return out


def switch_work(plan_from: dict, plan_to: dict, src: Side, dst: Side, bind: dict[str, str], need: dict[str, int],
                free: dict[str, int], stages: int, space: Space, spares: list[str],
                temp: dict[str, Temp] | None = None, cages: list[Contents] | None = None) -> tuple[list[list[SwitchWork]], list[str]]:
    """Every stage's switch work (racks, then cages, then console) and the rack conflicts found (a role's place held
    by a switch the FROM island still uses then: the racks cannot hold both fabrics). ``temp``: the roles in
    temporary places (places.Temp). ``cages``: what the roles' cages hold after each stage (:func:`cage_timeline`; TO's
    cables when None): a role taken gets its cages broken out for them, and a role already in service gets a rebreak
    row where the medium a cage holds changes (a stand-in laid to a temporary place swapped for the planned cable)."""
    racks = Racks(src, dst, bind, space, spares, temp or {})
    final = cage_contents(plan_to, plan_to["cables"])
    held = cage_contents(plan_from, plan_from["cables"])
    maps_from = {g: port_map_for(plan_from, g) for g in {s["group"] for s in plan_from["switches"]}} \
        if plan_from.get("port_map") or plan_from.get("port_maps") else {}
    mgmt = {s["name"]: s["mgmt_address"] for s in plan_to["switches"]}
    role_of = {x: r for r, x in bind.items()}

    def after(t: int) -> Contents:
        return cages[t - 1] if cages else final

    out: list[list[SwitchWork]] = []
    conflicts: list[str] = []
    for t in range(1, stages + 1):
        takers = sorted(r for r, s in need.items() if s == t)
        retiring = sorted(x for x, s in free.items() if s == t and x not in role_of)
        busy = {x for x, s in free.items() if s > t}
        work, bad = racks.stage(t, takers, retiring, busy, need)
        conflicts += bad
        for r in takers:
            x = bind[r]
            where = End(r, "", *racks.place(r, t))
            pm_old = maps_from.get(src.switches[x].role) if x in src.switches else None
            work += _taken(t, x, r, where, pm_old, port_map_for(plan_to, dst.switches[r].role), _media(after(t), r),
                           _media(held, x), x not in src.switches)
            work.append(SwitchWork(t, "console", x, None, where,
                                   f"paste console/{r}.txt: hostname {r}, management address {mgmt[r]}"))
        for r in sorted(r for r, s in need.items() if s < t and cages):
            pm = port_map_for(plan_to, dst.switches[r].role)
            split = split_cages(pm)
            for text, change, medium, run in cage_changes(pm, pm, split, split, _media(after(t), r), _media(after(t - 1), r)):
                work.append(SwitchWork(t, "rebreak", bind[r], None, End(r, f"cages {text}", *racks.place(r, t)),
                                       f"breakout {change}, the cable type changes ({medium})", medium, run, before=t - 1))
        out.append(work)
    return out, conflicts


__all__ = ["Contents", "Racks", "Space", "SwitchWork", "cage_changes", "cage_contents", "cage_timeline", "switch_work"]
