"""What the plan's routing delivers, packet by packet: the reference model shared with the lab,
verify and the data-plane twin (the shared definition of a reachable GPU pair: docs/routing.md; the
twin's comparison with it: docs/twin.md).

A probe is ``ping -I <source port address> <destination port address>`` from the source server:
it succeeds when the echo request reaches the destination port AND the reply (sourced from the
destination address) comes back to the source port. Each leg is walked hop by hop:

- **Host.** A packet sourced from NIC port address ``a`` is looked up in ``a``'s policy table (the
  rule ``from a lookup <table>``): the routes of that NIC entry in the plan, each
  ``{"to", "via", "metric", "dev"}`` (``dev`` defaults to the port itself). Routes whose device has
  no carrier are skipped (``ignore_routes_with_linkdown = 1`` in the rendered sysctl file); among
  the rest the longest prefix wins, then the lowest metric. The packet leaves on ``dev`` towards
  the switch at the other end of that port's host cable. A port whose host cable or switch is down
  has no carrier; its address cannot receive anything.
- **Switch, mode static.** Connected /31s of live ports, then the plan's static routes whose next
  hop is the far end of a live fabric link (a static route whose next hop is unreachable is not
  installed), longest prefix first; several routes with the same prefix are ECMP.
- **Switch, mode bgp.** After convergence (BFD takes a dead link's sessions down) every live switch
  has, for each live switch's originated host block and loopback, the shortest AS paths over the
  live fabric links (one AS per switch, so AS-path length = switch hops), ECMP across every
  neighbour on a shortest path and across the parallel links of a pair. Connected /31s of live
  ports are more specific. An originated block whose host /31 is down is discarded at its switch.

**Failure modes.** ``carrier`` (the default): a failed cable or switch takes the carrier of every
port it touches, so both ends see it at once. ``silent``: the failed elements drop every packet
while carrier stays up. Only BFD notices that: in mode bgp the fabric sessions over a silently dead
link or to a silently dead switch go down (so the routing is that of carrier loss), but nothing
runs BFD on host cables, so the host keeps sending into its silently dead port and the switch keeps
delivering into it; in mode static nothing notices at all (static routes stay, their packets are
dropped). Routing decisions use what the control plane sees, forwarding what the data plane does.

ECMP: a leg succeeds only when every equal-cost branch delivers (a flow may hash onto any of them).
A loop or 64 hops is a drop.

**GPU pair reachable** (what ``predict_gpu_pairs`` counts, and what the twin measures with real
packets): GPUs a != b are reachable when SOME port address of a and SOME port address of b (both
ports of each, same plane) pass the probe above in the direction a -> b. This is what a collective
library does when it retries a connection on the other port of a NIC. A GPU is a server's GPU with
its NIC ports; a port pair is an ordered (source port, destination port) of two different GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zcube_deploy.errors import PlanFileError
from zcube_deploy.ipv4 import MASKS, aton
from zcube_deploy.topology.bestpaths import asn_walk
from zcube_deploy.topology.forwarding import ROUTING_KINDS, host_tables, pinned_tables, reconverges

MAX_HOPS = 64
FAILURE_MODES = ("carrier", "silent")


def _net(prefix: str) -> tuple[int, int]:
    addr, _, plen = prefix.partition("/")
    n = int(plen) if plen else 32
    return aton(addr) & MASKS[n], n


def _masked(network: int, plen: int) -> tuple[int, int]:
    return network & MASKS[plen], plen


def _in(addr: int, net: tuple[int, int]) -> bool:
    base, n = net
    return (addr & MASKS[n]) == base


def routing_mode(plan: dict) -> str:
    return (plan.get("routing") or {}).get("mode", "static")


@dataclass
class _Port:
    server: str
    name: str
    address: int
    switch: str
    cable: str
    gpu: tuple[str, int]
    plane: int
    routes: list[tuple[tuple[int, int], int, str]] = field(default_factory=list)  # (net, metric, dev) in the port's table


class Forwarding:
    """The plan's forwarding state under a set of failed cables and switches (one of them per state)."""

    def __init__(self, plan: dict, failed_cables=(), failed_switches=(), failure_mode: str = "carrier"):
        self.plan = plan
        self.mode = routing_mode(plan)
        if self.mode not in ROUTING_KINDS:
            raise PlanFileError(f"unknown routing mode {self.mode!r} in the plan")
        routing = {**(plan.get("routing") or {}), "mode": self.mode}
        self.reconverges = reconverges(routing)  # the failure behaviour: see topology/forwarding.py
        if failure_mode not in FAILURE_MODES:
            raise PlanFileError(f"unknown failure mode {failure_mode!r} (one of {', '.join(FAILURE_MODES)})")
        self.failure_mode = failure_mode
        failed_cables, failed_switches = set(failed_cables), set(failed_switches)
        self.switch_up = {s["name"]: s["name"] not in failed_switches for s in plan["switches"]}
        unknown = failed_switches - set(self.switch_up)
        if unknown:
            raise PlanFileError(f"no switch named {sorted(unknown)[0]!r} in the plan")
        known_cables = {c["id"] for c in plan["cables"]}
        unknown = failed_cables - known_cables
        if unknown:
            raise PlanFileError(f"no cable {sorted(unknown)[0]!r} in the plan")
        # data plane: does the cable carry packets
        self.cable_up = {c["id"]: c["id"] not in failed_cables and self.switch_up.get(c["a"]["device"], True)
                         and self.switch_up.get(c["b"]["device"], True) for c in plan["cables"]}
        # control plane: do its ends see it up (carrier, or BFD on the fabric sessions of mode bgp)
        switch_names = set(self.switch_up)
        if failure_mode == "carrier":
            self.cable_seen = dict(self.cable_up)
        else:
            bfd = self.reconverges  # the reconverging kind (bgp) runs BFD on its fabric sessions
            self.cable_seen = {c["id"]: self.cable_up[c["id"]] or not (bfd and c["a"]["device"] in switch_names
                                                                       and c["b"]["device"] in switch_names)
                               for c in plan["cables"]}
        self.ports: dict[int, _Port] = {}
        self.port_by_name: dict[tuple[str, str], _Port] = {}
        for srv in plan["servers"]:
            for nic in srv.get("nics", ()):
                p = _Port(srv["name"], nic["port"], aton(nic["address"]), nic["switch"], nic["cable"],
                          (srv["name"], nic["gpu"]), nic.get("plane", 0))
                self.ports[p.address] = p
                self.port_by_name[(srv["name"], nic["port"])] = p
        for (server, port), table in host_tables({srv["name"]: srv.get("nics", ()) for srv in plan["servers"]}).items():
            p = self.port_by_name[(server, port)]
            for net, plen, _via, metric, dev in table:
                if (server, dev) not in self.port_by_name:
                    raise PlanFileError(f"{server} {port}: route via unknown device {dev!r}")
                p.routes.append((_masked(net, plen), int(metric), dev))
        # switches: connected host /31s, fabric adjacencies
        self.host_port_of: dict[str, dict[int, _Port]] = {}  # switch -> NIC address -> port
        self.fabric: dict[str, list[tuple[int, str, str]]] = {}  # switch -> [(peer address, peer switch, cable)]
        self.blocks: list[tuple[tuple[int, int], str]] = []  # originated prefixes (bgp): (net, switch)
        self.static: dict[str, list[tuple[tuple[int, int], int]]] = {}  # the pinned entries (net, next hop)
        pinned = pinned_tables(routing, plan["switches"])
        for sw in plan["switches"]:
            name = sw["name"]
            self.host_port_of[name] = {}
            self.fabric[name] = []
            for itf in sw["interfaces"]:
                if itf["kind"] == "host":
                    addr = aton(itf["peer"]["address"])
                    if addr in self.ports:
                        self.host_port_of[name][addr] = self.ports[addr]
                else:
                    self.fabric[name].append((aton(itf["peer"]["address"]), itf["peer"]["device"], itf["cable"]))
            self.static[name] = [(_masked(e.network, e.prefix_len), nh) for e in pinned[name] for nh in e.next_hops]
            if sw.get("host_block"):  # (a ROFT spine has none)
                self.blocks.append((_net(sw["host_block"]), name))
            self.blocks.append(((aton(sw["loopback"]), 32), name))
        self._dist: dict[str, dict[str, int]] = {}
        self._states: dict[str, dict[str, list[tuple[int, frozenset]]]] = {}
        self._memo: dict[tuple[str, int], bool] = {}
        # ASNs that several switches share (the spines of a ROFT plane): a path holding one is refused by the others
        seen_asn: dict[int, int] = {}
        for sw in plan["switches"]:
            if sw.get("asn") is not None:
                seen_asn[sw["asn"]] = seen_asn.get(sw["asn"], 0) + 1
        self.shared_asn = {s["name"]: s["asn"] for s in plan["switches"] if s.get("asn") is not None and seen_asn[s["asn"]] > 1}

    # ---------------------------------------------------------------- state
    def port_alive(self, p: _Port) -> bool:
        """The port passes packets (its host cable and its switch work)."""
        return self.cable_up[p.cable] and self.switch_up[p.switch]

    def port_seen(self, p: _Port) -> bool:
        """Both ends of the port's host cable see it up (carrier; nothing runs BFD there)."""
        return self.cable_seen[p.cable]

    def _live_fabric(self, sw: str):
        """Fabric links the switch's routing considers up: (peer address, peer switch, cable)."""
        for peer_addr, peer, cable in self.fabric[sw]:
            if self.cable_seen[cable]:
                yield peer_addr, peer, cable

    def _distances_to(self, target: str) -> dict[str, int]:
        """Switch hops to ``target`` over live fabric links (BFS; the AS-path length in mode bgp). A path never holds a
        shared ASN twice (RFC 4271 loop prevention: the spines of a ROFT plane share one, so no path crosses two spines);
        with every ASN its own switch's (ZCube) this is the plain BFS."""
        d = self._dist.get(target)
        if d is None:
            states = asn_walk(target, lambda u: (v for _, v, _c in self._live_fabric(u) if self.switch_up[v]), self.shared_asn)
            d = {v: min(x for x, _ in st) for v, st in states.items()}
            self._dist[target], self._states[target] = d, states
        return d

    def _advertises(self, peer: str, target: str, hops: int, to: str) -> bool:
        """``peer`` has a path of ``hops`` switch hops to ``target`` that switch ``to`` accepts (its own ASN not on it)."""
        asn = self.shared_asn.get(to)
        return any(x == hops and asn not in path_asns for x, path_asns in self._states[target].get(peer, ()))

    # ---------------------------------------------------------------- switches
    def next_hops(self, sw: str, dst: int) -> list[str] | None:
        """Where switch ``sw`` sends a packet for ``dst``: [] = delivered to a live local port,
        None = dropped, else the next switches (ECMP, one entry per equal-cost link)."""
        links = self.next_links(sw, dst)
        return links if links is None else [peer for peer, _ in links]

    def next_links(self, sw: str, dst: int) -> list[tuple[str, str]] | None:
        """Like ``next_hops`` with the cable of each equal-cost link: [(next switch, cable)]."""
        local = self.host_port_of[sw].get(dst)
        if local is not None and self.port_seen(local):
            # the connected /31 is up: the switch delivers into it (a silently dead port drops it)
            return [] if self.port_alive(local) else None
        if not self.reconverges:  # the pinned entries whose next hop is live
            live = {}
            for peer_addr, peer, cable in self._live_fabric(sw):
                live[peer_addr] = (peer, cable)
            best, hops = -1, []
            for net, nh in self.static[sw]:
                if nh not in live or not _in(dst, net) or net[1] < best:
                    continue
                if net[1] > best:
                    best, hops = net[1], []
                hops.append(live[nh])
            return hops or None
        # bgp: the longest originated prefix containing dst, reached by shortest AS paths
        owner, best = None, -1
        for net, name in self.blocks:
            if net[1] > best and _in(dst, net) and self.switch_up[name]:
                owner, best = name, net[1]
        if owner is None or owner == sw:
            return None  # unknown, or our own block whose /31 is down: discarded
        d = self._distances_to(owner)
        if sw not in d:
            return None
        hops = [(peer, cable) for _, peer, cable in self._live_fabric(sw)
                if d.get(peer, 1 << 30) == d[sw] - 1 and self.switch_up[peer] and self._advertises(peer, owner, d[sw] - 1, sw)]
        return hops or None

    def delivers(self, sw: str, dst: int, seen: frozenset = frozenset()) -> bool:
        """True when a packet for ``dst`` entering switch ``sw`` reaches it on every ECMP branch (a silently
        dead link that is still routed over loses the flows that hash onto it)."""
        key = (sw, dst)
        if key in self._memo:
            return self._memo[key]
        if not self.switch_up[sw] or sw in seen or len(seen) >= MAX_HOPS:
            return False
        hops = self.next_links(sw, dst)
        if hops is None:
            ok = False
        elif not hops:
            ok = True
        else:
            ok = all(self.cable_up[c] and self.delivers(h, dst, seen | {sw}) for h, c in set(hops))
        if not seen:
            self._memo[key] = ok
        return ok

    # ---------------------------------------------------------------- hosts
    def host_route(self, src: _Port, dst: int) -> _Port | None:
        """The port a packet sourced from ``src`` for ``dst`` leaves on (None: no usable route)."""
        best = None
        for net, metric, dev in src.routes:
            if not _in(dst, net):
                continue
            out = self.port_by_name[(src.server, dev)]
            if not self.port_seen(out):
                continue  # ignore_routes_with_linkdown
            key = (-net[1], metric)
            if best is None or key < best[0]:
                best = (key, out)
        return best[1] if best else None

    def leg(self, src: _Port, dst: _Port) -> bool:
        if not self.port_alive(dst):
            return False
        out = self.host_route(src, dst.address)
        return out is not None and self.port_alive(out) and self.delivers(out.switch, dst.address)

    def probe(self, src_addr: str | int, dst_addr: str | int) -> bool:
        s = self.ports.get(src_addr if isinstance(src_addr, int) else aton(src_addr))
        d = self.ports.get(dst_addr if isinstance(dst_addr, int) else aton(dst_addr))
        if s is None or d is None:
            raise PlanFileError(f"{src_addr} or {dst_addr} is not a NIC port address of the plan")
        return self.port_alive(s) and self.leg(s, d) and self.leg(d, s)

    def path(self, src_addr: str, dst_addr: str) -> list[str] | None:
        """Switches of one request path (the first ECMP branch at each hop), None when not delivered."""
        s, d = self.ports[aton(src_addr)], self.ports[aton(dst_addr)]
        if not self.leg(s, d):
            return None
        sw = self.host_route(s, d.address).switch
        out = [sw]
        while True:
            hops = self.next_hops(sw, d.address)
            if not hops:
                return out
            sw = sorted(hops)[0]
            out.append(sw)


def predict_pairs(plan: dict, pairs, failed_cables=(), failed_switches=(), failure_mode: str = "carrier") -> list[bool]:
    """For each (source port address, destination port address): does the probe pass (see module doc)."""
    fw = Forwarding(plan, failed_cables, failed_switches, failure_mode)
    return [fw.probe(a, b) for a, b in pairs]


def path_switches(plan: dict, src: str, dst: str) -> int:
    """Switches on the failure-free request path from port address ``src`` to ``dst`` (0: not routed)."""
    p = Forwarding(plan).path(src, dst)
    return len(p) if p else 0


def predict_gpu_pairs(plan: dict, failed_cables=(), failed_switches=(), failure_mode: str = "carrier") -> dict:
    """Counts of unreachable GPU pairs (unordered) and port pairs (ordered, different GPUs, same plane)
    under the given failures, walking every probe (meant for lab-sized plans)."""
    fw = Forwarding(plan, failed_cables, failed_switches, failure_mode)
    gpus: dict[tuple[str, int], list[_Port]] = {}
    for p in fw.ports.values():
        gpus.setdefault(p.gpu, []).append(p)
    keys = sorted(gpus)
    ok: dict[tuple[int, int], bool] = {}
    port_total = port_bad = 0
    for i, a in enumerate(keys):
        for j, b in enumerate(keys):
            if i == j:
                continue
            any_ok = False
            for pa in gpus[a]:
                for pb in gpus[b]:
                    if pa.plane != pb.plane:
                        continue
                    good = fw.probe(pa.address, pb.address)
                    port_total += 1
                    port_bad += not good
                    any_ok |= good
            ok[(i, j)] = any_ok
    gpu_total = len(keys) * (len(keys) - 1) // 2
    gpu_bad = sum(1 for i in range(len(keys)) for j in range(i + 1, len(keys)) if not (ok[(i, j)] or ok[(j, i)]))
    return {"gpu_pairs_unreachable": gpu_bad, "gpu_pairs_total": gpu_total,
            "port_pairs_unreachable": port_bad, "port_pairs_total": port_total, "mode": fw.mode}
