"""Which FROM cable serves each TO cable, over all stages at once: the most cables reused.

A FROM cable that is not kept in place *leaves* in one stage (its NIC port's unit moves, or the
first of its switches leaves the FROM island); a TO cable that is not kept is *wanted* in one stage
(its unit moves, or the later of its roles enters service). A leaving cable can serve a wanted one
when it is of the same medium, at least as long, and has left by then (the same stage: re-laid at
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
it is at most that much longer than the shortest fit: :func:`best_match` tries a few slacks and keeps
the one with the most own-port moves among those that serve as many as the strict greedy (which is
maximum), so the count never drops for it.

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
    """The leaving cables at hand, per medium and length; within a length, in the order they came."""

    def __init__(self) -> None:
        self.lengths: dict[str, list[float]] = {}
        self.bucket: dict[tuple[str, float], dict[str, Have]] = {}

    def add(self, h: Have) -> None:
        key = (h.medium, h.length_m)
        if key not in self.bucket:
            self.bucket[key] = {}
            insort(self.lengths.setdefault(h.medium, []), h.length_m)
        self.bucket[key][h.id] = h

    def take(self, h: Have) -> None:
        key = (h.medium, h.length_m)
        del self.bucket[key][h.id]
        if not self.bucket[key]:
            del self.bucket[key]
            self.lengths[h.medium].remove(h.length_m)

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
                cands = pool.bucket[(w.medium, best)]
                pick = next((h for h in cands.values() if h.stage == t), None) or next(iter(cands.values()))
            pool.take(pick)
            taken.add(pick.id)
            out[w.id] = pick.id
    return out


def own_moves(have: list[Have], want: list[Want], served: dict[str, str]) -> int:
    """How many wanted NIC-port cables are served by their own port's cable."""
    port_of = {h.id: h.port for h in have}
    return sum(1 for w in want if w.port is not None and port_of.get(served.get(w.id, "")) == w.port)


def best_match(have: list[Have], want: list[Want]) -> dict[str, str]:
    """The matching serving the most wanted cables (the strict greedy's count) with the most own-port moves among the
    slacks tried (SLACKS_M); ties keep the smaller slack."""
    best = match(have, want, 0.0)
    count, mine = len(best), own_moves(have, want, best)
    for slack in SLACKS_M:
        m = match(have, want, slack)
        if len(m) == count and own_moves(have, want, m) > mine:
            best, mine = m, own_moves(have, want, m)
    return best


__all__ = ["Have", "SLACKS_M", "Want", "best_match", "match", "own_moves"]
