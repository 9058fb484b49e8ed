"""Transfers (source GPU, destination GPU, bytes, start) to sub-flows on links, by the design's port
policy (docs/traffic.md, "Port policy"):

- same server: over NVLink (GPU -> NVLink switch -> GPU), never the network;
- two ports per GPU (ZCube, HPN, a ROFT plan): the transfer is split evenly over the design's port
  pairs whose ports work and whose switches route between them (ZCube: 1 -> 2 and 2 -> 1, the
  cross-group pairs the hosts' cross-group routes use; HPN: plane 1 and plane 2; a ROFT plan: 1 -> 1
  and 2 -> 2), one sub-flow each (NCCL puts channels on both ports); when none works, over the
  secondary pairs (ZCube: 1 -> 1, 2 -> 2, the same-group routes; a ROFT plan: 1 -> 2, 2 -> 1), else
  the transfer is unrouted. A ROFT plan has PXN too: the ports that send are those of the GPU of the
  source's server on the destination's rail (by server and local index), a GPU with no working port
  fails over to the next GPU of its server;
- one port per GPU (ROFT, Rail-only, Clos): a GPU whose port is dead uses, over NVLink, the port of
  the next GPU of its server (local index + 1, + 2, ...) that works (failover); with PXN (ROFT,
  Rail-only) the source first crosses NVLink to the GPU of its server on the destination NIC's rail
  and sends from that GPU's port (NCCL's PXN); Rail-only has no path between rails, so a relay's
  rail must equal the destination NIC's rail.

A sub-flow is explicit links (NIC and NVLink legs) plus a route id (the fabric part, shared by every
sub-flow with the same source switch and destination; routes.py). Sub-flows are the units max-min
fairness shares links between; a transfer ends when all its sub-flows end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from zcube_deploy.traffic.net import Net
from zcube_deploy.traffic.routes import Router, RouteSet


@dataclass
class Transfers:
    src: np.ndarray  # source GPU
    dst: np.ndarray  # destination GPU
    nbytes: np.ndarray
    start: np.ndarray  # seconds
    group: np.ndarray | None = None  # pd: the request each transfer (a KV shard) belongs to

    def __len__(self) -> int:
        return len(self.src)


@dataclass
class SubFlows:
    transfer: np.ndarray  # (F,) transfer index
    gbit: np.ndarray  # (F,) size in Gbit
    start: np.ndarray  # (F,) seconds
    links: np.ndarray  # (F, W) explicit links (-1 padding)
    route: np.ndarray  # (F,) route id, -1 none
    routes: RouteSet
    unrouted: np.ndarray  # transfer indexes with no usable path

    def __len__(self) -> int:
        return len(self.transfer)


def failover_gpu(net: Net) -> np.ndarray:
    """Per GPU, the GPU of its server whose port 1 it sends through: itself when that works, else the
    next local index (+1, +2, ...) with a working port 1; -1 when none of its server's ports work."""
    n, G = net.n_gpus, net.gpus_per_server
    ok = net.port_alive()[:, 0]
    g = np.arange(n)
    out = np.where(ok, g, -1)
    base = net.server_of * G
    for step in range(1, G):
        cand = base + (g - base + step) % G
        cand_ok = (cand < n) & (net.server_of[np.minimum(cand, n - 1)] == net.server_of) & ok[np.minimum(cand, n - 1)]
        out = np.where((out < 0) & cand_ok, cand, out)
    return out


def _single_port(net: Net, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source NIC GPU, destination NIC GPU, ok) for one-port designs (failover and PXN)."""
    n, G = net.n_gpus, net.gpus_per_server
    fo = failover_gpu(net)
    dst_nic = fo[b]
    ok = dst_nic >= 0
    if not net.pxn:
        src_nic = fo[a]
        return src_nic, dst_nic, ok & (src_nic >= 0)
    rail = np.maximum(dst_nic, 0) % G
    relay = net.server_of[a] * G + rail
    relay_ok = relay < n
    src_nic = np.where(relay_ok, fo[np.minimum(relay, n - 1)], -1)
    if net.rail_match:  # the source's rail NIC failed over to another rail: meet it on the destination's server
        moved = (src_nic >= 0) & (src_nic % G != rail)
        alt = net.server_of[b] * G + np.maximum(src_nic, 0) % G
        alt_ok = moved & (alt < n)
        alive0 = net.port_alive()[:, 0]
        alt_ok[alt_ok] &= alive0[alt[alt_ok]]
        dst_nic = np.where(alt_ok, alt, dst_nic)
        ok &= ~moved | alt_ok
    return src_nic, dst_nic, ok & (src_nic >= 0)


def _gpu_at(net: Net) -> np.ndarray:
    """(servers, rails) -> the GPU at that server and local index, -1 where the net has none (an island of a
    migration stage holds some GPUs of a server only)."""
    out = np.full((len(net.server_names), max(net.gpus_per_server, int(net.local_of.max()) + 1)), -1, np.int64)
    out[net.server_of, net.local_of] = np.arange(net.n_gpus)
    return out


def _pxn_ends(net: Net, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source NIC GPU, destination NIC GPU, ok) for a two-port design with PXN (a ROFT plan): a GPU
    whose ports are all dead fails over to the next GPU of its server (local index + 1, + 2, ...)
    with a working port; the source sends from the GPU of its server on the destination NIC GPU's
    rail (looked up by server and local index), from its own GPU when its server has none there."""
    at = _gpu_at(net)
    R = at.shape[1]
    alive = net.port_alive().any(axis=1)
    g = np.arange(net.n_gpus)
    fo = np.where(alive, g, -1)
    for step in range(1, R):
        cand = at[net.server_of, (net.local_of + step) % R]
        fo = np.where((fo < 0) & (cand >= 0) & alive[np.maximum(cand, 0)], cand, fo)
    dst_nic = fo[b]
    relay = at[net.server_of[a], net.local_of[np.maximum(dst_nic, 0)]]
    src_nic = fo[np.where(relay >= 0, relay, a)]
    return src_nic, dst_nic, (src_nic >= 0) & (dst_nic >= 0)


def build_subflows(net: Net, tr: Transfers, ecmp: str = "split", rng: np.random.Generator | None = None) -> SubFlows:
    """Sub-flows of ``tr`` on ``net`` (see module doc); ``ecmp``: "split" (expected load) or "hash"
    (one path per sub-flow, drawn with ``rng``)."""
    router = Router(net)
    a, b = tr.src.astype(np.int64), tr.dst.astype(np.int64)
    same = net.server_of[a] == net.server_of[b]
    width = 6 if net.port_switch.shape[1] == 1 or net.pxn else 2
    parts: list[tuple] = []  # (transfer idx, weight, links (k, width), key or -1)
    idx = np.flatnonzero(same)
    pad = np.full((len(idx), width - 2), -1, np.int64)
    parts.append((idx, np.ones(len(idx)), np.column_stack([net.nv_up[a[idx]], net.nv_down[b[idx]], pad]), np.full(len(idx), -1)))
    idx = np.flatnonzero(~same)
    check = RouteSet()
    if net.port_switch.shape[1] == 1:
        src_nic, dst_nic, ok = _single_port(net, a[idx], b[idx])
        sn, dn = np.maximum(src_nic, 0), np.maximum(dst_nic, 0)
        key = router.keys(net.port_switch[sn, 0], dn, np.zeros(len(dn), np.int64))
        uk, inv = np.unique(key, return_inverse=True)
        ok &= router.split(uk, check)[inv.ravel()] != -2
        ai, bi = a[idx], b[idx]
        links = np.column_stack([np.where(sn != ai, net.nv_up[ai], -1), np.where(sn != ai, net.nv_down[sn], -1), net.port_up[sn, 0],
                                 net.port_down[dn, 0], np.where(dn != bi, net.nv_up[dn], -1), np.where(dn != bi, net.nv_down[bi], -1)])
        parts.append((idx[ok], np.ones(int(ok.sum())), links[ok], key[ok]))
        unrouted = idx[~ok]
    elif net.pxn:
        ai, bi = a[idx], b[idx]
        sn, dn, ok = _pxn_ends(net, ai, bi)
        legs = np.column_stack([np.where(sn != ai, net.nv_up[ai], -1), np.where(sn != ai, net.nv_down[np.maximum(sn, 0)], -1),
                                np.where(dn != bi, net.nv_up[np.maximum(dn, 0)], -1), np.where(dn != bi, net.nv_down[bi], -1)])
        parts_two, unrouted = _two_port(net, router, check, sn[ok], dn[ok], idx[ok], legs[ok])
        parts += parts_two
        unrouted = np.concatenate([unrouted, idx[~ok]])
    else:
        parts_two, unrouted = _two_port(net, router, check, a[idx], b[idx], idx)
        parts += parts_two
    t_idx = np.concatenate([p[0] for p in parts])
    weight = np.concatenate([p[1] for p in parts])
    links = np.concatenate([p[2] for p in parts]).astype(np.int64)
    keys = np.concatenate([p[3] for p in parts]).astype(np.int64)
    order = np.argsort(t_idx, kind="stable")
    t_idx, weight, links, keys = t_idx[order], weight[order], links[order], keys[order]
    routes = RouteSet()
    route = np.full(len(keys), -1, np.int64)
    net_part = keys >= 0
    if ecmp == "hash":
        route[net_part] = router.hashed(keys[net_part], rng if rng is not None else np.random.default_rng(0), routes)
    else:
        uk, inv = np.unique(keys[net_part], return_inverse=True)
        route[net_part] = router.split(uk, routes)[inv.ravel()]
    if (route == -2).any():  # cannot happen: routability was checked on the same keys
        raise AssertionError("a sub-flow lost its route between the check and the assignment")
    gbit = tr.nbytes[t_idx] * weight * 8 / 1e9
    return SubFlows(transfer=t_idx, gbit=gbit, start=tr.start[t_idx], links=links, route=route, routes=routes.freeze(),
                    unrouted=np.sort(unrouted))


def _two_port(net: Net, router: Router, check: RouteSet, a: np.ndarray, b: np.ndarray, idx: np.ndarray,
              legs: np.ndarray | None = None):
    """Sub-flow parts of two-port designs: primary port pairs that work, else secondary ones. ``a``,
    ``b``: the GPUs whose ports send and receive; ``legs`` (PXN): per transfer the NVLink links
    [to the sending GPU (2), from the receiving GPU (2)], -1 where none."""
    alive = net.port_alive()
    parts = []
    left = np.ones(len(a), bool)
    for pairs in (net.primary, net.secondary):
        if not pairs or not left.any():
            continue
        oks, keys = [], []
        for pa, pb in pairs:
            pav, pbv = np.full(len(a), pa), np.full(len(a), pb)
            key = router.keys(net.port_switch[a, pa], b, pbv)
            ok = left & alive[a, pa] & alive[b, pb]
            uk, inv = np.unique(key[ok], return_inverse=True)
            ok[ok] = router.split(uk, check)[inv.ravel()] != -2
            oks.append(ok)
            keys.append((key, pav, pbv))
        count = np.sum(oks, axis=0)
        for ok, (key, pav, pbv) in zip(oks, keys):
            sel = np.flatnonzero(ok)
            links = np.column_stack([net.port_up[a[sel], pav[sel]], net.port_down[b[sel], pbv[sel]]])
            if legs is not None:
                links = np.column_stack([legs[sel, :2], links, legs[sel, 2:]])
            parts.append((idx[sel], 1.0 / count[sel], links, key[sel]))
        left &= count == 0
    return parts, idx[left]


def aggregated_all_to_all(net: Net, nbytes: float) -> tuple[np.ndarray, SubFlows, list[str]]:
    """All-to-all aggregated by switch pair (docs/traffic.md): one sub-flow per (source port's
    switch, destination route key) and port pair of the policy, standing for its k GPU pairs
    (same-server pairs excluded: NVLink). Its rate is one GPU pair's share; it weighs k on each of
    its links (so max-min is per GPU pair, not per aggregate). The host part is two bundle links
    per switch (up: the sum of its GPU ports' up links; down: of their down links), appended after
    the net's links. Exact for the healthy uniform all-to-all in designs without PXN, where every
    port of a switch carries the same load. Returns (capacities, sub-flows, bundle labels)."""
    router = Router(net)
    n_sw, L, n = net.n_switches, net.n_links, net.n_gpus
    g = np.arange(n)
    up_cap, down_cap = np.zeros(n_sw), np.zeros(n_sw)
    for p in range(net.port_switch.shape[1]):
        ok = net.port_switch[:, p] >= 0
        np.add.at(up_cap, net.port_switch[ok, p], net.cap[net.port_up[ok, p]])
        np.add.at(down_cap, net.port_switch[ok, p], net.cap[net.port_down[ok, p]])
    cap = np.concatenate([net.cap, up_cap, down_cap])
    # every (a, b) of a server: the pairs that use NVLink (a != b) or none (a = b)
    order = np.argsort(net.server_of, kind="stable")
    bounds = np.searchsorted(net.server_of[order], np.arange(int(net.server_of.max()) + 2))
    sizes = np.diff(bounds)
    rep = np.repeat(np.arange(len(sizes)), sizes * sizes)
    offs = np.arange(len(rep)) - np.repeat(np.cumsum(sizes * sizes) - sizes * sizes, sizes * sizes)
    ia, ib = order[bounds[rep] + offs // sizes[rep]], order[bounds[rep] + offs % sizes[rep]]
    keys_all, weights = [], []
    for pa, pb in net.primary:
        s = net.port_switch[:, pa]
        d = router.keys(np.zeros(n, np.int64), g, np.full(n, pb))  # destination codes
        pairs = np.outer(np.bincount(s, minlength=n_sw), np.bincount(d, minlength=router.n_dst)).ravel().astype(float)
        np.subtract.at(pairs, s[ia] * router.n_dst + d[ib], 1.0)
        keys = np.flatnonzero(pairs > 0)
        keys_all.append(keys)
        weights.append(pairs[keys])
    keys, w = np.concatenate(keys_all), np.concatenate(weights)
    A = len(keys)
    s = keys // router.n_dst
    _, t, _ = router._decode(keys)
    fabric = RouteSet()
    rid = router.split(keys, fabric)
    if (rid == -2).any():
        raise ValueError("a switch pair of the aggregated all-to-all has no route")
    fabric.freeze()
    agg_of_route = np.full(fabric.n + 1, -1, np.int64)
    agg_of_route[rid[rid >= 0]] = np.flatnonzero(rid >= 0)
    agg = agg_of_route[fabric.row]
    routes = RouteSet()
    rows = np.concatenate([np.arange(A), np.arange(A), agg])
    order = np.argsort(rows, kind="stable")
    routes.row = rows[order]
    routes.link = np.concatenate([L + s, L + n_sw + t, fabric.link])[order]
    routes.frac = np.concatenate([w, w, w[agg] * fabric.frac])[order]
    routes.n = A
    routes.ptr = np.searchsorted(routes.row, np.arange(A + 1))
    share = nbytes / len(net.primary) * 8 / 1e9
    sf = SubFlows(transfer=np.arange(A), gbit=np.full(A, share), start=np.zeros(A), links=np.full((A, 1), -1, np.int64),
                  route=np.arange(A), routes=routes, unrouted=np.zeros(0, np.int64))
    labels = [f"{name} host ports (up)" for name in net.switch_names] + [f"{name} host ports (down)" for name in net.switch_names]
    return cap, sf, labels
