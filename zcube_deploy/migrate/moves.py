"""The cable moves of each stage, from the stage sequence and the role assignment.

Per stage, for every NIC port of the units that move: kept in place (same switch, same port, the
switch not re-racked), moved (unplugged at the FROM switch port, plugged into the TO switch port:
the cable is reused when it is long enough and of the same medium) or replaced (removed, and
another cable installed). Fabric cables: a FROM cable leaves when one of
its switches leaves the FROM island; a TO cable is needed once both of its roles are in service;
a FROM cable whose two ends are exactly a TO cable's stays; a leaving cable is moved to a needed
one of the same stage when it is long enough; the rest are removed into a stock that later
installs draw on before new cables. A cable touch is one physical cable handled, counted once over
the whole migration (:func:`touches`), as the lower bound counts them.

Every move names the end that stays, the end it leaves and the end it goes to, as the device is
named at that moment (a switch that took a TO role carries the role's name and sits at the role's
rack and U). Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from zcube_deploy.migrate.fabric import FabricCable, Side, Unit
from zcube_deploy.migrate.roles import Physical, fits, reracked


@dataclass(frozen=True)
class End:
    device: str
    port: str
    rack: str
    u: int


@dataclass(frozen=True)
class Move:
    """One technician action on one cable."""

    stage: int
    action: str  # move | remove | install
    kind: str  # host | fabric
    cable: str  # the cable's id after the action (TO id), or before it for a removal
    old_cable: str | None  # the FROM id it carried before (moved or removed cables)
    stays: End | None  # the end that is not touched (a moved cable's fixed end)
    old: End | None  # where the moving end was
    new: End | None  # where it goes
    length_m: float
    medium: str


class Places:
    """Where each device is, and what it is called, before and after it takes its TO role."""

    def __init__(self, src: Side, dst: Side, servers: dict[str, tuple[str, int]], bind: dict[str, str], phys: dict[str, Physical]):
        self.src, self.dst, self.servers, self.bind, self.phys = src, dst, servers, bind, phys
        self.role_of = {x: r for r, x in bind.items()}

    def _end(self, side: Side, device: str, port: str) -> End:
        rack, u = self.servers[device] if device in self.servers else (side.switches[device].rack, side.switches[device].u)
        return End(device, port, rack, u)

    def from_end(self, device: str, port: str) -> End:
        """An end as it is before the stage (FROM names and places)."""
        return self._end(self.src, device, port)

    def to_end(self, device: str, port: str) -> End:
        """An end as it is after (a switch in its TO role: the role's name, rack and U)."""
        return self._end(self.dst, device, port)

    def reracked(self, physical: str) -> bool:
        role = self.role_of.get(physical)
        return role is not None and reracked(self.phys[physical], self.dst, role)


@dataclass(frozen=True)
class _Cable:
    """A cable that leaves (FROM) or is needed (TO) in a stage, with its ends as named at that moment."""

    id: str
    kind: str
    ends: tuple[End, End]
    length_m: float
    medium: str


def stage_moves(stage: int, units: list[Unit], leaving: list[FabricCable], needed: list[FabricCable], pl: Places,
                stock: dict[str, list[_Cable]]) -> list[Move]:
    """Every cable action of one stage: NIC-port cables moved at their switch end (or kept), fabric cables kept when
    they already are a TO cable; every other leaving cable re-laid as a needed one when it fits, the rest removed (into
    ``stock``, the cables taken out in earlier stages, which later installs draw on before new ones)."""
    out: list[Move] = []
    gone: list[_Cable] = []
    new: list[_Cable] = []
    for u in units:
        for key in u.ports:
            f, d = pl.src.host.get(key), pl.dst.host.get(key)
            server_end = pl.from_end(*key)
            if f is not None and d is not None and fits(f.length_m, f.medium, d.length_m, d.medium):
                if not (pl.bind[d.switch] == f.switch and f.port == d.port and not pl.reracked(f.switch)):
                    out.append(Move(stage, "move", "host", d.cable, f.cable, server_end, pl.from_end(f.switch, f.port),
                                    pl.to_end(d.switch, d.port), f.length_m, f.medium))
                continue
            if f is not None:
                gone.append(_Cable(f.cable, "host", (server_end, pl.from_end(f.switch, f.port)), f.length_m, f.medium))
            if d is not None:
                new.append(_Cable(d.cable, "host", (pl.to_end(*key), pl.to_end(d.switch, d.port)), d.length_m, d.medium))
    by_ends = {frozenset({(pl.bind.get(t.a[0]), t.a[1]), (pl.bind.get(t.b[0]), t.b[1])}): t for t in needed}
    still = {t.id: t for t in needed}
    for f in leaving:
        t = by_ends.get(frozenset((f.a, f.b)))
        if t is not None and t.id in still and _same(pl, f, t):
            del still[t.id]
            continue
        gone.append(_Cable(f.id, "fabric", (pl.from_end(*f.a), pl.from_end(*f.b)), f.length_m, f.medium))
    new += [_Cable(t.id, "fabric", (pl.to_end(*t.a), pl.to_end(*t.b)), t.length_m, t.medium) for t in sorted(still.values(), key=lambda t: t.id)]
    return out + _relay(stage, gone, new, stock)


def _fitting(pool: list[_Cable], need: _Cable) -> _Cable | None:
    """The shortest cable of ``pool`` (sorted by length) that serves ``need``."""
    return next((c for c in pool if c.length_m >= need.length_m), None)


def _relay(stage: int, gone: list[_Cable], new: list[_Cable], stock: dict[str, list[_Cable]]) -> list[Move]:
    """Leaving cables re-laid where needed cables go (shortest fitting first, per medium); a needed cable none fits is
    installed from the stock (a cable taken out in an earlier stage) or new; the leaving cables left over are removed
    and go to the stock."""
    pool: dict[str, list[_Cable]] = {}
    for g in sorted(gone, key=lambda c: (c.length_m, c.id)):
        pool.setdefault(g.medium, []).append(g)
    out: list[Move] = []
    for n in sorted(new, key=lambda c: (c.length_m, c.id)):
        g = _fitting(pool.get(n.medium, []), n)
        if g is None:
            s = _fitting(stock.get(n.medium, []), n)
            if s is not None:
                stock[n.medium].remove(s)
            out += [Move(stage, "install", n.kind, n.id, s.id if s else None, None, None, end, s.length_m if s else n.length_m, n.medium)
                    for end in n.ends]
            continue
        pool[n.medium].remove(g)
        for old, to in zip(g.ends, n.ends):
            out.append(Move(stage, "move", n.kind, n.id, g.id, None, old, to, g.length_m, g.medium))
    for medium, cands in pool.items():
        for g in cands:
            out += [Move(stage, "remove", g.kind, g.id, g.id, None, end, None, g.length_m, g.medium) for end in g.ends]
        stock[medium] = sorted(stock.get(medium, []) + cands, key=lambda c: (c.length_m, c.id))
    return out


def _same(pl: Places, fc: FabricCable, tc: FabricCable) -> bool:
    """Whether FROM cable ``fc`` already is TO cable ``tc`` (both ends on the switches playing its roles, same ports)."""
    ta = (pl.bind.get(tc.a[0]), tc.a[1])
    tb = (pl.bind.get(tc.b[0]), tc.b[1])
    if {fc.a, fc.b} != {ta, tb} or not fits(fc.length_m, fc.medium, tc.length_m, tc.medium):
        return False
    return not (pl.reracked(fc.a[0]) or pl.reracked(fc.b[0]))


def physical(m: Move) -> tuple[str, str]:
    """The physical cable a move handles: the FROM cable it was (moved, removed, or drawn from the stock), else a new one."""
    return ("from", m.old_cable) if m.old_cable else ("new", m.cable)


def touches(moves: list[Move]) -> int:
    """Cables touched: each physical cable once, however many of its ends are handled."""
    return len({physical(m) for m in moves})


__all__ = ["End", "Move", "Places", "physical", "stage_moves", "touches"]

