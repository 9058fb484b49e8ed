"""Role assignment: which physical switch plays each TO role, and the lower bound on cable touches.

A physical switch is a FROM switch or a spare (bought for the migration). Playing role ``r`` on
switch ``x`` keeps in place every cable whose NIC port (or, for fabric cables, both ends) sits on
the same port of ``x`` in FROM and of ``r`` in TO, unless ``x`` must move (its rack or U differs
from the role's: re-racked, every cable on it is re-plugged).

:func:`assign_roles` picks, for a found stage sequence, the assignment that keeps the most
cables, re-racks the fewest switches and buys the fewest spares, among those where each role's
switch is free (left by the FROM island) by the stage that first needs the role: a maximum-weight
assignment (scipy's ``linear_sum_assignment``) with the pairs that come too late forbidden.

:class:`Kept` also serves the lower bound on cable touches (bounds.py): the same assignment with no stage
deadlines at all, so no migration, however staged, keeps more cables than it counts.

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from zcube_deploy.migrate.fabric import Side

SPARE = "spare"
KEEP = 1000.0  # weight of one cable kept in place
RERACK = 1.0  # cost of a re-racked switch (a tie-breaker after cables)
BUY = 1e7  # cost of a spare: bought only when nothing else makes the stages feasible
CORE = 100.0  # cost of giving a role to a switch without hosts (a spine) rather than a leaf: after cables kept, before re-racks
TOO_LATE = 1e12


@dataclass(frozen=True)
class Physical:
    name: str
    spare: bool
    rack: str | None
    u: int | None
    role: str | None  # its FROM role (leaf, spine), None for a spare


def physicals(src: Side, spares: int) -> list[Physical]:
    out = [Physical(s.name, False, s.rack, s.u, s.role) for s in src.switches.values()]
    return out + [Physical(f"{SPARE}-{i + 1}", True, None, None, None) for i in range(spares)]


def reracked(p: Physical, dst: Side, role: str) -> bool:
    r = dst.switches[role]
    return not p.spare and (p.rack, p.u) != (r.rack, r.u)


def fits(length_m: float, fit: str, need_m: float, need_fit: str) -> bool:
    """Whether a cable of ``length_m`` / ``fit`` (fabric.HostEnd.fit: medium and part family) can serve where ``need_m`` /
    ``need_fit`` is planned: the same medium and part family (a 400G DAC never serves a 200G port), at least as long."""
    return length_m >= need_m and fit == need_fit


class Kept:
    """Cables kept in place per (physical, role) pair: host cables exactly (same port, and the cable fits the TO
    plan's), fabric cables as half per end kept (an upper bound: a fabric cable is kept only when both ends are)."""

    def __init__(self, src: Side, dst: Side):
        self.src, self.dst = src, dst
        self.host: dict[tuple[str, str], int] = {}
        for key, t in dst.host.items():
            f = src.host.get(key)
            if f is not None and f.port == t.port and fits(f.length_m, f.fit, t.length_m, t.fit):
                pair = (f.switch, t.switch)
                self.host[pair] = self.host.get(pair, 0) + 1
        src_ends: dict[str, set[str]] = {}
        for c in src.fabric:
            for dev, port in (c.a, c.b):
                src_ends.setdefault(dev, set()).add(port)
        dst_ends: dict[str, set[str]] = {}
        for c in dst.fabric:
            for dev, port in (c.a, c.b):
                dst_ends.setdefault(dev, set()).add(port)
        self.fabric_ends = {(x, r): len(src_ends[x] & dst_ends[r]) for x in src_ends for r in dst_ends if src_ends[x] & dst_ends[r]}

    def reracks(self, roles: list[str], phys: list[Physical]) -> np.ndarray:
        """[role, physical] -> whether playing the role re-racks the switch (:func:`reracked`, for every pair at once)."""
        ids: dict[tuple, int] = {}
        at = np.array([-1 if p.spare else ids.setdefault((p.rack, p.u), len(ids)) for p in phys])
        want = np.array([ids.setdefault((self.dst.switches[r].rack, self.dst.switches[r].u), len(ids)) for r in roles])
        return (want[:, None] != at[None, :]) & (at[None, :] >= 0)

    def weights(self, roles: list[str], phys: list[Physical], with_fabric: bool) -> np.ndarray:
        """[role, physical] -> the cables kept by playing the role on the switch (0 for a spare or a re-racked switch;
        ``with_fabric``: fabric ends included, half a cable each)."""
        row = {r: i for i, r in enumerate(roles)}
        col = {p.name: j for j, p in enumerate(phys) if not p.spare}
        w = np.zeros((len(roles), len(phys)))
        for (x, r), n in self.host.items():
            if x in col and r in row:
                w[row[r], col[x]] += n
        if with_fabric:
            for (x, r), n in self.fabric_ends.items():
                if x in col and r in row:
                    w[row[r], col[x]] += 0.5 * n
        w[self.reracks(roles, phys)] = 0.0
        return w


def _matrix(roles: list[str], phys: list[Physical], kept: Kept, with_fabric: bool) -> np.ndarray:
    """Cost of each (role, physical) pair: minus the cables kept, plus re-racking and buying."""
    spare = np.array([p.spare for p in phys])
    core = np.array([not p.spare and p.name not in kept.src.edges for p in phys])
    return (-KEEP * kept.weights(roles, phys, with_fabric) + RERACK * kept.reracks(roles, phys)
            + (BUY * spare + CORE * core)[None, :])


def assign_roles(src: Side, dst: Side, spares: int, need_stage: dict[str, int], free_stage: dict[str, int],
                 kept: Kept | None = None) -> dict[str, str] | None:
    """Role -> physical switch name, each role on a switch free by the stage that first needs it; None when none
    exists (the counts said it does: a bug). ``free_stage``: physical -> first stage it may take a role (spares 1);
    ``kept``: Kept(src, dst) when the caller has it already."""
    kept = kept or Kept(src, dst)
    roles = sorted(need_stage)
    phys = physicals(src, spares)
    cost = _matrix(roles, phys, kept, with_fabric=False)
    for j, p in enumerate(phys):
        first = 1 if p.spare else free_stage.get(p.name)
        for i, r in enumerate(roles):
            if first is None or first > need_stage[r]:
                cost[i, j] = TOO_LATE
    rows, cols = linear_sum_assignment(cost)
    if len(rows) < len(roles) or (cost[rows, cols] >= TOO_LATE).any():
        return None
    return {roles[i]: phys[j].name for i, j in zip(rows, cols)}


__all__ = ["Kept", "Physical", "SPARE", "assign_roles", "fits", "physicals", "reracked"]
