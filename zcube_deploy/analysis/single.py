"""Single failures: every switch and every fabric link failing alone (pure numpy).

Switches go through the general counters of failures.py (one pass over all GPUs each). Fabric
links, S*S*m of them (65,536 at 64k GPUs), take a fast path: a failed link changes only the few
port-class entries whose routes use it, so every figure is computed from those entries and from
counts prepared once. Both paths are checked against an exhaustive walk in the tests, and against
each other.
"""

from __future__ import annotations

import numpy as np

from zcube_deploy.analysis.fabric import Fabric, Routing
from zcube_deploy.analysis.failures import RoutedCounter, State, physical_lost_pairs, switch_distances


def bridges(n: int, u: np.ndarray, v: np.ndarray) -> set[int]:
    """Links whose loss alone disconnects the switch graph (Tarjan, iterative; parallel links are
    never bridges)."""
    adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for k, (a, b) in enumerate(zip(u.tolist(), v.tolist())):
        adj[a].append((b, k))
        adj[b].append((a, k))
    disc = [-1] * n
    low = [0] * n
    out: set[int] = set()
    t = 0
    for root in range(n):
        if disc[root] >= 0:
            continue
        disc[root] = low[root] = t
        t += 1
        stack = [(root, -1, iter(adj[root]))]
        while stack:
            node, via, it = stack[-1]
            advanced = False
            for nxt, k in it:
                if k == via:
                    continue
                if disc[nxt] < 0:
                    disc[nxt] = low[nxt] = t
                    t += 1
                    stack.append((nxt, k, iter(adj[nxt])))
                    advanced = True
                    break
                low[node] = min(low[node], disc[nxt])
            if advanced:
                continue
            stack.pop()
            if stack:
                parent = stack[-1][0]
                low[parent] = min(low[parent], low[node])
                if low[node] > disc[parent]:
                    out.add(via)
    return out


def _row(fab: Fabric, kind: str, name: str, ends: list[int], cut: np.ndarray, affected: int, port_pairs_lost: int,
         withdrawn: list, routed_lost: int, physical_lost: int, port_detour: int, gpu_detour: int) -> dict:
    return {
        "element": name, "kind": kind, "ends": [fab.switch_names[e] for e in ends],
        "gpu_ports_cut_off": int(cut.sum()),
        "cut_off_ports": [fab.port_names[g][k] for g, k in zip(*np.nonzero(cut))] if fab.port_names else [],
        "gpu_ports_losing_paths": int(affected),
        "port_pairs_lost": int(port_pairs_lost),
        "routes_withdrawn": [{"switch": s, "prefix": p} for s, p in withdrawn],
        "gpu_pairs_without_routed_path": int(routed_lost),
        "gpu_pairs_disconnected": int(physical_lost),
        "every_gpu_keeps_a_routed_path": routed_lost == 0,
        "every_gpu_keeps_a_path": physical_lost == 0,
        "longest_port_detour_switches": int(port_detour),
        "longest_gpu_detour_switches": int(gpu_detour),
    }


def failure_row(fab: Fabric, rt: Routing, counter: RoutedCounter, kind: str, x: int) -> dict:
    """The general computation for one failed switch or link (any state of the rest)."""
    healthy = State.healthy(fab)
    n = fab.n_gpus
    st = State(healthy.host_up, healthy.link_up.copy(), healthy.switch_up.copy())
    if kind == "switch":
        st.switch_up[x] = False
        ends = [x]
        name = fab.switch_names[x]
        withdrawn = [w for k in np.flatnonzero((fab.link_u == x) | (fab.link_v == x)) for w in rt.withdrawn_prefixes.get(int(k), [])]
    else:
        st.link_up[x] = False
        ends = [int(fab.link_u[x]), int(fab.link_v[x])]
        name = fab.link_ids[x]
        withdrawn = rt.withdrawn_prefixes.get(x, [])
    fd = counter.fd(st)
    alive = st.port_alive(fab)
    affected = counter.ports_losing_paths(st, fd)
    # ordered (port 1 of a, port 2 of b) pairs, a != b, whose routed path is gone
    p1_ok, p2_ok = alive[:, 0], alive[:, 1]
    ci = np.bincount(rt.oc[p1_ok], minlength=counter.n_i)
    cj = np.bincount(rt.ec[p2_ok], minlength=counter.n_j)
    working = round(float(ci.astype(np.float64) @ (~fd).astype(np.float64) @ cj.astype(np.float64)))
    working -= int((p1_ok & p2_ok & ~fd[rt.oc, rt.ec]).sum())
    port_pairs_lost = n * (n - 1) - working
    routed_lost = counter.lost(st, fd)
    physical_lost = physical_lost_pairs(fab, st)
    # detours: live port pairs whose route broke, by switch pair; and GPU pairs left without a route.
    # Under ONE failure a GPU pair loses both routed port pairs only if both GPUs have a port on the
    # failed switch, or both sit on the two ends of the failed link (checked exhaustively in tests).
    bi, bj = np.nonzero(fd & (ci[:, None] > 0) & (cj[None, :] > 0))
    cand = np.flatnonzero(np.isin(fab.port_switch[:, 0], ends) & np.isin(fab.port_switch[:, 1], ends) | (~alive).any(axis=1))
    lost_pairs = counter.lost_pair_list(st, cand, fd) if len(cand) else np.zeros((0, 2), np.int64)
    srcs = np.unique(np.concatenate([rt.oc_switch[bi], fab.port_switch[cand].ravel()])).astype(np.int64)
    dist = switch_distances(fab, st, srcs) if len(srcs) else np.zeros((0, fab.n_switches), np.int64)
    row_of = {int(s): r for r, s in enumerate(srcs)}
    port_detour = max((int(dist[row_of[int(rt.oc_switch[i])], rt.ec_switch[j]]) for i, j in zip(bi, bj)), default=0)
    gpu_detour = _gpu_detour(fab, alive, lost_pairs, lambda s, t: int(dist[row_of[int(s)], t]))
    return _row(fab, kind, name, ends, ~alive, affected, port_pairs_lost, withdrawn, routed_lost, physical_lost,
                port_detour, gpu_detour)


def _gpu_detour(fab: Fabric, alive: np.ndarray, lost_pairs: np.ndarray, dist) -> int:
    """Longest over ``lost_pairs`` of the shortest surviving path (switches) between any live ports."""
    worst = 0
    for a, b in lost_pairs:
        best = 0
        for pa in (0, 1):
            for pb in (0, 1):
                if alive[a, pa] and alive[b, pb]:
                    d = dist(fab.port_switch[a, pa], fab.port_switch[b, pb])
                    if d and (best == 0 or d < best):
                        best = d
        worst = max(worst, best)
    return worst


class _LinkPath:
    """The fast path for one failed fabric link, from counts prepared once on the healthy fabric."""

    def __init__(self, fab: Fabric, rt: Routing, counter: RoutedCounter):
        self.fab, self.rt, self.counter = fab, rt, counter
        n_i, n_j = counter.n_i, counter.n_j
        self.c0 = np.bincount(rt.oc * n_j + rt.ec, minlength=n_i * n_j).reshape(n_i, n_j).astype(np.int64)
        self.ci = self.c0.sum(axis=1)
        self.cj = self.c0.sum(axis=0)
        # class entries whose routed path uses each link, in either direction
        flat_i = np.concatenate([np.nonzero(counter.fi >= 0)[0], np.nonzero(counter.ri >= 0)[0]])
        flat_j = np.concatenate([np.nonzero(counter.fi >= 0)[1], np.nonzero(counter.ri >= 0)[1]])
        links = np.concatenate([counter.fi[counter.fi >= 0], counter.ri[counter.ri >= 0]])
        order = np.argsort(links, kind="stable")
        self.e_i, self.e_j, self.e_link = flat_i[order], flat_j[order], links[order]
        self.start = np.searchsorted(self.e_link, np.arange(len(fab.link_u) + 1))
        self.healthy_physical = physical_lost_pairs(fab, State.healthy(fab))
        self.bridges = bridges(fab.n_switches, fab.link_u, fab.link_v)
        # parallel links and length-3 walks (bipartite: odd - even - odd - even) for detours
        n = fab.n_switches
        self.mult = np.zeros((n, n), np.int64)
        np.add.at(self.mult, (fab.link_u, fab.link_v), 1)
        np.add.at(self.mult, (fab.link_v, fab.link_u), 1)
        b = (self.mult > 0).astype(np.float64)
        self.adj = b
        self.walk2 = b @ b
        self.deg = b.sum(axis=1)
        odd = np.zeros(n, bool)
        odd[rt.odd] = True
        self.odd = odd
        self.bipartite = bool((odd[fab.link_u] != odd[fab.link_v]).all())

    def applies(self) -> bool:
        """The fast path assumes every class pair has a route on the healthy fabric and a bipartite fabric."""
        return self.bipartite and not self.counter.fd(State.healthy(self.fab)).any()

    def row(self, x: int) -> dict:
        fab, rt, counter = self.fab, self.rt, self.counter
        u, v = int(fab.link_u[x]), int(fab.link_v[x])
        o, e = (u, v) if self.odd[u] else (v, u)
        sl = slice(self.start[x], self.start[x + 1])
        ent = np.unique(np.stack([self.e_i[sl], self.e_j[sl]], axis=1), axis=0) if sl.stop > sl.start else np.zeros((0, 2), np.int64)
        ii, jj = ent[:, 0], ent[:, 1]
        c0 = self.c0
        self_cnt = int(c0[ii, jj].sum())  # a GPU's own (port 1, port 2) "pair" is not a pair
        port_pairs_lost = int((self.ci[ii] * self.cj[jj]).sum()) - self_cnt
        # both directions broken: entries (ia, jb) and (ib, ja) both in the set
        # a pair is lost when both (oc[a], ec[b]) and (oc[b], ec[a]) are broken entries p and q: then
        # a is of class (i_p, j_q) and b of class (i_q, j_p); with M[p, q] = C0[i_p, j_q] the ordered
        # count is sum(M * M.T), less the GPUs paired with themselves
        m = c0[np.ix_(ii, jj)]
        routed_lost = (int((m * m.T).sum()) - self_cnt) // 2 if len(ent) else 0
        # ports with at least one broken pair (other than with their own GPU)
        affected = self._ports_losing(ii, jj)
        physical_lost = self.healthy_physical if x not in self.bridges else None
        st = None
        if physical_lost is None:
            st = State.healthy(fab)
            st.link_up[x] = False
            physical_lost = physical_lost_pairs(fab, st)
        d = self._distance_without(o, e, x)
        live = (self.ci[ii] > 0) & (self.cj[jj] > 0)
        port_detour = d if live.any() else 0
        # GPU pairs left without a route: both on o and e
        cand = np.flatnonzero((fab.port_switch[:, 0] == o) & (fab.port_switch[:, 1] == e))
        gpu_detour = 0
        if len(cand) > 1:
            st = st or State.healthy(fab)
            st.link_up[x] = False
            fd = counter.fd(st)
            lost_pairs = counter.lost_pair_list(st, cand, fd)
            alive = np.ones((fab.n_gpus, 2), bool)
            gpu_detour = _gpu_detour(fab, alive, lost_pairs, lambda s, t: 1 if s == t else d)
        return _row(fab, "fabric_link", fab.link_ids[x], [u, v], np.zeros((fab.n_gpus, 2), bool), affected,
                    port_pairs_lost, rt.withdrawn_prefixes.get(x, []), routed_lost, physical_lost, port_detour, gpu_detour)

    def _ports_losing(self, ii: np.ndarray, jj: np.ndarray) -> int:
        rt = self.rt
        if not len(ii):
            return 0
        row = np.zeros(self.counter.n_i, np.int64)
        np.add.at(row, ii, self.cj[jj])  # per odd class: even-side ports it lost a path to (incl. its own GPU)
        col = np.zeros(self.counter.n_j, np.int64)
        np.add.at(col, jj, self.ci[ii])
        broken = np.zeros((self.counter.n_i, self.counter.n_j), bool)
        broken[ii, jj] = True
        gi = np.flatnonzero(np.isin(rt.oc, np.unique(ii)) | np.isin(rt.ec, np.unique(jj)))
        own = broken[rt.oc[gi], rt.ec[gi]].astype(np.int64)
        return int(((row[rt.oc[gi]] - own) > 0).sum() + ((col[rt.ec[gi]] - own) > 0).sum())

    def _distance_without(self, o: int, e: int, x: int) -> int:
        """Switches on the shortest o-e path once link x is gone."""
        if self.mult[o, e] > 1:
            return 2  # a parallel link remains
        walks3 = float(self.adj[o] @ self.walk2[:, e])
        # length-3 walks o-u-v-e that use the o-e edge: u = e (deg e of them) or v = o (deg o), both once
        if walks3 - self.deg[e] - self.deg[o] + 1 > 0:
            return 4
        st = State.healthy(self.fab)
        st.link_up[x] = False
        return int(switch_distances(self.fab, st, np.array([o]))[0, e])


def single_failures(fab: Fabric, rt: Routing, fast: bool = True) -> list[dict]:
    """Every switch and every fabric link failing alone: what it cuts, what it withdraws, how many
    GPU pairs lose their routed path or every path, and the longest detour."""
    counter = RoutedCounter(fab, rt)
    rows = [failure_row(fab, rt, counter, "switch", s) for s in range(fab.n_switches)]
    links = _LinkPath(fab, rt, counter) if fast else None
    if links is not None and not links.applies():
        links = None
    for k in range(len(fab.link_u)):
        rows.append(links.row(k) if links is not None else failure_row(fab, rt, counter, "fabric_link", k))
    return rows
