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
SMALL = 48  # sub-flows up to which the filling runs in plain Python (numpy's per-call cost dominates below)


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


def compact(cap: np.ndarray, links: np.ndarray, route: np.ndarray, routes: RouteSet):
    """The sub-problem of these sub-flows alone: (used link ids, their capacities, links and route
    renumbered into them, the used routes as a RouteSet), so each filling round costs the size of
    the active sub-flows, not of the whole fabric."""
    has = route >= 0
    r_used, r_new = np.unique(route[has], return_inverse=True)
    lens = routes.ptr[r_used + 1] - routes.ptr[r_used]
    total = int(lens.sum())
    idx = np.repeat(routes.ptr[r_used] - (np.cumsum(lens) - lens), lens) + np.arange(total)
    sub = RouteSet()
    sub.n = len(r_used)
    sub.row = np.repeat(np.arange(len(r_used)), lens)
    sub.frac = routes.frac[idx]
    sub.ptr = np.concatenate([[0], np.cumsum(lens)])
    explicit = links[links >= 0]
    used = np.unique(np.concatenate([explicit, routes.link[idx]]))
    sub.link = np.searchsorted(used, routes.link[idx])
    new_links = np.full(links.shape, -1, np.int64)
    new_links[links >= 0] = np.searchsorted(used, explicit)
    new_route = np.full(len(route), -1, np.int64)
    new_route[has] = r_new.ravel()
    return used, cap[used], new_links, new_route, sub


def flow_entries(links_row: np.ndarray, route_id: int, routes: RouteSet) -> tuple[tuple[int, float], ...]:
    """One sub-flow's (link, weight) pairs: its explicit links (weight 1) and its route's links."""
    out = [(int(x), 1.0) for x in links_row if x >= 0]
    if route_id >= 0:
        a, b = routes.ptr[route_id], routes.ptr[route_id + 1]
        out += list(zip(routes.link[a:b].tolist(), routes.frac[a:b].tolist()))
    return tuple(out)


def max_min_small(cap, entries: list) -> list[float]:
    """The same progressive filling in plain Python, for a few sub-flows given as ``flow_entries``."""
    rem = {}
    for f in entries:
        for link, _ in f:
            rem[link] = float(cap[link])
    rate = [0.0] * len(entries)
    active = list(range(len(entries)))
    while active:
        load: dict[int, float] = {}
        for i in active:
            for link, w in entries[i]:
                load[link] = load.get(link, 0.0) + w
        if not load:
            raise ValueError("a sub-flow crosses no link: its max-min rate is unbounded")
        inc = min(rem[link] / w for link, w in load.items())
        for i in active:
            rate[i] += inc
        sat = set()
        for link, w in load.items():
            rem[link] -= inc * w
            if rem[link] <= REL_TOL * cap[link]:
                rem[link] = 0.0
                sat.add(link)
        keep = [i for i in active if not any(link in sat for link, _ in entries[i])]
        if len(keep) == len(active):
            raise AssertionError("progressive filling froze no sub-flow (a saturated link carries none)")
        active = keep
    return rate


def max_min_rates(cap: np.ndarray, links: np.ndarray, route: np.ndarray, routes: RouteSet, compacted: bool = False,
                  small: int = SMALL) -> np.ndarray:
    """Max-min fair rate (same unit as ``cap``) of each sub-flow; ``links`` (F, W) with -1 padding,
    ``route`` (F,) route ids (-1 none). A sub-flow that crosses no link at all is an error.
    ``compacted``: the arguments already come from :func:`compact`. Up to ``small`` sub-flows the
    filling runs in plain Python (:func:`max_min_small`, same algorithm)."""
    if len(route) <= small:
        return np.array(max_min_small(cap, [flow_entries(links[i], int(route[i]), routes) for i in range(len(route))]))
    if not compacted and len(route):
        _, cap, links, route, routes = compact(cap, links, route, routes)
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
