"""The lab's BGP and BFD model (pure): switch configs + physical wiring in, sessions and routes out.

Input is what a switch really has: its running-config text (``parse_config``), the same text
`zcube verify` collects, and the lab's wiring. Nothing here reads the plan.

Sessions (one per ``neighbor A remote-as N`` line, seen from each end):

- ``Idle``: no connected subnet of an up interface holds the neighbour address (no link, port
  shut, or no address there), or the OPEN is refused because an AS number does not match
  (the remote AS configured on either end is not the other end's ``router bgp`` AS).
- ``Active``: the link is up but nobody at the far end of the cable answers for that address
  with a matching ``neighbor`` line (wrong address on the peer, no ``router bgp`` there, or no
  neighbour configured back to us).
- ``Established``: the cable is in place and up at both ends, the neighbour address is the far
  end's interface address, both ends name each other, and the AS numbers match both ways.

BFD sessions exist for neighbours with ``fall-over bfd`` on an interface with ``bfd interval``;
``Up`` when the link is up and the far end runs BFD for us with ``fall-over bfd`` too. A BFD
session that never came up does not hold BGP down (as on Cisco-like stacks).

Routes: each switch originates its ``network A mask M`` prefixes that are in its own routing table
(connected on an up interface, or a static route, e.g. to ``Null 0``: the exact-match rule of
Cisco-like BGP), plus every connected subnet with ``redistribute connected``. Best path = shortest
AS path over the Established sessions (AS numbers are taken to be unique per switch, as the plan
makes them). Multipath: without ``bgp bestpath as-path multipath-relax`` only paths with the
same AS path as the best one (the parallel links to the best neighbour: lowest router ID, then
lowest address); with it, every equal-length path; at most ``maximum-paths`` (default 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network

from zcube_deploy.ipv4 import parse as _aton  # dotted quad -> int, None when not one
from zcube_deploy.platforms.ruijie_rgos.bgp_parse import (DEFAULT_MAXIMUM_PATHS, Itf, Neighbor, Router, SwitchConfig,  # noqa: F401
                                                          parse_config)

End = tuple[str, str]

ESTABLISHED, ACTIVE, IDLE = "Established", "Active", "Idle"


# ---------------------------------------------------------------- physical state
@dataclass(frozen=True, slots=True)
class Links:
    """Which switch ports are up and what is at the other end of their cables (from the wiring)."""

    up: frozenset[End]
    far: dict[End, tuple[End, ...]]  # port -> far ends of the cables plugged into it

    @classmethod
    def from_wiring(cls, wiring, configs: dict[str, SwitchConfig]) -> "Links":
        """The lab's link rule: a switch port is up when it is not shut or forced down and at least one
        cable in it ends at an up end (a switch port not shut or forced down, or any server/stray end)."""
        def end_up(end: End) -> bool:
            if end in wiring.forced_down:
                return False
            cfg = configs.get(end[0])
            if cfg is None:
                return end[0] not in wiring.switches  # a server or a stray device
            itf = cfg.interfaces.get(end[1])
            return itf is None or not itf.shutdown  # a port absent from the config is in its default (up) state

        far: dict[End, list[End]] = {}
        for c in wiring.cables.values():
            far.setdefault(c.a, []).append(c.b)
            far.setdefault(c.b, []).append(c.a)
        up = set()
        for end, others in far.items():
            if end[0] in configs and end_up(end) and any(end_up(o) for o in others):
                up.add(end)
        return cls(frozenset(up), {k: tuple(v) for k, v in far.items()})


# ---------------------------------------------------------------- sessions
@dataclass(frozen=True, slots=True)
class Session:
    switch: str
    neighbor: str
    remote_as: int | None
    local_as: int
    state: str
    reason: str  # "ok", "no_interface", "link_down", "no_answer", "peer_no_bgp", "peer_not_configured", "bad_as"
    interface: str | None = None
    local_address: str | None = None
    peer: str | None = None  # the far switch when the session is Established (or refused for its AS)


@dataclass(frozen=True, slots=True)
class BfdSession:
    switch: str
    local_address: str
    neighbor: str
    interface: str
    up: bool
    timers: tuple[int, int, int]


def _connected(cfg: SwitchConfig, name: str, links: Links, me: str) -> bool:
    """Does this interface's connected subnet stand (up interface, and link up for a physical port)?"""
    itf = cfg.interfaces[name]
    if itf.address is None or itf.shutdown:
        return False
    if name.startswith(("Loopback", "Mgmt", "VLAN", "Tunnel")):
        return True
    return (me, name) in links.up


def _subnet_index(cfg: SwitchConfig) -> tuple[list[tuple[int, int]], dict[tuple[int, int], str]]:
    """(prefix lengths present, longest first, with their masks), {(network as int, length): interface}."""
    idx: dict[tuple[int, int], str] = {}
    for itf in cfg.interfaces.values():
        if itf.address is not None:
            n = itf.address.network
            idx.setdefault((int(n.network_address), n.prefixlen), itf.name)
    plens = sorted({p for _, p in idx}, reverse=True)
    return [(p, (0xFFFFFFFF << (32 - p)) & 0xFFFFFFFF) for p in plens], idx


class Model:
    """Sessions and routes of a whole lab for one generation of configs and wiring (compute once, read many)."""

    def __init__(self, configs: dict[str, SwitchConfig], links: Links):
        self.configs = configs
        self.links = links
        self.sessions: dict[str, list[Session]] = {}
        self.bfd: dict[str, list[BfdSession]] = {}
        self.adj: dict[str, dict[str, list[Session]]] = {}  # switch -> neighbour switch -> Established sessions
        self._routes: dict[tuple[str, bool], dict[IPv4Network, list[Session]]] = {}
        self._rib: dict[str, set[IPv4Network]] = {}
        self._rid: dict[str, str] = {}
        self._idx: dict[str, tuple] = {}
        self._far: dict[tuple[str, str, str], tuple[str | None, str | None]] = {}
        for name in sorted(configs):
            self._sessions_of(name)
        self.origins = self._origins()

    # -- one end of each configured neighbour
    def _far_switch(self, me: str, port: str, addr: str) -> tuple[str | None, str | None]:
        """(far switch, its port) at the other end of the cable in ``port`` that holds ``addr``, if any."""
        key = (me, port, addr)
        if key not in self._far:
            self._far[key] = self._find_far(me, port, addr)
        return self._far[key]

    def _find_far(self, me: str, port: str, addr: str) -> tuple[str | None, str | None]:
        for dev, pport in self.links.far.get((me, port), ()):
            peer = self.configs.get(dev)
            if peer is None or (dev, pport) not in self.links.up:
                continue
            itf = peer.interfaces.get(pport)
            if itf is not None and itf.ip == addr and not itf.shutdown:
                return dev, pport
        return None, None

    def _judge(self, me: str, n: Neighbor) -> Session:
        cfg = self.configs[me]
        r = cfg.bgp
        addr = _aton(n.address)
        if addr is None:
            return Session(me, n.address, n.remote_as, r.asn, IDLE, "no_interface")
        port = self._interface_for(me, addr)
        if port is None:
            return Session(me, n.address, n.remote_as, r.asn, IDLE, "no_interface")
        local = str(cfg.interfaces[port].address.ip)
        base = dict(switch=me, neighbor=n.address, remote_as=n.remote_as, local_as=r.asn, interface=port, local_address=local)
        if not _connected(cfg, port, self.links, me):
            return Session(**base, state=IDLE, reason="link_down")
        dev, _ = self._far_switch(me, port, n.address)
        if dev is None:
            return Session(**base, state=ACTIVE, reason="no_answer")
        peer = self.configs[dev].bgp
        if peer is None:
            return Session(**base, state=ACTIVE, reason="peer_no_bgp", peer=dev)
        back = peer.neighbors.get(local)
        if back is None or back.remote_as is None:
            return Session(**base, state=ACTIVE, reason="peer_not_configured", peer=dev)
        if n.remote_as != peer.asn or back.remote_as != r.asn:
            return Session(**base, state=IDLE, reason="bad_as", peer=dev)
        return Session(**base, state=ESTABLISHED, reason="ok", peer=dev)

    def _interface_for(self, me: str, addr: int) -> str | None:
        """The interface whose subnet holds ``addr`` (longest prefix, not its own address), whatever its state."""
        if me not in self._idx:
            self._idx[me] = _subnet_index(self.configs[me])
        plens, idx = self._idx[me]
        for plen, mask in plens:
            name = idx.get((addr & mask, plen))
            if name is not None:
                return None if int(self.configs[me].interfaces[name].address.ip) == addr else name
        return None

    def _sessions_of(self, me: str) -> None:
        cfg = self.configs[me]
        out, bfd = [], []
        if cfg.bgp is not None:
            for addr in sorted(cfg.bgp.neighbors, key=_ip_key):
                n = cfg.bgp.neighbors[addr]
                if n.remote_as is None:
                    continue
                s = self._judge(me, n)
                out.append(s)
                if s.state == ESTABLISHED:
                    self.adj.setdefault(me, {}).setdefault(s.peer, []).append(s)
                if n.fall_over_bfd and s.interface and cfg.interfaces[s.interface].bfd:
                    bfd.append(BfdSession(me, s.local_address, n.address, s.interface, self._bfd_up(me, s),
                                          cfg.interfaces[s.interface].bfd))
        self.sessions[me] = out
        self.bfd[me] = bfd

    def _bfd_up(self, me: str, s: Session) -> bool:
        if s.interface is None or not _connected(self.configs[me], s.interface, self.links, me):
            return False
        dev, pport = self._far_switch(me, s.interface, s.neighbor)
        if dev is None:
            return False
        peer = self.configs[dev]
        back = peer.bgp.neighbors.get(s.local_address) if peer.bgp else None
        return bool(back and back.fall_over_bfd and peer.interfaces[pport].bfd)

    # -- routes
    def _origins(self) -> dict[IPv4Network, list[str]]:
        out: dict[IPv4Network, list[str]] = {}
        for name in sorted(self.configs):
            for net in self.originated(name):
                out.setdefault(net, []).append(name)
        return out

    def rib_prefixes(self, name: str) -> set[IPv4Network]:
        """Connected (up) and static prefixes of a switch: what a ``network`` statement can match."""
        if name in self._rib:
            return self._rib[name]
        cfg = self.configs[name]
        conn = {cfg.interfaces[i].address.network for i in cfg.interfaces if _connected(cfg, i, self.links, name)}
        nets = set(conn)
        for net, nh in cfg.static:
            if nh is None or any(IPv4Address(nh) in c for c in conn):
                nets.add(net)
        self._rib[name] = nets
        return nets

    def originated(self, name: str) -> list[IPv4Network]:
        r = self.configs[name].bgp
        if r is None:
            return []
        rib = self.rib_prefixes(name)
        nets = {n for n in r.networks if n in rib}
        if r.redistribute_connected:
            cfg = self.configs[name]
            nets |= {cfg.interfaces[i].address.network for i in cfg.interfaces
                     if _connected(cfg, i, self.links, name) and not i.startswith("Mgmt")}
        return sorted(nets, key=lambda n: (int(n.network_address), n.prefixlen))

    def router_id(self, name: str) -> str:
        if name not in self._rid:
            self._rid[name] = self._router_id(name)
        return self._rid[name]

    def _router_id(self, name: str) -> str:
        cfg = self.configs[name]
        if cfg.bgp is not None and cfg.bgp.router_id:
            return cfg.bgp.router_id
        loops = [i.address.ip for i in cfg.interfaces.values() if i.name.startswith("Loopback") and i.address and not i.shutdown]
        addrs = loops or [i.address.ip for i in cfg.interfaces.values() if i.address and not i.shutdown]
        return str(max(addrs)) if addrs else "0.0.0.0"

    def routes(self, name: str, every_candidate: bool = False) -> dict[IPv4Network, list[Session]]:
        """Best BGP routes of ``name``: prefix -> the sessions whose neighbour addresses are the next hops.

        Shortest AS path by one breadth-first walk from ``name`` over the Established sessions,
        carrying for every switch the set of first hops (neighbours of ``name``) on its shortest
        paths; prefixes the switch has in its own table are not replaced (a connected route wins).
        ``every_candidate``: all equal-length paths, before the multipath rules cut them.
        """
        key = (name, every_candidate)
        if key in self._routes:
            return self._routes[key]
        r = self.configs[name].bgp
        out: dict[IPv4Network, list[Session]] = {}
        if r is not None and name in self.adj:
            dist, first = self._walk(name)
            own = self.rib_prefixes(name) | set(self.originated(name))
            rank = {nb: (_ip_key(self.router_id(nb)), nb) for nb in self.adj[name]}  # tie-break: lowest router ID
            links = {nb: sorted(ss, key=lambda s: _ip_key(s.neighbor)) for nb, ss in self.adj[name].items()}
            for net, origins in self.origins.items():
                if net in own:
                    continue
                reach = [o for o in origins if o in dist and o != name]
                if not reach:
                    continue
                d = min(dist[o] for o in reach)
                hops = sorted(set().union(*(first[o] for o in reach if dist[o] == d)), key=rank.__getitem__)
                if not (every_candidate or r.multipath_relax):
                    hops = hops[:1]  # only the paths with the best path's AS path: the links to the best neighbour
                sess, cap = [], None if every_candidate else max(1, r.maximum_paths)
                for nb in hops:
                    sess += links[nb]
                    if cap is not None and len(sess) >= cap:
                        break
                out[net] = sess if cap is None else sess[:cap]
        self._routes[key] = out
        return out

    def _shared_asns(self) -> dict[str, int]:
        """Switch -> its ASN where another switch has the same one (the spines of a ROFT plane)."""
        asn = {n: c.bgp.asn for n, c in self.configs.items() if c.bgp is not None}
        count: dict[int, int] = {}
        for a in asn.values():
            count[a] = count.get(a, 0) + 1
        return {n: a for n, a in asn.items() if count[a] > 1}

    def _walk(self, name: str) -> tuple[dict[str, int], dict[str, set[str]]]:
        """(hops to every switch, the first hops from ``name`` on its shortest paths): one breadth-first walk over the
        Established sessions, by (switch, the shared ASNs on the path so far). A path never holds an ASN twice (a
        switch refuses an update with its own AS): with every ASN a switch's own that is the plain walk; the spines
        of a ROFT plane share one, so no path crosses two of them."""
        shared = self._shared_asns()
        start = frozenset({shared[name]}) if name in shared else frozenset()
        dist, first = {name: 0}, {}
        state_first: dict[tuple[str, frozenset], set[str]] = {}
        frontier = []
        for nb in self.adj[name]:
            if shared.get(nb) in start:
                continue
            key = (nb, start | {shared[nb]} if nb in shared else start)
            state_first[key] = {nb}
            frontier.append(key)
        depth = 1
        while frontier:
            for v, _ in frontier:
                if v not in dist:
                    dist[v], first[v] = depth, set()
                if dist[v] == depth:
                    first[v] |= state_first[(v, _)]
            nxt: dict[tuple[str, frozenset], set[str]] = {}
            for u, asns in frontier:
                for v in self.adj.get(u, ()):
                    if v == name or shared.get(v) in asns:
                        continue
                    key = (v, asns | {shared[v]} if v in shared else asns)
                    if key in state_first:
                        continue
                    nxt.setdefault(key, set()).update(state_first[(u, asns)])
            state_first.update(nxt)
            frontier = list(nxt)
            depth += 1
        return dist, first

    def received(self, name: str) -> dict[str, int]:
        """Prefixes usable through each Established neighbour address (equal-best candidates, before the multipath cut)."""
        counts: dict[str, int] = {}
        for sessions in self.routes(name, every_candidate=True).values():
            for s in sessions:
                counts[s.neighbor] = counts.get(s.neighbor, 0) + 1
        return counts


def _ip_key(text: str) -> tuple[int, str]:
    a = _aton(text)
    return (1 << 32 if a is None else a), text


def compute(configs: dict[str, SwitchConfig], wiring) -> Model:
    return Model(configs, Links.from_wiring(wiring, configs))


def speaks_bgp(st) -> bool:
    """Whether the simulated switch ``st`` (lab/state.py's SwitchState) has a ``router bgp`` section in its running config.

    One that has none has no BGP session, no BFD session and no B route whatever the other switches and the cables
    are (every session and route starts at a ``neighbor`` line of one's own), so its answers come from
    :func:`alone` without reading the whole lab (a static 512-switch lab: ~13 s of CPU after each change)."""
    return st.bgp is not None or any(text.startswith("router bgp") for region in st.verbatim.values() for text in region)


def alone(name: str) -> Model:
    """The model of switch ``name`` without BGP (:func:`speaks_bgp` False), on its own: the answers it gives are the whole
    lab model's for that switch (``% BGP instance is not running.``, no BFD neighbour, no B route)."""
    return Model({name: SwitchConfig()}, Links(frozenset(), {}))


# ---------------------------------------------------------------- show outputs (RGOS layouts; see docs/verify-bgp.md)
UPTIME = "00:01:00"


def show_bgp_summary(m: Model, name: str) -> str:
    """`show ip bgp summary`: the layout is unconfirmed on RGOS (a Cisco-like table, the working assumption)."""
    r = m.configs[name].bgp
    if r is None:
        return "% BGP instance is not running."
    sessions = m.sessions.get(name, [])
    rcv = m.received(name)
    routes = m.routes(name)
    lines = [f"BGP router identifier {m.router_id(name)}, local AS number {r.asn}",
             f"BGP table version is {1 + len(routes)}",
             f"{len(routes) + len(m.originated(name))} BGP AS-PATH entries",
             "0 BGP Community entries", "",
             "Neighbor        V           AS MsgRcvd MsgSent   TblVer  InQ OutQ Up/Down  State/PfxRcd"]
    for s in sessions:
        up = s.state == ESTABLISHED
        msgs = 12 if up else 0
        state = str(rcv.get(s.neighbor, 0)) if up else s.state
        lines.append(f"{s.neighbor:<15} 4 {s.remote_as if s.remote_as is not None else 0:>12} {msgs:>7} {msgs:>7} "
                     f"{(1 + len(routes)) if up else 0:>8} {0:>4} {0:>4} {UPTIME if up else 'never':<8} {state}")
    lines += ["", f"Total number of neighbors {len(sessions)}, established neighbors {sum(s.state == ESTABLISHED for s in sessions)}"]
    return "\n".join(lines)


def show_bfd_neighbors(m: Model, name: str, abbreviate) -> str:
    """`show bfd neighbors` in the layout of ruijie.md."""
    lines = ["OurAddr          NeighAddr        LD/RD      RH/RS  Holdown(mult)  State  Int"]
    for i, b in enumerate(m.bfd.get(name, []), start=1):
        state = "Up" if b.up else "Down"
        hold = b.timers[1] * b.timers[2] if b.up else 0
        rd = i if b.up else 0
        lines.append(f"{b.local_address:<16} {b.neighbor:<16} {f'{i}/{rd}':<10} {state:<6} {f'{hold} ({b.timers[2]} )':<14} "
                     f"{state:<6} {abbreviate(b.interface)}")
    return "\n".join(lines)


def route_lines(m: Model, name: str) -> list[tuple[IPv4Network, str]]:
    """`show ip route` entries for the B routes: ECMP next hops on continuation lines."""
    out = []
    for net, sessions in m.routes(name).items():
        head = f"B     {net}"
        text = [f"{head} [20/0] via {sessions[0].neighbor}, {UPTIME}"]
        text += [f"{' ' * len(head)} [20/0] via {s.neighbor}, {UPTIME}" for s in sessions[1:]]
        out.append((net, "\n".join(text)))
    return out
