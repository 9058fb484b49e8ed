"""A small forwarding model: routers with connected subnets and static routes, hosts with routes.

Used twice, from two independent sources: by the planner's checks (from the plan) and by the
routing proof (from the rendered switch configs and netplan files alone).
"""

from __future__ import annotations

from collections import defaultdict


class Network:
    def __init__(self) -> None:
        self.owner: dict[int, str] = {}  # interface address -> device
        self.port_of: dict[int, tuple[str, str]] = {}  # interface address -> (device, port)
        self.connected: dict[str, dict[int, set[int]]] = {}  # device -> {prefix len: {network int}}
        self.tables: dict[str, dict[int, dict[int, list[int]]]] = {}
        self.host_routes: dict[tuple[str, str], list[tuple[int, int, int]]] = {}
        self.host_address: dict[tuple[str, str], int] = {}

    def add_switch(self, name: str, interfaces: list[tuple[str, int, int]], routes: list[tuple[int, int, int]]) -> None:
        """``interfaces``: (port, address, prefix len); ``routes``: (network, prefix len, next hop)."""
        conn = self.connected.setdefault(name, {})
        for port, addr, plen in interfaces:
            self.owner[addr] = name
            self.port_of[addr] = (name, port)
            mask = (0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF
            conn.setdefault(plen, set()).add(addr & mask)
        table: dict[int, dict[int, list[int]]] = defaultdict(dict)
        for net, plen, nh in routes:
            table[plen].setdefault(net, []).append(nh)
        self.tables[name] = dict(sorted(table.items(), reverse=True))

    def add_host_port(self, host: str, port: str, address: int, routes: list[tuple[int, int, int]]) -> None:
        self.owner[address] = host
        self.port_of[address] = (host, port)
        self.host_address[(host, port)] = address
        self.host_routes[(host, port)] = routes

    def is_switch(self, device: str) -> bool:
        return device in self.connected

    def connected_to(self, device: str, addr: int) -> bool:
        for plen, nets in self.connected[device].items():
            if addr & ((0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF) in nets:
                return True
        return False

    def lookup(self, device: str, dst: int) -> list[int]:
        for plen, nets in self.tables[device].items():
            mask = (0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF
            hops = nets.get(dst & mask)
            if hops is not None:
                return hops
        return []

    def walk(self, src: tuple[str, str], dst: int, max_switches: int = 4) -> tuple[list[str], str | None]:
        """Forward from host port ``src`` to ``dst``. Returns (switches crossed, error or None)."""
        via = None
        for net, plen, gw in self.host_routes.get(src, ()):
            if dst >> (32 - plen) == net >> (32 - plen):
                via = gw
                break
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
