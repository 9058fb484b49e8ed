"""A drain measured in the data-plane twin (`zcube twin test DIR --drain switch:NAME|link:CABLE`).

1. Every namespace's FIB is read (switches and servers: every IPv4 table and the policy rules).
2. Continuous probes (twin/probe.py) start between the port addresses of the GPU pairs chosen (all
   when they fit in the probe budget, else a seeded sample weighted to the GPUs the element touches;
   the record says exactly what was probed).
3. The drain runs against the twin's FRR in the order `zcube drain` uses (``drain.run.steps``:
   steer with the transit-only graceful shutdown, ``settle`` seconds while the twin measures when the
   neighbours stopped forwarding transit through the switch, the hosts take their GPU ports down (in
   the servers' namespaces, as ``--host-command`` does), host ports shut, fabric ports shut), each
   switch step one vtysh call per switch (platforms/frr ``drain_commands``), then the check: every
   drained port down, and the FIBs settled.
4. Once drained: every port pair of a sample of GPU pairs pinged once and compared with the analysis'
   prediction for the element removed (``twin.test.compare_reachability``, the drained switch as a
   switch whose ports are all down); the blast radius' figure (``zcube analyze``'s row) beside it.
5. Undrain, as `zcube undrain` runs it (staged: fabric ports, host ports, the hosts' ports with their
   routes, steer off; or every line in one step); then, once the sessions are up and the FIBs
   settled, every namespace's FIB compared with the one read in 1.

Measured: echoes lost on port pairs that do not end on a drained port (target 0, from the first step
to the drained check), when the flows that end there stopped, and how long a GPU pair with such a flow
went without any answered port pair (the time its traffic needed to move to its other ports), GPU
pairs unreachable once drained (target 0 and equal to the prediction), the FIB differences after the
undrain (target none). Known-bad orders (``ORDERS``) take ports down before transit is steered away,
or do not wait for it.
"""

from __future__ import annotations

import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.table import Table

from zcube_deploy.analysis import predict
from zcube_deploy.drain.blast import Blast, blast_radius, parse_element
from zcube_deploy.drain.run import HOST_STEP, DrainOptions, steps
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.platforms import frr
from zcube_deploy.platforms.frr import runtime
from zcube_deploy.twin import build, failures, hostfiles, netns, probe
from zcube_deploy.twin.test import Check, Comparison, Session, compare_reachability, gpu_pairs_for

ORDERS = {
    "drain": "zcube drain's order: transit-only graceful shutdown, settle, the hosts take their ports down, host ports, fabric ports",
    "no-hosts": "zcube drain without --host-command: carrier loss moves the hosts (what they sent meanwhile is lost)",
    "no-settle": "known bad: graceful shutdown and the ports at once, without waiting for the peers",
    "ports-first": "known bad: fabric ports shut before transit is steered (no graceful shutdown), then host ports",
}
PROBE_PERIOD_MS = 100.0
PROBE_RATE = 3000          # echoes per second: what the twin's kernel forwards on this shared 2-core machine at load ~10
UNDRAIN_ORDERS = {
    "staged": "zcube undrain's: fabric ports first, FIBs settled, then host ports, then graceful shutdown off",
    "one-push": "every drained line reversed in one push (undrain before it was staged: loses echoes, docs/drain.md)",
}
PORT_PAIRS_PER_GPU_PAIR = 4
SETTLE_LIMIT_S = 60.0
# A loaded machine deschedules the prober now and then (measured: 100-200 ms at load 11 on 2 cores): a pair then
# goes up to period + lag without an echo. Up to this many periods of lag the loss count stands, at a resolution of
# period + lag (printed); beyond it the check is not passed (the probes were blind too long).
LAG_LIMIT = 2


@dataclass(frozen=True)
class Step:
    """One drain step as applied to the twin: switch -> ports shut after it, graceful shutdown, the wait after it."""

    name: str
    shut: dict[str, tuple[str, ...]]
    graceful: bool
    wait_s: float


def twin_steps(blast: Blast, order: str, settle_s: float) -> list[Step]:
    """The drain's steps in ``order`` (``drain``: exactly ``drain.run.steps``)."""
    base = steps(blast)
    if order in ("drain", "no-hosts"):
        return [Step(n, s, g, settle_s if n == "steer" else 0.0) for n, s, g in base if order == "drain" or n != HOST_STEP]
    if order == "no-settle":
        return [Step(n, s, g, 0.0) for n, s, g in base]
    if blast.element.kind != "switch":
        raise InputErrors(Problem("--drain-order", f"{order} is a switch drain's known-bad order; a link is drained in one step"))
    sw = blast.element.name
    fabric = blast.ports[sw][len(blast.host_ports):]
    return [Step("fabric ports", {sw: fabric}, False, settle_s), Step("host ports", {sw: blast.ports[sw]}, False, 0.0)]


# ------------------------------------------------------------------------ FIBs of every namespace
def _fib_lines(ns: str) -> tuple[str, ...]:
    """Every IPv4 route of every table and every policy rule of ``ns``, one normalised line each (an ECMP
    route's next hops sorted: their order is not forwarding state)."""
    pre = ["nsenter", f"--net={netns.NETNS_DIR / ns}", "ip", "-4"]
    routes = subprocess.run([*pre, "route", "show", "table", "all"], capture_output=True, text=True).stdout
    rules = subprocess.run([*pre, "rule", "show"], capture_output=True, text=True).stdout
    out, cur = [], None
    for line in routes.splitlines():
        if line[:1].isspace() and cur is not None:
            cur[1].append(" ".join(line.split()))
            continue
        cur = (" ".join(line.split()), [])
        out.append(cur)
    lines = [head + "".join(f" | {h}" for h in sorted(hops)) for head, hops in out]
    return tuple(sorted(lines + [f"rule {' '.join(r.split())}" for r in rules.splitlines() if r.strip()]))


def snapshot(state: dict) -> dict[str, tuple[str, ...]]:
    """device -> its namespace's FIB lines (every switch and server of the twin)."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        futs = {dev: pool.submit(_fib_lines, ns) for dev, ns in state["namespaces"].items()}
        return {dev: f.result() for dev, f in sorted(futs.items())}


@dataclass(frozen=True)
class FibDiff:
    """A FIB line present before the drain and not after the undrain (``before``), or the other way round."""

    device: str
    line: str
    before: bool


def fib_diff(before: dict[str, tuple[str, ...]], after: dict[str, tuple[str, ...]]) -> list[FibDiff]:
    """Every line that differs, per device (pure: the known-bad case changes one route)."""
    out = []
    for dev in sorted(set(before) | set(after)):
        b, a = set(before.get(dev, ())), set(after.get(dev, ()))
        out += [FibDiff(dev, line, True) for line in sorted(b - a)] + [FibDiff(dev, line, False) for line in sorted(a - b)]
    return out


# ------------------------------------------------------------------------ the record
@dataclass(frozen=True)
class StepTime:
    name: str
    started: float
    ended: float
    commands: int


@dataclass(frozen=True)
class DrainMeasurement:
    """What `zcube twin test --drain` measured (times in epoch seconds; durations in ms)."""

    element: str
    order: str
    undrain_order: str
    routing: str
    steps: list[StepTime]
    ports_down: bool                        # the check: every drained port reads down in its switch's kernel
    probe_period_ms: float
    probe_kept_rate: bool                   # the prober kept its schedule through the drain window (LAG_LIMIT periods)
    probe_max_lag_ms: float                 # how far it fell behind in the drain window (ms)
    probe_max_lag_later_ms: float           # and afterwards (the reachability pings, the undrain): reported
    probe_late: list[list[float]]           # the 5 latest sends in the drain window: [s after the first step, ms late]
    gpu_pairs_in_service: int
    gpu_pairs_probed: int
    gpu_pairs_probed_touching: int          # of those, with a GPU on the drained element
    port_pairs_probed: int
    through_pairs: int                      # probed port pairs with no end on a drained port
    through_lost: int                       # their echoes lost in the drain window: a second before the first step to a
                                            # second after the drained check (FIBs settled)
    drained_through_lost: int               # reported: lost afterwards, while drained (during the reachability pings)
    crossing_pairs: int                     # through pairs whose healthy path crossed the element (they had to move)
    crossing_lost: int                      # their share of through_lost
    crossing_outage_ms: float | None        # the longest loss interval of one of them in the drain window
    through_lossy: list[dict]               # examples: pair, lost, loss intervals (ms after the first step)
    ending_pairs: int                       # probed port pairs with an end on a drained port
    ending_lost_before_ports: int           # their echoes lost before the first step that shut a port
    gpu_pairs_moved: int                    # probed GPU pairs with a port pair ending on a drained port
    move_ms: float | None                   # the longest such a GPU pair had no answered port pair (None: none moved)
    comparison: Comparison | None           # once drained, measured against predicted
    predicted_gpu_pairs_without_path: int   # the blast radius (`zcube analyze`'s row)
    undrain_through_lost: int               # reported, not a target: echoes lost on through pairs during the undrain
    fib_namespaces: int
    fib_diffs: list[FibDiff]
    fib_settled: bool                       # sessions up and FIBs as before (or stable) within the limit
    drained_s: float                        # first step to the drained check
    hosts_moved: bool                       # the hosts took their GPU ports down before the switch shut them
    steer_ms: float | None                  # after the steer, until no neighbour forwarded transit through the switch
    steered: bool | None                    # ... within the settle time (None: no steer step)

    def checks(self) -> list[Check]:
        c = self.comparison
        probed = f"{self.through_pairs} probed through pairs every {self.probe_period_ms:.0f} ms"
        return [
            Check(f"drain {self.element} ({self.order}): 0 packets lost on pairs not ending on its ports ({probed})",
                  self.through_lost == 0 and self.probe_kept_rate and self.through_pairs > 0),
            Check(f"drain {self.element}: every drained port down", self.ports_down),
            Check(f"drain {self.element}: 0 GPU pairs unreachable once drained, measured = predicted",
                  c is not None and c.gpu_unreachable == 0 and not c.disagreements and self.predicted_gpu_pairs_without_path == 0),
            Check(f"undrain {self.element}: every FIB as before the drain ({self.fib_namespaces} namespaces)",
                  not self.fib_diffs and self.fib_namespaces > 0),
        ] + ([] if self.steered is None else [Check(f"drain {self.element}: transit steered away before a port shut "
                                                    f"({'not within the settle time' if self.steer_ms is None else f'{self.steer_ms:.0f} ms'})",
                                                    self.steered)])

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks())

    def tables(self) -> list[Table]:
        """What the terminal shows (80 columns)."""
        return [steps_table(self), measured_table(self)]

    def as_dict(self) -> dict:
        d = asdict(self)
        d["fib_diffs"] = [asdict(x) for x in self.fib_diffs[:50]]
        d["fib_diff_count"] = len(self.fib_diffs)
        if self.comparison is not None:
            cmp = d["comparison"]
            cmp["disagreements"] = cmp["disagreements"][:10]
            cmp["disagreement_count"] = len(self.comparison.disagreements)
        d["checks"] = [asdict(c) for c in self.checks()]
        d["ok"] = self.ok
        return d


# ------------------------------------------------------------------------ the run
def _apply(s: Session, step_shut: dict[str, set[str]], before: dict[str, set[str]], graceful: set[str], was_graceful: set[str]) -> int:
    """Bring every switch from (``before``, ``was_graceful``) to (``step_shut``, ``graceful``), one vtysh call each, in parallel."""
    names = s.state["interfaces"]
    cmds = {}
    for sw in sorted(set(step_shut) | set(before) | graceful | was_graceful):
        now, old = step_shut.get(sw, set()), before.get(sw, set())
        g = (sw in graceful) if (sw in graceful) != (sw in was_graceful) else None
        c = frr.drain_commands(s.state["switches"][sw]["asn"], [names[sw][p] for p in sorted(now - old)],
                               [names[sw][p] for p in sorted(old - now)], g, own=own_prefixes(s.plan, sw))
        if c:
            cmds[sw] = c
    with ThreadPoolExecutor(max_workers=8) as pool:
        for f in [pool.submit(runtime.vtysh, Path(s.state["switches"][sw]["run_dir"]), *c) for sw, c in cmds.items()]:
            f.result()
    return sum(len(c) for c in cmds.values())


def own_prefixes(plan: dict, name: str) -> list[str]:
    """What a switch originates (its GPU host block and loopback): sent untagged while it steers transit away."""
    sw = next(x for x in plan["switches"] if x["name"] == name)
    return [p for p in (sw.get("host_block"), f"{sw['loopback']}/32") if p]


@dataclass(frozen=True)
class HostPort:
    """A GPU port of the drained switch as its host sees it: namespace, interface, gateway, its routes (ip lines)."""

    ns: str
    dev: str
    address: str
    gateway: str
    routes: tuple[str, ...]


def host_ports(s: Session, blast: Blast) -> list[HostPort]:
    """The drained switch's GPU ports on their hosts, each with the routes its rendered netplan file gives it (read
    once, before the drain: they are what the undrain puts back)."""
    nic = {f"{srv['name']}:{n['port']}": n for srv in s.plan["servers"] for n in srv["nics"]}
    cmds: dict[str, list[str]] = {}
    out = []
    for hp in blast.host_ports:
        srv, port = hp.split(":", 1)
        if srv not in cmds:
            cmds[srv], problems = hostfiles.netplan_commands(Path(s.state["dir"]) / "rendered" / "hosts" / f"{srv}.yaml",
                                                             s.state["interfaces"][srv])
            hostfiles.check(problems)
        dev = s.state["interfaces"][srv][port]
        out.append(HostPort(s.state["namespaces"][srv], dev, nic[hp]["address"], nic[hp]["gateway"],
                            tuple(c for c in cmds[srv] if c.startswith("route add ") and f" dev {dev} " in f"{c} ")))
    return out


def _gateway_answers(hp: HostPort) -> bool:
    """One echo from the port to its switch (resolves ARP on both ends before any route sends traffic that way)."""
    return subprocess.run(["nsenter", f"--net={netns.NETNS_DIR / hp.ns}", "fping", "-q", "-c1", "-t1000", "-I", hp.dev, hp.gateway],
                          capture_output=True).returncode == 0


def _hosts(ports: list[HostPort], state: str, log=lambda *_: None) -> int:
    """Step ``hosts`` in the twin, as ``--host-command`` does it on each host: ``down``: the port set down in its
    server's namespace (the kernel drops its routes at once, so the next packet takes the fallback, while the
    switch's side is still up); ``up``: the port set up, its gateway answering (ARP resolved), then its routes again
    (what networkd does when a link comes back). Returns the lines run."""
    per_ns: dict[str, list[str]] = {}
    for hp in ports:
        per_ns.setdefault(hp.ns, []).append(f"link set dev {hp.dev} {state}")
    netns.batches(per_ns)
    if state == "up":
        with ThreadPoolExecutor(max_workers=16) as pool:
            for hp, ok in zip(ports, pool.map(_gateway_answers, ports)):
                if not ok:  # reported by the FIB check and the probes; the routes go back anyway
                    log(f"undrain hosts: {hp.ns} {hp.dev}: its gateway {hp.gateway} did not answer")
        routes: dict[str, list[str]] = {}
        for hp in ports:
            routes.setdefault(hp.ns, []).extend(hp.routes)
        netns.batches(routes)
        return sum(len(v) for v in per_ns.values()) + sum(len(v) for v in routes.values())
    return sum(len(v) for v in per_ns.values())


def _transit_users(s: Session, name: str) -> int:
    """How many routes of the drained switch's neighbours, for prefixes it does not originate, still have a next hop
    through it (0: transit is steered away)."""
    sw = next(x for x in s.plan["switches"] if x["name"] == name)
    via = {i["address"] for i in sw["interfaces"] if i["kind"] == "fabric"}
    own = set(own_prefixes(s.plan, name))
    n = 0
    for peer in sorted({i["peer"]["device"] for i in sw["interfaces"] if i["kind"] == "fabric"}):
        ns = s.state["switches"][peer]["netns"]
        out = subprocess.run(["nsenter", f"--net={netns.NETNS_DIR / ns}", "ip", "-j", "-4", "route", "show", "proto", "bgp"],
                             capture_output=True, text=True).stdout
        for r in json.loads(out or "[]"):
            hops = {h.get("gateway") for h in r.get("nexthops", [])} | {r.get("gateway")}
            dst = r.get("dst", "")
            n += (dst if "/" in dst else f"{dst}/32") not in own and bool(hops & via)  # `ip -j` writes a host route bare
    return n


GSHUT_NAMES = {"graceful-shutdown", "65535:0"}


def gshut_tags(s: Session, neighbour: str, name: str) -> dict[str, bool]:
    """prefix -> whether ``neighbour``'s path for it from switch ``name`` carries GRACEFUL_SHUTDOWN (every prefix the
    neighbour learned from it, read with vtysh: its BGP table, not the FIB)."""
    sw = next(x for x in s.plan["switches"] if x["name"] == name)
    addr = next(i["address"] for i in sw["interfaces"] if i["kind"] == "fabric" and i["peer"]["device"] == neighbour)
    run = Path(s.state["switches"][neighbour]["run_dir"])
    learned = runtime.vtysh_json(run, f"show bgp ipv4 unicast neighbors {addr} routes json").get("routes", {})
    out = {}
    for prefix in sorted(learned):
        paths = runtime.vtysh_json(run, f"show bgp ipv4 unicast {prefix} json").get("paths", [])
        mine = [p for p in paths if (p.get("peer") or {}).get("peerId") == addr]
        out[prefix] = any(set((p.get("community") or {}).get("string", "").split()) & GSHUT_NAMES for p in mine)
    return out


def steer_problems(tags: dict[str, bool], own: list[str]) -> list[str]:
    """What is wrong with a transit-only graceful shutdown as a neighbour sees it (pure): the switch's own prefixes
    must arrive untagged, everything else it sends (transit) tagged."""
    out = [f"{p}: own prefix not received" for p in own if p not in tags]
    out += [f"{p}: own prefix tagged GRACEFUL_SHUTDOWN" for p in own if tags.get(p)]
    out += [f"{p}: transit not tagged" for p, tagged in sorted(tags.items()) if p not in own and not tagged]
    return out + ([] if set(tags) - set(own) else ["no transit received from it"])


def _wait_steered(s: Session, name: str, limit_s: float) -> float | None:
    """ms from now until no neighbour forwards transit through ``name`` (polled), None if not within ``limit_s``."""
    t0 = time.monotonic()
    while time.monotonic() - t0 <= limit_s:
        if _transit_users(s, name) == 0:
            return round((time.monotonic() - t0) * 1000, 1)
        time.sleep(0.1)
    return None


def _ports_down(s: Session, shut: dict[str, set[str]]) -> bool:
    for sw, ports in shut.items():
        ns = s.state["switches"][sw]["netns"]
        out = subprocess.run(["nsenter", f"--net={netns.NETNS_DIR / ns}", "ip", "-br", "link"], capture_output=True, text=True).stdout
        up = {line.split()[0].split("@")[0] for line in out.splitlines() if len(line.split()) > 1 and line.split()[1] != "DOWN"}
        if any(s.state["interfaces"][sw][p] in up for p in ports):
            return False
    return True


def _switch_fibs(s: Session) -> dict:
    return {n: _fib_lines(sw["netns"]) for n, sw in s.state["switches"].items()}


def _settle(s: Session, limit: float = SETTLE_LIMIT_S, want: dict | None = None) -> bool:
    """Wait until the switches' FIBs are unchanged for a second (or equal to ``want``); False at the limit."""
    deadline, last = time.monotonic() + limit, None
    while time.monotonic() < deadline:
        now = _switch_fibs(s)
        if now == last or (want is not None and now == want):
            return True
        last = now
        time.sleep(1.0)
    return False


def _probe_set(s: Session, blast: Blast, budget: int) -> tuple[list[tuple], list[tuple[str, str]], int]:
    """(GPU pairs, their port pairs (each once, from the first GPU's port), GPU pairs touching the element)."""
    touched_sw = set(blast.ports) if blast.element.kind == "switch" or blast.fabric_links else set()
    touched_cables = {blast.element.name} if blast.element.kind == "link" else set()
    gp = gpu_pairs_for(s.ports, touched_sw, touched_cables, max(1, budget // PORT_PAIRS_PER_GPU_PAIR), s.seed)
    pairs = [(x, y) for a, b in gp for x in s.ports.gpus[a] for y in s.ports.gpus[b]
             if s.ports.by_addr[x]["plane"] == s.ports.by_addr[y]["plane"]]
    touching = sum(1 for a, b in gp if any(s.ports.by_addr[x]["switch"] in touched_sw or s.ports.by_addr[x]["cable"] in touched_cables
                                           for g in (a, b) for x in s.ports.gpus[g]))
    return gp, pairs, touching


def _crossing(s: Session, blast: Blast, pairs: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """The pairs whose healthy request or reply path crosses the element (``predict.Forwarding.path``: exact on the
    2-switch paths of the healthy fabric; for a fabric cable: the path joins its two ends, so the pair may hash onto it)."""
    fw = predict.Forwarding(s.plan)
    ends = set(blast.ports)
    host = {a for a, p in s.ports.by_addr.items() if p["cable"] == blast.element.name}
    out = set()
    for a, b in pairs:
        paths = [fw.path(a, b) or [], fw.path(b, a) or []]
        if blast.element.kind == "switch":
            hit = any(blast.element.name in p for p in paths)
        elif blast.fabric_links:
            hit = any(set(p[i:i + 2]) == ends for p in paths for i in range(len(p) - 1))
        else:  # a host cable: the GPU whose port it is, leaving by that port's switch (its other-port route)
            gpus = {s.ports.by_addr[x]["gpu"] for x in host}
            hit = any(s.ports.by_addr[x]["gpu"] in gpus and p and p[0] in ends for x, p in ((a, paths[0]), (b, paths[1])))
        if hit:
            out.add((a, b))
    return out


def _gpu_pairs_in_service(s: Session) -> int:
    keys = s.ports.gpu_keys
    per_server: dict[str, int] = {}
    for srv, _ in keys:
        per_server[srv] = per_server.get(srv, 0) + 1
    n = len(keys)
    return n * (n - 1) // 2 - sum(c * (c - 1) // 2 for c in per_server.values())


def _longest_common_loss(pairs: list[probe.PairProbe], t0: float, t1: float) -> float:
    """The longest time in [t0, t1) during which every pair of ``pairs`` was inside a loss interval (ms)."""
    spans = None
    for p in pairs:
        mine = [(max(i.start, t0), min(i.end, t1)) for i in p.intervals if i.end > t0 and i.start < t1]
        if spans is None:
            spans = mine
        else:
            spans = [(max(a, c), min(b, d)) for a, b in spans for c, d in mine if max(a, c) < min(b, d)]
        if not spans:
            return 0.0
    return round(max((b - a for a, b in spans or []), default=0.0) * 1000, 1)


def _undrain(s: Session, blast: Blast, order: str, shut: dict[str, set[str]], graceful: set[str], hosts: list[HostPort],
             log) -> list[StepTime]:
    """Undo what the drain did (``shut``, ``graceful``, the ``hosts`` it took down) in ``order``: ``staged`` as
    `zcube undrain` runs it (fabric ports, sessions and FIBs settled, GPU ports, the hosts' ports, steer off), or
    everything at once."""
    def timed(name: str, run) -> StepTime:
        u = time.time()
        n = run()
        return StepTime(name, u, time.time(), n)

    done = []
    if order == "staged" and blast.element.kind == "switch" and shut:
        sw = blast.element.name
        host = set(blast.ports[sw][:len(blast.host_ports)]) & shut.get(sw, set())
        done.append(timed("undrain fabric ports", lambda: _apply(s, {sw: host}, shut, graceful, graceful)))
        build.wait_converged(s.plan, s.state)
        _settle(s)
        done.append(timed("undrain host ports", lambda: _apply(s, {}, {sw: host}, graceful, graceful)))
        if hosts:
            done.append(timed("undrain hosts", lambda: _hosts(hosts, "up", log)))
        done.append(timed("undrain steer", lambda: _apply(s, {}, {}, set(), graceful)))
    else:
        done.append(timed("undrain", lambda: _apply(s, {}, shut, set(), graceful) + (_hosts(hosts, "up", log) if hosts else 0)))
    return done


def measure(s: Session, element_text: str, order: str = "drain", settle_s: float | None = None, period_ms: float = PROBE_PERIOD_MS,
            rate: int = PROBE_RATE, undrain_order: str = "staged", log=lambda *_: None) -> DrainMeasurement:
    """Drain ``element_text`` in the twin of session ``s`` while probing, measure, undrain, compare the FIBs (module doc).
    The twin is always undrained, even when a measurement fails. One function of ~90 lines on purpose: the steps
    share the running prober and the times they stamp, and read top to bottom as the drain happens."""
    if order not in ORDERS:
        raise InputErrors(Problem("--drain-order", f"{order!r} is not one of {', '.join(ORDERS)}"))
    if undrain_order not in UNDRAIN_ORDERS:
        raise InputErrors(Problem("--undrain-order", f"{undrain_order!r} is not one of {', '.join(UNDRAIN_ORDERS)}"))
    element = parse_element(element_text, s.plan)
    blast = blast_radius(s.plan, element)
    plan_steps = twin_steps(blast, order, DrainOptions(Path(".")).settle_s if settle_s is None else settle_s)
    addr_of = {f"{srv['name']}:{n['port']}": n["address"] for srv in s.plan["servers"] for n in srv["nics"]}
    drained_addrs = {addr_of[h] for h in blast.host_ports}
    gp, pairs, touching = _probe_set(s, blast, int(rate * period_ms / 1000))
    log(f"drain {element.key} ({order}): reading {len(s.state['namespaces'])} FIBs, probing {len(pairs)} port pairs of "
        f"{len(gp)} GPU pairs every {period_ms:.0f} ms")
    fib_before = snapshot(s.state)
    on_hosts = host_ports(s, blast) if any(st.name == HOST_STEP for st in plan_steps) else []
    prober = probe.Prober(pairs, s.ports.ns_of, period_ms=period_ms).start()
    done: list[StepTime] = []
    shut: dict[str, set[str]] = {}
    graceful: set[str] = set()
    comparison, hosts_down, steer_ms = None, False, None
    try:
        time.sleep(1.0)
        t_first = time.time()
        for st in plan_steps:
            t = time.time()
            if st.name == HOST_STEP:
                n, hosts_down = _hosts(on_hosts, "down"), True
            else:
                now = {sw: set(p) for sw, p in st.shut.items()}
                now_g = set(st.shut) if st.graceful else set()
                n = _apply(s, now, shut, now_g, graceful)
                shut, graceful = now, now_g
            done.append(StepTime(st.name, t, time.time(), n))
            log(f"step {st.name}: {n} lines, {time.time() - t:.2f} s")
            if st.name == "steer":  # the settle time, as zcube drain waits it; meanwhile measured: when transit was gone
                steer_ms = _wait_steered(s, element.name, st.wait_s)
                log(f"transit steered away after {steer_ms} ms" if steer_ms is not None else "transit NOT steered away in the settle time")
            time.sleep(max(0.0, st.wait_s - (time.time() - done[-1].ended)))
        ports_down = _ports_down(s, shut)
        _settle(s)
        time.sleep(1.0)
        t_drained = time.time()
        fail = failures.Failure(element.key, cables=[element.name] if element.kind == "link" else [],
                                switches=[element.name] if element.kind == "switch" else [])
        fw_after = predict.Forwarding(s.plan, set(fail.cables), set(fail.switches), "carrier")
        comparison = compare_reachability(s, fail, 0, lambda prs: [fw_after.probe(a, b) for a, b in prs])
        t_undrain = time.time()
    finally:  # the twin is undrained whatever happened
        u0 = time.time()
        done += _undrain(s, blast, undrain_order, shut, graceful, on_hosts if hosts_down else [], log)
        settled = build.wait_converged(s.plan, s.state) == [] and _settle(s, want={k: fib_before[k] for k in s.state["switches"]})
        fib_after = snapshot(s.state)
        time.sleep(1.0)
        result = prober.stop()
    by_pair = {(p.src, p.dst): p for p in result.pairs}
    crossing = _crossing(s, blast, [(p.src, p.dst) for p in result.pairs])
    ending = [p for p in result.pairs if p.src in drained_addrs or p.dst in drained_addrs]
    through = [p for p in result.pairs if p.src not in drained_addrs and p.dst not in drained_addrs]
    t_from = t_first - 1.0  # strict: from before the first step on
    lossy = sorted(((p, p.lost_between(t_from, t_drained)) for p in through), key=lambda x: -x[1])
    first_port_step = next((x.started for x in done if x.name != "steer"), t_drained)
    moved = [g for g in gp if any(x in drained_addrs for g_ in g for x in s.ports.gpus[g_])]
    move = [_longest_common_loss([by_pair[(x, y)] for x in s.ports.gpus[a] for y in s.ports.gpus[b] if (x, y) in by_pair],
                                 t_first, t_undrain) for a, b in moved]
    return DrainMeasurement(
        element=element.key, order=order, undrain_order=undrain_order, routing=s.routing, steps=done, ports_down=ports_down,
        probe_period_ms=period_ms, probe_kept_rate=result.max_lag_between(t_from, t_drained) <= LAG_LIMIT * period_ms,
        probe_max_lag_ms=result.max_lag_between(t_from, t_drained), probe_max_lag_later_ms=result.max_lag_between(t_drained, result.stopped + 1),
        probe_late=[[round(t - t_first, 2), ms] for t, ms in sorted((x for x in result.late if t_from <= x[0] < t_drained),
                                                                     key=lambda x: -x[1])[:5]],
        gpu_pairs_in_service=_gpu_pairs_in_service(s), gpu_pairs_probed=len(gp), gpu_pairs_probed_touching=touching,
        port_pairs_probed=len(pairs), through_pairs=len(through), through_lost=sum(n for _, n in lossy),
        through_lossy=[{"src": p.src, "dst": p.dst, "lost": n,
                        "intervals_ms": [[round((i.start - t_first) * 1000), round(i.ms)] for i in p.intervals if t_from <= i.start < t_drained]}
                       for p, n in lossy[:10] if n],
        ending_pairs=len(ending), ending_lost_before_ports=sum(p.lost_between(t_from, first_port_step) for p in ending),
        drained_through_lost=sum(p.lost_between(t_drained, t_undrain) for p in through), gpu_pairs_moved=len(moved),
        crossing_pairs=sum(1 for p in through if (p.src, p.dst) in crossing),
        crossing_lost=sum(n for p, n in lossy if (p.src, p.dst) in crossing),
        crossing_outage_ms=max((i.ms for p in through if (p.src, p.dst) in crossing for i in p.intervals
                                if t_from <= i.start < t_drained), default=0.0), move_ms=max(move) if move else None, comparison=comparison,
        predicted_gpu_pairs_without_path=blast.gpu_pairs_without_routed_path,
        undrain_through_lost=sum(p.lost_between(u0, result.stopped + 1) for p in through),
        fib_namespaces=len(fib_before), fib_diffs=fib_diff(fib_before, fib_after), fib_settled=settled,
        drained_s=round(t_drained - t_first, 2), hosts_moved=hosts_down, steer_ms=steer_ms,
        steered=None if not any(x.name == "steer" for x in done) else steer_ms is not None)


# ------------------------------------------------------------------------ terminal tables (80 columns)
def _ok(v: bool) -> str:
    return "[green]ok[/]" if v else "[red]FAIL[/]"


def steps_table(m: DrainMeasurement) -> Table:
    t = Table(title=f"drain {m.element} in the twin ({m.order}): steps", title_justify="left")
    t.add_column("step")
    for col in ("at s", "took s", "vtysh lines"):
        t.add_column(col, justify="right")
    t0 = m.steps[0].started if m.steps else 0.0
    for st in m.steps:
        t.add_row(st.name, f"{st.started - t0:.2f}", f"{st.ended - st.started:.2f}", str(st.commands))
    return t


def measured_table(m: DrainMeasurement) -> Table:
    c = m.comparison
    checks = m.checks()
    t = Table(title=f"drain {m.element} in the twin ({m.routing}): measured", title_justify="left")
    t.add_column("measure", overflow="fold")
    t.add_column("value", overflow="fold")
    t.add_column("ok")
    lag = f", every pair at least every {m.probe_period_ms + m.probe_max_lag_ms:.0f} ms" if m.probe_kept_rate else \
        f", [red]fell {m.probe_max_lag_ms:.0f} ms behind: blind[/]"
    t.add_row("probed (the rest not probed)", f"{m.gpu_pairs_probed} of {m.gpu_pairs_in_service} GPU pairs "
              f"({m.gpu_pairs_probed_touching} touching), {m.port_pairs_probed} port pairs every {m.probe_period_ms:.0f} ms{lag}", "")
    t.add_row("lost, pairs not ending on its ports", f"{m.through_lost} echoes ({m.through_pairs} pairs)", _ok(checks[0].ok))
    t.add_row("  of which crossing it (moved)", f"{m.crossing_lost} echoes ({m.crossing_pairs} pairs), longest outage "
              f"{m.crossing_outage_ms or 0:.0f} ms", "")
    t.add_row("pairs ending on its ports", f"{m.ending_pairs}; lost before a port shut: {m.ending_lost_before_ports}", "")
    if m.steered is not None:
        t.add_row("transit steered away", "not within the settle time" if m.steer_ms is None else f"after {m.steer_ms:.0f} ms",
                  _ok(bool(m.steered)))
    t.add_row("GPU ports moved by", "their hosts (step hosts)" if m.hosts_moved else "carrier loss (no hosts step)", "")
    t.add_row("GPU pairs that moved", "none" if m.move_ms is None else
              f"{m.gpu_pairs_moved}; longest without an answer {m.move_ms:.0f} ms", "")
    t.add_row("drained ports down", "yes" if m.ports_down else "no", _ok(checks[1].ok))
    t.add_row("GPU pairs unreachable once drained", "not measured" if c is None else
              f"{c.gpu_unreachable} of {c.gpu_pairs} / predicted {c.gpu_unreachable_predicted} (analysis: "
              f"{m.predicted_gpu_pairs_without_path}); {len(c.disagreements)} port pairs differ", _ok(checks[2].ok))
    t.add_row(f"lost later: while drained / {m.undrain_order}", f"{m.drained_through_lost} / {m.undrain_through_lost} echoes"
              + (f" (prober {m.probe_max_lag_later_ms:.0f} ms behind)" if m.probe_max_lag_later_ms > m.probe_period_ms else ""), "")
    t.add_row("FIBs after the undrain", f"{len(m.fib_diffs)} lines differ in {m.fib_namespaces} namespaces"
              + ("" if m.fib_settled else " (not settled)"), _ok(checks[3].ok))
    return t
