"""The stage search: which serving units move in which stage, so that every stage is feasible.

A stage takes a batch of units out of service on the FROM side, re-cables them and brings them
into service on the TO side. During and after a stage:

- the FROM island (units not yet moved, minus the batch) needs the FROM switches its ports are
  cabled to (its *edges*: rail leaves) and enough *cores* (spines) to join those edges per plane;
- the TO island (units moved so far, batch included) needs the TO switches (roles) its ports are
  cabled to, plus TO cores to join them (ZCube has none);
- every TO role is played by one physical switch for good (a FROM switch the FROM island no
  longer needs, or a spare): a switch never holds two roles at once, and a role never moves.

Because switches only ever leave the FROM island and roles only ever join the TO island, a
sequence of batches can be given switches exactly when, after every stage, the roles needed so far
are no more than the switches freed so far plus the spares (Hall's condition for nested sets):
feasibility is a property of the set of units moved, not of the path (:meth:`Search.slack`).

The units are grouped into *classes* (same FROM edges, same TO roles: interchangeable), cut into
*pieces* of at most one stage's capacity. Small instances are searched exhaustively, stage by
stage (breadth first over sets of moved pieces: the fewest stages is proven); large ones greedily
(whole drains first), which finds a sequence but proves nothing when it finds none.

With ``clashes`` (TO role -> the FROM switches standing on its place: places.occupants) a set of moved units is
also infeasible when a role in service would stand where a switch the FROM island still uses stands: the search
then orders the stages around the clashes, so every role's place is free when the role enters service (a
property of the set of moved units too: a place is free once all the units using its switch have moved).

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zcube_deploy.migrate.fabric import Side, Unit
from zcube_deploy.migrate.reuse import serve_counts

EXHAUSTIVE_CLASSES = 24  # above this many classes the search is greedy
STATES_PER_STAGE = 4000  # the exhaustive search keeps at most this many sets of moved pieces per stage
GREEDY_SINGLES = 64  # the greedy search tries at most this many single pieces per step
PATHS_PER_STATE = 8  # the exhaustive search keeps this many paths to each set of moved pieces (the least shortfall)


@dataclass(frozen=True)
class Piece:
    cls: int
    units: tuple[int, ...]


@dataclass
class Outcome:
    """A found sequence (``batches``: unit ids per stage), or why none was found."""

    batches: list[list[int]] = field(default_factory=list)
    proven: bool = True  # True when the search was exhaustive (then no sequence means none exists)
    alternatives: list[list[list[int]]] = field(default_factory=list)  # other minimal sequences, for the role choice


def _components(nodes: set[str], links: dict[str, set[str]]) -> list[set[str]]:
    seen: set[str] = set()
    out: list[set[str]] = []
    for n in sorted(nodes):
        if n in seen:
            continue
        comp, todo = {n}, [n]
        while todo:
            for m in links.get(todo.pop(), ()):
                if m in nodes and m not in comp:
                    comp.add(m)
                    todo.append(m)
        seen |= comp
        out.append(comp)
    return out


class Cover:
    """Which cores (switches without hosts) a set of edge switches needs to be joined, plane by plane."""

    def __init__(self, side: Side):
        self.side = side
        self.links: dict[str, set[str]] = {}
        for c in side.fabric:
            self.links.setdefault(c.a[0], set()).add(c.b[0])
            self.links.setdefault(c.b[0], set()).add(c.a[0])
        self.cores = side.cores
        self.cache: dict[frozenset[str], tuple[str, ...] | None] = {}

    def __call__(self, edges: frozenset[str]) -> tuple[str, ...] | None:
        """The cores to keep (None when no choice of cores joins them)."""
        if edges not in self.cache:
            self.cache[edges] = self._cover(edges)
        return self.cache[edges]

    def _cover(self, edges: frozenset[str]) -> tuple[str, ...] | None:
        chosen: list[str] = []
        for plane in sorted({self.side.switches[e].plane for e in edges}):
            mine = {e for e in edges if self.side.switches[e].plane == plane}
            cores = [c for c in self.cores if self.side.switches[c].plane == plane]
            nodes = set(mine)
            while len(comps := [c for c in _components(nodes, self.links) if c & mine]) > 1:
                comp_of = {n: i for i, comp in enumerate(comps) for n in comp}
                best, gain = None, 1
                for core in cores:
                    if core in nodes:
                        continue
                    touches = len({comp_of[n] for n in self.links.get(core, ()) if n in comp_of})
                    if touches > gain:
                        best, gain = core, touches
                if best is None:
                    path = self._path(comps[0], set().union(*comps[1:]), nodes, cores)
                    if path is None:
                        return None
                    nodes |= set(path)
                    chosen += path
                    continue
                nodes.add(best)
                chosen.append(best)
        return tuple(chosen)

    def _path(self, start: set[str], goal: set[str], nodes: set[str], cores: list[str]) -> list[str] | None:
        """The fewest unused cores joining ``start`` to ``goal`` (breadth first)."""
        allowed = set(cores) | nodes
        prev: dict[str, str | None] = {n: None for n in start}
        todo = sorted(start)
        while todo:
            nxt = []
            for n in todo:
                for m in sorted(self.links.get(n, ())):
                    if m in prev or m not in allowed:
                        continue
                    prev[m] = n
                    if m in goal:
                        out = []
                        while m is not None and m not in start:
                            if m not in nodes:
                                out.append(m)
                            m = prev[m]
                        return out
                    nxt.append(m)
            todo = nxt
        return None


class Search:
    """The feasibility of sets of moved units, and the stage search over them."""

    def __init__(self, src: Side, dst: Side, units: list[Unit], cap: int, spares: int, clashes: dict[str, list[str]] | None = None):
        self.src, self.dst, self.units, self.cap, self.spares = src, dst, units, cap, spares
        self.clashes = sorted((r, y) for r, ys in (clashes or {}).items() for y in ys)  # (TO role, FROM switch on its place)
        self.src_cover, self.dst_cover = Cover(src), Cover(dst)
        self.needs_src = [frozenset(src.host[p].switch for p in u.ports if p in src.host) for u in units]
        self.needs_dst = [frozenset(dst.host[p].switch for p in u.ports if p in dst.host) for u in units]
        classes: dict[tuple, list[int]] = {}
        for u in units:
            classes.setdefault((self.needs_src[u.id], self.needs_dst[u.id]), []).append(u.id)
        self.classes = list(classes.values())
        self.class_src = [self.needs_src[c[0]] for c in self.classes]
        self.class_dst = [self.needs_dst[c[0]] for c in self.classes]
        self.pieces = [Piece(k, tuple(ids[i:i + cap])) for k, ids in enumerate(self.classes) for i in range(0, len(ids), max(cap, 1))]
        self.by_class = [[p for p in self.pieces if p.cls == k] for k in range(len(self.classes))]
        self._cables: dict[Piece, tuple[dict, dict]] = {}  # filled on first use (only the exhaustive search counts cables)
        self.full = tuple(-(-len(c) // max(cap, 1)) for c in self.classes)
        self.sizes = [[len(p.units) for p in self.pieces if p.cls == k] for k in range(len(self.classes))]
        self._slack: dict[tuple, int | None] = {}
        self._short: dict[tuple, int] = {}
        self._lost: dict[tuple, int] = {}
        self._fab_have: dict[frozenset, dict] = {}
        self._fab_want: dict[frozenset, dict] = {}
        self._src_of: dict[int, tuple] = {}
        self._dst_of: dict[int, tuple] = {}
        src_bit = {n: 1 << i for i, n in enumerate(src.switches)}
        dst_bit = {n: 1 << i for i, n in enumerate(dst.switches)}
        self.src_names, self.dst_names = list(src.switches), list(dst.switches)
        self.src_mask = [sum(src_bit[n] for n in c) for c in self.class_src]
        self.dst_mask = [sum(dst_bit[n] for n in c) for c in self.class_dst]

    def _lengths(self, side: Side, piece: Piece) -> dict[tuple[str, float], int]:
        """(fit, length) -> how many NIC-port cables of ``side`` the piece's units have."""
        out: dict[tuple[str, float], int] = {}
        for u in piece.units:
            for p in self.units[u].ports:
                h = side.host.get(p)
                if h is not None:
                    out[(h.fit, h.length_m)] = out.get((h.fit, h.length_m), 0) + 1
        return out

    @staticmethod
    def _fabric_of(side: Side, names: frozenset[str], only_both: bool) -> dict[tuple[str, float], int]:
        """(fit, length) -> fabric cables of ``side`` with an end (``only_both``: both ends) among ``names``."""
        out: dict[tuple[str, float], int] = {}
        for c in side.fabric:
            if ((c.a[0] in names and c.b[0] in names) if only_both else (c.a[0] in names or c.b[0] in names)):
                out[(c.fit, c.length_m)] = out.get((c.fit, c.length_m), 0) + 1
        return out

    def lost(self, counts: tuple[int, ...]) -> int:
        """Cables no leaving cable can serve once the pieces in ``counts`` are on TO, timing aside: every cable that has
        left by then (the moved units' NIC-port cables; the fabric cables of the FROM switches with hosts no remaining
        unit uses) against every cable wanted by then (the moved units' NIC-port cables; the fabric cables among the
        roles in service), served as reuse.match serves them. Any sequence through ``counts`` installs at least this
        many new cables up to then, so over a sequence the largest is a lower bound on its new cables (spines'
        cables left out: when they leave depends on the role assignment)."""
        if counts not in self._lost:
            have: dict[tuple[str, float], int] = {}
            want: dict[tuple[str, float], int] = {}
            for k, n in enumerate(counts):
                for piece in self.by_class[k][:n]:
                    if piece not in self._cables:
                        self._cables[piece] = (self._lengths(self.src, piece), self._lengths(self.dst, piece))
                    h, w = self._cables[piece]
                    for key, m in h.items():
                        have[key] = have.get(key, 0) + m
                    for key, m in w.items():
                        want[key] = want.get(key, 0) + m
            self.slack(counts)
            rem, mov = self._masks(counts)
            edges, cores = self._src_of[rem]
            roles, tcores = self._dst_of[mov]
            freed = frozenset(self.src.switches) - edges - frozenset(cores or ())
            if freed not in self._fab_have:
                self._fab_have[freed] = self._fabric_of(self.src, freed, only_both=False)
            live = frozenset(roles) | frozenset(tcores or ())
            if live not in self._fab_want:
                self._fab_want[live] = self._fabric_of(self.dst, live, only_both=True)
            for key, m in self._fab_have[freed].items():
                have[key] = have.get(key, 0) + m
            for key, m in self._fab_want[live].items():
                want[key] = want.get(key, 0) + m
            self._lost[counts] = serve_counts({}, have, want)[1]
        return self._lost[counts]

    # ------------------------------------------------------------ one state
    def src_needs(self, remaining: list[int]) -> tuple[frozenset[str], tuple[str, ...] | None]:
        """The FROM edges and cores the units still on FROM need."""
        edges = frozenset().union(*(self.class_src[c] for c in remaining)) if remaining else frozenset()
        return edges, (self.src_cover(edges) if edges else ())

    def dst_needs(self, moved: list[int]) -> tuple[frozenset[str], tuple[str, ...] | None]:
        roles = frozenset().union(*(self.class_dst[c] for c in moved)) if moved else frozenset()
        return roles, (self.dst_cover(roles) if roles else ())

    def slack(self, counts: tuple[int, ...]) -> int | None:
        """Switches to spare once the pieces in ``counts`` (pieces moved per class) are on TO: free FROM switches +
        spares - TO switches needed; None when an island cannot be joined at all."""
        if counts in self._slack:
            return self._slack[counts]
        rem, mov = self._masks(counts)
        if rem not in self._src_of:
            edges = frozenset(self._names(rem, self.src_names))
            self._src_of[rem] = (edges, self.src_cover(edges) if edges else ())
        if mov not in self._dst_of:
            roles = frozenset(self._names(mov, self.dst_names))
            self._dst_of[mov] = (roles, self.dst_cover(roles) if roles else ())
        (edges, cores), (roles, tcores) = self._src_of[rem], self._dst_of[mov]
        out = None
        if cores is not None and tcores is not None and not self._held(edges, cores, roles, tcores):
            need = len(self.dst.switches) if counts == self.full else len(roles) + len(tcores)  # at the end every TO switch, hosts or not
            out = len(self.src.switches) - len(edges) - len(cores) + self.spares - need
            self._short[counts] = need - (len(self.src.edges) - len(edges))
        self._slack[counts] = out
        return out

    def _held(self, edges: frozenset[str], cores: tuple[str, ...], roles: frozenset[str], tcores: tuple[str, ...]) -> bool:
        """Whether a role in service stands where a switch the FROM island still uses stands (``clashes``): such a
        set of moved units is not feasible when the search orders the stages around the clashes."""
        if not self.clashes:
            return False
        live, busy = roles | set(tcores), edges | set(cores)
        return any(r in live and y in busy for r, y in self.clashes)

    def _masks(self, counts: tuple[int, ...]) -> tuple[int, int]:
        """(bit mask of the FROM switches with hosts the remaining units use, of the roles the moved units use)."""
        rem = mov = 0
        full, sm, dm = self.full, self.src_mask, self.dst_mask
        for k, n in enumerate(counts):
            if n < full[k]:
                rem |= sm[k]
            if n:
                mov |= dm[k]
        return rem, mov

    def shortfall(self, counts: tuple[int, ...]) -> int:
        """TO switches needed once ``counts`` are on TO minus the FROM switches with hosts (leaves) freed by then: the
        roles that switches without hosts (spines) or spares must play at that point. Over a sequence, the largest
        shortfall (at least 0) is the fewest spines and spares any role assignment of that sequence uses (the freed
        leaves and the needed roles are nested over the stages: Hall's condition, as in :meth:`slack`)."""
        self.slack(counts)
        return self._short.get(counts, 0)

    @staticmethod
    def _names(mask: int, names: list[str]) -> list[str]:
        return [n for i, n in enumerate(names) if mask >> i & 1]

    # ------------------------------------------------------------ the search
    def run(self) -> Outcome:
        """The fewest stages: full stages first (a sequence as long as the lower bound is proven the fewest), then
        every stage size; greedy above EXHAUSTIVE_CLASSES classes."""
        if self.cap <= 0:
            return Outcome(proven=True)
        total = sum(len(c) for c in self.classes)
        if len(self.classes) > EXHAUSTIVE_CLASSES:
            found = self._greedy()
            found.proven = bool(found.batches) and len(found.batches) == -(-total // self.cap)  # as few as the capacity allows
            return found
        quick = self._exhaustive(full_only=True)
        if quick.batches and len(quick.batches) == -(-total // self.cap):
            quick.proven = True  # as few stages as the capacity allows: none fewer exists
            return quick
        whole = self._exhaustive(full_only=False)
        return whole if whole.batches or not quick.batches else quick

    def _batches(self, counts: tuple[int, ...], full_only: bool):
        """Every non-empty way to move more pieces (each class in order) within one stage's capacity (``full_only``:
        only batches as large as the capacity, or all that is left)."""
        n = len(counts)
        sizes = self.sizes
        left_total = sum(sum(sizes[k][counts[k]:]) for k in range(n))
        want = min(self.cap, left_total) if full_only else 1

        def rec(k: int, room: int, acc: list[int]):
            if k == n:
                if self.cap - room >= want:
                    yield tuple(acc)
                return
            left = sizes[k][counts[k]:]
            used = 0
            for take in range(0, len(left) + 1):
                if take:
                    used += left[take - 1]
                    if used > room:
                        break
                acc.append(counts[k] + take)
                yield from rec(k + 1, room - used, acc)
                acc.pop()

        for nxt in rec(0, self.cap, []):
            if nxt != counts:
                yield nxt

    def _exhaustive(self, full_only: bool) -> Outcome:
        """Breadth first over the sets of moved pieces, a layer per stage. Per set it keeps the PATHS_PER_STATE paths to
        it that rank first by (the largest :meth:`shortfall` on the way: the spines or spares their roles need at
        least; the largest :meth:`lost`: the new cables they install at least): both are bottlenecks of the sets on
        the path, so the best path to each set is kept exactly. Among the fewest stages, the alternatives handed to
        the role choice reuse the most leaves, then the most cables."""
        start = tuple(0 for _ in self.classes)
        goal = self.full
        layer: dict[tuple, list[tuple]] = {start: [(0, 0, ())]}
        proven = not full_only
        while layer:
            nxt: dict[tuple, list[tuple]] = {}
            for state in sorted(layer):
                for new in self._batches(state, full_only):
                    s = self.slack(new)
                    if s is None or s < 0:
                        continue
                    short, lost = max(0, self.shortfall(new)), self.lost(new)
                    paths = nxt.setdefault(new, [])
                    if len(paths) >= PATHS_PER_STATE and paths[-1][:2] <= (max(layer[state][0][0], short), max(layer[state][0][1], lost)):
                        continue
                    for worst, most, path in layer[state]:
                        paths.append((max(worst, short), max(most, lost), path + (new,)))
                    paths.sort()
                    del paths[PATHS_PER_STATE:]
            if goal in nxt:
                paths = nxt[goal]
                return Outcome(self._to_units(paths[0][2]), proven, [self._to_units(p[2]) for p in paths])
            if len(nxt) > STATES_PER_STAGE:
                proven = False
                keep = sorted(nxt, key=lambda st: (-sum(st), nxt[st][0][:2], -(self.slack(st) or 0), st))[:STATES_PER_STAGE]
                nxt = {k: nxt[k] for k in keep}
            layer = nxt
        return Outcome(proven=proven)

    def _to_units(self, path: tuple) -> list[list[int]]:
        out: list[list[int]] = []
        prev = tuple(0 for _ in self.classes)
        by_class = self.by_class
        for state in path:
            batch: list[int] = []
            for k, (a, b) in enumerate(zip(prev, state)):
                for piece in by_class[k][a:b]:
                    batch += piece.units
            out.append(sorted(batch))
            prev = state
        return out

    def _greedy(self) -> Outcome:
        """Stage by stage: add the bundle (the rest of one FROM drain group, or one piece) that leaves the most switches
        to spare, while the stage has room and stays feasible. Finds a sequence; proves nothing when it finds none."""
        sizes = self.sizes
        counts = tuple(0 for _ in self.classes)
        path: list[tuple] = []
        by_src: dict[frozenset, list[int]] = {}
        for k, s in enumerate(self.class_src):
            by_src.setdefault(s, []).append(k)
        while counts != self.full:
            state, room = counts, self.cap
            while room > 0:
                best = None
                for bundle in self._bundles(state, by_src, room):
                    s = self.slack(bundle)
                    if s is None or s < 0:
                        continue
                    score = (s, sum(bundle), tuple(-x for x in bundle))
                    if best is None or score > best[0]:
                        best = (score, bundle)
                if best is None:
                    break
                room -= sum(sizes[k][i] for k in range(len(sizes)) for i in range(state[k], best[1][k]))
                state = best[1]
            if state == counts:
                return Outcome(proven=False)
            path.append(state)
            counts = state
        return Outcome(self._to_units(tuple(path)), proven=False)

    def _bundles(self, state: tuple, by_src: dict, room: int):
        """The rest of each FROM drain group (as much as fits), then, when none of those is feasible, single pieces
        (at most GREEDY_SINGLES of them, first those of groups already started)."""
        sizes = self.sizes
        found = False
        for ks in by_src.values():
            new, used = list(state), 0
            for k in ks:
                while new[k] < len(sizes[k]) and used + sizes[k][new[k]] <= room:
                    used += sizes[k][new[k]]
                    new[k] += 1
            if tuple(new) != state:
                s = self.slack(tuple(new))
                found = found or (s is not None and s >= 0)
                yield tuple(new)
        if found:
            return
        started = [k for ks in by_src.values() if any(state[k] for k in ks) for k in ks]
        order = list(dict.fromkeys(started + list(range(len(state)))))
        n = 0
        for k in order:
            if state[k] < len(sizes[k]) and sizes[k][state[k]] <= room:
                yield tuple(x + (1 if i == k else 0) for i, x in enumerate(state))
                n += 1
                if n >= GREEDY_SINGLES:
                    return


__all__ = ["Cover", "EXHAUSTIVE_CLASSES", "Outcome", "Search"]
