"""The migration's lower bounds against brute force on small cases (bounds.py's proof, docs/migrate.md).

Each case is a tiny FROM (two leaves, a spine) and TO (an odd and an even switch) with a few NIC-port and fabric
cables of random lengths and media, built as the planner's own reduced sides. The brute force knows nothing of the
bound's reasoning: for every role assignment (every TO role on a distinct FROM switch or spare) it takes the cables
that stay in place by the rule moves.py uses, then tries every pairing of the other TO cables with the other FROM
cables that fit, and counts the cables handled one by one (each FROM cable not kept, each TO cable no FROM cable
serves). Stages are ignored, so its minimum is at most that of any staged migration: the bound must not exceed it.
The stage bound is checked against every ordered split of the units into stages the floor allows, feasible ones
(enough switches free at every stage) included; and the planner's own result against both.
"""

from __future__ import annotations

import itertools
import random

import pytest

from zcube_deploy.migrate.bounds import stage_lower_bound, touch_lower_bound
from zcube_deploy.migrate.fabric import FabricCable, HostEnd, Side, SwitchInfo, Unit
from zcube_deploy.migrate.moves import migration_moves, touches
from zcube_deploy.migrate.planner import Options, _solve, _stages
from zcube_deploy.migrate.roles import physicals, reracked
from zcube_deploy.migrate.search import Search

MEDIA = ("SMF", "DAC")
FAMILIES = {"SMF": ("ZC-SMF-MPO-{length}M",), "DAC": ("ZC-DAC-400G-{length}M", "ZC-DAC-200G-{length}M")}  # a DAC names its speed


def _serves(have: tuple, want: tuple) -> bool:
    """(length, medium, part family) ``have`` may serve ``want``: at least as long, same medium and family (written
    out again, apart from roles.fits)."""
    return have[0] >= want[0] and have[1:] == want[1:]


def _mf(r: random.Random, media, *plane: int) -> tuple:
    """(medium, [plane,] part family) drawn at random: the fields after the length of a HostEnd / FabricCable."""
    m = r.choice(media)
    return (m, *plane, r.choice(FAMILIES[m]))


def _case(seed: int, servers: int = 4, core: bool = False) -> tuple[Side, Side, list[Unit]]:
    """FROM: a leaf per two servers (L0, L1, ..., rack N from U 1), a spine S0 above them; TO: an odd and an even switch
    (O0, E0, U drawn from 1..4). Servers of one GPU and one NIC port: server i on leaf L(i // 2) in FROM, on O0 or E0
    in TO; ports drawn from a few names (so some cables can stay), lengths from 1..3 m, media mostly SMF, a DAC of 400G or 200G (not interchangeable); a cable from
    each leaf to the spine, one or two from O0 to E0. ``core``: TO has a second odd switch O1 and the NIC ports go to
    O0 or O1 only, so E0 (no hosts) must be in service to join them, as a spine joins leaves."""
    r = random.Random(seed)
    leaves = -(-servers // 2)
    f_sw = {f"L{j}": SwitchInfo(f"L{j}", "leaf", 0, "N", j + 1, j) for j in range(leaves)}
    f_sw["S0"] = SwitchInfo("S0", "spine", 0, "N", leaves + 1, 0)
    tos = (("O0", "odd"), ("O1", "odd"), ("E0", "even")) if core else (("O0", "odd"), ("E0", "even"))
    t_sw = {n: SwitchInfo(n, role, 0, "N", r.randint(1, 4), 0) for n, role in tos}
    f_host, t_host = {}, {}
    ports = ["p1", "p2", "p3"]
    medium = MEDIA[:1] * 3 + MEDIA[1:]
    for i in range(servers):
        key = (f"s{i}", "nic1")
        f_host[key] = HostEnd(f"L{i // 2}", r.choice(ports), f"H{i}", float(r.randint(1, 3)), *_mf(r, medium))
        t_host[key] = HostEnd(r.choice(("O0", "O1") if core else ("O0", "E0")), r.choice(ports), f"H{i}", float(r.randint(1, 3)), *_mf(r, medium))
    f_fab = [FabricCable(f"R{j}", (f"L{j}", "u1"), ("S0", f"d{j}"), float(r.randint(1, 3)), *_mf(r, MEDIA, 0)) for j in range(leaves)]
    t_fab = [FabricCable(f"F{j}", ("O0", r.choice(("u1", "d0", "d1"))), ("E0", f"d{j}"), float(r.randint(1, 3)), *_mf(r, MEDIA, 0))
             for j in range(r.randint(1, 2))]
    if core:
        t_fab.append(FabricCable("F9", ("O1", "u1"), ("E0", "d9"), float(r.randint(1, 3)), *_mf(r, MEDIA, 0)))
    src = Side("F", f_sw, f_host, f_fab, frozenset(h.switch for h in f_host.values()), "roft")
    dst = Side("T", t_sw, t_host, t_fab, frozenset(h.switch for h in t_host.values()), "zcube")
    units = [Unit(i, f"s{i}", (f"s{i}",), (0,), ((f"s{i}", "nic1"),)) for i in range(servers)]
    return src, dst, units


def _kept(src: Side, dst: Side, bind: dict[str, str], phys: dict) -> tuple[set[str], set[str]]:
    """(FROM cable ids, TO cable ids) that stay in place under ``bind``, by the rule of moves.py, written out again."""
    moved = {x for r, x in bind.items() if reracked(phys[x], dst, r)}
    f_ids, t_ids = set(), set()
    for key, d in dst.host.items():
        f = src.host.get(key)
        if f and bind[d.switch] == f.switch and f.port == d.port and f.switch not in moved and _serves((f.length_m, f.medium, f.family), (d.length_m, d.medium, d.family)):
            f_ids.add(f.cable)
            t_ids.add(d.cable)
    for t in dst.fabric:
        ends = {(bind[t.a[0]], t.a[1]), (bind[t.b[0]], t.b[1])}
        for f in src.fabric:
            if (f.id not in f_ids and {f.a, f.b} == ends and not {f.a[0], f.b[0]} & moved
                    and _serves((f.length_m, f.medium, f.family), (t.length_m, t.medium, t.family))):
                f_ids.add(f.id)
                t_ids.add(t.id)
                break
    return f_ids, t_ids


def _most_served(have: list[tuple], want: list[tuple]) -> int:
    """The most wanted cables distinct FROM cables can serve: every injective pairing tried."""
    best = 0
    for k in range(min(len(have), len(want)), 0, -1):
        for ws in itertools.combinations(range(len(want)), k):
            for hs in itertools.permutations(range(len(have)), k):
                if all(_serves(have[h], want[w]) for w, h in zip(ws, hs)):
                    return k
    return best


def brute_touches(src: Side, dst: Side, spares: int) -> int:
    """The fewest cables handled over every role assignment and every pairing of cables, stages ignored."""
    phys = {p.name: p for p in physicals(src, spares)}
    roles = sorted(dst.switches)
    f_all = {h.cable: (h.length_m, h.medium, h.family) for h in src.host.values()} | {c.id: (c.length_m, c.medium, c.family) for c in src.fabric}
    t_all = {h.cable: (h.length_m, h.medium, h.family) for h in dst.host.values()} | {c.id: (c.length_m, c.medium, c.family) for c in dst.fabric}
    best = None
    for chosen in itertools.permutations(sorted(phys), len(roles)):
        bind = dict(zip(roles, chosen))
        kf, kt = _kept(src, dst, bind, phys)
        served = _most_served([v for c, v in sorted(f_all.items()) if c not in kf], [v for c, v in sorted(t_all.items()) if c not in kt])
        handled = (len(f_all) - len(kf)) + (len(t_all) - len(kt) - served)
        best = handled if best is None else min(best, handled)
    return best


SEEDS = range(40)


@pytest.mark.parametrize("spares", [0, 1])
def test_touch_bound_never_exceeds_brute_force(spares):
    tight = 0
    for seed in SEEDS:
        src, dst, _ = _case(seed)
        bound = touch_lower_bound(src, dst, spares)["touches"]
        brute = brute_touches(src, dst, spares)
        assert bound <= brute, (seed, bound, brute)
        tight += bound == brute
    assert tight >= len(SEEDS) // 2  # mostly exact: a bound raised by one fails here


def _feasible(search: Search, order: list[list[int]]) -> bool:
    """Every prefix of the stages leaves enough switches free (Search.slack, the planner's exact Hall count)."""
    moved: set[int] = set()
    for batch in order:
        moved |= set(batch)
        counts = tuple(sum(1 for u in cls if u in moved) for cls in search.classes)
        s = search.slack(counts)
        if s is None or s < 0:
            return False
    return True


def _orders(units: list[int], cap: int):
    """Every ordered split of ``units`` into non-empty stages of at most ``cap``."""
    if not units:
        yield []
        return
    for k in range(1, min(cap, len(units)) + 1):
        for first in itertools.combinations(units, k):
            rest = [u for u in units if u not in first]
            for tail in _orders(rest, cap):
                yield [list(first)] + tail


@pytest.mark.parametrize("cap", [2, 3])
@pytest.mark.parametrize("core", [False, True])
def test_stage_bound_and_planner_against_every_order(cap, core):
    """Every split of the units into stages of at most ``cap`` has at least the bound's stages, and so has every
    feasible one; the planner finds the fewest feasible one (and says it is proven), with at least the bound's
    touches. The bound is mostly exact here, so a bound raised by one fails."""
    tight = 0
    for seed in range(8):
        src, dst, units = _case(seed, 4, core)
        search = Search(src, dst, units, cap, 0)
        orders = list(_orders([u.id for u in units], cap))
        assert min(len(o) for o in orders) == stage_lower_bound(len(units), cap)
        feasible = [len(o) for o in orders if _feasible(search, o)]
        mig, _ = _solve(src, dst, units, cap, Options(0.0, "server", 0), {f"s{i}": ("A", i + 1) for i in range(4)})
        if not feasible:
            assert mig is None
            continue
        assert mig is not None and mig.proven and len(mig.batches) == min(feasible) >= stage_lower_bound(len(units), cap)
        moves = migration_moves(_stages(mig.search, mig.batches, mig.free, mig.need), mig.places)
        assert touches([m for stage in moves for m in stage]) >= touch_lower_bound(src, dst, 0)["touches"]
        tight += min(feasible) == stage_lower_bound(len(units), cap)
    assert tight >= 4
