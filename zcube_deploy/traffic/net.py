"""Designs as graphs: directed links with capacities, GPU NIC ports, an NVLink domain per server.

Nodes are numbered switches first (``0 .. n_switches-1``), then GPUs, then one NVLink switch per
server. Every cable is two directed links (full duplex), each with the cable's speed; a GPU port is
an up link (GPU -> switch) and a down link (switch -> GPU); each GPU has an NVLink up and down link
to its server's NVLink switch (``nvlink_gbps``, a parameter). Links are integer ids into numpy
arrays; names are made only for the links a report shows.

Builders: :func:`zcube_from_plan` (the plan's switches, cables, ports and, in mode static, the
switches' pinned forwarding tables through analysis/fabric.py), :func:`roft_from_plan` (a ROFT plan's
leaves, spines, cables and NIC ports as built), and for the same GPUs, servers and
switch capacity the designs `zcube compare` sizes (analysis/designs.py): :func:`roft` (two-tier),
:func:`hpn` (dual-plane), :func:`rail_only`, :func:`clos` (non-blocking, one port per GPU, not
rail-optimised). Rules are the comparison's; a design whose size needs a third tier is refused
(:class:`NotModelled`), never approximated.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from math import ceil

import numpy as np

from zcube_deploy.analysis.fabric import zcube_from_plan as fabric_of
from zcube_deploy.catalog import parse_speed
from zcube_deploy.errors import PlanFileError
from zcube_deploy.plan.roles import port_map_for

KIND_UP, KIND_DOWN, KIND_FABRIC, KIND_NV_UP, KIND_NV_DOWN = range(5)
KIND_NAMES = ("nic-up", "nic-down", "fabric", "nvlink-up", "nvlink-down")
DESIGN_KEYS = ("zcube", "roft", "hpn", "rail-only", "clos")
DESIGN_LABELS = {"zcube": "ZCube", "roft": "ROFT", "hpn": "HPN dual-plane", "rail-only": "Rail-only", "clos": "non-blocking Clos"}
DEFAULT_NVLINK_GBPS = 3600.0  # 450 GB/s per direction and GPU (NVLink 4, H100/H200 class): docs/traffic.md


class NotModelled(Exception):
    """A design this size has no model here (e.g. ROFT needing a third tier)."""


@dataclass
class Net:
    design: str  # one of DESIGN_KEYS
    gpus_per_server: int
    server_of: np.ndarray  # (N,) server index of each GPU
    switch_names: list[str]
    cap: np.ndarray  # (L,) Gbit/s per directed link
    kind: np.ndarray  # (L,) KIND_*
    end_a: np.ndarray  # (L,) node the link leaves
    end_b: np.ndarray  # (L,) node it enters
    cable: np.ndarray  # (L,) index into cable_names, -1 for NVLink
    cable_names: list[str]
    port_switch: np.ndarray  # (N, P) switch of each NIC port, -1 when the GPU has fewer ports
    port_up: np.ndarray  # (N, P) link GPU -> switch
    port_down: np.ndarray  # (N, P) link switch -> GPU
    nv_up: np.ndarray  # (N,) link GPU -> NVLink switch
    nv_down: np.ndarray
    primary: tuple  # port pairs (source port, destination port) a GPU pair's traffic is split over, evenly
    secondary: tuple  # port pairs used only when no primary pair is usable
    pxn: bool  # single-port rail designs: cross-rail traffic first crosses NVLink to the GPU on the destination's rail
    rail_match: bool  # no path between rails (Rail-only): a PXN relay must sit on the destination NIC's rail
    gpu_names: list[str]
    server_names: list[str]
    routing: str  # "ecmp" (shortest paths over live switches, equal split per hop) or "table" (ZCube static)
    table: object = None  # routing "table": see routes.TableRoutes
    same_group_routes: bool = True  # routing "table": switches route within a group (same_group_fallback)
    as_built: bool = False  # the plan's own fabric (its switches and cables can be failed by name), not a sized design
    local_of: np.ndarray = None  # (N,) GPU index within its server (its rail); default: g % G (the sized designs)
    link_alive: np.ndarray = None
    switch_alive: np.ndarray = None
    failure: str | None = None
    notes: list[str] = field(default_factory=list)

    def __post_init__(self):
        if self.local_of is None:
            self.local_of = np.arange(len(self.server_of)) % self.gpus_per_server
        if self.link_alive is None:
            self.link_alive = np.ones(len(self.cap), bool)
        if self.switch_alive is None:
            self.switch_alive = np.ones(len(self.switch_names), bool)

    @property
    def n_gpus(self) -> int:
        return len(self.server_of)

    @property
    def n_switches(self) -> int:
        return len(self.switch_names)

    @property
    def n_links(self) -> int:
        return len(self.cap)

    @property
    def gpu_bandwidth_gbps(self) -> float:
        """What one GPU can send into the network: the sum of its NIC ports' speeds (GPU 0)."""
        ups = self.port_up[0][self.port_up[0] >= 0]
        return float(self.cap[ups].sum())

    def port_alive(self) -> np.ndarray:
        """(N, P): the port passes packets (its cable and its switch work)."""
        sw = np.maximum(self.port_switch, 0)
        ok = (self.port_switch >= 0) & self.switch_alive[sw]
        ok &= self.link_alive[np.maximum(self.port_up, 0)] & self.link_alive[np.maximum(self.port_down, 0)]
        return ok

    def usable(self) -> np.ndarray:
        """(L,) links that carry traffic: alive, and both ends alive when they are switches."""
        ok = self.link_alive.copy()
        for end in (self.end_a, self.end_b):
            is_sw = end < self.n_switches
            ok[is_sw] &= self.switch_alive[end[is_sw]]
        return ok

    def node_name(self, node: int) -> str:
        ns, n = self.n_switches, self.n_gpus
        if node < ns:
            return self.switch_names[node]
        if node < ns + n:
            return self.gpu_names[node - ns]
        return f"{self.server_names[node - ns - n]}/nvlink"

    def link_label(self, link: int) -> dict:
        """A link for a report: its endpoints, kind, cable and speed."""
        c = int(self.cable[link])
        return {"link": int(link), "from": self.node_name(int(self.end_a[link])), "to": self.node_name(int(self.end_b[link])),
                "kind": KIND_NAMES[int(self.kind[link])], "cable": self.cable_names[c] if c >= 0 else None,
                "gbps": float(self.cap[link])}

    def with_failure(self, label: str, cables=(), switches=()) -> "Net":
        """A copy with the given cable indexes and switch indexes failed."""
        link_alive = self.link_alive.copy()
        if len(cables):
            link_alive[np.isin(self.cable, np.asarray(list(cables), dtype=np.int64))] = False
        switch_alive = self.switch_alive.copy()
        switch_alive[list(switches)] = False
        return dataclasses.replace(self, link_alive=link_alive, switch_alive=switch_alive, failure=label, notes=list(self.notes))


class _Builder:
    """Accumulates switches, links and ports; GPU nodes are encoded -1-g until :meth:`finish`."""

    def __init__(self, n_gpus: int, gpus_per_server: int, ports: int):
        self.n, self.G = n_gpus, gpus_per_server
        self.switches: list[str] = []
        self.cap: list[float] = []
        self.kind: list[int] = []
        self.a: list[int] = []
        self.b: list[int] = []
        self.cable: list[int] = []
        self.cable_names: list[str] = []
        self.port_switch = np.full((n_gpus, ports), -1, np.int64)
        self.port_up = np.full((n_gpus, ports), -1, np.int64)
        self.port_down = np.full((n_gpus, ports), -1, np.int64)

    def switch(self, name: str) -> int:
        self.switches.append(name)
        return len(self.switches) - 1

    def _link(self, a: int, b: int, gbps: float, kind: int, cable: int) -> int:
        self.a.append(a)
        self.b.append(b)
        self.cap.append(gbps)
        self.kind.append(kind)
        self.cable.append(cable)
        return len(self.cap) - 1

    def cable_pair(self, u: int, v: int, gbps: float, name: str) -> tuple[int, int]:
        self.cable_names.append(name)
        c = len(self.cable_names) - 1
        return self._link(u, v, gbps, KIND_FABRIC, c), self._link(v, u, gbps, KIND_FABRIC, c)

    def attach(self, g: int, port: int, sw: int, gbps: float, name: str) -> None:
        self.cable_names.append(name)
        c = len(self.cable_names) - 1
        self.port_switch[g, port] = sw
        self.port_up[g, port] = self._link(-1 - g, sw, gbps, KIND_UP, c)
        self.port_down[g, port] = self._link(sw, -1 - g, gbps, KIND_DOWN, c)

    def cable_pairs(self, u: np.ndarray, v: np.ndarray, gbps: float, names: list[str]) -> np.ndarray:
        """Many cables at once: (C, 2) link ids [u -> v, v -> u]."""
        c = len(self.cable_names) + np.arange(len(u))
        first = len(self.cap) + 2 * np.arange(len(u))
        self.cable_names += list(names)
        self._bulk(np.column_stack([u, v]).ravel(), np.column_stack([v, u]).ravel(), gbps, KIND_FABRIC, np.repeat(c, 2))
        return np.column_stack([first, first + 1])

    def attach_many(self, g: np.ndarray, port: int, sw: np.ndarray, gbps: float, names: list[str]) -> None:
        """Port ``port`` of GPUs ``g`` to switches ``sw`` (one cable each, named ``names``)."""
        c = len(self.cable_names) + np.arange(len(g))
        first = len(self.cap) + 2 * np.arange(len(g))
        self.cable_names += list(names)
        self.port_switch[g, port] = sw
        self.port_up[g, port] = first
        self.port_down[g, port] = first + 1
        self._bulk(np.column_stack([-1 - g, sw]).ravel(), np.column_stack([sw, -1 - g]).ravel(), gbps,
                   np.tile([KIND_UP, KIND_DOWN], len(g)), np.repeat(c, 2))

    def _bulk(self, a, b, gbps, kind, cable) -> None:
        n = len(a)
        self.a += np.asarray(a).tolist()
        self.b += np.asarray(b).tolist()
        self.cap += [float(gbps)] * n
        self.kind += np.broadcast_to(kind, n).tolist()
        self.cable += np.asarray(cable).tolist()

    def finish(self, design: str, server_of: np.ndarray, nvlink_gbps: float, gpu_names: list[str], server_names: list[str],
               **policy) -> Net:
        ns, n = len(self.switches), self.n
        g = np.arange(n)
        nv_node = -1 - n - server_of
        nv_up = len(self.cap) + 2 * g
        self._bulk(np.column_stack([-1 - g, nv_node]).ravel(), np.column_stack([nv_node, -1 - g]).ravel(), nvlink_gbps,
                   np.tile([KIND_NV_UP, KIND_NV_DOWN], n), np.full(2 * n, -1))
        a, b = np.array(self.a, np.int64), np.array(self.b, np.int64)
        a = np.where(a < 0, ns - 1 - a, a)
        b = np.where(b < 0, ns - 1 - b, b)
        return Net(design=design, gpus_per_server=self.G, server_of=server_of, switch_names=self.switches,
                   cap=np.array(self.cap, float), kind=np.array(self.kind, np.int8), end_a=a, end_b=b,
                   cable=np.array(self.cable, np.int64), cable_names=self.cable_names, port_switch=self.port_switch,
                   port_up=self.port_up, port_down=self.port_down, nv_up=nv_up, nv_down=nv_up + 1,
                   gpu_names=gpu_names, server_names=server_names, **policy)


def _names(n: int, G: int) -> tuple[np.ndarray, list[str], list[str]]:
    servers = ceil(n / G)
    server_names = [f"server{s + 1:04d}" for s in range(servers)]
    return np.arange(n) // G, [f"{server_names[g // G]}/gpu{g % G}" for g in range(n)], server_names


def _leaf_spine(bld: _Builder, prefix: str, members: list[list[tuple[int, int]]], host_gbps: float, up: int, up_gbps: float,
                spine_ports: int) -> None:
    """A two-tier Clos: leaf i takes the (GPU, port) of ``members[i]``; each leaf's ``up`` uplinks go
    round-robin over ceil(leaves * up / spine_ports) spines (none for one leaf), as designs.py sizes it."""
    leaves = [bld.switch(f"{prefix}L{i + 1:03d}") for i in range(len(members))]
    n_sp = 0 if len(leaves) <= 1 else ceil(len(leaves) * up / spine_ports)
    spines = [bld.switch(f"{prefix}S{i + 1:03d}") for i in range(n_sp)]
    for i, leaf in enumerate(leaves):
        for g, port in members[i]:
            bld.attach(g, port, leaf, host_gbps, f"{bld.switches[leaf]}:gpu{g}p{port + 1}")
        for u in range(up if n_sp else 0):
            sp = spines[(i + u) % n_sp]
            bld.cable_pair(leaf, sp, up_gbps, f"{bld.switches[leaf]}~{bld.switches[sp]}#{u // n_sp + 1}")


def roft(n: int, G: int, k: int, b: float, nvlink_gbps: float = DEFAULT_NVLINK_GBPS) -> Net:
    """Rail-optimised fat tree, one port at 2b per GPU: a pod is k/2 servers, leaf r of a pod takes
    GPU r of each of its servers; two tiers while leaves <= k (designs.roft), else NotModelled."""
    servers = ceil(n / G)
    pods = ceil(servers / (k // 2))
    if G * pods > k:
        raise NotModelled(f"ROFT for {n:,} GPUs needs a third tier ({G * pods} leaves > k = {k}); only two tiers are modelled")
    server_of, gpu_names, server_names = _names(n, G)
    bld = _Builder(n, G, 1)
    members = [[(g, 0) for g in range(n) if server_of[g] // (k // 2) == pod and g % G == r] for pod in range(pods) for r in range(G)]
    _leaf_spine(bld, "ROFT-", members, 2 * b, k // 2, 2 * b, k)
    return bld.finish("roft", server_of, nvlink_gbps, gpu_names, server_names, primary=((0, 0),), secondary=(), pxn=True,
                      rail_match=False, routing="ecmp")


def hpn(n: int, G: int, h: int, k: int, b: float, nvlink_gbps: float = DEFAULT_NVLINK_GBPS) -> Net:
    """HPN-style dual-plane two-tier Clos: NIC port i to plane i; per plane leaves of h/2 ports at b
    with k/2 uplinks at 2b, spines of k ports (designs.hpn)."""
    if n > k * (h // 2):
        raise NotModelled(f"HPN dual-plane for {n:,} GPUs needs more than two tiers")
    server_of, gpu_names, server_names = _names(n, G)
    bld = _Builder(n, G, 2)
    down = h // 2
    for plane in (0, 1):
        members = [[(g, plane) for g in range(i * down, min(n, (i + 1) * down))] for i in range(ceil(n / down))]
        _leaf_spine(bld, f"HPN-P{plane + 1}-", members, b, k // 2, 2 * b, k)
    return bld.finish("hpn", server_of, nvlink_gbps, gpu_names, server_names, primary=((0, 0), (1, 1)), secondary=(), pxn=False,
                      rail_match=False, routing="ecmp")


def rail_only(n: int, G: int, k: int, b: float, nvlink_gbps: float = DEFAULT_NVLINK_GBPS) -> Net:
    """One independent two-tier Clos per rail (GPU r of every server), one port at 2b per GPU; no
    cross-rail fabric, so cross-rail traffic crosses NVLink first (designs.rail_only)."""
    servers = ceil(n / G)
    if n > G * k * (k // 2):
        raise NotModelled(f"Rail-only for {n:,} GPUs needs more than two tiers per rail")
    server_of, gpu_names, server_names = _names(n, G)
    bld = _Builder(n, G, 1)
    per_leaf = k // 2
    for r in range(G):
        members = [[(s * G + r, 0) for s in range(i * per_leaf, min(servers, (i + 1) * per_leaf)) if s * G + r < n]
                   for i in range(ceil(servers / per_leaf))]
        _leaf_spine(bld, f"RAIL{r}-", members, 2 * b, k // 2, 2 * b, k)
    return bld.finish("rail-only", server_of, nvlink_gbps, gpu_names, server_names, primary=((0, 0),), secondary=(), pxn=True,
                      rail_match=True, routing="ecmp")


def clos(n: int, G: int, k: int, b: float, nvlink_gbps: float = DEFAULT_NVLINK_GBPS) -> Net:
    """A non-blocking two-tier Clos, one port at 2b per GPU (consecutive GPUs, whole servers, per
    leaf of k/2 down and k/2 up ports), no rail optimisation and no PXN. One leaf: one switch."""
    if n > k * (k // 2):
        raise NotModelled(f"a two-tier Clos holds at most k*k/2 = {k * (k // 2):,} GPUs")
    server_of, gpu_names, server_names = _names(n, G)
    bld = _Builder(n, G, 1)
    per_leaf = k // 2
    members = [[(g, 0) for g in range(i * per_leaf, min(n, (i + 1) * per_leaf))] for i in range(ceil(n / per_leaf))]
    _leaf_spine(bld, "CLOS-", members, 2 * b, k // 2, 2 * b, k)
    return bld.finish("clos", server_of, nvlink_gbps, gpu_names, server_names, primary=((0, 0),), secondary=(), pxn=False,
                      rail_match=False, routing="ecmp")


def zcube_from_plan(plan: dict, nvlink_gbps: float = DEFAULT_NVLINK_GBPS) -> Net:
    """The plan's ZCube: its switches, fabric cables (speed: the NIC port speed, zcube.md), both NIC
    ports of every installed GPU and, in mode static, the switches' pinned routes (analysis/fabric.py,
    the tables `analyze` reads). Port 1 is on the odd group, port 2 on the even group; a GPU pair
    uses both cross-group port pairs (1 -> 2 and 2 -> 1), same-group pairs only when neither works."""
    from zcube_deploy.traffic.routes import TableRoutes  # a cycle: routes.py builds on this module's Net

    fab, rt = fabric_of(plan)
    b = float(parse_speed(plan["models"]["nic"]["speed"]))
    G = int(plan["sizing"]["gpus_per_server"])
    servers = [name.rsplit("/", 1)[0] for name in fab.gpu_names]
    server_names = list(dict.fromkeys(servers))
    sidx = {s: i for i, s in enumerate(server_names)}
    server_of = np.array([sidx[s] for s in servers], np.int64)
    cables = {}
    for srv in plan["servers"]:
        for nic in srv.get("nics", ()):
            cables[(srv["name"], nic["gpu"], nic["nic_port"])] = nic["cable"]
    bld = _Builder(fab.n_gpus, G, 2)
    bld.switches = list(fab.switch_names)
    cable_dir = bld.cable_pairs(fab.link_u, fab.link_v, b, fab.link_ids)
    keys = [name.rsplit("/gpu", 1) for name in fab.gpu_names]
    g = np.arange(fab.n_gpus)
    for port in (0, 1):
        bld.attach_many(g, port, fab.port_switch[:, port], b, [cables[(server, int(gpu), port + 1)] for server, gpu in keys])
    mode = (plan.get("routing") or {}).get("mode", "static")
    same_group = bool((plan.get("routing") or {}).get("same_group_fallback", plan.get("settings", {}).get("same_group_fallback")))
    table = TableRoutes(rt, fab.link_u, cable_dir, len(fab.switch_names)) if mode == "static" else None
    net = bld.finish("zcube", server_of, nvlink_gbps, list(fab.gpu_names), server_names, primary=((0, 1), (1, 0)),
                     secondary=((0, 0), (1, 1)), pxn=False, rail_match=False, routing="table" if table else "ecmp",
                     table=table, same_group_routes=same_group or mode != "static", as_built=True,
                     local_of=np.array([int(gpu) for _, gpu in keys], np.int64))
    net.notes.append(f"routing mode {mode}" + (", same-group fallback" if mode == "static" and same_group else ""))
    return net


def roft_from_plan(plan: dict, nvlink_gbps: float = DEFAULT_NVLINK_GBPS) -> Net:
    """A ROFT plan as built: its leaves and spines, every fabric cable (at the leaf port map's fabric
    speed), every cabled NIC port of every server (at the host ports' speed) and ECMP over shortest
    paths (mode bgp). GPUs in plan order (server, then GPU index); a GPU's rail is its index in its
    server (``local_of``), so a server with some GPUs only (an island of a migration stage) keeps
    its GPUs' rails. Policy: port p to port p (p = 1, 2; on two planes the only pairs that route),
    the crossed pairs when neither works; PXN: the source first crosses NVLink to the GPU of its
    server on the destination's rail (flows._pxn_ends)."""
    leaf_map = port_map_for(plan, "leaf")
    host_b = float(parse_speed(leaf_map["speed"]))
    fabric_b = float(parse_speed(leaf_map.get("fabric_speed") or leaf_map["speed"]))
    G = int(plan["models"]["server"]["gpus"])  # a stage's ROFT island has no ROFT sizing of its own
    names = [s["name"] for s in plan["switches"]]
    idx = {n: i for i, n in enumerate(names)}
    ports: dict[tuple[str, int], dict[int, dict]] = {}
    for srv in plan["servers"]:
        for nic in srv.get("nics") or ():
            ports.setdefault((srv["name"], int(nic["gpu"])), {})[int(nic["nic_port"])] = nic
    order = {srv["name"]: i for i, srv in enumerate(plan["servers"])}
    keys = sorted(ports, key=lambda k: (order[k[0]], k[1]))
    if not keys:
        raise PlanFileError("the ROFT plan has no cabled NIC port: no GPU to send traffic")
    server_names = list(dict.fromkeys(k[0] for k in keys))
    sidx = {s: i for i, s in enumerate(server_names)}
    server_of = np.array([sidx[k[0]] for k in keys], np.int64)
    bld = _Builder(len(keys), G, 2)
    bld.switches = list(names)
    for g, key in enumerate(keys):
        for port, nic in sorted(ports[key].items()):
            if port in (1, 2):
                bld.attach(g, port - 1, idx[nic["switch"]], host_b, nic["cable"])
    fabric = [c for c in plan["cables"] if c["kind"] == "fabric"]
    bld.cable_pairs(np.array([idx[c["a"]["device"]] for c in fabric], np.int64),
                    np.array([idx[c["b"]["device"]] for c in fabric], np.int64), fabric_b, [c["id"] for c in fabric])
    net = bld.finish("roft", server_of, nvlink_gbps, [f"{s}/gpu{i}" for s, i in keys], server_names,
                     primary=((0, 0), (1, 1)), secondary=((0, 1), (1, 0)), pxn=True, rail_match=False, routing="ecmp", as_built=True,
                     local_of=np.array([k[1] for k in keys], np.int64))
    leaves = sum(1 for s in plan["switches"] if s["group"] == "leaf")
    net.notes.append(f"the plan's ROFT as built: {leaves} leaves, {len(names) - leaves} spines, {len(fabric):,} fabric cables "
                     f"at {leaf_map.get('fabric_speed') or leaf_map['speed']}, ECMP (mode bgp)")
    return net


def build_design(key: str, n: int, G: int, capacity_gbps: float, b: float, nvlink_gbps: float = DEFAULT_NVLINK_GBPS) -> Net:
    """One of the comparison designs for ``n`` GPUs, ``G`` per server, switches of ``capacity_gbps``
    and NIC ports of ``b`` (h = C/b ports at b, k = C/2b at 2b, as designs.Params)."""
    h, k = int(capacity_gbps // b), int(capacity_gbps // (2 * b))
    if key == "roft":
        return roft(n, G, k, b, nvlink_gbps)
    if key == "hpn":
        return hpn(n, G, h, k, b, nvlink_gbps)
    if key == "rail-only":
        return rail_only(n, G, k, b, nvlink_gbps)
    if key == "clos":
        return clos(n, G, k, b, nvlink_gbps)
    raise ValueError(f"unknown design {key!r}")
