"""Every in-service port pair of each island walked through the twin's own kernel FIBs (`zcube twin test --fib-walk`;
issue 27: "0 unreachable among ALL in-service pairs").

Real packets (the baseline) reach a sample at the few hundred probes a second a loaded machine allows (glm-1k: 20,000
of 1.5-2.5 million port pairs a stage). This walks all of them, not on the plan's routes but on what the twin's kernels
hold after FRR converged: each switch's addresses and IPv4 main table, each server's policy rules and tables, read with
``ip -j`` in its namespace. A port pair (a, b) is walked as the kernel forwards it: the table of a's policy rule (the
rule from a's address), its first route to b (longest prefix, then lowest metric; an ``unreachable`` route ends the
walk; a route over a port without carrier is skipped, as ignore_routes_with_linkdown does) to a switch; at each
switch b's longest-prefix route of lowest metric, every ECMP next hop followed, until a switch holding b's /31
delivers it. It passes when every branch delivers over a number of switches its island's design takes
(``designs.PathRule.switches_per_path``), with no loop, black hole or next hop that is not directly connected. A GPU
pair reaches when some port pair of it passes both ways (the request a -> b, the reply b -> a): the analysis'
definition (analysis/predict.py).

Not walked, and said so: pairs inside one server (its kernel delivers them locally), pairs across the islands of a
migration stage (not expected to reach), GPUs out of service (no NIC port in the plan). Not seen: the data plane
itself (ARP, the veths: the probes see those) and a FIB that changes during the read (the switches' tables are read
before and after the walk and must be equal, else nothing counts as checked).
"""

from __future__ import annotations

import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

import numpy as np
from rich.table import Table

from zcube_deploy import designs
from zcube_deploy.ipv4 import aton
from zcube_deploy.topology.forwarding import Network
from zcube_deploy.twin.netns import NETNS_DIR
from zcube_deploy.twin.test import Check, Ports, Session

DEAD = {"dead", "linkdown"}
NO_NEXT_HOP = 0  # the next hop given to a blackhole / unreachable route: never directly connected, so the walk stops there
MAX_EXAMPLES = 10


def _ip_json(ns: str, *args: str) -> list:
    p = subprocess.run(["nsenter", f"--net={NETNS_DIR / ns}", "ip", "-j", "-4", *args], capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"ip -j -4 {' '.join(args)} in {ns}: {p.stderr.strip()[:300]}")
    return json.loads(p.stdout or "[]")


def _prefix(dst: str) -> tuple[int, int]:
    if dst == "default":
        return 0, 0
    net, _, plen = dst.partition("/")
    return aton(net), int(plen or 32)


def switch_routes(routes: list[dict]) -> tuple[list[tuple[int, int, int]], int]:
    """A switch's forwarding entries from ``ip -j -4 route show`` (its main table): per prefix the live next hops of
    its lowest-metric route with one (a blackhole or unreachable route: NO_NEXT_HOP); connected routes are the
    addresses' (left out). Returns (entries (network, prefix length, next hop), routes left out as not understood)."""
    best: dict[tuple[int, int], tuple[int, list[int]]] = {}
    odd = 0
    for r in routes:
        if r.get("protocol") == "kernel" and r.get("scope") == "link":
            continue
        if r.get("type") in ("blackhole", "unreachable", "prohibit"):
            hops = [NO_NEXT_HOP]
        else:
            members = r.get("nexthops") or [r]
            hops = [aton(m["gateway"]) for m in members if m.get("gateway") and not DEAD & set(m.get("flags", ()))]
            if not any(m.get("gateway") for m in members):
                odd += 1  # a route out of a device without a gateway that is not a connected one
                continue
        if not hops:
            continue
        key, metric = _prefix(r["dst"]), int(r.get("metric", 0))
        if key not in best or metric < best[key][0]:
            best[key] = (metric, hops)
    return [(net, plen, h) for (net, plen), (_, hops) in sorted(best.items()) for h in hops], odd


def interfaces(addrs: list[dict]) -> list[tuple[str, int, int]]:
    """(interface, address, prefix length) of every IPv4 address on an interface with carrier (``ip -j -4 addr``)."""
    return [(a["ifname"], aton(i["local"]), int(i["prefixlen"])) for a in addrs if "LOWER_UP" in a.get("flags", ())
            for i in a.get("addr_info", ()) if i.get("family") == "inet"]


def host_port_routes(rules: list[dict], routes: list[dict], address: str) -> list[tuple[int, int, int | None, int]] | None:
    """The routes a packet from ``address`` tries, in the kernel's order (longest prefix, then lowest metric), from the
    table its policy rule names (``ip -j -4 rule``, ``ip -j -4 route show table all``); an unreachable route's gateway
    is None. None: no rule for the address."""
    table = next((str(r["table"]) for r in sorted(rules, key=lambda r: r.get("priority", 0)) if r.get("src") == address), None)
    if table is None:
        return None
    out = []
    for r in routes:
        if str(r.get("table", "main")) != table or DEAD & set(r.get("flags", ())):
            continue
        net, plen = _prefix(r["dst"])
        gw = None if r.get("type") in ("unreachable", "blackhole", "prohibit") else (aton(r["gateway"]) if r.get("gateway") else None)
        out.append((net, plen, gw, int(r.get("metric", 0))))
    return sorted(out, key=lambda x: (-x[1], x[3]))


@dataclass(frozen=True)
class Kernel:
    """What was read from the twin's namespaces: per switch its interfaces and routes, per server its rules, routes
    and interfaces."""

    switches: dict[str, tuple[list, list]]
    hosts: dict[str, tuple[list, list, list]]


def read_kernel(state: dict, jobs: int = 4) -> Kernel:
    """Every switch's and server's FIB as ``ip -j`` prints it (a few namespaces at once)."""
    sw = {n: v["netns"] for n, v in state["switches"].items()}
    hosts = {n: ns for n, ns in state["namespaces"].items() if n not in sw}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        s = {n: pool.submit(lambda ns: (_ip_json(ns, "addr", "show"), _ip_json(ns, "route", "show")), ns) for n, ns in sw.items()}
        h = {n: pool.submit(lambda ns: (_ip_json(ns, "rule", "show"), _ip_json(ns, "route", "show", "table", "all"),
                                        _ip_json(ns, "addr", "show")), ns) for n, ns in hosts.items()}
        return Kernel({n: f.result() for n, f in sorted(s.items())}, {n: f.result() for n, f in sorted(h.items())})


def kernel_network(kernel: Kernel, ports: Ports) -> tuple[Network, list[str]]:
    """A :class:`Network` of the kernels' state: the switches' addresses and routes, each NIC port's address (when its
    interface has it with carrier) and the routes of its policy table. Returns (network, problems met reading it)."""
    net = Network()
    problems = []
    for name, (addrs, routes) in kernel.switches.items():
        entries, odd = switch_routes(routes)
        net.add_switch(name, interfaces(addrs), entries)
        if odd:
            problems.append(f"{name}: {odd} route(s) out of a device without a gateway, not followed")
    have = {(h, ip) for h, (_, _, addrs) in kernel.hosts.items() for _, ip, _ in interfaces(addrs)}
    for address, p in sorted(ports.by_addr.items()):
        rules, routes, _ = kernel.hosts[p["server"]]
        if (p["server"], aton(address)) not in have:
            problems.append(f"{p['server']}: {address} is on no interface with carrier")
            continue
        table = host_port_routes(rules, routes, address)
        if table is None:
            problems.append(f"{p['server']}: no policy rule from {address}")
        net.add_host_port(p["server"], address, aton(address), [(n, pl, gw) for n, pl, gw, _ in table or []])
    return net, problems


class _Walker:
    """Switch-by-switch resolution towards one destination, memoised (every source meets the same switches)."""

    def __init__(self, net: Network, max_switches: int):
        self.net, self.max = net, max_switches
        self.memo: dict[tuple[str, int], tuple[frozenset[int], str | None]] = {}

    def from_switch(self, sw: str, dst: int, depth: int = 1) -> tuple[frozenset[int], str | None]:
        """(the numbers of switches the branches from ``sw`` cross to deliver to ``dst``, the first error or None)."""
        key = (sw, dst)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        if depth > self.max:
            return frozenset(), f"more than {self.max} switches (a loop?) at {sw}"
        self.memo[key] = (frozenset(), f"loop through {sw}")  # seen again before it is resolved: a loop
        net = self.net
        if net.connected_to(sw, dst):
            out = (frozenset({1}), None) if dst in net.owner else (frozenset(), f"black hole at {sw}: nobody has the address")
        else:
            out = self._onwards(sw, dst, depth)
        self.memo[key] = out
        return out

    def _onwards(self, sw: str, dst: int, depth: int) -> tuple[frozenset[int], str | None]:
        hops = self.net.lookup(sw, dst)
        if not hops:
            return frozenset(), f"black hole at {sw}: no route"
        if NO_NEXT_HOP in hops:
            return frozenset(), f"black hole at {sw}: a blackhole or unreachable route"
        lengths: set[int] = set()
        for h in sorted(set(hops)):
            nxt = self.net.owner.get(h)
            if not self.net.connected_to(sw, h) or nxt is None or not self.net.is_switch(nxt):
                return frozenset(), f"next hop at {sw} is not a directly connected switch"
            got, err = self.from_switch(nxt, dst, depth + 1)
            if err:
                return frozenset(), err
            lengths |= {n + 1 for n in got}
        return frozenset(lengths), None

    def from_host(self, src: tuple[str, str], dst: int) -> tuple[frozenset[int], str | None]:
        via = self.net.first_hop(src, dst)
        if via is None:
            return frozenset(), f"no route from {src[1]} (or an unreachable one)"
        sw = self.net.owner.get(via)
        if sw is None or not self.net.is_switch(sw):
            return frozenset(), f"{src[1]}'s gateway is not a switch"
        return self.from_switch(sw, dst)


@dataclass(frozen=True)
class IslandWalk:
    gpus: int
    gpu_pairs: int                 # GPUs of different servers
    gpu_pairs_unreachable: int     # no port pair passing both ways
    port_pairs_walked: int
    port_pairs_failed: int         # not delivered, or over a number of switches the design does not take
    port_pairs_inside_one_server: int  # not walked: the kernel delivers them locally
    switches_per_path: str


@dataclass(frozen=True)
class FibWalk:
    """The FIB walk of every in-service port pair of each island (a Measurement of `twin test`)."""

    islands: dict[str, IslandWalk]
    cross_island_gpu_pairs: int    # not walked: a migration stage's islands are not expected to reach
    out_of_service_gpus: int       # not walked: no NIC port in the plan
    stable: bool                   # the switches' tables read after the walk equal those read before
    problems: list[str]            # what the read met (a port without its address, a route not followed)
    examples: list[list[str]]      # failed port pairs: source, destination, why
    seconds_read: float
    seconds_walk: float
    switches: int = 0
    hosts: int = 0
    notes: list[str] = field(default_factory=list)

    def checks(self) -> list[Check]:
        walked = sum(i.port_pairs_walked for i in self.islands.values())
        gpu = sum(i.gpu_pairs for i in self.islands.values())
        ok = self.stable and not self.problems and walked > 0
        return [Check(f"FIB walk: 0 of {gpu:,} in-service GPU pairs of each island unreachable (kernel FIBs, every pair)",
                      ok and not any(i.gpu_pairs_unreachable for i in self.islands.values())),
                Check(f"FIB walk: every one of {walked:,} port pairs delivered over its design's switches",
                      ok and not any(i.port_pairs_failed for i in self.islands.values()))]

    def as_dict(self) -> dict:
        d = asdict(self)
        d["kind"] = "fib_walk"
        d["checks"] = [asdict(c) for c in self.checks()]
        d["not_walked"] = {"pairs_inside_one_server": sum(i.port_pairs_inside_one_server for i in self.islands.values()),
                           "cross_island_gpu_pairs": self.cross_island_gpu_pairs, "out_of_service_gpus": self.out_of_service_gpus}
        return d

    def tables(self) -> list[Table]:
        t = Table(title=f"FIB walk: every in-service pair on the kernels' tables (read {self.seconds_read:.1f} s, "
                        f"walked {self.seconds_walk:.1f} s)", title_justify="left")
        for col in ("island", "GPUs", "GPU pairs", "unreach.", "port pairs", "failed"):
            t.add_column(col, justify="right" if col != "island" else "left")
        for name, i in self.islands.items():
            t.add_row(f"{name} {i.switches_per_path.replace(' or ', '/')}", f"{i.gpus:,}", f"{i.gpu_pairs:,}", str(i.gpu_pairs_unreachable),
                      f"{i.port_pairs_walked:,}", str(i.port_pairs_failed))
        t.caption = (f"not walked: {self.cross_island_gpu_pairs:,} GPU pairs across islands (not expected to reach), "
                     f"pairs inside one server, {self.out_of_service_gpus} GPU(s) out of service"
                     + ("" if self.stable else "; [red]FIBs changed during the read: nothing checked[/]")
                     + (f"; {len(self.problems)} read problem(s): {self.problems[0]}" if self.problems else ""))
        return [t]


def _island_walk(net: Network, ports: Ports, addrs: list[str], island: str, examples: list[list[str]]) -> IslandWalk:
    """Every ordered port pair of one island its design says reach (same plane, different servers) walked; GPU pairs
    from the port pairs passing both ways."""
    rule = designs.path_rule(island)
    allowed = rule.switches_per_path
    info = [ports.by_addr[a] for a in addrs]
    index = {a: k for k, a in enumerate(addrs)}
    gpus = sorted({p["gpu"] for p in info})
    gpu_of = np.array([gpus.index(p["gpu"]) for p in info])
    server = np.array([p["server"] for p in info])
    ok = np.zeros((len(addrs), len(addrs)), bool)
    walked = failed = inside = 0
    for d in addrs:
        walker = _Walker(net, rule.max_switches)
        dst, pd = aton(d), ports.by_addr[d]
        for s in addrs:
            ps = ports.by_addr[s]
            if ps["plane"] != pd["plane"] or pd["group"] not in rule.reaches.get(ps["group"], ()):
                continue
            if ps["server"] == pd["server"]:
                inside += 1
                continue
            walked += 1
            lengths, err = walker.from_host((ps["server"], s), dst)
            if err is None and lengths and not lengths <= allowed:
                err = f"over {'/'.join(str(n) for n in sorted(lengths))} switches, the design takes {'/'.join(str(n) for n in sorted(allowed))}"
            if err is None and not lengths:
                err = "no branch delivers"
            if err:
                failed += 1
                if len(examples) < MAX_EXAMPLES:
                    examples.append([s, d, err])
            else:
                ok[index[s], index[d]] = True
    both = (ok & ok.T).astype(np.float32)
    m = np.zeros((len(addrs), len(gpus)), np.float32)
    m[np.arange(len(addrs)), gpu_of] = 1.0
    reach = (m.T @ both @ m) > 0
    gserver = np.empty(len(gpus), dtype=object)
    gserver[gpu_of] = server
    apart = gserver[:, None] != gserver[None, :]
    upper = np.triu(np.ones((len(gpus), len(gpus)), bool), 1) & apart
    return IslandWalk(len(gpus), int(upper.sum()), int((upper & ~reach).sum()), walked, failed, inside,
                      " or ".join(str(n) for n in sorted(allowed)))


def walk(net: Network, ports: Ports, plan: dict) -> tuple[dict[str, IslandWalk], int, int, list[list[str]]]:
    """Every island walked on ``net``: (per island, GPU pairs across islands, GPUs out of service, failed examples)."""
    by_island: dict[str, list[str]] = {}
    for a in sorted(ports.by_addr):
        by_island.setdefault(ports.island_of(a), []).append(a)
    examples: list[list[str]] = []
    islands = {isl: _island_walk(net, ports, addrs, isl, examples) for isl, addrs in sorted(by_island.items())}
    sizes = [i.gpus for i in islands.values()]
    cross = sum(a * b for k, a in enumerate(sizes) for b in sizes[k + 1:])
    return islands, cross, ports.out_of_service(plan)["gpus"], examples


def measure(s: Session) -> FibWalk:
    """Read every kernel FIB of the twin, walk every in-service pair, read the switches' tables again."""
    s.log("FIB walk: reading every namespace's addresses, rules and routes")
    t0 = time.monotonic()
    kernel = read_kernel(s.state)
    net, problems = kernel_network(kernel, s.ports)
    t1 = time.monotonic()
    islands, cross, oos, examples = walk(net, s.ports, s.plan)
    t2 = time.monotonic()
    after = read_kernel(s.state)
    stable = {n: v[1] for n, v in after.switches.items()} == {n: v[1] for n, v in kernel.switches.items()}
    s.log(f"FIB walk: {sum(i.port_pairs_walked for i in islands.values()):,} port pairs walked in {t2 - t1:.1f} s")
    return FibWalk(islands, cross, oos, stable, problems, examples, round(t1 - t0, 2), round(t2 - t1, 2),
                   len(kernel.switches), len(kernel.hosts))


__all__ = ["FibWalk", "IslandWalk", "Kernel", "host_port_routes", "interfaces", "kernel_network", "measure", "read_kernel",
           "switch_routes", "walk"]
