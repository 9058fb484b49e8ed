"""The plan's routing mode, with the host fallbacks, counted over every GPU pair (pure numpy).

Same model as analysis/predict.py (the packet walk the twin measures), vectorised: a GPU pair is
reachable when some port x of GPU a and some port z of GPU b pass the probe a.x -> b.z, request
and reply. A leg from port p to port q enters the fabric at the switch p's table picks:

- q in the other group, or on p's own switch: p's own switch;
- q in p's group on another switch: the switch of p's partner port (same NIC, other group) when
  that port has carrier, else p's own switch if the switches route within a group (mode bgp, or
  static with same_group_fallback), else no route.

and is delivered when q has carrier and, from that switch:

- mode static: q's own switch; or the other group's switch whose static route towards q's
  sub-block uses a live link to q's switch; or (same_group_fallback) a same-group switch whose
  live fallback links all lead to other-group switches with such a live route (ECMP: every branch);
- mode bgp: a switch in the same connected component of live switches and links as q's switch
  (after convergence every shortest AS path delivers).

counts() works densely per state (a delivery table, switch x GPU port, and GPU x GPU matrices) up
to DENSE_GPU_LIMIT GPUs. lost() (mode static) takes only the candidate pairs both cross-group probes
lose, from the port classes, and evaluates the same-group probes for them: it is the count used per
Monte-Carlo state and per single failure, at any size for the single failures (report.py decides). In
mode bgp with a connected fabric the count is closed-form: only GPUs with both ports dead lose pairs
(exact at any size).
"""

from __future__ import annotations

import numpy as np

from zcube_deploy.analysis.fabric import Fabric, Routing
from zcube_deploy.analysis.failures import State, components, pairs, physical_lost_pairs, switch_distances
from zcube_deploy.analysis.single import _row, bridges
from zcube_deploy.ipv4 import aton
from zcube_deploy.topology.forwarding import SOURCE_FALLBACK, reconverges

DENSE_GPU_LIMIT = 4096  # GPUs above which only mode bgp's closed form is used (N x N matrices per state)
# mode static's sparse count: cells one state may touch (rows of the GPUs with a dead port, and the square of
# the healthy GPUs whose classes lost a route); never reached up to DENSE_GPU_LIMIT GPUs (N^2 < this)
SPARSE_CELL_LIMIT = 64_000_000


class RoutedModel:
    """GPU pairs without a routed path under the plan's routing mode (see module doc)."""

    def __init__(self, plan: dict, fab: Fabric, rt: Routing):
        routing = plan.get("routing") or {"mode": "static", "same_group_fallback": plan.get("settings", {}).get("same_group_fallback", False)}
        self.mode = routing["mode"]
        self.reconverges = reconverges(routing)  # the failure behaviour: see topology/forwarding.py
        self.fab, self.rt = fab, rt
        self.same_group = self.reconverges or bool(routing.get("same_group_fallback"))
        n = fab.n_switches
        self.is_odd = np.zeros(n, bool)
        self.is_odd[rt.odd] = True
        self.row = np.zeros(n, np.int64)
        self.row[rt.odd] = np.arange(len(rt.odd))
        self.row[rt.even] = np.arange(len(rt.even))
        # per-port switch and route class: column 0 = port 1 (odd side), column 1 = port 2 (even side)
        self.sw = fab.port_switch
        self.cls = np.stack([rt.oc, rt.ec], axis=1)
        # per (odd class i, even class j): the fabric link of the switch route i -> j (from i's switch)
        # and j -> i (from j's switch); -1: no route
        self.cross_fwd = rt.fwd[self.row[rt.oc_switch]]
        self.cross_rev = rt.rev[self.row[rt.ec_switch]].T
        # each switch's pinned fallback links (ECMP; mode static with same_group_fallback), -1 padded
        idx = {name: i for i, name in enumerate(fab.switch_names)}
        link_of = {cid: k for k, cid in enumerate(fab.link_ids)}
        lists: dict[int, list[int]] = {}
        by_name = {s["name"]: s for s in plan["switches"]}
        for s, entries in rt.pinned.items():
            hops = [nh for e in entries if e.source == SOURCE_FALLBACK for nh in e.next_hops]
            if not hops:
                continue
            peer_link = {aton(i["peer"]["address"]): link_of[i["cable"]] for i in by_name[s]["interfaces"]
                         if i["kind"] == "fabric" and i["cable"] in link_of}
            lists[idx[s]] = sorted({peer_link[nh] for nh in hops if nh in peer_link})
        width = max([len(v) for v in lists.values()] + [1])
        self.fb = np.full((n, width), -1, np.int64)
        for s, links in lists.items():
            self.fb[s, :len(links)] = links

    # ------------------------------------------------------------ delivery from a switch
    def _cross(self, s: np.ndarray, t_cls: np.ndarray, z: int, link_up: np.ndarray) -> np.ndarray:
        """Static: switch s (other group than the destination port) has a live route to the class."""
        table = self.rt.fwd if z == 1 else self.rt.rev  # towards even (port 2) / odd (port 1) classes
        link = table[self.row[s], t_cls]
        return link_up[link]  # link_up has a False appended for index -1

    def deliver(self, s: np.ndarray, b_sw: np.ndarray, b_cls: np.ndarray, z: int, st: State, ctx: dict) -> np.ndarray:
        """A packet entering live switch ``s`` for port z of GPUs with switch ``b_sw`` / class
        ``b_cls`` reaches it (the port's carrier is checked by the caller)."""
        if self.reconverges:
            comp = ctx["comp"]
            return comp[s] == comp[b_sw]  # the carrier of the port is checked by the caller
        link_up = ctx["link_up"]
        same = s == b_sw
        other_group = self.is_odd[s] != self.is_odd[b_sw]
        ok = same.copy()
        ok[other_group] = self._cross(s[other_group], b_cls[other_group], z, link_up)
        if self.same_group:
            sg = ~same & ~other_group
            if sg.any():
                fb = self.fb[s[sg]]  # (k, width)
                live = link_up[fb]
                far = np.where(self.fab.link_u[np.maximum(fb, 0)] == s[sg][:, None],
                               self.fab.link_v[np.maximum(fb, 0)], self.fab.link_u[np.maximum(fb, 0)])
                far = np.where(live, far, 0)
                branch = self._cross(far.ravel(), np.repeat(b_cls[sg], fb.shape[1]), z, link_up).reshape(fb.shape)
                branch &= ctx["switch_up"][far]
                ok[sg] = live.any(axis=1) & (branch | ~live).all(axis=1)
        return ok

    def _context(self, st: State) -> dict:
        ctx = {"link_up": np.append(st.links_alive(self.fab), False), "switch_up": st.switch_up}
        if self.reconverges:
            alive = st.links_alive(self.fab)
            lab = components(self.fab.n_switches, self.fab.link_u[alive], self.fab.link_v[alive])
            ctx["comp"] = np.where(st.switch_up, lab, -1 - np.arange(self.fab.n_switches))
        return ctx

    def delivery_table(self, st: State, ctx: dict) -> np.ndarray:
        """Dm[s, 2g + z]: a packet entering switch s for port z of GPU g reaches it (carrier included)."""
        n_sw, n = self.fab.n_switches, self.fab.n_gpus
        alive = st.port_alive(self.fab)
        out = np.zeros((n_sw, 2 * n), bool)
        s_all = np.repeat(np.arange(n_sw), n)
        for z in (0, 1):
            ok = self.deliver(s_all, np.tile(self.sw[:, z], n_sw), np.tile(self.cls[:, z], n_sw), z, st, ctx).reshape(n_sw, n)
            ok &= st.switch_up[:, None] & alive[None, :, z]
            out[:, z::2] = ok
        return out

    def _delivered(self, h: np.ndarray, dst: np.ndarray, x: int, st: State, ctx: dict, alive: np.ndarray) -> np.ndarray:
        """``delivery_table(st, ctx)[h, 2 * dst + x]`` for index arrays, without the whole table."""
        ok = st.switch_up[h] & alive[dst, x]
        if ok.any():
            ok[ok] = self.deliver(h[ok], self.sw[dst[ok], x], self.cls[dst[ok], x], x, st, ctx)
        return ok

    def _same_group_ok(self, alive: np.ndarray, a: np.ndarray, b: np.ndarray, x: int, st: State, ctx: dict) -> np.ndarray:
        """Port x of GPUs a <-> port x of GPUs b (same group), request and reply, for pair arrays."""
        def leg(src, dst):
            own, partner, t = self.sw[src, x], self.sw[src, 1 - x], self.sw[dst, x]
            same = own == t
            use_partner = ~same & alive[src, 1 - x]
            h = np.where(use_partner, partner, own)
            return (same | use_partner | self.same_group) & self._delivered(h, dst, x, st, ctx, alive)
        return alive[a, x] & leg(a, b) & leg(b, a)

    def _cross_lost_pairs(self, alive: np.ndarray, ctx: dict) -> tuple[np.ndarray, np.ndarray, int] | None:
        """(a, b, direct): the GPU pairs (a, b) whose two cross-group probes (a.1 <-> b.2 and
        a.2 <-> b.1) both fail, each pair once, to check against the same-group probes; and the
        count of pairs with a GPU whose both ports are dead (lost whatever the rest).

        X(a, b) = a.1 dead or b.2 dead or fd[oc[a], ec[b]] (the switch route between the two
        classes is broken in either direction); a pair is a candidate when X(a, b) and X(b, a).
        Pairs with a GPU that lost one port are taken row by row, over the columns that can
        qualify; pairs of two healthy GPUs only among the GPUs whose classes have a broken route
        both ways (no N x N matrix). None when that would touch more than SPARSE_CELL_LIMIT cells."""
        up = ctx["link_up"]
        fd = ~(up[self.cross_fwd] & up[self.cross_rev])  # (odd classes, even classes)
        oc, ec = self.cls[:, 0], self.cls[:, 1]
        d1, d2 = ~alive[:, 0], ~alive[:, 1]
        dead = d1 | d2
        n = len(oc)
        only1, only2, both_dead = d1 & ~d2, d2 & ~d1, d1 & d2
        nbd = int(both_dead.sum())
        direct = nbd * (n - 1) - nbd * (nbd - 1) // 2  # a GPU with both ports dead loses every other GPU
        clean = np.flatnonzero(~dead)
        row_has, col_has = fd.any(axis=1), fd.any(axis=0)
        ca = clean[row_has[oc[clean]] & col_has[ec[clean]]] if fd.any() else clean[:0]
        # a.1 dead: X(a, .) holds, the pair is a candidate iff X(b, a) = b.1 dead or fd[oc[b], ec[a]];
        # a.2 dead: X(., a) holds, iff X(a, b) = b.2 dead or fd[oc[a], ec[b]] (pairs with a port-1-only
        # GPU are taken from its row); two GPUs of one kind once (a < b)
        r1, c1 = np.flatnonzero(only1), np.flatnonzero(~both_dead & (d1 | row_has[oc]))
        r2, c2 = np.flatnonzero(only2), np.flatnonzero(~both_dead & ~only1 & (d2 | col_has[ec]))
        if len(r1) * len(c1) + len(r2) * len(c2) + len(ca) ** 2 > SPARSE_CELL_LIMIT:
            return None
        out_a, out_b = [], []
        for rows, cols, x, kind in (
                (r1, c1, lambda r, c: d1[c][None, :] | fd[oc[c]][:, ec[r]].T, only1),
                (r2, c2, lambda r, c: d2[c][None, :] | fd[oc[r]][:, ec[c]], only2)):
            if len(rows) and len(cols):
                m = x(rows, cols) & ~(kind[cols][None, :] & (cols[None, :] <= rows[:, None]))
                i, j = np.nonzero(m)
                out_a.append(rows[i])
                out_b.append(cols[j])
        if len(ca):
            x = fd[np.ix_(oc[ca], ec[ca])]
            ia, ib = np.nonzero(x & x.T)  # symmetric: each pair once, and not a GPU with itself (no triu pass)
            once = ia < ib
            out_a.append(ca[ia[once]])
            out_b.append(ca[ib[once]])
        if not out_a:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), direct
        return np.concatenate(out_a), np.concatenate(out_b), direct

    def lost(self, st: State) -> int | None:
        """GPU pairs without a routed path: the pairs both cross-group probes lose (sparse, see
        _cross_lost_pairs), minus those a same-group probe still serves (evaluated for them only).
        Same count as counts(st)["gpu_pairs"] (the dense form; tests compare the two). Mode static:
        at any size, None only for a state beyond SPARSE_CELL_LIMIT (never up to DENSE_GPU_LIMIT GPUs)."""
        if self.reconverges:
            return self.counts(st)["gpu_pairs"]
        alive = st.port_alive(self.fab)
        ctx = self._context(st)
        cand = self._cross_lost_pairs(alive, ctx)
        if cand is None:
            return None
        a, b, direct = cand
        if len(a):
            keep = ~(self._same_group_ok(alive, a, b, 0, st, ctx) | self._same_group_ok(alive, a, b, 1, st, ctx))
            return direct + int(keep.sum())
        return direct

    def counts(self, st: State) -> dict:
        """GPU pairs (unordered) and port pairs (ordered, different GPUs) without a routed path."""
        n = self.fab.n_gpus
        alive = st.port_alive(self.fab)
        ctx = self._context(st)
        if self.reconverges:
            live_sw = np.unique(self.sw[alive])
            if len(np.unique(ctx["comp"][live_sw])) <= 1:
                dead = int((~alive.any(axis=1)).sum())
                lost = pairs(n) - pairs(n - dead)
                ports_alive = int(alive.sum())
                # every live port reaches every live port of another GPU
                port_ok = ports_alive * ports_alive - int((alive.sum(axis=1) ** 2).sum())
                return {"gpu_pairs": lost, "port_pairs": 4 * n * (n - 1) - port_ok, "exact": True}
        if n > DENSE_GPU_LIMIT:
            return {"gpu_pairs": None, "port_pairs": None, "exact": False}
        dm = self.delivery_table(st, ctx)
        legs = {}
        for x in (0, 1):
            own, partner = self.sw[:, x], self.sw[:, 1 - x]
            from_own = dm[own]  # (N, 2N)
            for z in (0, 1):
                to = from_own[:, z::2]  # (N, N): row GPU's port x -> column GPU's port z
                if x == z:
                    same = own[:, None] == self.sw[:, z][None, :]
                    use_partner = ~same & alive[:, 1 - x][:, None]
                    via_partner = dm[partner][:, z::2]
                    has = same | use_partner | self.same_group
                    to = has & np.where(use_partner, via_partner, to)
                legs[(x, z)] = to
        ok_any = np.zeros((n, n), bool)
        port_bad = 0
        off = ~np.eye(n, dtype=bool)
        for x in (0, 1):
            for z in (0, 1):
                ok = alive[:, x][:, None] & legs[(x, z)] & legs[(z, x)].T
                port_bad += int((~ok & off).sum())
                ok_any |= ok
        gpu_bad = int((~ok_any & off).sum()) // 2
        return {"gpu_pairs": gpu_bad, "port_pairs": port_bad, "exact": True}



def bgp_single_failures(fab: Fabric, model: RoutedModel) -> list[dict]:
    """Every switch and every fabric link failing alone, in mode bgp: what it cuts, which sessions
    go down, how many GPU pairs and port pairs lose every routed path (the model above), and the
    longest AS path (in switches) that a port pair must now take instead of its direct one."""
    n = fab.n_switches
    mult = np.zeros((n, n), np.int64)
    np.add.at(mult, (fab.link_u, fab.link_v), 1)
    np.add.at(mult, (fab.link_v, fab.link_u), 1)
    bridge = bridges(n, fab.link_u, fab.link_v)
    healthy = State.healthy(fab)
    n_gpus = fab.n_gpus
    rows = []
    for s in range(n):
        st = State(healthy.host_up, healthy.link_up.copy(), healthy.switch_up.copy())
        st.switch_up[s] = False
        c = model.counts(st)
        alive = st.port_alive(fab)
        cut = ~alive
        # same-group port pairs that used s as the partner's switch now go own switch -> any
        # switch of the other group -> destination switch
        detour = 0
        if cut.any():
            side = 1 if model.is_odd[s] else 0  # the column of the GPUs' OTHER port
            users = np.unique(fab.port_switch[cut[:, 1 - side], side])
            if len(users):
                dist = switch_distances(fab, st, users)
                same = model.is_odd[users][:, None] == model.is_odd[None, :]
                reach = np.where(same & st.switch_up[None, :], dist, 0)
                detour = int(reach.max())
        sessions = int(((fab.link_u == s) | (fab.link_v == s)).sum())
        row = _row(fab, "switch", fab.switch_names[s], [s], cut, _ports_losing(fab, model, st),
                   c["port_pairs"], [], c["gpu_pairs"], physical_lost_pairs(fab, st), detour, detour)
        row["bgp_sessions_down"] = sessions
        rows.append(row)
    for k in range(len(fab.link_u)):
        u, v = int(fab.link_u[k]), int(fab.link_v[k])
        if k in bridge:
            st = State(healthy.host_up, healthy.link_up.copy(), healthy.switch_up.copy())
            st.link_up[k] = False
            c = model.counts(st)
            phys = physical_lost_pairs(fab, st)
            losing = _ports_losing(fab, model, st)
        else:  # the fabric stays connected and no port loses carrier: BGP reroutes every pair
            c, phys, losing = {"gpu_pairs": 0, "port_pairs": 0}, 0, 0
        detour = 0
        if mult[u, v] == 1:
            st = State(healthy.host_up, healthy.link_up.copy(), healthy.switch_up.copy())
            st.link_up[k] = False
            detour = int(switch_distances(fab, st, np.array([u]))[0, v])
        rows.append(_row(fab, "fabric_link", fab.link_ids[k], [u, v], np.zeros((n_gpus, 2), bool), losing,
                         c["port_pairs"], [], c["gpu_pairs"], phys, detour, detour))
        rows[-1]["bgp_sessions_down"] = 1
    return rows


def _ports_losing(fab: Fabric, model: RoutedModel, st: State) -> int:
    """Live GPU ports that cannot reach some other live GPU port (mode bgp: the live ports, when
    the live ports' switches fall apart into several components; else none)."""
    alive = st.port_alive(fab)
    comp = model._context(st)["comp"]
    live_comp = comp[fab.port_switch[alive]]
    return int(alive.sum()) if len(np.unique(live_comp)) > 1 else 0
