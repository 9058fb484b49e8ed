"""Places in the racks during a migration: which TO roles' places FROM switches hold, and temporary places.

A TO role's place (rack, U) may be held by FROM switches (glm-1k's odd switches stand where the ROFT's
leaves stand). The place is free in the stage the last of those switches leaves the FROM island (it is taken
out then: parked, re-racked or retired), unless the switch playing the role is that switch itself (it takes
the role in place). :func:`occupants` finds the clashes (the stage search can order the stages around them:
search.py), :func:`place_free` the stage each place frees.

When no order frees every place in time, a role that enters service before its place is free stands in a
*temporary place* (:class:`Temp`): a U range of a rack that allows switches, held by no server, by no TO
switch's place, by no other temporary place and by no FROM switch (a retired one counts as gone from the stage
it leaves). It moves to its own place in the stage its place frees, every cable on it re-plugged there (a
touch each: moves.py). Each cable laid to it is long enough for every place its ends stand at (a cable between
two roles in temporary places included), its length estimated as ``plan/media.py`` does and rounded up to the
medium's next stock length. Where the planned medium cannot reach (a DAC between racks), a cable of the first
medium of the catalog's preference that does is laid for the meantime and swapped for the planned one when the
switch moves (removed and installed: two touches more). A place no medium reaches is not taken.

Pure: no I/O (the cabling catalog comes from the caller).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from types import SimpleNamespace

from zcube_deploy.errors import Problem
from zcube_deploy.migrate.fabric import Side
from zcube_deploy.plan.media import run_length_m
from zcube_deploy.plan.placement import rack_distance


@dataclass(frozen=True)
class Temp:
    """A TO role standing in a temporary place from stage ``since`` (it enters service there) to stage ``until``
    (where it moves to its own place)."""

    role: str
    rack: str
    u: int
    since: int
    until: int


def overlaps(a: tuple[str, int], ha: int, b: tuple[str, int], hb: int) -> bool:
    """Whether a device of ``ha`` U at ``a`` (rack, lowest U) and one of ``hb`` U at ``b`` share a U."""
    return a[0] == b[0] and a[1] < b[1] + hb and b[1] < a[1] + ha


def occupants(src: Side, dst: Side, switch_u: int) -> dict[str, list[str]]:
    """TO role -> the FROM switches whose place shares a U with the role's (only roles with any)."""
    out: dict[str, list[str]] = {}
    for r, t in dst.switches.items():
        held = [y for y, s in src.switches.items() if overlaps((s.rack, s.u), switch_u, (t.rack, t.u), switch_u)]
        if held:
            out[r] = sorted(held)
    return out


def place_free(occ: dict[str, list[str]], bind: dict[str, str], free: dict[str, int]) -> dict[str, int]:
    """TO role -> the first stage its place is free (its other FROM occupants have left the FROM island; 0: always)."""
    return {r: max((free[y] for y in ys if y != bind.get(r)), default=0) for r, ys in occ.items()}


class Geometry:
    """Cable runs between places as plan/media.py estimates them, rounded up to a medium's stock length."""

    def __init__(self, plan: dict, catalog):
        lay = plan["layout"]
        self.racks = {r["name"]: SimpleNamespace(**r) for r in lay["racks"]}
        self.pitch, self.spacing, self.u_pitch = lay["rack_pitch_m"], lay["row_spacing_m"], lay["u_pitch_m"]
        self.catalog, self.speed = catalog, plan["port_map"]["speed"]

    def run_m(self, a: tuple[str, int], b: tuple[str, int]) -> float:
        if a[0] == b[0]:
            return run_length_m(a[1], b[1], None, 0, 0, self.u_pitch, self.catalog.length_model)
        ra, rb = self.racks[a[0]], self.racks[b[0]]
        return run_length_m(a[1], b[1], rack_distance(ra, rb, self.pitch, self.spacing), ra.u_height, rb.u_height,
                            self.u_pitch, self.catalog.length_model)

    def stock(self, medium: str, need_m: float) -> tuple[float, str] | None:
        """(the shortest stock length of ``medium`` covering ``need_m``, its part), None when none does."""
        med = self.catalog.media[medium]
        if need_m > med.reach_m + 1e-9:
            return None
        length = next((x for x in med.lengths_m if x >= need_m - 1e-9), None)
        return None if length is None else (length, med.part.format(speed=self.speed, length=f"{length:g}", kind=med.kind))


@dataclass(frozen=True)
class Laid:
    """The cable laid as TO cable ``cable`` while an end of it stands in a temporary place. ``swap``: the planned
    medium cannot reach there (a DAC between racks), so a cable of ``medium`` is laid for the meantime and swapped
    for the planned one when the switch moves; else it is the planned medium, long enough for every place."""

    cable: str
    length_m: float
    part: str
    medium: str
    swap: bool = False


class TempPlanner:
    """Chooses the temporary places and the cables laid to them (:meth:`plan`)."""

    def __init__(self, src: Side, dst: Side, geo: Geometry, switch_u: int, servers: dict[str, tuple[str, int]],
                 server_u: int, moved_in: dict[tuple[str, str], int], need: dict[str, int]):
        self.src, self.dst, self.geo, self.h = src, dst, geo, switch_u
        self.servers, self.server_u, self.moved_in, self.need = servers, server_u, moved_in, need

    def _cables(self, r: str, until: int) -> list[tuple[str, str, str, float]]:
        """(cable id, medium, the other end's device, planned length) of each TO cable on ``r`` laid before ``until``."""
        out = []
        for key, h in self.dst.host.items():
            if h.switch == r and self.moved_in[key] < until:
                out.append((h.cable, h.medium, key[0], h.length_m))
        for c in self.dst.fabric:
            if r in (c.a[0], c.b[0]) and max(self.need[c.a[0]], self.need[c.b[0]]) < until:
                out.append((c.id, c.medium, c.b[0] if c.a[0] == r else c.a[0], c.length_m))
        return out

    def _places(self, device: str, temps: dict[str, Temp]) -> list[tuple[str, int]]:
        if device in self.servers:
            return [self.servers[device]]
        t = self.dst.switches[device]
        return [(t.rack, t.u)] + ([(temps[device].rack, temps[device].u)] if device in temps else [])

    def laid(self, r: str, until: int, temps: dict[str, Temp]) -> dict[str, Laid] | None:
        """The cables laid on ``r`` before ``until`` (``temps``: the temporary places, ``r``'s included), each long
        enough for every place its ends stand at; None when a medium cannot reach."""
        out = {}
        for cid, medium, other, planned in self._cables(r, until):
            mine, theirs = self._places(r, temps), self._places(other, temps)
            away = max(self.geo.run_m(a, b) for a, b in product(mine[1:], theirs))  # r in its temporary place
            away = max([away] + [self.geo.run_m(mine[0], b) for b in theirs[1:]])  # r at home, the other end away
            got = self.geo.stock(medium, max(planned, away))
            if got is not None:
                out[cid] = Laid(cid, *got, medium)
                continue
            for other_medium in self.geo.catalog.media_preference:  # the planned medium cannot reach: another, swapped later
                got = self.geo.stock(other_medium, away)
                if got is not None:
                    out[cid] = Laid(cid, *got, other_medium, swap=True)
                    break
            else:
                return None
        return out

    def _blocked(self, r: str, bind: dict[str, str], free: dict[str, int], temps: dict[str, Temp]) -> set[tuple[str, int]]:
        """The U (rack, U) a temporary place of ``r`` may not use."""
        cells: set[tuple[str, int]] = set()

        def hold(where: tuple[str, int], height: int) -> None:
            cells.update((where[0], u) for u in range(where[1], where[1] + height))

        for where in self.servers.values():
            hold(where, self.server_u)
        for t in self.dst.switches.values():
            hold((t.rack, t.u), self.h)
        playing = set(bind.values())
        for y, s in self.src.switches.items():
            if y in playing or free[y] > self.need[r]:  # still there when r comes (a retired switch leaves at free[y])
                hold((s.rack, s.u), self.h)
        for t in temps.values():
            hold((t.rack, t.u), self.h)
        return cells

    def spots(self, r: str, blocked: set[tuple[str, int]]) -> list[tuple[str, int]]:
        """Free places for ``r``: racks allowing switches, nearest to the role's own rack first, then U from the top."""
        home = self.geo.racks[self.dst.switches[r].rack]
        out = []
        for rack in self.geo.racks.values():
            if not rack.allow_switches:
                continue
            d = 0.0 if rack.name == home.name else rack_distance(home, rack, self.geo.pitch, self.geo.spacing)
            for u in range(rack.u_height - self.h + 1, 0, -1):
                if not any((rack.name, x) in blocked for x in range(u, u + self.h)):
                    out.append((d, -u, rack.name, u))
        return [(name, u) for _, _, name, u in sorted(out)]

    def plan(self, late: dict[str, int], bind: dict[str, str], free: dict[str, int]) -> tuple[dict[str, Temp], dict[str, Laid], list[Problem]]:
        """Temporary places for the roles in ``late`` (role -> the stage its place frees), the cables laid to them,
        and the roles no place fits (problems)."""
        temps: dict[str, Temp] = {}
        problems = []
        for r in sorted(late, key=lambda r: (self.need[r], r)):
            for rack, u in self.spots(r, self._blocked(r, bind, free, temps)):
                trial = dict(temps, **{r: Temp(r, rack, u, self.need[r], late[r])})
                if self.laid(r, late[r], trial) is not None:
                    temps = trial
                    break
            else:
                problems.append(Problem(f"switches.{r}", f"its place is held until stage {late[r]} and no free place of a rack "
                                        "that allows switches is in reach of its cables meanwhile",
                                        "give TO's switches places the as-built fabric leaves free, or free U in a network rack"))
        laid: dict[str, Laid] = {}
        for r, t in sorted(temps.items()):
            got = self.laid(r, t.until, temps)
            if got is None:  # a cable between two temporary places neither reaches
                problems.append(Problem(f"switches.{r}", f"a cable between two temporary places ({r} at {t.rack} U{t.u}) is out of reach"))
                continue
            for cid, x in got.items():
                if cid not in laid or x.length_m > laid[cid].length_m:
                    laid[cid] = x
        return temps, laid, problems


__all__ = ["Geometry", "Laid", "Temp", "TempPlanner", "occupants", "overlaps", "place_free"]
