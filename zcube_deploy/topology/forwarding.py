"""Forwarding state: what each device of a plan forwards where, whatever the routing kind.

- :func:`switch_tables` is the one interface to a plan's switch forwarding state: per switch, the
  entries ``(network, prefix len, next hops, source)`` that its routing section's ``mode`` yields
  (mode static: the configured static routes; mode bgp: the converged best paths of topology/bestpaths.py).
  Consumers ask it instead of reading ``switches[].routes`` (a mode-static detail) themselves.
- :func:`host_tables` is the same for the NIC ports' policy tables (``servers[].nics[].routes``).
- :func:`reconverges` is the one difference of failure behaviour between routing kinds that the
  failure analysis needs: whether the switches recompute their entries after a failure (bgp) or
  keep them as configured (static: a failed link withdraws the routes over it, nothing replaces
  them). :func:`pinned_tables` gives the entries that stay as configured (none in a reconverging
  kind). An entry's ``source`` says what it is (``SOURCE_FALLBACK``: a same-group fallback route).
- :class:`Network` is a small forwarding model (routers with connected subnets and routes, hosts
  with routes) that walks packets. It is built twice, from two independent sources: by the
  planner's checks (from the plan, :func:`network_from_plan`) and by the routing proof (from the
  rendered switch configs and netplan files alone).
"""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from zcube_deploy.ipv4 import MASKS, aton, ntoa
from zcube_deploy.topology.bestpaths import best_routes, plan_sessions, shared_asns

ROUTING_KINDS = ("static", "bgp")
BGP = ROUTING_KINDS[1]  # the eBGP routing mode, by name (a verify module compares a switch's mode with it)
RECONVERGING_KINDS = frozenset({"bgp"})  # kinds whose switches recompute their entries after a failure
SOURCE_STATIC, SOURCE_FALLBACK, SOURCE_BGP = "static", "static-fallback", "bgp"
# the plan fields the functions below read (projections of plan.json for consumers that load only what they need)
SWITCH_FIELDS = frozenset({"name", "routes", "interfaces", "host_block", "loopback", "routing_mode"})
NIC_FIELDS = frozenset({"port", "routes"})


class Entry(NamedTuple):
    """One forwarding entry: addresses as integers; several next hops are ECMP (mode bgp)."""

    network: int
    prefix_len: int
    next_hops: tuple[int, ...]
    source: str  # SOURCE_STATIC, SOURCE_FALLBACK or SOURCE_BGP

    @property
    def prefix(self) -> str:
        return f"{ntoa(self.network)}/{self.prefix_len}"



_new_entry = tuple.__new__  # Entry rows are built by the hundred thousand at 64k GPUs: skip the Python-level __new__


def switch_tables(routing: dict, switches: list[dict], max_as_path: int | None = None) -> dict[str, list[Entry]]:
    """Per switch name, its forwarding entries under the plan's routing section.

    Reads ``routing["mode"]`` and, of each switch, ``name`` and ``routes`` (mode static) or
    ``name``, ``interfaces``, ``host_block`` and ``loopback`` (mode bgp); a switch's own ``routing_mode``
    overrides the plan's (a plan mixing both: each switch by its own). ``max_as_path`` limits
    a computed kind (mode bgp) to destinations within that many switch hops (1: the direct paths);
    a configured table (mode static) is returned whole, every route of it being a direct path.
    """
    modes = {switch_mode(routing, sw) for sw in switches} or {routing["mode"]}
    unknown = modes - set(ROUTING_KINDS)
    if unknown:
        raise ValueError(f"routing mode {sorted(unknown)[0]!r} has no forwarding model (known: {', '.join(ROUTING_KINDS)})")
    out: dict[str, list[Entry]] = {}
    bgp = [sw for sw in switches if switch_mode(routing, sw) == "bgp"] if len(modes) > 1 else (switches if modes == {"bgp"} else [])
    if bgp:  # the eBGP switches' best paths among themselves (a migration stage's eBGP island)
        best = best_routes(*plan_sessions(bgp), max_as_path=max_as_path, shared_asn=shared_asns(bgp))
        out = {name: [Entry(n, plen, tuple(hops), "bgp") for n, plen, hops in rows] for name, rows in best.items()}
    prefixes: dict[str, tuple[int, int]] = {}  # the same destinations and next hops recur on every switch: read each once
    hops: dict[str, tuple[int]] = {}
    for sw in switches if "static" in modes else ():
        if len(modes) > 1 and switch_mode(routing, sw) != "static":
            continue
        rows = out[sw["name"]] = []
        for rt in sw["routes"]:
            dest = prefixes.get(rt["prefix"])
            if dest is None:
                net, plen = rt["prefix"].split("/")
                dest = prefixes[rt["prefix"]] = (aton(net), int(plen))
            hop = hops.get(rt["next_hop"])
            if hop is None:
                hop = hops[rt["next_hop"]] = (aton(rt["next_hop"]),)
            rows.append(_new_entry(Entry, (*dest, hop, "static-fallback" if rt.get("fallback") else "static")))
    return out


def switch_mode(routing: dict, sw: dict) -> str:
    """A switch's routing mode: its own ``routing_mode`` (a migration stage mixes eBGP and static islands), else the plan's."""
    return sw.get("routing_mode") or routing["mode"]


def reconverges(routing: dict) -> bool:
    """The routing kind's failure behaviour: True when the switches recompute their forwarding
    entries after a failure (mode bgp: best paths over the surviving sessions), False when the
    entries stay as configured (mode static: a failed link withdraws the routes whose next hop it
    was, and nothing takes over except configured fallbacks)."""
    mode = routing["mode"]
    if mode not in ROUTING_KINDS:
        raise ValueError(f"routing mode {mode!r} has no forwarding model (known: {', '.join(ROUTING_KINDS)})")
    return mode in RECONVERGING_KINDS


def pinned_tables(routing: dict, switches: list[dict]) -> dict[str, list[Entry]]:
    """Per switch name, the entries that stay as configured through failures: in a kind that does
    not reconverge, every entry of :func:`switch_tables`; in one that does, none (its entries after
    a failure are not the healthy ones, and are not computed here)."""
    if reconverges(routing):
        return {sw["name"]: [] for sw in switches}
    return switch_tables(routing, switches)


def host_tables(servers_nics: dict[str, list[dict]]) -> dict[tuple[str, str], list[tuple[int, int, int, int, str]]]:
    """Per (server, NIC port): its policy table as (network, prefix len, gateway, metric, device),
    in plan order (device: the port the route leaves on, by default the NIC port itself)."""
    out = {}
    prefixes: dict[str, tuple[int, int]] = {}  # a destination is shared by the ports of a group and plane: read once
    gateways: dict[str, int] = {}  # a port's routes share one or two gateways
    for server, nics in servers_nics.items():
        for nic in nics:
            port = nic["port"]
            rows = out[(server, port)] = []
            for rt in nic.get("routes") or ():
                to, via = rt["to"], rt["via"]
                dest = prefixes.get(to)
                if dest is None:
                    net, plen = to.split("/")
                    dest = prefixes[to] = (aton(net), int(plen))
                gw = gateways.get(via)
                if gw is None:
                    gw = gateways[via] = aton(via)
                rows.append((dest[0], dest[1], gw, rt["metric"], rt.get("dev", port)))
    return out


def network_from_plan(routing: dict, switches: list[dict], nics: dict[str, list[dict]], max_as_path: int | None = None,
                      tables: dict[str, list[Entry]] | None = None, sources: set[tuple[str, str]] | None = None) -> "Network":
    """A :class:`Network` of the plan's switches and NIC ports (``nics``: server name -> NIC rows);
    ``tables``: the switches' entries when the caller already has them (else :func:`switch_tables`);
    ``sources``: when given, only these (server, port) get their policy tables (a walk reads the
    table of its source port alone; every port still owns its address)."""
    net = Network()
    if tables is None:
        tables = switch_tables(routing, switches, max_as_path)
    for sw in switches:
        routes = [(e[0], e[1], nh) for e in tables[sw["name"]] for nh in e[2]]
        net.add_switch(sw["name"], [(i["name"], aton(i["address"]), i["prefix_len"]) for i in sw["interfaces"]], routes)
    if sources is not None:
        hosts = host_tables({server: [nic for nic in entries if (server, nic["port"]) in sources] for server, entries in nics.items()})
    else:
        hosts = host_tables(nics)
    for server, entries in nics.items():
        for nic in entries:
            net.add_host_port(server, nic["port"], aton(nic["address"]), hosts.get((server, nic["port"]), []))
    return net


class Network:
    def __init__(self) -> None:
        self.owner: dict[int, str] = {}  # interface address -> device
        self.port_of: dict[int, tuple[str, str]] = {}  # interface address -> (device, port)
        self.connected: dict[str, dict[int, set[int]]] = {}  # device -> {prefix len: {network int}}
        self.tables: dict[str, dict[int, dict[int, list[int]]]] = {}
        self.host_routes: dict[tuple[str, str], list[tuple[int, ...]]] = {}
        self.host_address: dict[tuple[str, str], int] = {}
        self._connected_memo: dict[tuple[str, int], bool] = {}  # (device, address) -> connected_to (walk_all asks often)
        self._next_memo: dict[tuple[str, int], tuple[list[int], list | str]] = {}  # (device, id of a route's hops) -> owners

    def add_switch(self, name: str, interfaces: list[tuple[str, int, int]], routes: list[tuple[int, int, int]]) -> None:
        """``interfaces``: (port, address, prefix len); ``routes``: (network, prefix len, next hop)."""
        conn = self.connected.setdefault(name, {})
        self._connected_memo.clear()
        self._next_memo.clear()
        for port, addr, plen in interfaces:
            self.owner[addr] = name
            self.port_of[addr] = (name, port)
            conn.setdefault(plen, set()).add(addr & MASKS[plen])
        table: dict[int, dict[int, list[int]]] = defaultdict(dict)
        for net, plen, nh in routes:
            table[plen].setdefault(net, []).append(nh)
        self.tables[name] = dict(sorted(table.items(), reverse=True))

    def add_host_port(self, host: str, port: str, address: int, routes: list[tuple[int, ...]]) -> None:
        """``routes``: (network, prefix len, gateway[, metric, device]) in the order the host tries them."""
        self.owner[address] = host
        self.port_of[address] = (host, port)
        self.host_address[(host, port)] = address
        self.host_routes[(host, port)] = routes

    def is_switch(self, device: str) -> bool:
        return device in self.connected

    def connected_to(self, device: str, addr: int) -> bool:
        key = (device, addr)
        hit = self._connected_memo.get(key)
        if hit is None:
            hit = self._connected_memo[key] = any(addr & MASKS[plen] in nets for plen, nets in self.connected[device].items())
        return hit

    def lookup(self, device: str, dst: int) -> list[int]:
        for plen, nets in self.tables[device].items():
            hops = nets.get(dst & MASKS[plen])
            if hops is not None:
                return hops
        return []

    def first_hop(self, src: tuple[str, str], dst: int) -> int | None:
        """The gateway of host port ``src``'s first route to ``dst`` (None: no route)."""
        for route in self.host_routes.get(src, ()):
            plen = route[1]
            if dst >> (32 - plen) == route[0] >> (32 - plen):
                return route[2]
        return None

    def walk(self, src: tuple[str, str], dst: int, max_switches: int = 4) -> tuple[list[str], str | None]:
        """Forward from host port ``src`` to ``dst``. Returns (switches crossed, error or None)."""
        via = self.first_hop(src, dst)
        if via is None:
            return [], "no host route"
        device = self.owner.get(via)
        path: list[str] = []
        while device is not None and self.is_switch(device):
            if device in path:
                return path, f"loop at {device}"
            path.append(device)
            if len(path) > max_switches:
                return path, "too many hops"
            if self.connected_to(device, dst):
                return path, None if dst in self.owner else "black hole: nobody has the address"
            hops = self.lookup(device, dst)
            if not hops:
                return path, f"black hole at {device}: no route"
            nxt = {self.owner.get(h) for h in hops}
            if len(nxt) != 1:
                return path, f"{len(nxt)} next switches at {device}"
            for h in hops:  # ECMP over parallel links to one switch (mode bgp) is one path
                if not self.connected_to(device, h):
                    return path, f"next hop {h} not directly connected at {device}"
            device = self.owner.get(hops[0])
        return path, "black hole: next hop unknown"

    def walk_all(self, src: tuple[str, str], dst: int, max_switches: int = 4) -> tuple[list[tuple[str, ...]], str | None]:
        """Forward from host port ``src`` to ``dst`` along every ECMP next hop (a Clos spreads a flow over its
        spines). Returns (every switch path that delivers, the first error met or None)."""
        via = self.first_hop(src, dst)
        if via is None:
            return [], "no host route"
        paths: list[tuple[str, ...]] = []
        stack: list[tuple[str | None, tuple[str, ...]]] = [(self.owner.get(via), ())]
        while stack:
            device, path = stack.pop()
            if device is None or not self.is_switch(device):
                return paths, f"black hole after {path[-1] if path else src[0]}: next hop unknown"
            if device in path:
                return paths, f"loop at {device}"
            path = path + (device,)
            if len(path) > max_switches:
                return paths, f"too many hops ({' '.join(path)})"
            if self.connected_to(device, dst):
                if dst not in self.owner:
                    return paths, "black hole: nobody has the address"
                paths.append(path)
                continue
            hops = self.lookup(device, dst)
            if not hops:
                return paths, f"black hole at {device}: no route"
            nexts = self._next_switches(device, hops)
            if isinstance(nexts, str):
                return paths, nexts
            stack.extend((nxt, path) for nxt in nexts)
        return sorted(paths), None

    def _next_switches(self, device: str, hops: list[int]) -> list[str | None] | str:
        """The owners of a route's next hops, in walking order, or the next hop that is not directly connected
        (memoised per route: at glm-1k a leaf's route has 64 next hops and every walk meets it)."""
        key = (device, id(hops))
        memo = self._next_memo.get(key)
        if memo is None or memo[0] is not hops:
            for h in hops:
                if not self.connected_to(device, h):
                    memo = (hops, f"next hop {ntoa(h)} not directly connected at {device}")
                    break
            else:
                memo = (hops, sorted({self.owner.get(h) for h in hops}, key=str, reverse=True))
            self._next_memo[key] = memo
        return memo[1]

