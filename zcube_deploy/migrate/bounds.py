"""Lower bounds a staged migration cannot beat, computed without the stage search (docs/migrate.md).

**Stages.** Every unit leaves service in exactly one stage (the ``units`` invariant) and a stage
takes at most ``cap`` units out (the floor). So n units need at least ceil(n / cap) stages, however
the units are grouped and whatever switches they need (FatClique's residual-capacity count).

**Cable touches.** A *touch* is one physical cable a technician handles (unplugs and/or plugs, one
end or both), counted once over the whole migration; moves.touches counts the moves the same way.
Let F and T be the cables of FROM and TO (NIC-port and fabric cables). Every FROM cable ends in one
of three states: *kept* (it already is a TO cable: same two ends on the switches playing their
roles, same ports, neither end re-racked, long enough; never handled), *reused* (handled once:
moved, or removed and laid again later, to serve a TO cable it is at least as long as and of the
same medium and part family: roles.fits) or *removed* (handled once). Every TO cable not kept or reused is new (handled once).
With k kept and v reused:

    touches = (F - k) + (T - k - v) = F + T - (k + v) - k.

Each kept or reused cable is a distinct FROM cable serving a distinct TO cable it fits, so
k + v <= R, the size of a maximum matching of FROM cables to TO cables they fit
(:func:`reusable_at_most`); and k <= K, the most cables any role assignment keeps in place, stage
deadlines ignored (:func:`kept_at_most`; a fabric cable counts half at each end, an over-count).
Also k <= k + v <= R. Hence, for every migration the tool may plan,

    touches >= F + T - R - min(K, R).

Both R and K relax the stages (any cable may serve any fitting one, whenever), so the bound holds
however the migration is staged. tests/test_migrate_bounds.py checks both bounds against brute
force (every role assignment and every pairing of cables) on small cases.

Pure.
"""

from __future__ import annotations

from scipy.optimize import linear_sum_assignment

from zcube_deploy.migrate.fabric import Side
from zcube_deploy.migrate.roles import Kept, physicals


def stage_lower_bound(n_units: int, cap: int) -> int:
    """ceil(n_units / cap); 0 units need 0 stages."""
    if n_units == 0:
        return 0
    if cap <= 0:
        raise ValueError("no unit may leave service: no stage is possible")
    return -(-n_units // cap)


def reusable_at_most(src: Side, dst: Side) -> int:
    """R: the most TO cables that FROM cables can serve (each FROM cable at most one, long enough, same medium and part family:
    roles.fits, the rule the matching uses). Per fit a threshold matching: TO cables shortest first, each taking the shortest FROM cable that fits, which is
    maximum (exchange argument: a shorter fitting cable serves everything a longer one serves later)."""
    have: dict[str, list[float]] = {}
    want: dict[str, list[float]] = {}
    for h in src.host.values():
        have.setdefault(h.fit, []).append(h.length_m)
    for c in src.fabric:
        have.setdefault(c.fit, []).append(c.length_m)
    for h in dst.host.values():
        want.setdefault(h.fit, []).append(h.length_m)
    for c in dst.fabric:
        want.setdefault(c.fit, []).append(c.length_m)
    total = 0
    for medium, needs in want.items():
        pool = sorted(have.get(medium, []))
        i = 0
        for need in sorted(needs):
            while i < len(pool) and pool[i] < need:
                i += 1
            if i == len(pool):
                break
            total += 1
            i += 1
    return total


def kept_at_most(src: Side, dst: Side, spares: int) -> int:
    """K: the most cables any one role assignment keeps in place, stage deadlines ignored: a maximum-weight assignment
    (scipy's ``linear_sum_assignment``) of TO roles to FROM switches and spares, weighing each pair by the NIC-port
    cables it keeps plus half a cable per fabric port both use (an over-count: a fabric cable is kept only when both
    of its ends are, and only when long enough), floored (k is a whole number)."""
    kept = Kept(src, dst)
    roles = sorted(dst.switches)
    phys = physicals(src, spares)
    if not roles or not phys:
        return 0
    w = kept.weights(roles, phys, True)
    rows, cols = linear_sum_assignment(-w)
    return int(w[rows, cols].sum())


def touch_lower_bound(src: Side, dst: Side, spares: int) -> dict:
    """The fewest cable touches any migration needs, however staged: F + T - R - min(K, R) (the module's proof), with
    its parts."""
    F, T = len(src.host) + len(src.fabric), len(dst.host) + len(dst.fabric)
    reuse = reusable_at_most(src, dst)
    best = kept_at_most(src, dst, spares)
    return {"from_cables": F, "to_cables": T, "kept_at_most": best, "reusable_at_most": reuse,
            "touches": max(0, F + T - reuse - min(best, reuse))}


__all__ = ["kept_at_most", "reusable_at_most", "stage_lower_bound", "touch_lower_bound"]
