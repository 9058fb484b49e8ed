"""Which FROM cable serves each TO cable, over all stages at once: the most cables reused.

A FROM cable that is not kept in place *leaves* in one stage (its NIC port's unit moves, or the
first of its switches leaves the FROM island); a TO cable that is not kept is *wanted* in one stage
(its unit moves, or the later of its roles enters service). A leaving cable can serve a wanted one
when it is of the same medium and part family (roles.fits: the Have/Want ``medium`` is that fit), at least as long, and has left by then (the same stage: re-laid at
once; a later one: it waits in the stock). Every wanted cable no leaving one serves is a new cable,
every leaving cable that serves none is removed for good; so the fewer new cables, the fewer cable
touches (docs/migrate.md), and this matching decides it.

:func:`match` is greedy, stage by stage, each stage's wanted cables shortest first, each served by
the shortest fitting cable at hand. That is a maximum matching: every cable at hand at stage t is at
hand for every later stage, so among them only the length matters for what comes later, and taking
the shortest that fits (the classic threshold-matching exchange argument) never serves fewer. Among
cables of that same shortest length (interchangeable for the future) it prefers the NIC port's own
cable (moved at its switch end only), then one leaving in the same stage (handled once, not removed
and installed again), then the lowest id. With ``slack_m`` > 0 the port's own cable is also taken when
it is at most that much longer than the shortest fit: :func:`best_match` tries the slacks largest
first and keeps the first that serves as many as the strict greedy (which is maximum), so the count
never drops for own-port moves.

Pure, deterministic: no I/O, no clock.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass

SLACKS_M = (2.0, 5.0, 10.0, float("inf"))  # own-port slacks best_match tries after 0 (the reference), smallest first


@dataclass(frozen=True)
class Have:
    """A FROM cable that leaves in ``stage`` (not kept in place)."""

    id: str
    stage: int
    medium: str
    length_m: float
    port: tuple[str, str] | None = None  # (server, NIC port) of a NIC-port cable


@dataclass(frozen=True)
class Want:
    """A TO cable wanted in ``stage`` (not kept in place)."""

    id: str
    stage: int
    medium: str
    length_m: float
    port: tuple[str, str] | None = None


class _Pool:
    """The leaving cables at hand, per medium and length; within a length, those that left in the current stage apart
    from the stock (left earlier), each in the order they came."""

    def __init__(self) -> None:
        self.lengths: dict[str, list[float]] = {}
        self.now: dict[tuple[str, float], dict[str, Have]] = {}
        self.stock: dict[tuple[str, float], dict[str, Have]] = {}

    def next_stage(self) -> None:
        for key, cables in self.now.items():
            self.stock.setdefault(key, {}).update(cables)
        self.now = {}

    def add(self, h: Have) -> None:
        key = (h.medium, h.length_m)
        if key not in self.now and key not in self.stock:
            insort(self.lengths.setdefault(h.medium, []), h.length_m)
        self.now.setdefault(key, {})[h.id] = h

    def take(self, h: Have) -> None:
        key = (h.medium, h.length_m)
        for part in (self.now, self.stock):
            if h.id in part.get(key, {}):
                del part[key][h.id]
                if not part[key]:
                    del part[key]
        if key not in self.now and key not in self.stock:
            self.lengths[h.medium].remove(h.length_m)

    def first(self, key: tuple[str, float]) -> Have:
        """A cable of ``key``: one that left in this stage before the stock."""
        part = self.now.get(key) or self.stock[key]
        return next(iter(part.values()))

    def shortest(self, medium: str, need_m: float) -> float | None:
        """The shortest length at hand of ``medium`` that is at least ``need_m``."""
        ls = self.lengths.get(medium, [])
        i = bisect_left(ls, need_m)
        return ls[i] if i < len(ls) else None


def match(have: list[Have], want: list[Want], slack_m: float = 0.0) -> dict[str, str]:
    """TO cable id -> the FROM cable id that serves it (wanted cables none serves are absent: new cables)."""
    pool = _Pool()
    by_stage: dict[int, list[Have]] = {}
    for h in have:
        by_stage.setdefault(h.stage, []).append(h)
    wanted: dict[int, list[Want]] = {}
    for w in want:
        wanted.setdefault(w.stage, []).append(w)
    own = {h.port: h for h in have if h.port is not None}
    taken: set[str] = set()
    out: dict[str, str] = {}
    for t in sorted(set(by_stage) | set(wanted)):
        pool.next_stage()
        for h in sorted(by_stage.get(t, []), key=lambda h: h.id):
            pool.add(h)
        for w in sorted(wanted.get(t, []), key=lambda w: (w.medium, w.length_m, w.id)):
            best = pool.shortest(w.medium, w.length_m)
            if best is None:
                continue
            mine = own.get(w.port) if w.port is not None else None
            if (mine is not None and mine.id not in taken and mine.stage <= t and mine.medium == w.medium
                    and w.length_m <= mine.length_m <= best + slack_m):
                pick = mine
            else:
                pick = pool.first((w.medium, best))
            pool.take(pick)
            taken.add(pick.id)
            out[w.id] = pick.id
    return out


def served_count(have: list[Have], want: list[Want]) -> int:
    """How many wanted cables :func:`match` serves (the maximum), on counts per stage, medium and length only."""
    stages: dict[int, tuple[dict, dict]] = {}
    for h in have:
        d = stages.setdefault(h.stage, ({}, {}))[0]
        d[(h.medium, h.length_m)] = d.get((h.medium, h.length_m), 0) + 1
    for w in want:
        d = stages.setdefault(w.stage, ({}, {}))[1]
        d[(w.medium, w.length_m)] = d.get((w.medium, w.length_m), 0) + 1
    pool: dict[tuple[str, float], int] = {}
    lost = 0
    for t in sorted(stages):
        pool, missed = serve_counts(pool, *stages[t])
        lost += missed
    return len(want) - lost


def own_moves(have: list[Have], want: list[Want], served: dict[str, str]) -> int:
    """How many wanted NIC-port cables are served by their own port's cable."""
    port_of = {h.id: h.port for h in have}
    return sum(1 for w in want if w.port is not None and port_of.get(served.get(w.id, "")) == w.port)


def best_match(have: list[Have], want: list[Want]) -> dict[str, str]:
    """A matching serving the most wanted cables (:func:`served_count`, the strict greedy's count) with many own-port
    moves: the slacks of SLACKS_M tried largest first (more own-port moves), the first that serves as many kept; the
    strict greedy (slack 0) when none does."""
    most = served_count(have, want)
    for slack in reversed(SLACKS_M):
        m = match(have, want, slack)
        if len(m) == most:
            return m
    return match(have, want, 0.0)


def serve_counts(pool: dict[tuple[str, float], int], have: dict[tuple[str, float], int],
                 want: dict[tuple[str, float], int]) -> tuple[dict[tuple[str, float], int], int]:
    """One stage of :func:`match` on counts only: ``have`` (medium, length) -> cables joins ``pool``, then each wanted
    cable, shortest first, takes the shortest fitting one. (the pool after, how many wanted cables none served)."""
    out = dict(pool)
    for key, n in have.items():
        out[key] = out.get(key, 0) + n
    lengths: dict[str, list[float]] = {}
    for medium, length in sorted(k for k, n in out.items() if n):
        lengths.setdefault(medium, []).append(length)
    unserved = 0
    for (medium, need), n in sorted(want.items()):
        ls = lengths.get(medium, [])
        i = bisect_left(ls, need)
        while n and i < len(ls):
            key = (medium, ls[i])
            take = min(n, out[key])
            out[key] -= take
            n -= take
            if not out[key]:
                del out[key]
                del ls[i]
        unserved += n
    return out, unserved


__all__ = ["Have", "SLACKS_M", "Want", "best_match", "match", "own_moves", "serve_counts", "served_count"]
