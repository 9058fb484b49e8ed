"""Switch-level forwarding of a :class:`~zcube_deploy.traffic.net.Net`: which fabric links a packet
takes from the switch of its source port to the switch of its destination port.

- routing ``table`` (ZCube, mode static): the plan's pinned routes (analysis/fabric.py reads them
  from the same forwarding interface `analyze` and `check-routing` use): across groups exactly the
  one link the source switch's route for the destination's sub-block names; a route whose link or
  switch is dead is withdrawn and nothing replaces it. Within a group, when the switches route there
  (same_group_fallback), shortest paths over the live fabric as below.
- routing ``ecmp`` (ZCube mode bgp, ROFT, HPN, Rail-only, Clos): every shortest path over the live
  switches and links (BFS distances, as eBGP's AS-path length with one AS per switch, and as a
  Clos's up-down routing), ECMP at every hop over the next links (parallel links count once each).

Each (source switch, destination) is a route key. ``split`` gives a key's expected load: the
per-hop even split as fractions per link. ``hashed`` draws, per sub-flow and with a seeded
generator, one next link uniformly at every hop (per-flow hashing); identical draws share a route.
Routes are stored once (:class:`RouteSet`: row, link, fraction) and sub-flows point at them.
"""

from __future__ import annotations

import numpy as np

from zcube_deploy.traffic.net import KIND_FABRIC, Net

UNREACHABLE = np.iinfo(np.int64).max // 4


class TableRoutes:
    """ZCube static routing in the classes of analysis/fabric.Routing: destination class of port 1
    (odd side) ``oc[g]``, of port 2 ``n_oc + ec[g]``; ``link(s, cls)`` the directed link id."""

    def __init__(self, rt, cable_u: np.ndarray, cable_dir: np.ndarray, n_switches: int):
        self.rt = rt
        self.n_oc = len(rt.oc_switch)
        self.n_classes = self.n_oc + len(rt.ec_switch)
        self.class_switch = np.concatenate([rt.oc_switch, rt.ec_switch]).astype(np.int64)
        self.row = np.zeros(n_switches, np.int64)
        self.row[rt.odd] = np.arange(len(rt.odd))
        self.row[rt.even] = np.arange(len(rt.even))
        self.is_odd = np.zeros(n_switches, bool)
        self.is_odd[rt.odd] = True
        self.cable_u, self.cable_dir = cable_u, cable_dir

    def dst_class(self, g: np.ndarray, port: np.ndarray) -> np.ndarray:
        return np.where(port == 0, self.rt.oc[g], self.n_oc + self.rt.ec[g])

    def link(self, s: np.ndarray, cls: np.ndarray) -> np.ndarray:
        """Directed link of switch ``s``'s pinned route towards class ``cls`` (-1: none; s must be in the other group)."""
        to_even = cls >= self.n_oc
        cable = np.full(len(s), -1, np.int64)  # each side indexed on its own: the groups may differ in size (a stage's island)
        cable[to_even] = self.rt.fwd[self.row[s[to_even]], cls[to_even] - self.n_oc]
        cable[~to_even] = self.rt.rev[self.row[s[~to_even]], cls[~to_even]]
        ok = cable >= 0
        c = np.maximum(cable, 0)
        d = np.where(self.cable_u[c] == s, self.cable_dir[c, 0], self.cable_dir[c, 1])
        return np.where(ok, d, -1)


class RouteSet:
    """Routes as rows of (link, fraction); row r's entries are ``link[ptr[r]:ptr[r+1]]``."""

    def __init__(self):
        self._rows: list[np.ndarray] = []
        self._links: list[np.ndarray] = []
        self._fracs: list[np.ndarray] = []
        self.n = 0

    def add(self, links: np.ndarray, fracs: np.ndarray) -> int:
        self._rows.append(np.full(len(links), self.n, np.int64))
        self._links.append(np.asarray(links, np.int64))
        self._fracs.append(np.asarray(fracs, float))
        self.n += 1
        return self.n - 1

    def add_single(self, links: np.ndarray) -> np.ndarray:
        """One route per link (a one-link path, fraction 1); returns their ids."""
        ids = self.n + np.arange(len(links), dtype=np.int64)
        self._rows.append(ids)
        self._links.append(np.asarray(links, np.int64))
        self._fracs.append(np.ones(len(links)))
        self.n += len(links)
        return ids

    def freeze(self) -> "RouteSet":
        def cat(xs: list, t) -> np.ndarray:
            return np.concatenate(xs).astype(t) if xs else np.zeros(0, t)

        self.row, self.link, self.frac = cat(self._rows, np.int64), cat(self._links, np.int64), cat(self._fracs, float)
        self.ptr = np.searchsorted(self.row, np.arange(self.n + 1))
        return self


class Router:
    """Route keys and routes of one Net (see module doc)."""

    def __init__(self, net: Net):
        self.net = net
        usable = net.usable()
        fl = np.flatnonzero((net.kind == KIND_FABRIC) & usable)
        self.fl, self.fu, self.fv = fl, net.end_a[fl], net.end_b[fl]
        self.ns = net.n_switches
        self.table = net.table if net.routing == "table" else None
        self.n_dst = self.table.n_classes if self.table is not None else self.ns
        self.usable = usable
        self._dag: dict[int, tuple] = {}

    # ------------------------------------------------------------------ keys
    def keys(self, s: np.ndarray, dst_gpu: np.ndarray, dst_port: np.ndarray) -> np.ndarray:
        d = self.table.dst_class(dst_gpu, dst_port) if self.table is not None else self.net.port_switch[dst_gpu, dst_port]
        return s.astype(np.int64) * self.n_dst + d

    def _decode(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s, d = keys // self.n_dst, keys % self.n_dst
        t = self.table.class_switch[d] if self.table is not None else d
        return s, t, d

    # ------------------------------------------------------------------ shortest-path DAGs
    def dag(self, t: int) -> tuple:
        """(distance to t per switch, DAG links as indexes into fl, next links per switch)."""
        got = self._dag.get(t)
        if got is None:
            dist = np.full(self.ns, UNREACHABLE, np.int64)
            if self.net.switch_alive[t]:
                dist[t] = 0
                frontier, level = np.array([t]), 0
                while len(frontier):
                    hit = np.isin(self.fv, frontier)
                    cand = np.unique(self.fu[hit])
                    cand = cand[(dist[cand] == UNREACHABLE) & self.net.switch_alive[cand]]
                    level += 1
                    dist[cand] = level
                    frontier = cand
            on = (dist[self.fu] != UNREACHABLE) & (dist[self.fv] == dist[self.fu] - 1)
            idx = np.flatnonzero(on)
            order = np.argsort(self.fu[idx], kind="stable")
            idx = idx[order]
            starts = np.searchsorted(self.fu[idx], np.arange(self.ns + 1))
            got = self._dag[t] = (dist, idx, starts)
        return got

    def _split_ecmp(self, s: int, t: int) -> tuple[np.ndarray, np.ndarray] | None:
        dist, idx, starts = self.dag(t)
        if dist[s] == UNREACHABLE:
            return None
        links, fracs = [], []
        nodes, weight = np.array([s]), np.array([1.0])
        for _ in range(int(dist[s])):
            cnt = starts[nodes + 1] - starts[nodes]
            sel = np.concatenate([idx[starts[u]:starts[u + 1]] for u in nodes])
            w = np.repeat(weight / cnt, cnt)
            links.append(self.fl[sel])
            fracs.append(w)
            nxt = self.fv[sel]
            nodes, inv = np.unique(nxt, return_inverse=True)
            weight = np.bincount(inv.ravel(), weights=w, minlength=len(nodes))
        if not links:
            return np.zeros(0, np.int64), np.zeros(0)
        lk, fr = np.concatenate(links), np.concatenate(fracs)
        u, inv = np.unique(lk, return_inverse=True)
        return u, np.bincount(inv.ravel(), weights=fr, minlength=len(u))

    # ------------------------------------------------------------------ resolve keys
    def _table_link(self, s: np.ndarray, d: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Cross-group keys of a table: the pinned link if it and both switches are usable, else -1."""
        link = self.table.link(s, d)
        ok = (link >= 0) & self.usable[np.maximum(link, 0)]
        return np.where(ok, link, -1)

    def split(self, keys: np.ndarray, routes: RouteSet) -> np.ndarray:
        """Route id per key (even split over ECMP next hops); -1: routed without a fabric link (same
        switch); -2: no route."""
        s, t, d = self._decode(keys)
        out = np.full(len(keys), -2, np.int64)
        alive = self.net.switch_alive[s] & self.net.switch_alive[t]
        out[alive & (s == t)] = -1
        todo = alive & (s != t)
        if self.table is not None:
            cross = todo & (self.table.is_odd[s] != self.table.is_odd[t])
            link = self._table_link(s[cross], d[cross], t[cross])
            ids = np.full(len(link), -2, np.int64)
            ids[link >= 0] = routes.add_single(link[link >= 0])
            out[cross] = ids
            todo &= ~cross
            if not self.net.same_group_routes:
                todo[:] = False
        for i in np.flatnonzero(todo):
            r = self._split_ecmp(int(s[i]), int(t[i]))
            if r is not None:
                out[i] = routes.add(*r)
        return out

    def hashed(self, keys: np.ndarray, rng: np.random.Generator, routes: RouteSet) -> np.ndarray:
        """Route id per sub-flow key (one per sub-flow): one next link drawn uniformly per hop and
        sub-flow; sub-flows that drew the same path share its route. -1 / -2 as in :meth:`split`."""
        out = np.full(len(keys), -2, np.int64)
        uk, inv = np.unique(keys, return_inverse=True)
        inv = inv.ravel()
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(len(uk) + 1))
        s_all, t_all, d_all = self._decode(uk)
        fixed = self.split(uk, routes) if self.table is not None else None  # table: no choice across groups
        for k in range(len(uk)):
            members = order[bounds[k]:bounds[k + 1]]
            s, t = int(s_all[k]), int(t_all[k])
            if not (self.net.switch_alive[s] and self.net.switch_alive[t]):
                continue
            if s == t:
                out[members] = -1
                continue
            if fixed is not None and (self.table.is_odd[s] != self.table.is_odd[t] or not self.net.same_group_routes):
                out[members] = fixed[k]
                continue
            dist, idx, starts = self.dag(t)
            if dist[s] == UNREACHABLE:
                continue
            cur = np.full(len(members), s, np.int64)
            hops = []
            for _ in range(int(dist[s])):
                cnt = starts[cur + 1] - starts[cur]
                pick = idx[starts[cur] + (rng.random(len(cur)) * cnt).astype(np.int64)]
                hops.append(self.fl[pick])
                cur = self.fv[pick]
            paths = np.stack(hops, axis=1)
            up, pinv = np.unique(paths, axis=0, return_inverse=True)
            ids = np.array([routes.add(p, np.ones(len(p))) for p in up], np.int64)
            out[members] = ids[pinv.ravel()]
        return out
