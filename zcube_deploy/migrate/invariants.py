"""The invariants every stage of a migration must hold, checked apart from the search that built it.

Given the two plans' sides, the units, the batches, the role assignment and the moves (a
:class:`~zcube_deploy.migrate.planner.Migration`), re-derive everything from scratch:

- ``units``: every unit moves exactly once;
- ``floor``: at every stage at least the capacity floor of the units serves;
- ``one_role``: no switch in two roles at once (a switch holds its TO role only once the FROM
  island no longer uses it, and each role sits on one switch);
- ``reachable``: after every stage each island is joined on its own, plane by plane (graph
  reachability over the island's own switches and cables, breadth first);
- ``wiring``: replaying the moves on the FROM wiring, every move finds its cable where it says
  (before) and each stage ends with exactly the cables its islands need (after); the last stage
  ends with exactly TO's cables;
- ``cable_parts``: every cable plugged (moved, installed, re-plugged) is a part that fits where it is plugged: the
  part the stage plans there (TO's, or the cable laid to a temporary place), or one that differs from it in its
  length text only (the catalog's template: same medium, speed and form) and is at least as long; a reused FROM
  cable's part is FROM's own (a 400G DAC never serves a 200G port);
- ``cable_lengths``: replaying the moves, every cable with an end on a role in a temporary place reaches, in every
  stage it is plugged, between where its ends stand then (the run re-measured with the plan's length model,
  plan/media.py, from the racks and U of that stage), and its medium reaches that far;
- ``rack_space``: replaying the switches' rack work from FROM's places, no U holds two devices, a switch is
  racked only into a rack that allows switches, inside its U, every switch the FROM island uses stands at its FROM
  place and every role in service at its place for the stage (its temporary place until it moves, then its TO
  place), U by U.

Each check returns the problems it found (empty: it holds). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from zcube_deploy.errors import Problem
from zcube_deploy.migrate.fabric import Side
from zcube_deploy.migrate.moves import Move
from zcube_deploy.migrate.planner import Migration
from zcube_deploy.plan.media import run_length_m
from zcube_deploy.plan.placement import rack_distance


def _moved_by(mig: Migration) -> dict[int, int]:
    return {u: t for t, batch in enumerate(mig.batches, start=1) for u in batch}


def check_units(mig: Migration) -> list[Problem]:
    seen = [u for batch in mig.batches for u in batch]
    out = []
    if sorted(seen) != sorted(u.id for u in mig.units):
        twice = sorted({u for u in seen if seen.count(u) > 1})
        never = sorted(set(u.id for u in mig.units) - set(seen))
        out.append(Problem("stages", f"units moved twice: {twice[:5]}, never moved: {[mig.units[u].label for u in never[:5]]}"))
    return out


def check_floor(mig: Migration) -> list[Problem]:
    n = len(mig.units)
    return [Problem(f"stage {t}", f"{n - len(b)} of {n} units serve, below the floor {mig.options.capacity_floor}")
            for t, b in enumerate(mig.batches, start=1) if n and (n - len(b)) / n < mig.options.capacity_floor - 1e-12]


def _from_island(mig: Migration, t: int) -> tuple[set[str], set[tuple[str, str]]]:
    """(FROM switches in use during stage t, NIC ports of the units still on FROM after it)."""
    moved = _moved_by(mig)
    ports = {p for u in mig.units if moved.get(u.id, 0) > t for p in u.ports if p in mig.src.host}
    edges = {mig.src.host[p].switch for p in ports}
    cores = {s for s in mig.src.switches if s not in mig.src.edges and mig.free_stage.get(s, 1) > t}
    return edges | cores, ports


def _to_island(mig: Migration, t: int) -> tuple[set[str], set[tuple[str, str]]]:
    moved = _moved_by(mig)
    ports = {p for u in mig.units if moved.get(u.id, 10**9) <= t for p in u.ports if p in mig.dst.host}
    return {r for r, s in mig.need_stage.items() if s <= t}, ports


def check_one_role(mig: Migration) -> list[Problem]:
    out = []
    if len(set(mig.bind.values())) != len(mig.bind):
        out.append(Problem("roles", "a switch plays two TO roles"))
    for t in range(1, len(mig.batches) + 1):
        from_sw, _ = _from_island(mig, t)
        roles, ports = _to_island(mig, t)
        for r in sorted(roles):
            if mig.bind.get(r) in from_sw:
                out.append(Problem(f"stage {t}", f"{mig.bind[r]} plays TO role {r} while the FROM island still uses it"))
        missing = sorted({mig.dst.host[p].switch for p in ports} - roles)
        if missing:
            out.append(Problem(f"stage {t}", f"units on TO use role(s) no switch plays yet: {', '.join(missing[:5])}"))
    return out


def _joined(side: Side, switches: set[str], ports: set[tuple[str, str]], label: str) -> list[Problem]:
    """Every switch the ports use reaches every other of its plane over the island's own switches and cables."""
    links: dict[str, set[str]] = {}
    for c in side.fabric:
        if c.a[0] in switches and c.b[0] in switches:
            links.setdefault(c.a[0], set()).add(c.b[0])
            links.setdefault(c.b[0], set()).add(c.a[0])
    used = {side.host[p].switch for p in ports}
    out = []
    lost = sorted(used - switches)
    if lost:
        out.append(Problem(label, f"units are cabled to switches outside the island: {', '.join(lost[:5])}"))
    for plane in sorted({side.switches[s].plane for s in used & switches}):
        mine = {s for s in used & switches if side.switches[s].plane == plane}
        start = min(mine)
        seen, todo = {start}, [start]
        while todo:
            for m in links.get(todo.pop(), ()):
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        cut = sorted(mine - seen)
        if cut:
            out.append(Problem(label, f"plane {plane}: {', '.join(cut[:5])} cannot reach {start} inside the island"))
    return out


def check_reachable(mig: Migration) -> list[Problem]:
    out = []
    for t in range(1, len(mig.batches) + 1):
        sw, ports = _from_island(mig, t)
        out += _joined(mig.src, sw, ports, f"stage {t} FROM island")
        roles, ports = _to_island(mig, t)
        out += _joined(mig.dst, roles, ports, f"stage {t} TO island")
    return out


def _expected(mig: Migration, t: int) -> set[frozenset]:
    """The cables (as sets of two (device, port) ends, devices named as after stage t) the islands hold after stage t."""
    from_sw, from_ports = _from_island(mig, t)
    roles, to_ports = _to_island(mig, t)
    out = {frozenset({p, (mig.src.host[p].switch, mig.src.host[p].port)}) for p in from_ports}
    out |= {frozenset({c.a, c.b}) for c in mig.src.fabric if c.a[0] in from_sw and c.b[0] in from_sw
            and mig.free_stage.get(c.a[0], 1) > t and mig.free_stage.get(c.b[0], 1) > t}
    out |= {frozenset({p, (mig.dst.host[p].switch, mig.dst.host[p].port)}) for p in to_ports}
    out |= {frozenset({c.a, c.b}) for c in mig.dst.fabric if c.a[0] in roles and c.b[0] in roles}
    return out


def check_wiring(mig: Migration) -> list[Problem]:
    """Replay the moves on the FROM wiring: each finds its cable end where it says, each stage ends as expected.
    Cables are keyed by (plan, id): the two plans number their cables on their own."""
    wiring: dict[tuple[str, str], set[tuple[str, str]]] = {("from", h.cable): {key, (h.switch, h.port)} for key, h in mig.src.host.items()}
    wiring.update({("from", c.id): {c.a, c.b} for c in mig.src.fabric})
    out: list[Problem] = []
    for t, moves in enumerate(mig.moves, start=1):
        renamed = {x: r for r, x in mig.bind.items() if mig.need_stage[r] == t}
        for m in moves:
            where = f"stage {t} {m.action} {m.old_cable or m.cable}"
            if m.action in ("move", "remove", "replug"):
                key = ("from", m.old_cable) if ("from", m.old_cable) in wiring else ("to", m.cable)  # re-laid end by end: TO id after the first
                ends = wiring.get(key)
                old = (m.old.device, m.old.port) if m.old else None
                if ends is None or old not in ends:
                    out.append(Problem(where, f"no cable {m.old_cable} at {old} to take out"))
                    continue
                ends.discard(old)
                if m.action in ("move", "replug"):
                    ends.add((m.new.device, m.new.port))
                    wiring[("to", m.cable)] = wiring.pop(key)
                elif not ends:
                    wiring.pop(key)
            else:
                wiring.setdefault(("to", m.cable), set()).add((m.new.device, m.new.port))
        for cid, ends in list(wiring.items()):
            wiring[cid] = {(renamed.get(d, d), p) for d, p in ends}
        have = {frozenset(e) for e in wiring.values() if len(e) == 2}
        want = _expected(mig, t)
        for e in sorted(want - have, key=sorted)[:5]:
            out.append(Problem(f"stage {t}", f"a cable the islands need is not there after the moves: {sorted(e)}"))
        for e in sorted(have - want, key=sorted)[:5]:
            out.append(Problem(f"stage {t}", f"a cable is left that no island uses: {sorted(e)}"))
    return out


_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")


def _interchangeable(have: tuple[str, float, str], need: tuple[str, float, str]) -> bool:
    """Whether cable ``have`` (part, length, medium) may stand where ``need`` is planned: the same part, or one whose
    text differs from it only in numbers where each names its own length (not in a speed: 400G is not 200G), of the same
    medium, at least as long."""
    (hp, hl, hm), (np_, nl, nm) = have, need
    hs, ns = _NUMBER.split(hp), _NUMBER.split(np_)  # text, number, text, ...: the numbers at the odd places
    same = len(hs) == len(ns) and all(h == n if i % 2 == 0 else (h == n or (float(h), float(n)) == (hl, nl))
                                      for i, (h, n) in enumerate(zip(hs, ns)))
    return hm == nm and hl >= nl - 1e-9 and same


def check_cable_parts(mig: Migration) -> list[Problem]:
    """Each plugged cable's part (FROM's for a reused cable, the laid one's, else TO's) against the part the stage
    plans at that end (the laid one's while the cable reaches a temporary place, else TO's)."""
    out: list[Problem] = []
    plugged: dict[str, tuple[str, float, str]] = {}  # TO cable -> the cable plugged as it
    for t, moves in enumerate(mig.moves, start=1):
        for m in moves:
            if m.new is None:
                continue
            x = mig.laid.get(m.cable)
            laid = (x.part, x.length_m, x.medium) if x is not None else None
            planned = mig.dst.parts.get(m.cable)
            if m.action == "replug":
                have = plugged.get(m.cable)
            elif m.part:
                have = (m.part, m.length_m, m.medium)
            elif m.old_cable:
                have = mig.src.parts.get(m.old_cable)
            else:
                have = planned if m.temporary or laid is None else laid
            need = planned if m.temporary or m.action == "replug" or laid is None else laid
            plugged[m.cable] = have
            if have is None or need is None:
                out.append(Problem(f"stage {t} {m.action} {m.cable}", "the part of the cable plugged or planned is not known"))
            elif not _interchangeable(have, need):
                out.append(Problem(f"stage {t} {m.action} {m.cable} at {m.new.device} {m.new.port}",
                                   f"plugs {have[0]} ({have[2]}, {have[1]:g} m) where {need[0]} ({need[2]}, {need[1]:g} m) is planned"))
    return out


def _stands(mig: Migration, device: str, t: int) -> tuple[str, int]:
    """(rack, U) of a TO device after stage ``t``: a server's, a role's temporary place until it moves, else its own."""
    if device in mig.space.servers:
        return mig.space.servers[device]
    tp = mig.temp.get(device)
    if tp is not None and t < tp.until:
        return tp.rack, tp.u
    return mig.dst.switches[device].rack, mig.dst.switches[device].u


def _run_m(mig: Migration, a: tuple[str, int], b: tuple[str, int]) -> float:
    """The run between two places as the plan estimates every cable's (plan/media.py: U distance in one rack, else up to
    the tray, along it between the racks' rows and positions, down), measured here on its own: not places.Geometry."""
    geo = mig.geometry
    if a[0] == b[0]:
        return run_length_m(a[1], b[1], None, 0, 0, geo.u_pitch, geo.catalog.length_model)
    ra, rb = geo.racks[a[0]], geo.racks[b[0]]
    return run_length_m(a[1], b[1], rack_distance(ra, rb, geo.pitch, geo.spacing), ra.u_height, rb.u_height, geo.u_pitch,
                        geo.catalog.length_model)


def check_cable_lengths(mig: Migration) -> list[Problem]:
    """Each cable with an end on a role in a temporary place, as plugged (the moves' length and medium: a stand-in laid
    there, a re-plugged one, a reused FROM cable), against where its two ends stand after every stage it stays plugged
    in: at least as long as the run, and no longer than its medium reaches."""
    if not mig.temp:
        return []
    if mig.geometry is None or mig.space is None:
        return [Problem("cables", "not checked: roles stand in temporary places but the migration carries no layout or catalog")]
    away = set(mig.temp)
    out: list[Problem] = []
    ends: dict[str, dict[tuple[str, str], Move]] = {}  # TO cable -> its ends plugged -> the move that plugged it (or left it)
    for t, moves in enumerate(mig.moves, start=1):
        for m in moves:
            if m.action == "replug" or (m.action == "remove" and m.temporary):  # a TO cable's end taken out again
                ends.get(m.cable, {}).pop((m.old.device, m.old.port), None)
            for e in (m.new, m.stays) if m.new is not None else ():
                if e is not None:
                    ends.setdefault(m.cable, {})[(e.device, e.port)] = m
        for cable, plugged in sorted(ends.items()):
            if len(plugged) != 2 or not {d for d, _ in plugged} & away:
                continue
            (da, _), (db, _) = plugged
            m = max(plugged.values(), key=lambda m: m.stage)  # the cable plugged now (a swapped stand-in's planned cable)
            a, b = _stands(mig, da, t), _stands(mig, db, t)
            run, reach = _run_m(mig, a, b), mig.geometry.catalog.media[m.medium].reach_m
            if m.length_m < run - 1e-9 or run > reach + 1e-9:
                out.append(Problem(f"stage {t} cable {cable}", f"{m.medium} {m.length_m:g} m between {da} at {a[0]} U{a[1]} and {db} at "
                                   f"{b[0]} U{b[1]}: a run of {run:.1f} m" + (f", beyond the {reach:g} m its medium reaches" if run > reach + 1e-9 else "")))
    return out[:20]


def _cells(where: tuple[str, int], height: int) -> list[tuple[str, int]]:
    return [(where[0], u) for u in range(where[1], where[1] + height)]


def check_rack_space(mig: Migration) -> list[Problem]:
    """Replay every stage's rack work (taken out, racked) from FROM's places: each switch taken out from where it
    stands, racked only where every U is free, and after each stage no U holds two devices (servers included), each
    switch the FROM island uses stands at its FROM place and each role in service at its TO place, played by its
    switch. U by U, apart from the code that plans the rack work."""
    sp = mig.space
    if sp is None:
        return [Problem("racks", "not checked: the migration carries no rack space (U heights, servers' places)")]
    at: dict[str, tuple[str, int] | None] = {s.name: (s.rack, s.u) for s in mig.src.switches.values()}
    servers = {cell: name for name, where in sp.servers.items() for cell in _cells(where, sp.server_u)}
    held: dict[tuple[str, int], set[str]] = {}  # U -> the switches in it, kept as the work is replayed
    for x, where in at.items():
        for c in _cells(where, sp.switch_u):
            held.setdefault(c, set()).add(x)
    out: list[Problem] = []
    for t, work in enumerate(mig.work, start=1):
        for w in work:
            if w.action not in ("unrack", "rack"):
                continue
            if w.action == "unrack" and at.get(w.switch) != (w.old.rack, w.old.u):
                out.append(Problem(f"stage {t}", f"{w.switch} is taken out of {w.old.rack} U{w.old.u}, where it does not stand"))
            if w.action == "rack":
                spot = (w.new.rack, w.new.u)
                height, allowed = sp.racks.get(spot[0], (None, True)) if sp.racks else (None, True)
                if not allowed or (height is not None and not 1 <= spot[1] <= height - sp.switch_u + 1):
                    out.append(Problem(f"stage {t}", f"{w.switch} racked at {spot[0]} U{spot[1]}, "
                                       + ("a rack that allows no switch" if not allowed else f"outside the rack's {height} U")))
                clash = sorted({x for c in _cells(spot, sp.switch_u) for x in held.get(c, ())} - {w.switch}
                               | {servers[c] for c in _cells(spot, sp.switch_u) if c in servers})
                if at.get(w.switch) is not None or clash:
                    out.append(Problem(f"stage {t}", f"{w.switch} racked at {spot[0]} U{spot[1]} where "
                                       + (", ".join(clash) + " stand(s)" if clash else f"it is already racked at {at[w.switch]}")))
            for c in _cells(at[w.switch], sp.switch_u) if at.get(w.switch) is not None else ():
                held[c].discard(w.switch)
            at[w.switch] = (w.new.rack, w.new.u) if w.action == "rack" else None
            for c in _cells(at[w.switch], sp.switch_u) if at[w.switch] is not None else ():
                held.setdefault(c, set()).add(w.switch)
        out += _placed_after(mig, t, at, servers)
    return out


def _placed_after(mig: Migration, t: int, at: dict, servers: dict) -> list[Problem]:
    """After stage t: each U one device; the FROM island's switches at their FROM places, each role at its TO place."""
    out = []
    cells: dict[tuple[str, int], str] = dict(servers)
    for x, where in sorted(at.items()):
        for c in _cells(where, mig.space.switch_u) if where is not None else ():
            if c in cells:
                out.append(Problem(f"stage {t}", f"{c[0]} U{c[1]} holds both {cells[c]} and {x}"))
            cells[c] = x
    from_sw, _ = _from_island(mig, t)
    for s in sorted(from_sw):
        if at.get(s) != (mig.src.switches[s].rack, mig.src.switches[s].u):
            out.append(Problem(f"stage {t}", f"{s} serves the FROM island but does not stand at its place"))
    roles, _ = _to_island(mig, t)
    for r in sorted(roles):
        tp = mig.temp.get(r)
        place = (tp.rack, tp.u) if tp is not None and t < tp.until else (mig.dst.switches[r].rack, mig.dst.switches[r].u)
        if at.get(mig.bind.get(r)) != place:
            out.append(Problem(f"stage {t}", f"{r} is in service but {mig.bind.get(r)} does not stand at its place "
                               f"{place[0]} U{place[1]}" + (" (temporary)" if tp is not None and t < tp.until else "")))
    return out[:20]


CHECKS: tuple[tuple[str, Callable[[Migration], list[Problem]]], ...] = (
    ("units", check_units), ("floor", check_floor), ("one_role", check_one_role), ("reachable", check_reachable),
    ("wiring", check_wiring), ("cable_parts", check_cable_parts), ("cable_lengths", check_cable_lengths),
    ("rack_space", check_rack_space))


def check_migration(mig: Migration) -> dict[str, list[Problem]]:
    """Every invariant's problems (an empty list: it holds)."""
    return {name: fn(mig) for name, fn in CHECKS}


__all__ = ["CHECKS", "check_cable_lengths", "check_cable_parts", "check_migration"]
