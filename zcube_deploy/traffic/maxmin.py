"""Max-min fair rates by progressive filling (water-filling) on link capacities.

A sub-flow crosses its explicit links with weight 1 and its route's links with the route's
fractions (an even ECMP split puts 1/k of the sub-flow's rate on each of k next links). Progressive
filling raises the rate of every unfrozen sub-flow at the same pace; when a link saturates (its
load, the weighted sum of the rates crossing it, reaches its capacity) every sub-flow crossing it
freezes. The result is the max-min fair allocation: no rate can grow without lowering a rate that
is not larger. Each round freezes at least one link, so there are at most as many rounds as links;
in practice as many as there are distinct bottleneck levels.
"""

from __future__ import annotations

import numpy as np

from zcube_deploy.traffic.routes import RouteSet

REL_TOL = 1e-9  # a link is saturated when its spare capacity is below this fraction of its capacity


def link_weights(n_links: int, links: np.ndarray, route: np.ndarray, routes: RouteSet, per_flow: np.ndarray) -> np.ndarray:
    """Per link, sum over sub-flows of ``per_flow`` times the sub-flow's weight on the link."""
    lk = links[links >= 0]
    rep = np.broadcast_to(per_flow[:, None], links.shape)[links >= 0]
    out = np.bincount(lk, weights=rep, minlength=n_links)[:n_links].astype(float)
    has = route >= 0
    if routes.n and has.any():
        per_route = np.bincount(route[has], weights=per_flow[has], minlength=routes.n)
        out += np.bincount(routes.link, weights=per_route[routes.row] * routes.frac, minlength=n_links)[:n_links]
    return out


def max_min_rates(cap: np.ndarray, links: np.ndarray, route: np.ndarray, routes: RouteSet) -> np.ndarray:
    """Max-min fair rate (same unit as ``cap``) of each sub-flow; ``links`` (F, W) with -1 padding,
    ``route`` (F,) route ids (-1 none). A sub-flow that crosses no link at all is an error."""
    n_links, F = len(cap), len(route)
    rate = np.zeros(F)
    if F == 0:
        return rate
    rem = cap.astype(float).copy()
    active = np.ones(F, bool)
    padded = np.where(links >= 0, links, n_links)
    has_route = route >= 0
    route_sat = np.zeros(routes.n + 1, bool)
    while active.any():
        w = link_weights(n_links, links[active], route[active], routes, np.ones(int(active.sum())))
        used = w > 0
        if not used.any():
            raise ValueError("a sub-flow crosses no link: its max-min rate is unbounded")
        inc = float(np.min(rem[used] / w[used]))
        rate[active] += inc
        rem -= inc * w
        sat = used & (rem <= REL_TOL * cap)
        rem[sat] = 0.0
        sat_x = np.append(sat, False)
        frozen = sat_x[padded[active]].any(axis=1)
        if routes.n:
            route_sat[:routes.n] = np.bincount(routes.row, weights=sat[routes.link], minlength=routes.n) > 0
            r = route[active]
            frozen |= has_route[active] & route_sat[np.where(r >= 0, r, routes.n)]
        if not frozen.any():
            raise AssertionError("progressive filling froze no sub-flow (a saturated link carries none)")
        idx = np.flatnonzero(active)
        active[idx[frozen]] = False
    return rate
