"""The event-driven fluid run: sub-flows start at their start times, share links max-min fairly,
and every time one finishes or one starts the rates are filled again.

Between two events rates are constant, so the next event is the earliest of the next start and the
earliest finish (remaining size / rate). Sub-flows whose finish falls within a relative REL_TOL of
that earliest finish end at the same event (identical flows end together, exactly). Each link
accumulates the Gbit it carried, for its utilisation over the phase.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from zcube_deploy.traffic.flows import SubFlows
from zcube_deploy.traffic.maxmin import SMALL, compact, flow_entries, link_weights, max_min_rates, max_min_small

REL_TOL = 1e-9


@dataclass
class FluidResult:
    finish: np.ndarray  # (F,) seconds, per sub-flow
    link_gbit: np.ndarray  # (L,) Gbit each link carried
    events: int
    fill_rounds: int  # max-min fillings computed (one per event)


def run_fluid(cap: np.ndarray, sf: SubFlows) -> FluidResult:
    """Finish time of every sub-flow (see module doc)."""
    F, L = len(sf), len(cap)
    finish = np.full(F, np.nan)
    remaining = sf.gbit.astype(float).copy()
    link_gbit = np.zeros(L)
    zero = remaining <= 0
    finish[zero] = sf.start[zero]
    started = np.zeros(F, bool)
    order = np.argsort(sf.start, kind="stable")
    starts_sorted = sf.start[order]
    next_i = 0
    t = 0.0 if F == 0 else float(starts_sorted[0])
    events = fills = 0
    active_idx = np.zeros(0, np.int64)
    cache: dict[int, tuple] = {}  # sub-flow -> its (link, weight) pairs, for the plain-Python filling
    while True:
        # admit every sub-flow that has started by t
        j = int(np.searchsorted(starts_sorted, t, side="right"))
        if j > next_i:
            new = order[next_i:j]
            started[new] = True
            next_i = j
            active_idx = np.concatenate([active_idx, new[np.isnan(finish[new])]])
        if len(active_idx) == 0:
            if next_i >= F:
                break
            t = float(starts_sorted[next_i])
            continue
        events += 1
        small = len(active_idx) <= SMALL
        if small:
            entries = [cache[i] if i in cache else cache.setdefault(i, flow_entries(sf.links[i], int(sf.route[i]), sf.routes))
                       for i in active_idx.tolist()]
            rate = np.array(max_min_small(cap, entries))
        else:
            used, sub_cap, sub_links, sub_route, sub_routes = compact(cap, sf.links[active_idx], sf.route[active_idx], sf.routes)
            rate = max_min_rates(sub_cap, sub_links, sub_route, sub_routes, compacted=True)
        fills += 1
        ttf = remaining[active_idx] / rate
        dt_done = float(ttf.min())
        dt_next = float(starts_sorted[next_i] - t) if next_i < F else np.inf
        dt = min(dt_done, dt_next)
        if small:
            for e, r in zip(entries, rate.tolist()):
                for link, w in e:
                    link_gbit[link] += dt * r * w
        else:
            link_gbit[used] += dt * link_weights(len(used), sub_links, sub_route, sub_routes, rate)
        remaining[active_idx] -= rate * dt
        t_new = t + dt
        done = ttf <= dt * (1 + REL_TOL) if dt_done <= dt_next else remaining[active_idx] <= REL_TOL * sf.gbit[active_idx]
        finish[active_idx[done]] = t_new
        remaining[active_idx[done]] = 0.0
        active_idx = active_idx[~done]
        t = t_new
    return FluidResult(finish=finish, link_gbit=link_gbit, events=events, fill_rounds=fills)
