"""The cable moves of each stage, from the stage sequence and the role assignment.

Per stage, for every NIC port of the units that move: kept in place (same switch, same port, the
switch not re-racked, the cable long enough), else its FROM cable leaves and its TO cable is
wanted. Fabric cables: a FROM cable leaves when one of its switches leaves the FROM island; a TO
cable is wanted once both of its roles are in service; a FROM cable whose two ends are exactly a TO
cable's stays. Which leaving cable serves which wanted one (same medium and part family, long enough, left by
then) is decided over all stages at once (reuse.py: the most cables reused); a port's own cable
that serves it moves at its switch end only, another leaving cable of the same stage is re-laid,
one that left earlier is installed from the stock, and a wanted cable none serves is new. A cable
touch is one physical cable handled, counted once over the whole migration (:func:`touches`), as
the lower bound counts them (bounds.py).

Every move names the end that stays, the end it leaves and the end it goes to, as the device is
named at that moment (a switch that took a TO role carries the role's name and sits at the role's
rack and U). Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from zcube_deploy.migrate.fabric import FabricCable, HostEnd, Side, Unit, part_family
from zcube_deploy.migrate.places import Laid, Temp
from zcube_deploy.migrate.reuse import Have, Want, best_match, serve_counts
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
    action: str  # move | remove | install | replug (a switch leaving its temporary place: same port, its own place)
    kind: str  # host | fabric
    cable: str  # the cable's id after the action (TO id), or before it for a removal
    old_cable: str | None  # the FROM id it carried before (moved or removed cables)
    stays: End | None  # the end that is not touched (a moved cable's fixed end)
    old: End | None  # where the moving end was
    new: End | None  # where it goes
    length_m: float
    medium: str
    temporary: bool = False  # a cable of a temporary place swapped for the planned one (removed, installed)
    part: str = ""  # the part of a new cable laid to a temporary place (places.Laid), where it is not the planned one;
    # on a re-plug or a stand-in's removal the part of the cable handled (FROM's for a FROM cable)


class Places:
    """Where each device is, and what it is called, before and after it takes its TO role."""

    def __init__(self, src: Side, dst: Side, servers: dict[str, tuple[str, int]], bind: dict[str, str], phys: dict[str, Physical],
                 temp: dict[str, Temp] | None = None, laid: dict[str, Laid] | None = None):
        self.src, self.dst, self.servers, self.bind, self.phys = src, dst, servers, bind, phys
        self.role_of = {x: r for r, x in bind.items()}
        self.temp = temp or {}  # role -> its temporary place (places.Temp)
        self.laid = laid or {}  # TO cable -> the cable laid while an end stands in a temporary place

    def _end(self, side: Side, device: str, port: str) -> End:
        rack, u = self.servers[device] if device in self.servers else (side.switches[device].rack, side.switches[device].u)
        return End(device, port, rack, u)

    def from_end(self, device: str, port: str) -> End:
        """An end as it is before the stage (FROM names and places)."""
        return self._end(self.src, device, port)

    def to_end(self, device: str, port: str, stage: int = 10**9) -> End:
        """An end as it is after stage ``stage`` (a switch in its TO role: the role's name, and its temporary place
        until it moves, then the role's rack and U)."""
        tp = self.temp.get(device)
        if tp is not None and stage < tp.until:
            return End(device, port, tp.rack, tp.u)
        return self._end(self.dst, device, port)

    def cable(self, cable: str, length_m: float, medium: str, fit: str) -> tuple[float, str, str]:
        """(length, medium, fit) of the cable laid as TO cable ``cable``: planned, or the one reaching a temporary place
        (fit: fabric.HostEnd.fit of its part)."""
        x = self.laid.get(cable)
        return (x.length_m, x.medium, f"{x.medium} {part_family(x.part, x.length_m)}") if x is not None else (length_m, medium, fit)

    def reracked(self, physical: str) -> bool:
        role = self.role_of.get(physical)
        return role is not None and (role in self.temp or reracked(self.phys[physical], self.dst, role))


@dataclass(frozen=True)
class _Cable:
    """A cable that leaves (FROM) or is wanted (TO) in a stage, with its ends as named at that moment."""

    id: str
    kind: str
    ends: tuple[End, End]
    length_m: float
    medium: str
    fit: str  # fabric.HostEnd.fit: what may serve it / what it may serve
    stage: int
    port: tuple[str, str] | None  # (server, NIC port) of a NIC-port cable


def _host_kept(pl: Places, f: HostEnd | None, d: HostEnd | None) -> bool:
    """Whether a NIC port's cable stays in place: its switch plays the role of the port's TO switch, same port, not
    re-racked, the cable long enough."""
    return (f is not None and d is not None and fits(f.length_m, f.fit, d.length_m, d.fit)
            and pl.bind[d.switch] == f.switch and f.port == d.port and not pl.reracked(f.switch))


def _host_flow(units: list[Unit], pl: Places):
    """(NIC port, its FROM cable's switch end or None, its TO cable's or None) of every NIC port of ``units`` whose
    cable is not kept in place (:func:`_host_kept`)."""
    for u in units:
        for key in u.ports:
            f, d = pl.src.host.get(key), pl.dst.host.get(key)
            if not _host_kept(pl, f, d):
                yield key, f, d


def _fabric_split(leaving: list[FabricCable], needed: list[FabricCable], pl: Places) -> tuple[list[FabricCable], list[FabricCable]]:
    """(the leaving fabric cables that do not stay, the wanted ones no staying cable already is): a FROM cable whose
    two ends already are a TO cable's stays (:func:`_same`)."""
    by_ends = {frozenset({(pl.bind.get(t.a[0]), t.a[1]), (pl.bind.get(t.b[0]), t.b[1])}): t for t in needed}
    still = {t.id: t for t in needed}
    gone = []
    for f in leaving:
        t = by_ends.get(frozenset((f.a, f.b)))
        if t is not None and t.id in still and _same(pl, f, t):
            del still[t.id]
            continue
        gone.append(f)
    return gone, sorted(still.values(), key=lambda t: t.id)


def _stage_cables(stage: int, units: list[Unit], leaving: list[FabricCable], needed: list[FabricCable],
                  pl: Places) -> tuple[list[_Cable], list[_Cable]]:
    """(the FROM cables that leave in ``stage``, the TO cables wanted in it), both without the cables kept in place
    (:func:`_host_kept`, :func:`_fabric_split`)."""
    gone: list[_Cable] = []
    new: list[_Cable] = []
    for key, f, d in _host_flow(units, pl):
        if f is not None:
            gone.append(_Cable(f.cable, "host", (pl.from_end(*key), pl.from_end(f.switch, f.port)), f.length_m, f.medium, f.fit, stage, key))
        if d is not None:
            new.append(_Cable(d.cable, "host", (pl.to_end(*key), pl.to_end(d.switch, d.port, stage)), *pl.cable(d.cable, d.length_m, d.medium, d.fit),
                              stage, key))
    fab_gone, fab_new = _fabric_split(leaving, needed, pl)
    gone += [_Cable(f.id, "fabric", (pl.from_end(*f.a), pl.from_end(*f.b)), f.length_m, f.medium, f.fit, stage, None) for f in fab_gone]
    new += [_Cable(t.id, "fabric", (pl.to_end(*t.a, stage), pl.to_end(*t.b, stage)), *pl.cable(t.id, t.length_m, t.medium, t.fit), stage, None)
            for t in fab_new]
    return gone, new


def _flow(per_stage: list[tuple[list[_Cable], list[_Cable]]]) -> tuple[list[Have], list[Want]]:
    return ([Have(g.id, g.stage, g.fit, g.length_m, g.port) for gone, _ in per_stage for g in gone],
            [Want(n.id, n.stage, n.fit, n.length_m, n.port) for _, new in per_stage for n in new])


def touches_of(stages: list[tuple[list[Unit], list[FabricCable], list[FabricCable]]], pl: Places) -> int:
    """The cable touches :func:`migration_moves` makes of the same stages, counted without building the moves (on
    counts per medium and length, reuse.serve_counts): every leaving cable is handled once, and every wanted cable no
    leaving one serves is a new cable."""
    pool: dict[tuple[str, float], int] = {}
    total = 0
    for units, leaving, needed in stages:
        have: dict[tuple[str, float], int] = {}
        want: dict[tuple[str, float], int] = {}
        for _, f, d in _host_flow(units, pl):
            if f is not None:
                have[(f.fit, f.length_m)] = have.get((f.fit, f.length_m), 0) + 1
            if d is not None:
                want[(d.fit, d.length_m)] = want.get((d.fit, d.length_m), 0) + 1
        for cables, into in zip(_fabric_split(leaving, needed, pl), (have, want)):
            for c in cables:
                into[(c.fit, c.length_m)] = into.get((c.fit, c.length_m), 0) + 1
        pool, missed = serve_counts(pool, have, want)
        total += sum(have.values()) + missed
    return total


def migration_moves(stages: list[tuple[list[Unit], list[FabricCable], list[FabricCable]]], pl: Places) -> list[list[Move]]:
    """Every cable action of every stage; ``stages``: per stage (the units that move, the FROM fabric cables that
    leave, the TO fabric cables wanted).

    Which leaving cable serves which wanted one is decided over all stages at once (reuse.best_match: the most
    cables reused, then the most NIC-port cables moved at their switch end only). Per stage: a NIC port's cable
    that serves its own port is moved at its switch end (the server end stays); a leaving cable that serves another
    wanted cable of the same stage is re-laid (both ends); a wanted cable served by a cable that left earlier is
    installed from the stock (that cable's id in ``old_cable``); one nothing serves is installed new; a leaving
    cable that serves nothing in its stage is removed (into the stock when a later stage installs it)."""
    per_stage = [_stage_cables(t, units, leaving, needed, pl) for t, (units, leaving, needed) in enumerate(stages, start=1)]
    served = best_match(*_flow(per_stage))
    by_id = {g.id: g for gone, _ in per_stage for g in gone}
    out: list[list[Move]] = []
    for t, (gone, new) in enumerate(per_stage, start=1):
        moves: list[Move] = []
        used_now: set[str] = set()
        for n in sorted(new, key=lambda c: (c.length_m, c.id)):
            g = by_id.get(served.get(n.id, ""))
            if g is None or g.stage < t:
                laid = "" if g or n.id not in pl.laid else pl.laid[n.id].part
                moves += [Move(t, "install", n.kind, n.id, g.id if g else None, None, None, end,
                               g.length_m if g else n.length_m, n.medium, part=laid) for end in n.ends]
                continue
            used_now.add(g.id)
            if g.port is not None and g.port == n.port:  # the port's own cable: only its switch end moves
                moves.append(Move(t, "move", "host", n.id, g.id, g.ends[0], g.ends[1], n.ends[1], g.length_m, g.medium))
                continue
            moves += [Move(t, "move", n.kind, n.id, g.id, None, old, to, g.length_m, g.medium) for old, to in zip(g.ends, n.ends)]
        for g in sorted(gone, key=lambda c: (c.length_m, c.id)):
            if g.id not in used_now:
                moves += [Move(t, "remove", g.kind, g.id, g.id, None, end, None, g.length_m, g.medium) for end in g.ends]
        out.append(moves + _replugs(t, [n for _, new in per_stage[:t - 1] for n in new], pl, served))
    return out


def _replugs(t: int, laid: list[_Cable], pl: Places, served: dict[str, str]) -> list[Move]:
    """The work of stage ``t`` on the cables laid before it (``laid``: the wanted cables of the earlier stages) with an
    end on a role moving from its temporary place to its own in it: that end unplugged there and plugged at the same
    port of the role's own place (the other end stays, unless it moves too); a cable of another medium than the
    planned one (places.Laid.swap) removed and the planned cable installed instead. ``served``: TO cable -> the FROM
    cable that serves it (reuse.best_match); the part of the cable handled is FROM's for a FROM cable, the laid one's for
    a cable laid new."""
    moving = {r for r, tp in pl.temp.items() if tp.until == t}
    planned = {h.cable: h for h in pl.dst.host.values()} | {c.id: c for c in pl.dst.fabric}
    out = []
    for c in sorted(laid, key=lambda c: c.id):
        if not any(e.device in moving for e in c.ends):
            continue
        before = [pl.to_end(e.device, e.port, t - 1) for e in c.ends]
        after = [pl.to_end(e.device, e.port, t) for e in c.ends]
        x = pl.laid.get(c.id)
        part = pl.src.parts.get(served[c.id], ("",))[0] if c.id in served else x.part if x is not None else ""  # FROM's part for a FROM cable
        if x is not None and x.swap:
            want = planned[c.id]
            out += [Move(t, "remove", c.kind, c.id, c.id, None, e, None, c.length_m, c.medium, temporary=True, part=part) for e in before]
            out += [Move(t, "install", c.kind, c.id, None, None, None, e, want.length_m, want.medium, temporary=True) for e in after]
            continue
        for b, a in zip(before, after):
            if b.device in moving:
                other = after[1] if a is after[0] else after[0]
                out.append(Move(t, "replug", c.kind, c.id, None, None if other.device in moving else other, b, a, c.length_m, c.medium,
                                part=part))
    return out


def _same(pl: Places, fc: FabricCable, tc: FabricCable) -> bool:
    """Whether FROM cable ``fc`` already is TO cable ``tc`` (both ends on the switches playing its roles, same ports)."""
    ta = (pl.bind.get(tc.a[0]), tc.a[1])
    tb = (pl.bind.get(tc.b[0]), tc.b[1])
    if {fc.a, fc.b} != {ta, tb} or not fits(fc.length_m, fc.fit, tc.length_m, tc.fit):
        return False
    return not (pl.reracked(fc.a[0]) or pl.reracked(fc.b[0]))


def physical(m: Move) -> tuple:
    """The physical cable a move handles: the FROM cable it was (moved, removed, or drawn from the stock), else a new one;
    a re-plug (its switch leaving a temporary place) is a handling of its own, once per cable and stage."""
    if m.action == "replug" or m.temporary:
        return (m.action, m.cable, m.stage)
    return ("from", m.old_cable) if m.old_cable else ("new", m.cable)


def touches(moves: list[Move]) -> int:
    """Cables touched: each physical cable once, however many of its ends are handled, plus each re-plug of a cable
    whose switch leaves a temporary place (a second handling: docs/migrate.md)."""
    return len({physical(m) for m in moves})


def replugged(moves: list[Move]) -> int:
    """The touches switches leaving temporary places make (part of :func:`touches`): re-plugs, and the temporary
    cables swapped for the planned ones (each removed, each planned one installed)."""
    return len({physical(m) for m in moves if m.action == "replug" or m.temporary})


__all__ = ["End", "Move", "Places", "migration_moves", "physical", "replugged", "touches", "touches_of"]
