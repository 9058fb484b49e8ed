"""What failures cost: exact counts of GPU pairs left without a path (used by single.py), Monte-Carlo
link failures against a dual-plane Clos, path statistics. Pure numpy; no I/O.

Two notions of "reachable" are kept apart:

- routed: with the plan's static routes (zcube.md section 6). A GPU pair is reachable when one of
  its two cross-group port pairs (a.port1 <-> b.port2, a.port2 <-> b.port1) has both host links,
  both switches and the fabric links its routes use in each direction. A failed link withdraws
  its routes; nothing else takes over (no same-group routes by default).
- physical: some path exists through live links and switches (what a dynamic routing protocol or
  an operator's rerouting could use). A pair is reachable when a live port of one GPU and a live
  port of the other are in the same connected component.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from zcube_deploy.analysis.fabric import Fabric, Routing


def pairs(n: int) -> int:
    return n * (n - 1) // 2


# ------------------------------------------------------------------ state
@dataclass
class State:
    host_up: np.ndarray  # (N, 2) host links
    link_up: np.ndarray  # (L,) switch-to-switch links
    switch_up: np.ndarray  # (n switches,)

    @classmethod
    def healthy(cls, fab: Fabric) -> "State":
        return cls(np.ones((fab.n_gpus, 2), bool), np.ones(len(fab.link_u), bool), np.ones(fab.n_switches, bool))

    def port_alive(self, fab: Fabric) -> np.ndarray:
        return self.host_up & self.switch_up[fab.port_switch]

    def links_alive(self, fab: Fabric) -> np.ndarray:
        return self.link_up & self.switch_up[fab.link_u] & self.switch_up[fab.link_v]


# ------------------------------------------------------------------ physical
def components(n: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Connected-component label (smallest member index) of each of ``n`` nodes."""
    lab = np.arange(n)
    if len(u) == 0:
        return lab
    while True:
        m = np.minimum(lab[u], lab[v])
        new = lab.copy()
        np.minimum.at(new, u, m)
        np.minimum.at(new, v, m)
        for _ in range(4):
            new = new[new]
        if np.array_equal(new, lab):
            return lab
        lab = new


def physical_lost_pairs(fab: Fabric, st: State) -> int:
    """Unordered GPU pairs with no physical path (no live port of each in a common component)."""
    alive = st.links_alive(fab)
    lab = components(fab.n_switches, fab.link_u[alive], fab.link_v[alive])
    comp = np.where(st.port_alive(fab), lab[fab.port_switch], -1)
    c1, c2 = comp[:, 0], comp[:, 1]
    c2 = np.where(c2 == c1, -1, c2)
    members = np.concatenate([c1[c1 >= 0], c2[c2 >= 0]])
    reachable = int((np.bincount(members).astype(np.int64) * (np.bincount(members) - 1) // 2).sum()) if len(members) else 0
    both = (c1 >= 0) & (c2 >= 0)
    if both.any():
        lo, hi = np.minimum(c1[both], c2[both]), np.maximum(c1[both], c2[both])
        _, cnt = np.unique(lo * (fab.n_switches + 1) + hi, return_counts=True)
        reachable -= int((cnt * (cnt - 1) // 2).sum())  # pairs sharing both components were counted twice
    return pairs(fab.n_gpus) - reachable


# ------------------------------------------------------------------ routed (ZCube)
class RoutedCounter:
    """Exact count of GPU pairs without a routed path, by port classes (see fabric.Routing)."""

    def __init__(self, fab: Fabric, rt: Routing):
        self.fab, self.rt = fab, rt
        o_row = {int(s): r for r, s in enumerate(rt.odd)}
        e_row = {int(s): r for r, s in enumerate(rt.even)}
        orow = np.array([o_row[int(s)] for s in rt.oc_switch])
        erow = np.array([e_row[int(s)] for s in rt.ec_switch])
        self.fi = rt.fwd[orow]  # (In, Jn): link from odd class i's switch towards even class j
        self.ri = rt.rev[erow].T  # (In, Jn): link from even class j's switch towards odd class i
        self.n_i, self.n_j = self.fi.shape

    def fd(self, st: State) -> np.ndarray:
        """Fd[i, j]: the routed path between odd class i and even class j is broken (either direction)."""
        up = np.append(st.links_alive(self.fab), False)  # index -1 (no route) is never up
        return ~(up[self.fi] & up[self.ri])

    def lost(self, st: State, fd: np.ndarray | None = None, candidates: np.ndarray | None = None) -> int:
        """Unordered GPU pairs whose both cross-group port pairs are broken.

        X(a, b) = port1 of a dead or port2 of b dead or Fd[oc[a], ec[b]]; a pair is lost when
        X(a, b) and X(b, a). Pairs of two healthy GPUs are counted with matrix products over
        classes; pairs involving a GPU with a dead port row by row."""
        rt = self.rt
        fd = self.fd(st) if fd is None else fd
        alive = st.port_alive(self.fab)
        d1, d2 = ~alive[:, 0], ~alive[:, 1]
        dead = d1 | d2
        clean = ~dead
        total = 0
        if fd.any():
            # float64 products (BLAS) are exact here: every count is far below 2**53
            c0 = np.bincount(rt.oc[clean] * self.n_j + rt.ec[clean], minlength=self.n_i * self.n_j)
            c0 = c0.reshape(self.n_i, self.n_j).astype(np.float64)
            f = fd.astype(np.float64)
            m = c0 @ f.T  # m[ia, ib] = sum_ja C0[ia, ja] Fd[ib, ja]
            ordered = round(float((m * (f @ c0.T)).sum())) - round(float((c0 * f).sum()))  # minus a == b
            total += ordered // 2
        di = np.flatnonzero(dead)
        if len(di):
            # a GPU with a dead port: with port 1 dead X(a, .) is always true, so the pair is lost
            # exactly when X(b, a) = d1[b] or Fd[oc[b], ec[a]] (and symmetrically for port 2); these
            # row counts take class sums. Pairs of two such GPUs are counted twice, and corrected below.
            nd1, nd2 = int(d1.sum()), int(d2.sum())
            by_i = np.bincount(rt.oc[~d1], minlength=self.n_i).astype(np.float64)
            by_j = np.bincount(rt.ec[~d2], minlength=self.n_j).astype(np.float64)
            f = fd.astype(np.float64)
            via_i = np.rint(by_i @ f).astype(np.int64)  # per even class j: GPUs b with live port 1 and Fd[oc[b], j]
            via_j = np.rint(f @ by_j).astype(np.int64)  # per odd class i: GPUs b with live port 2 and Fd[i, ec[b]]
            a1, a2 = d1[di], d2[di]
            rows = np.where(a1 & a2, self.fab.n_gpus - 1,
                            np.where(a1, nd1 - 1 + via_i[rt.ec[di]], nd2 - 1 + via_j[rt.oc[di]]))
            x = d1[di, None] | d2[None, di] | fd[np.ix_(rt.oc[di], rt.ec[di])]
            both_dead = int(np.triu(x & x.T, 1).sum())
            total += int(rows.sum()) - both_dead
        return total

    def ports_losing_paths(self, st: State, fd: np.ndarray) -> int:
        """GPU ports with at least one broken (port 1 of a, port 2 of b) pair, b != a."""
        rt, n = self.rt, self.fab.n_gpus
        alive = st.port_alive(self.fab)
        d1, d2 = ~alive[:, 0], ~alive[:, 1]
        f = fd.astype(np.float64)
        via_i = np.rint(np.bincount(rt.oc[~d1], minlength=self.n_i).astype(np.float64) @ f).astype(np.int64)
        via_j = np.rint(f @ np.bincount(rt.ec[~d2], minlength=self.n_j).astype(np.float64)).astype(np.int64)
        self_pair = (d1 | d2 | fd[rt.oc, rt.ec]).astype(np.int64)  # X(a, a), not a pair
        as_src = np.where(d1, n, int(d2.sum()) + via_j[rt.oc]) - self_pair  # b with X(a, b)
        as_dst = np.where(d2, n, int(d1.sum()) + via_i[rt.ec]) - self_pair  # a with X(a, b)
        return int((as_src > 0).sum() + (as_dst > 0).sum())

    def lost_pair_list(self, st: State, gpus: np.ndarray, fd: np.ndarray | None = None) -> np.ndarray:
        """The lost pairs among ``gpus`` (array of (a, b), a < b)."""
        rt = self.rt
        fd = self.fd(st) if fd is None else fd
        alive = st.port_alive(self.fab)
        d1, d2 = ~alive[gpus, 0], ~alive[gpus, 1]
        x = d1[:, None] | d2[None, :] | fd[np.ix_(rt.oc[gpus], rt.ec[gpus])]
        both = x & x.T
        ia, ib = np.nonzero(np.triu(both, 1))
        return np.stack([gpus[ia], gpus[ib]], axis=1)


# ------------------------------------------------------------------ distances
def switch_distances(fab: Fabric, st: State, sources: np.ndarray) -> np.ndarray:
    """Switches crossed on a shortest path from each source switch to every switch (1 = itself;
    0 = unreachable), over live links and switches."""
    n = fab.n_switches
    alive = st.links_alive(fab)
    adj = np.zeros((n, n), bool)
    adj[fab.link_u[alive], fab.link_v[alive]] = True
    adj[fab.link_v[alive], fab.link_u[alive]] = True
    adj[~st.switch_up, :] = False
    adj[:, ~st.switch_up] = False
    dist = np.zeros((len(sources), n), np.int64)
    frontier = np.zeros((len(sources), n), bool)
    frontier[np.arange(len(sources)), sources] = st.switch_up[sources]
    dist[frontier] = 1
    step = 1
    a = adj.astype(np.float32)
    while frontier.any():
        step += 1
        nxt = (frontier.astype(np.float32) @ a > 0) & (dist == 0)
        dist[nxt] = step
        frontier = nxt
    return dist


# ------------------------------------------------------------------ Monte-Carlo
def _draw(fab: Fabric, p: float, rng: np.random.Generator) -> State:
    return State(rng.random((fab.n_gpus, 2)) >= p, rng.random(len(fab.link_u)) >= p, np.ones(fab.n_switches, bool))


def monte_carlo(zc: Fabric, rt: Routing, clos: Fabric, probabilities: list[float], samples: int, seed: int,
                routed_lost=None) -> list[dict]:
    """Independent link failures (host and switch-to-switch links alike) with probability p: the
    fraction of GPU pairs left unreachable, per design, mean over ``samples`` trials with a 95%
    confidence interval, and the Clos/ZCube ratio with a bootstrap interval. ``routed_lost(state)``
    counts the GPU pairs without a routed path (default: the static switch routes alone)."""
    counter = RoutedCounter(zc, rt)
    lost_of = routed_lost or counter.lost
    total_z, total_c = pairs(zc.n_gpus), pairs(clos.n_gpus)
    out = []
    for pi, p in enumerate(probabilities):
        rz = np.random.default_rng([seed, pi, 0])
        rc = np.random.default_rng([seed, pi, 1])
        routed, phys, cl = np.zeros(samples), np.zeros(samples), np.zeros(samples)
        for t in range(samples):
            st = _draw(zc, p, rz)
            routed[t] = lost_of(st) / total_z
            phys[t] = physical_lost_pairs(zc, st) / total_z
            cl[t] = physical_lost_pairs(clos, _draw(clos, p, rc)) / total_c
        boot = np.random.default_rng([seed, pi, 2])
        out.append({
            "p": p,
            "zcube_routed": _summary(routed), "zcube": _summary(phys), "dual_plane_clos": _summary(cl),
            "model": {"zcube_2p2": 2 * p * p, "clos_4p2": 4 * p * p},
            "ratio_zcube_to_clos": _ratio(phys, cl, boot),
            "ratio_zcube_routed_to_clos": _ratio(routed, cl, boot),
        })
    return out


def _summary(x: np.ndarray) -> dict:
    n = len(x)
    mean = float(x.mean())
    half = 1.96 * float(x.std(ddof=1)) / np.sqrt(n) if n > 1 else 0.0
    return {"mean": mean, "ci95": [max(0.0, mean - half), mean + half], "trials_with_loss": int((x > 0).sum()), "samples": n}


def _ratio(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, reps: int = 2000) -> dict:
    if b.mean() == 0:
        return {"ratio": None, "ci95": [None, None]}
    n = len(a)
    ia = rng.integers(0, n, (reps, n))
    ib = rng.integers(0, n, (reps, n))
    mb = b[ib].mean(axis=1)
    ok = mb > 0
    r = a[ia].mean(axis=1)[ok] / mb[ok]
    lo, hi = (np.percentile(r, [2.5, 97.5]) if len(r) else (np.nan, np.nan))
    return {"ratio": float(a.mean() / b.mean()), "ci95": [float(lo), float(hi)]}


# ------------------------------------------------------------------ path statistics
def path_statistics(fab: Fabric, rt: Routing) -> dict:
    """Shortest paths between GPU ports on the healthy fabric: across groups (must be exactly one
    switch path, of 2 switches) and within a group; routed paths per cross-group port pair."""
    st = State.healthy(fab)
    n = fab.n_switches
    mult = np.zeros((n, n), np.float64)
    np.add.at(mult, (fab.link_u, fab.link_v), 1)
    np.add.at(mult, (fab.link_v, fab.link_u), 1)
    adj = (mult > 0).astype(np.float64)
    dist = switch_distances(fab, st, np.arange(n))
    # number of shortest switch sequences and of shortest link sequences, by dynamic programming
    count_sw = np.eye(n)
    count_ln = np.eye(n)
    paths_sw = np.where(dist == 1, 1.0, 0.0)
    paths_ln = paths_sw.copy()
    for step in range(2, int(dist.max()) + 1):
        count_sw = count_sw @ adj
        count_ln = count_ln @ mult
        paths_sw = np.where(dist == step, count_sw, paths_sw)
        paths_ln = np.where(dist == step, count_ln, paths_ln)
    w = np.bincount(fab.port_switch.ravel(), minlength=n).astype(np.float64)
    odd = np.zeros(n, bool)
    odd[rt.odd] = True
    cross = odd[:, None] != odd[None, :]
    wpairs = np.outer(w, w)
    same_sw = np.diag(w * (w - 1) / 2)

    def stats(mask: np.ndarray, weights: np.ndarray) -> dict:
        sel = mask & (weights > 0)
        if not sel.any():
            return {"port_pairs": 0}
        ww = weights[sel]
        return {
            "port_pairs": int(ww.sum()),
            "path_switches": {"min": int(dist[sel].min()), "max": int(dist[sel].max()), "mean": float((dist[sel] * ww).sum() / ww.sum())},
            "shortest_switch_paths": {"min": int(paths_sw[sel].min()), "max": int(paths_sw[sel].max())},
            "shortest_link_paths": {"min": int(paths_ln[sel].min()), "max": int(paths_ln[sel].max())},
        }

    same_group = ~cross & ~np.eye(n, dtype=bool)
    upper = np.triu(np.ones((n, n), bool), 1)
    routed_ok = (rt.fwd >= 0).all() and (rt.rev >= 0).all()
    ports = fab.port_switch
    # GPU pairs: the best of the four port combinations (physical), and the routed path (2 switches)
    if fab.n_gpus <= 3000:
        ia, ib = np.triu_indices(fab.n_gpus, 1)
    else:  # a seeded sample of GPU pairs (the exact mean would need N^2/2 distances)
        rng = np.random.default_rng(0)
        ia, ib = rng.integers(0, fab.n_gpus, (2, 200_000))
        keep = ia != ib
        ia, ib = ia[keep], ib[keep]
    best = np.minimum.reduce([dist[ports[ia, pa], ports[ib, pb]] for pa in (0, 1) for pb in (0, 1)])
    return {
        "cross_group": {**stats(cross & upper, wpairs), "routed_paths_per_port_pair": 1 if routed_ok else None,
                        "every_pair_has_exactly_one_shortest_switch_path": bool((paths_sw[cross & (wpairs > 0)] == 1).all())},
        "same_switch": {"port_pairs": int(same_sw.sum()), "path_switches": 1},
        "same_group": stats(same_group & upper, wpairs),
        "gpu_pairs": {"pairs": pairs(fab.n_gpus), "routed_path_switches": 2 if routed_ok else None,
                      "mean_shortest_path_switches": float(best.mean()) if len(best) else 0.0,
                      "mean_is_sampled": fab.n_gpus > 3000},
    }
