"""Fabric models for fault analysis, built from a plan (ZCube) or from the comparison rules (a
dual-plane Clos of the same size). Pure numpy; no I/O.

A fabric is switches (nodes), switch-to-switch links (edges) and GPUs with two ports, each port
one host link to one switch. For ZCube the plan's forwarding entries that stay as configured through
failures (topology/forwarding.py, pinned_tables: mode static's routes) are read to know which fabric
link each switch uses towards each destination GPU port (the "routed" model); nothing about the
wiring rule is assumed here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import ceil

import numpy as np

from zcube_deploy.errors import PlanFileError
from zcube_deploy.ipv4 import MASKS, aton
from zcube_deploy.topology.forwarding import SOURCE_FALLBACK, pinned_tables


@dataclass
class Fabric:
    name: str
    switch_names: list[str]
    link_u: np.ndarray  # switch index of each switch-to-switch link's a end
    link_v: np.ndarray
    port_switch: np.ndarray  # (N, 2): switch of GPU g's port 1 and port 2
    link_ids: list[str] = field(default_factory=list)
    gpu_names: list[str] = field(default_factory=list)  # "server/gpuN"
    port_names: list[tuple[str, str]] = field(default_factory=list)  # ("server:port-1 interface", "server:port-2 interface")

    @property
    def n_gpus(self) -> int:
        return len(self.port_switch)

    @property
    def n_switches(self) -> int:
        return len(self.switch_names)


@dataclass
class Routing:
    """ZCube's static cross-group routing, in classes.

    GPU a's port 1 (odd side) has class ``oc[a]``, its port 2 (even side) class ``ec[a]``. Ports in
    one class sit on the same switch and are reached over the same fabric links from every switch
    of the other group. ``fwd[o, j]``: link index odd switch o uses towards even class j (-1: no
    route); ``rev[e, i]``: link index even switch e uses towards odd class i.
    """

    oc: np.ndarray
    ec: np.ndarray
    oc_switch: np.ndarray  # odd switch (global switch index) of each odd class
    ec_switch: np.ndarray
    odd: np.ndarray  # global switch indexes of the odd group, in order
    even: np.ndarray
    fwd: np.ndarray  # (len(odd), n even classes)
    rev: np.ndarray  # (len(even), n odd classes)
    withdrawn_prefixes: dict[int, list[tuple[str, str]]] = field(default_factory=dict)  # link -> [(switch, prefix)]
    pinned: dict = field(default_factory=dict)  # switch name -> its pinned forwarding entries (topology/forwarding.py)


def unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(a, axis=0, return_inverse=True)`` for a 2-D integer array, column by column: the
    rank of each row among the distinct rows in lexicographic order (the same numbering), without
    sorting whole rows (at 64k GPUs the rows are 257 wide and np.unique's row sort took minutes)."""
    rank = np.zeros(len(a), np.int64)
    for col in a.T:
        _, col_rank = np.unique(col, return_inverse=True)
        _, rank = np.unique(rank * (int(col_rank.max()) + 1) + col_rank.ravel(), return_inverse=True)
        rank = rank.ravel()
    first = np.full(int(rank.max()) + 1 if len(rank) else 0, len(a), np.int64)
    np.minimum.at(first, rank, np.arange(len(a)))
    return a[first], rank


def zcube_from_plan(plan: dict) -> tuple[Fabric, Routing]:
    """The installed GPUs, switches, fabric links and routing of a one-plane ZCube plan, in steps: switches
    and fabric links, the installed GPUs' two ports, then each switch's pinned link per destination."""
    if plan.get("sizing", {}).get("planes", 1) != 1:
        raise PlanFileError("analyze supports one-plane plans (2-port NICs); this plan has "
                            f"{plan['sizing']['planes']} planes")
    switches = sorted(plan["switches"], key=lambda s: (s["group"] != "odd", s["index"]))
    names = [s["name"] for s in switches]
    idx = {n: i for i, n in enumerate(names)}
    group = np.array([s["group"] == "odd" for s in switches])
    fabric_cables = sorted((c for c in plan["cables"] if c["kind"] == "fabric"), key=lambda c: c["id"])
    lu = np.array([idx[c["a"]["device"]] for c in fabric_cables], dtype=np.int64)
    lv = np.array([idx[c["b"]["device"]] for c in fabric_cables], dtype=np.int64)
    gpus = _installed_gpus(plan)
    keys = list(gpus)
    port_switch = np.array([[idx[gpus[k][1]["switch"]], idx[gpus[k][2]["switch"]]] for k in keys], dtype=np.int64).reshape(-1, 2)
    gpu_names = [f"{k[0]}/gpu{k[1]}" for k in keys]
    port_names = [(f"{k[0]}:{gpus[k][1]['port']}", f"{k[0]}:{gpus[k][2]['port']}") for k in keys]
    fab = Fabric("ZCube", names, lu, lv, port_switch, [c["id"] for c in fabric_cables], gpu_names, port_names)
    if len(keys) == 0:
        raise PlanFileError("the plan has no installed GPU with both NIC ports cabled: nothing to analyse")
    if not (group[port_switch[:, 0]].all() and (~group[port_switch[:, 1]]).all()):
        raise PlanFileError("NIC port 1 must go to an odd switch and port 2 to an even switch")
    addr1 = np.array([aton(gpus[k][1]["address"]) for k in keys], dtype=np.int64)
    addr2 = np.array([aton(gpus[k][2]["address"]) for k in keys], dtype=np.int64)
    odd = np.flatnonzero(group)
    even = np.flatnonzero(~group)
    lf = _LinkFinder(idx, lu, lv, {c["id"]: i for i, c in enumerate(fabric_cables)},
                     pinned_tables(plan.get("routing") or {"mode": "static"}, switches))
    fwd_all = np.stack([lf.links_towards(switches[o], addr2, port_switch[:, 1]) for o in odd])  # (S_odd, N)
    rev_all = np.stack([lf.links_towards(switches[e], addr1, port_switch[:, 0]) for e in even])  # (S_even, N)
    # classes: same switch and same links from every switch of the other group
    ekey = np.vstack([port_switch[:, 1][None, :], fwd_all]).T
    okey = np.vstack([port_switch[:, 0][None, :], rev_all]).T
    ekeys, ec = unique_rows(ekey)
    okeys, oc = unique_rows(okey)
    routing = Routing(oc=oc.ravel(), ec=ec.ravel(), oc_switch=okeys[:, 0], ec_switch=ekeys[:, 0], odd=odd, even=even,
                      fwd=ekeys[:, 1:].T.copy(), rev=okeys[:, 1:].T.copy(), withdrawn_prefixes=lf.withdrawn,
                      pinned=lf.pinned)
    return fab, routing


def _installed_gpus(plan: dict) -> dict[tuple[str, int], dict[int, dict]]:
    """(server, GPU) -> {NIC port 1: its NIC row, 2: ...} for every GPU with both ports, in server/GPU order."""
    gpus: dict[tuple[str, int], dict[int, dict]] = {}
    for srv in plan["servers"]:
        for nic in srv.get("nics", ()):
            gpus.setdefault((srv["name"], nic["gpu"]), {})[nic["nic_port"]] = nic
    return {k: v for k, v in gpus.items() if 1 in v and 2 in v}


class _LinkFinder:
    """Each switch's fabric link per destination address, from its pinned routes; collects the prefixes
    each link carries (what its failure withdraws)."""

    def __init__(self, idx: dict[str, int], lu: np.ndarray, lv: np.ndarray, link_of_cable: dict[str, int], pinned: dict):
        self.idx, self.lu, self.lv, self.link_of_cable, self.pinned = idx, lu, lv, link_of_cable, pinned
        self.withdrawn: dict[int, list[tuple[str, str]]] = {}
        self._sorted_at: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # per destination array: (order, addresses in order)

    def _sorted(self, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if id(dst) not in self._sorted_at:
            order = np.argsort(dst, kind="stable")
            self._sorted_at[id(dst)] = (order, dst[order])
        return self._sorted_at[id(dst)]

    def links_towards(self, sw: dict, dst: np.ndarray, dst_switch: np.ndarray) -> np.ndarray:
        """Fabric link used by switch ``sw`` for each destination address (longest prefix match
        over its pinned primary entries; a reconverging routing kind pins none)."""
        peer_link: dict[int, int] = {}
        for itf in sw["interfaces"]:
            if itf.get("kind") == "fabric" and itf.get("cable") in self.link_of_cable:
                peer_link[aton(itf["peer"]["address"])] = self.link_of_cable[itf["cable"]]
        entries = [e for e in self.pinned[sw["name"]] if e.source != SOURCE_FALLBACK]
        for e in entries:
            if len(e.next_hops) != 1:
                raise PlanFileError(f"{sw['name']} {e.prefix}: a pinned route with {len(e.next_hops)} next hops (ECMP) is not modelled")
        links = [peer_link.get(e.next_hops[0], -1) for e in entries]
        for e, link in zip(entries, links):
            if link >= 0:
                self.withdrawn.setdefault(link, []).append((sw["name"], e.prefix))
        # each entry covers [lo, lo + 2^(32 - len)): a range of the sorted addresses, all found at once;
        # the ranges are written shortest prefix first and, among equal lengths, the first entry last,
        # so the longest match wins and of equal ones the first (the table's order)
        order, addrs = self._sorted(dst)
        plen = np.array([e.prefix_len for e in entries], dtype=np.int64)
        lo = np.array([e.network & MASKS[e.prefix_len] for e in entries], dtype=np.int64)
        i0 = np.searchsorted(addrs, lo).tolist()
        i1 = np.searchsorted(addrs, lo + (np.int64(1) << (32 - plen))).tolist()
        in_order = np.full(len(dst), -1, dtype=np.int64)
        for k in np.lexsort((-np.arange(len(entries)), plen)).tolist():
            in_order[i0[k]:i1[k]] = links[k]
        out = np.empty(len(dst), dtype=np.int64)
        out[order] = in_order
        ok = out >= 0
        me = self.idx[sw["name"]]
        u, v, d = self.lu[out[ok]], self.lv[out[ok]], dst_switch[ok]
        if not (((u == me) | (v == me)) & ((u == d) | (v == d))).all():
            raise PlanFileError(f"{sw['name']}: a route to the other group does not use a direct link to the destination's switch")
        return out


def dual_plane_clos(n_gpus: int, h: int, k: int) -> Fabric:
    """HPN-style dual-plane 2-tier Clos for ``n_gpus`` (the comparison's rule): per plane, leaves of
    h/2 GPU ports with k/2 uplinks spread round-robin over ceil(leaves/2) spines (none for one leaf)."""
    down = h // 2
    leaves = ceil(n_gpus / down)
    spines = 0 if leaves <= 1 else ceil(leaves * (k // 2) / k)
    per_plane = leaves + spines
    names, lu, lv = [], [], []
    for plane in (0, 1):
        base = plane * per_plane
        names += [f"P{plane + 1}-L{i + 1:03d}" for i in range(leaves)] + [f"P{plane + 1}-S{i + 1:03d}" for i in range(spines)]
        if spines:
            for leaf in range(leaves):
                for u in range(k // 2):
                    lu.append(base + leaf)
                    lv.append(base + leaves + (leaf + u) % spines)
    g = np.arange(n_gpus)
    port_switch = np.stack([g // down, per_plane + g // down], axis=1)
    return Fabric("dual-plane Clos", names, np.array(lu, dtype=np.int64), np.array(lv, dtype=np.int64), port_switch)
