"""plan_migration: two plans and the options in, the staged migration out (pure, deterministic).

Steps (docs/migrate.md):

    sides      each plan reduced to switches, NIC-port cables and fabric cables (fabric.py)
    units      the serving units (servers, or instances of N GPUs)
    search     the fewest stages of at most ``cap`` units each, every stage feasible (search.py)
    roles      which switch plays each TO role (roles.py), among the minimal sequences found
    moves      every cable action of every stage (moves.py)
    bounds     the lower bounds on stages and cable touches, computed apart from the search (bounds.py)

When no sequence exists the answer is an input error (exit 2) that says why and, each tried on its
own, which spares, floor or unit size would make it possible.
"""

from __future__ import annotations

import math
from itertools import permutations
from dataclasses import dataclass, field

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.migrate.bounds import stage_lower_bound, touch_lower_bound
from zcube_deploy.migrate.fabric import Side, Unit, build_units, gpus_per_server, parse_unit, read_side, require_pair
from zcube_deploy.migrate.moves import Move, Places, migration_moves, touches, touches_of
from zcube_deploy.migrate.places import Geometry, Laid, Temp, TempPlanner, occupants, place_free
from zcube_deploy.migrate.racks import Contents, Space, SwitchWork, cage_timeline, switch_work
from zcube_deploy.migrate.roles import Kept, assign_roles, physicals, reracked
from zcube_deploy.migrate.search import Search
from zcube_deploy.migrate.stageplan import to_cables


PERMUTED_STAGES = 4  # with temporary places, every order of a sequence of at most this many stages is weighed (4! = 24)
RANKED = 4  # with temporary places, the best this many sequences (by their counted touches) are planned out in full
RANKED_CABLES = 20000  # ... (and the stage orders weighed) when the plans have at most this many NIC-port cables (glm-1k 4,096)


@dataclass(frozen=True)
class Options:
    capacity_floor: float = 0.75
    unit: str = "server"
    spares: int = 0
    crew_rate: float = 30.0  # cables per technician-hour: uncalibrated (lifecycle.md: no public figure)


@dataclass
class Migration:
    src: Side
    dst: Side
    units: list[Unit]
    cap: int
    batches: list[list[int]]
    bind: dict[str, str]  # TO role -> physical switch
    need_stage: dict[str, int]
    free_stage: dict[str, int]  # FROM switch -> the stage it leaves the FROM island in (see _release)
    moves: list[list[Move]]
    proven: bool
    options: Options
    lower: dict = field(default_factory=dict)
    work: list[list[SwitchWork]] = field(default_factory=list)  # each stage's switch work (racks.py)
    space: Space | None = None  # the U heights and servers' places the rack work was planned in
    rack_conflicts: list[str] = field(default_factory=list)  # a role's place held by a switch still in use
    places_met: str = "free"  # how the TO places were met: free | ordered | none exists | none found | ... (see _ordered)
    temp: dict[str, Temp] = field(default_factory=dict)  # roles in temporary places (places.py)
    laid: dict[str, Laid] = field(default_factory=dict)  # the cables laid to them
    cages: list[Contents] = field(default_factory=list)  # what the roles' cages hold after each stage (racks.cage_timeline)
    geometry: Geometry | None = None  # TO's layout and cabling catalog (the lengths invariant re-measures cables with them)


def capacity(n_units: int, floor: float) -> int:
    """The most units out of service at once with at least ``floor`` of ``n_units`` serving."""
    return n_units - math.ceil(n_units * floor - 1e-9)


def _free_stages(search: Search, batches: list[list[int]]) -> tuple[dict[str, int], dict[str, int]]:
    """(TO role -> first stage needing it, FROM switch -> first stage it is free from)."""
    src = search.src
    remaining = set(u.id for u in search.units)
    moved: set[int] = set()
    need: dict[str, int] = {}
    busy_at: dict[str, int] = {s: 0 for s in src.switches}
    for t, batch in enumerate(batches, start=1):
        remaining -= set(batch)
        moved |= set(batch)
        edges = frozenset().union(*(search.needs_src[u] for u in remaining)) if remaining else frozenset()
        cores = search.src_cover(edges) if edges else ()
        for s in edges | set(cores or ()):
            busy_at[s] = t
        roles = frozenset().union(*(search.needs_dst[u] for u in moved))
        for r in sorted(roles | set(search.dst_cover(roles) or ())):
            need.setdefault(r, t)
    for r in sorted(search.dst.switches):  # a TO switch no unit uses yet (hosts to come: growth) joins in the last stage
        need.setdefault(r, len(batches))
    return need, {s: t + 1 for s, t in busy_at.items()}


def _release(src: Side, bind: dict[str, str], need: dict[str, int], free: dict[str, int], last: int,
             occ: dict[str, list[str]]) -> dict[str, int]:
    """The stage each FROM switch leaves the FROM island in: a switch with hosts as soon as its units have gone; a
    switch without (a spine) only when its TO role needs it, or after the last stage when it retires, so the FROM
    island keeps every spine it can (its bandwidth) and a spine's cables move when they can serve at once; but a
    spine standing on a TO role's place (``occ``) leaves as soon as it may once that role is in service."""
    role_of = {x: r for r, x in bind.items()}
    on_place: dict[str, int] = {}
    for r, ys in occ.items():
        for y in ys:
            on_place[y] = min(on_place.get(y, last), need[r])
    out = dict(free)
    for s in src.cores:
        out[s] = need[role_of[s]] if s in role_of else last
        if s in on_place:
            out[s] = min(out[s], max(free[s], on_place[s]))
    return out


def _stages(search: Search, batches: list[list[int]], free: dict[str, int], need: dict[str, int]) -> list[tuple]:
    """Per stage: (the units that move, the FROM fabric cables that leave, the TO fabric cables wanted)."""
    src, dst = search.src, search.dst
    last = len(batches)
    out = []
    for t, batch in enumerate(batches, start=1):
        leaving = [c for c in src.fabric if min(free[c.a[0]], free[c.b[0]], last) == t]  # out with the first of its switches
        needed = [c for c in dst.fabric if max(need[c.a[0]], need[c.b[0]]) == t]
        out.append(([search.units[u] for u in batch], leaving, needed))
    return out


@dataclass
class _Choice:
    batches: list[list[int]]
    bind: dict[str, str]
    need: dict[str, int]
    free: dict[str, int]
    places: Places
    proven: bool
    search: Search
    rest: list = field(default_factory=list)  # the runners-up, best first (weighed again with their temporary places)


def _solve(src: Side, dst: Side, units: list[Unit], cap: int, opts: Options, servers: dict,
           occ: dict[str, list[str]] | None = None, around: bool = False) -> tuple[_Choice | None, bool]:
    """The search's sequences, each with its role assignment; kept: the one that buys the fewest spares, then gives
    the fewest roles to switches without hosts (spines: the leaves are reused, the spines retired), then touches the
    fewest cables (temporary places' re-plugs included), then re-racks the fewest switches (the first of equals, in the
    search's order). ``occ``: the FROM switches on each TO role's place; ``around``: the search orders the stages
    around them (search.py). Returns (the choice or None, whether the search was exhaustive)."""
    search = Search(src, dst, units, cap, opts.spares, occ if around else None)
    found = search.run()
    if not found.batches:
        return None, found.proven
    phys = {p.name: p for p in physicals(src, opts.spares)}
    cores = set(src.cores)
    kept = Kept(src, dst)
    many = len(src.host) + len(dst.host) > RANKED_CABLES  # planning each out costs seconds at 16k: the search's sequences only
    scored = []
    for batches in _candidates(found.alternatives or [found.batches], bool(occ) and not around and not many):
        if not _joined(search, batches):
            continue
        need, free = _free_stages(search, batches)
        bind = assign_roles(src, dst, opts.spares, need, free, kept)
        if bind is None:
            continue
        free = _release(src, bind, need, free, len(batches), occ or {})
        places = Places(src, dst, servers, bind, phys)
        score = (sum(1 for x in bind.values() if phys[x].spare), sum(1 for x in bind.values() if x in cores),
                 touches_of(_stages(search, batches, free, need), places) + _away(search, batches, bind, need, free, occ or {}),
                 sum(1 for r, x in bind.items() if reracked(phys[x], dst, r)))
        scored.append((score, len(scored), _Choice(batches, bind, need, free, places, found.proven, search)))
    if not scored:
        return None, found.proven
    ranked = [c for _, _, c in sorted(scored, key=lambda x: x[:2])]
    ranked[0].rest = ranked[1:RANKED] if occ and not around and not many else []
    return ranked[0], found.proven


def _joined(search: Search, batches: list[list[int]]) -> bool:
    """Whether after every stage each island can be joined (the cores its edge switches need exist): true of the
    search's own sequences, checked for the orders :func:`_candidates` adds (the role assignment checks the rest)."""
    moved: set[int] = set()
    for batch in batches:
        moved |= set(batch)
        edges = frozenset().union(*(search.needs_src[u.id] for u in search.units if u.id not in moved))
        roles = frozenset().union(*(search.needs_dst[u] for u in moved))
        if (edges and search.src_cover(edges) is None) or (roles and search.dst_cover(roles) is None):
            return False
    return True


def _candidates(alternatives: list[list[list[int]]], reorder: bool) -> list[list[list[int]]]:
    """The sequences the role choice weighs: the search's, and with ``reorder`` (roles may stand in temporary places)
    every order of the first one's stages (at most PERMUTED_STAGES stages): which place frees when depends on the
    order, and the search ranks sequences by switches and cables, not by places (an order whose islands cannot be
    joined, :func:`_joined`, or whose roles no switch is free for in time, gets no role assignment and drops out)."""
    out = list(alternatives)
    if reorder and len(alternatives[0]) <= PERMUTED_STAGES:
        seen = {tuple(map(tuple, b)) for b in out}
        for order in permutations(alternatives[0]):
            if tuple(map(tuple, order)) not in seen:
                seen.add(tuple(map(tuple, order)))
                out.append(list(order))
    return out


def _away(search: Search, batches: list[list[int]], bind: dict[str, str], need: dict[str, int], free: dict[str, int],
          occ: dict[str, list[str]]) -> int:
    """The cables re-plugged when roles leave temporary places (the cables laid on each role that enters service
    before its place frees, until it does): what temporary places add to the touches, a swapped cable counted once."""
    late = {r: t for r, t in place_free(occ, bind, free).items() if t > need[r]}
    if not late:
        return 0
    stage_of = {u: t for t, batch in enumerate(batches, start=1) for u in batch}
    n = sum(1 for u in search.units for p in u.ports if (h := search.dst.host.get(p)) is not None and h.switch in late
            and stage_of[u.id] < late[h.switch])
    for c in search.dst.fabric:
        laid = max(need[c.a[0]], need[c.b[0]])
        n += any(r in late and laid < late[r] for r in (c.a[0], c.b[0]))
    return n


def _ordered(src: Side, dst: Side, units: list[Unit], cap: int, opts: Options, servers: dict,
             occ: dict[str, list[str]], temporary: bool) -> tuple[_Choice | None, str]:
    """The migration's stages and roles, ordered around the clashes of places when an order exists within one stage
    of the lower bound; else the fewest stages, whatever the places (then some roles stand in temporary places, and
    with ``temporary`` the choice among sequences counts their re-plugs).
    Returns (the choice, how the places were met: "free" no clash, "ordered", "none exists" the exhaustive search
    proved no order (every switch on a place has hosts: which spines the FROM island keeps is the search's choice,
    so with a spine on a place it proves nothing), "none found" otherwise)."""
    if not occ:
        return _solve(src, dst, units, cap, opts, servers)[0], "free"
    got, exhaustive = _solve(src, dst, units, cap, opts, servers, occ, around=True)
    if got is not None and len(got.batches) <= stage_lower_bound(len(units), cap) + 1:
        return got, "ordered"
    exact = exhaustive and all(y in src.edges for ys in occ.values() for y in ys)  # a spine's need is the cover's choice
    why = "none within one stage of the bound" if got is not None else "none exists" if exact else "none found"
    return _solve(src, dst, units, cap, opts, servers, occ if temporary else None)[0], why


def _units(plan_from: dict, plan_to: dict, unit: str) -> list[Unit]:
    n, problem = parse_unit(unit, gpus_per_server(plan_to))
    if problem:
        raise InputErrors([problem], "invalid option")
    return build_units(plan_from, plan_to, n)


def plan_migration(plan_from: dict, plan_to: dict, opts: Options, from_path: str = "FROM", to_path: str = "TO",
                   catalog=None) -> Migration:
    """The staged migration, or InputErrors (exit 2) saying why none meets the options and what would. ``catalog``:
    the cabling catalog (its media and length model) for the cables of temporary places; without it a role whose
    place is still held when it enters service is a rack conflict (the racks cannot hold both fabrics)."""
    option_problems = []
    if not 0 <= opts.capacity_floor < 1:
        option_problems.append(Problem("--capacity-floor", f"{opts.capacity_floor} is not in [0, 1)", "e.g. 0.75"))
    if opts.spares < 0:
        option_problems.append(Problem("--spares", f"{opts.spares} is negative"))
    if not opts.crew_rate > 0:
        option_problems.append(Problem("--crew-rate", f"{opts.crew_rate} is not a positive number of cables per hour"))
    if option_problems:
        raise InputErrors(option_problems, "invalid option")
    require_pair(plan_from, plan_to, from_path, to_path)
    src, dst = read_side(plan_from, from_path), read_side(plan_to, to_path)
    units = _units(plan_from, plan_to, opts.unit)
    servers = {s["name"]: (s["rack"], s["u"]) for s in plan_to["servers"]}
    cap = capacity(len(units), opts.capacity_floor)
    space = Space(plan_to["models"]["switch"]["u_height"], plan_to["models"]["server"]["u_height"], servers,
                  {r["name"]: (r["u_height"], bool(r.get("allow_switches", True))) for r in plan_to["layout"]["racks"]})
    occ = occupants(src, dst, space.switch_u)
    got, met = _ordered(src, dst, units, cap, opts, servers, occ, catalog is not None)
    if got is None:
        raise InputErrors(_why_not(plan_from, plan_to, src, dst, units, cap, opts, servers), "the capacity floor cannot be met")
    last = len(got.batches)
    got, temp, laid, moves = _with_places(plan_to, src, dst, [got] + got.rest, occ, space, catalog, opts)
    found = Migration(src, dst, units, cap, got.batches, got.bind, got.need, got.free, moves, got.proven, opts,
                      space=space, places_met=met, temp=temp, laid=laid,
                      geometry=Geometry(plan_to, catalog) if catalog is not None else None)
    found.lower = {"stages": stage_lower_bound(len(units), cap), "touches": touch_lower_bound(src, dst, opts.spares)}
    spares = [p.name for p in physicals(src, opts.spares) if p.spare]
    found.cages = cage_timeline(plan_to, [to_cables(plan_to, found, t) for t in range(1, last + 1)])
    found.work, found.rack_conflicts = switch_work(plan_from, plan_to, src, dst, found.bind, found.need_stage, found.free_stage,
                                                   last, space, spares, temp, found.cages)
    return found


def _with_places(plan_to: dict, src: Side, dst: Side, choices: list[_Choice], occ: dict[str, list[str]], space: Space, catalog,
                 opts: Options) -> tuple[_Choice, dict[str, Temp], dict[str, Laid], list[list[Move]]]:
    """The choice, its temporary places (none without ``catalog``), the cables laid to them and its moves: of the
    ``choices`` (best first by counted touches; more than one only when roles stand in temporary places), the one
    whose moves touch the fewest cables once its temporary places and their cables are laid out (the counts cannot
    see which cables a temporary place makes longer or swaps), the same spares and spines first; InputErrors (exit
    2) when none finds its temporary places."""
    phys = {p.name: p for p in physicals(src, opts.spares)}
    best, problems = None, []
    for c in choices:
        temp, laid, why = _temporary(plan_to, src, dst, c, occ, space, catalog) if catalog is not None else ({}, {}, [])
        if why:
            problems = problems or why
            continue
        c.places.temp, c.places.laid = temp, laid
        moves = migration_moves(_stages(c.search, c.batches, c.free, c.need), c.places)
        key = (sum(1 for x in c.bind.values() if phys[x].spare), sum(1 for x in c.bind.values() if x in src.cores),
               touches([m for stage in moves for m in stage]))
        if best is None or key < best[0]:
            best = (key, c, temp, laid, moves)
    if best is None:
        raise InputErrors(problems, "the racks cannot hold both fabrics")
    return best[1:]


def _temporary(plan_to: dict, src: Side, dst: Side, got: _Choice, occ: dict[str, list[str]], space: Space,
               catalog) -> tuple[dict[str, Temp], dict[str, Laid], list[Problem]]:
    """The temporary places of the roles that enter service before their place is free, the cables laid to them
    (places.py), and the roles that find none (problems)."""
    late = {r: t for r, t in place_free(occ, got.bind, got.free).items() if t > got.need[r]}
    if not late:
        return {}, {}, []
    moved_in = {p: t for t, batch in enumerate(got.batches, start=1) for u in batch for p in got.search.units[u].ports}
    tp = TempPlanner(src, dst, Geometry(plan_to, catalog), space.switch_u, space.servers, space.server_u, moved_in, got.need)
    return tp.plan(late, got.bind, got.free)


def _why_not(plan_from: dict, plan_to: dict, src: Side, dst: Side, units: list[Unit], cap: int, opts: Options,
             servers: dict) -> list[Problem]:
    """Why no stage sequence meets the options, and each single change that would make one."""
    search = Search(src, dst, units, cap, opts.spares)
    out = [Problem("--capacity-floor", _shortage(search, opts))]
    for n in range(opts.spares + 1, opts.spares + len(dst.switches) + 1):
        if Search(src, dst, units, cap, n).run().batches:
            out.append(Problem("--spares", f"possible with {n} spare switch(es) of the same model ({n - opts.spares} more than now)",
                               f"--spares {n}"))
            break
    for c in range(cap + 1, len(units) + 1):
        if Search(src, dst, units, c, opts.spares).run().batches:
            floor = math.floor((len(units) - c) / len(units) * 100) / 100
            out.append(Problem("--capacity-floor", f"possible with a floor of {floor:.2f} ({c} of {len(units)} units out at once)",
                               f"--capacity-floor {floor:.2f}"))
            break
    G = gpus_per_server(plan_to)
    current = G if opts.unit == "server" else int(opts.unit.split("-")[0])
    for n in sorted((d for d in range(1, G) if G % d == 0 and d < current), reverse=True):
        smaller = build_units(plan_from, plan_to, n)
        if Search(src, dst, smaller, capacity(len(smaller), opts.capacity_floor), opts.spares).run().batches:
            out.append(Problem("--unit", f"possible with serving units of {n} GPUs (instances of {n} GPUs move on their own)",
                               f"--unit {n}-gpu"))
            break
    return out


def _shortage(search: Search, opts: Options) -> str:
    """The first stage's arithmetic: the most switches any first batch frees against the fewest roles it needs."""
    start = tuple(0 for _ in search.classes)
    best = None
    for i, state in enumerate(search._batches(start, full_only=False)):
        if i > 20000:
            break
        s = search.slack(state)
        if s is not None and (best is None or s > best[0]):
            best = (s, state)
    if best is None:
        return f"no stage of at most {search.cap} units can start"
    state = best[1]
    full = search.full
    edges, cores = search.src_needs([k for k, n in enumerate(state) if n < full[k]])
    roles, _ = search.dst_needs([k for k, n in enumerate(state) if n > 0])
    free = len(search.src.switches) - len(edges) - len(cores or ())
    if best[0] >= 0:
        return (f"a first stage fits, but no sequence of stages of at most {search.cap} units reaches the end: "
                "each later stage needs switches the FROM island still holds")
    return (f"with at most {search.cap} of {len(search.units)} units out at once ({opts.unit}), the best first stage frees "
            f"{free} FROM switch(es) (the FROM island still needs {len(edges)} switches with hosts and {len(cores or ())} without) "
            f"and has {opts.spares} spare(s), but the TO island it starts needs {len(roles)} switches")


__all__ = ["Migration", "Options", "capacity", "plan_migration"]
