"""``zcube twin test``: real packets through the twin, then failures, compared with the analysis.

1. **Baseline.** Cross-group GPU-port pairs (all, or a seeded sample): each pair gets an echo
   with TTL 3 (must be answered) and one with TTL 2 (must not: the second switch answers "time
   exceeded"), i.e. exactly two switches on the request path, as ``analysis.predict.path_switches``
   says.
2. **Failures**, one at a time, each repaired before the next: probe flows (``ping -i 0.002``)
   run across the failed element when one survives it; the failure is injected; the largest gap in
   each flow's replies is the outage (time to converge) and its missing sequence numbers the
   packets lost. Once settled, GPU pairs are measured with the definition of
   ``analysis.predict`` (a != b reachable when some port of a reaches some port of b, in either
   direction) on the GPUs the failure touches plus a sample of others, and every port pair's
   measured outcome is compared with ``predict_pairs`` for the same failed elements. A
   disagreement is a finding.
"""

from __future__ import annotations

import random
import subprocess
import time
from collections.abc import Callable
from typing import Protocol
from dataclasses import asdict, dataclass, field
from pathlib import Path

from zcube_deploy import designs
from zcube_deploy.analysis import predict
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.plan.io import read_plan
from zcube_deploy.plan.roles import ROLES
from zcube_deploy.platforms import frr
from zcube_deploy.platforms.frr import runtime
from zcube_deploy.twin import build, failures, fib, netns, traffic

CONVERGE_LIMIT_MS = 1000.0
MAX_PROBES = 4
GPU_PAIRS_PER_FAILURE = 2000


class Ports:
    """The plan's NIC ports by address, grouped by GPU."""

    def __init__(self, plan: dict, state: dict):
        self.by_addr: dict[str, dict] = {}
        self.gpus: dict[tuple[str, int], list[str]] = {}
        for srv in plan["servers"]:
            for nic in srv["nics"]:
                info = {"server": srv["name"], "gpu": (srv["name"], nic["gpu"]), "group": nic["group"], "plane": nic["plane"],
                        "switch": nic["switch"], "cable": nic["cable"], "address": nic["address"]}
                self.by_addr[nic["address"]] = info
                self.gpus.setdefault(info["gpu"], []).append(nic["address"])
        self.ns_of = {a: state["namespaces"][p["server"]] for a, p in self.by_addr.items()}
        self.gpu_keys = sorted(self.gpus)

    def island_of(self, address: str) -> str:
        """The island of a port: the design of its switch's role (a migration stage's ROFT side or ZCube side)."""
        return designs.island_of(self.by_addr[address]["group"])

    def cross_group_pairs(self, n: int | None, seed: int) -> tuple[list[tuple[str, str]], int]:
        """Ordered port pairs of each plane between different servers that the design of their island says reach each
        other (``designs.PathRule.reaches``: ZCube odd <-> even, a ROFT's leaf -> leaf; a migration stage's two islands
        apart, never a pair across them); all, or a seeded sample of n, and how many exist. Pairs inside one server are
        left out: its kernel delivers them locally, they never reach the fabric (and GPUs of one server talk over NVLink)."""
        by_role: dict[tuple[int, str], list[str]] = {}
        for a, p in sorted(self.by_addr.items()):
            by_role.setdefault((p["plane"], p["group"]), []).append(a)
        reach = {(pl, r): designs.path_rule(designs.island_of(r)).reaches.get(r, ()) for pl, r in by_role}
        order = list(ROLES)  # odd, even, then a ROFT's leaf: the blocks in the order the seeded samples have always used
        keys = sorted(by_role, key=lambda k: (k[0], order.index(k[1]) if k[1] in order else len(order), k[1]))
        blocks = [(by_role[k], by_role[(k[0], to)]) for k in keys for to in reach[k] if (k[0], to) in by_role]
        sizes = [len(a) * len(b) for a, b in blocks]
        grand = sum(sizes)
        srv = {a: p["server"] for a, p in self.by_addr.items()}
        per_server: dict[tuple[str, int, str], int] = {}
        for p in self.by_addr.values():
            key = (p["server"], p["plane"], p["group"])
            per_server[key] = per_server.get(key, 0) + 1
        same = sum(c * per_server.get((s, pl, to), 0) for (s, pl, g), c in per_server.items() for to in reach[(pl, g)])
        total = grand - same

        def at(i):
            for (a, b), size in zip(blocks, sizes):
                if i < size:
                    return a[i // len(b)], b[i % len(b)]
                i -= size
            raise IndexError(i)

        if n is None or n >= total:
            out = [p for p in (at(i) for i in range(grand)) if srv[p[0]] != srv[p[1]]]
            return out, total
        rng = random.Random(seed)
        chosen: set[int] = set()
        while len(chosen) < n:
            i = rng.randrange(grand)
            if i not in chosen:
                x, y = at(i)
                if srv[x] != srv[y]:
                    chosen.add(i)
        return [at(i) for i in sorted(chosen)], total

    def gpu_pair_ports(self) -> tuple[list[tuple[str, str]], int]:
        """One port pair per GPU pair of each island (unordered, GPUs of different servers): the first port of GPU a
        (by address) whose design reaches a port of GPU b on its plane, to the first such port of b; and how many GPU
        pairs there are (a GPU pair without such a port pair is left out of the list and so counts as not reached)."""
        ports = {g: [(self.by_addr[a]["plane"], self.by_addr[a]["group"], a) for a in sorted(addrs)] for g, addrs in self.gpus.items()}
        reach = {r: designs.path_rule(designs.island_of(r)).reaches.get(r, ()) for r in {p["group"] for p in self.by_addr.values()}}
        by_island: dict[str, list[tuple[str, int]]] = {}
        for g in self.gpu_keys:
            by_island.setdefault(self.island_of(ports[g][0][2]), []).append(g)
        out, total = [], 0
        for gpus in by_island.values():
            for i, a in enumerate(gpus):
                for b in gpus[i + 1:]:
                    if a[0] == b[0]:
                        continue
                    total += 1
                    pair = next(((x, y) for pl, r, x in ports[a] for pl2, r2, y in ports[b] if pl == pl2 and r2 in reach[r]), None)
                    if pair:
                        out.append(pair)
        return out, total

    def out_of_service(self, plan: dict) -> dict:
        """The GPUs of the plan's servers without a NIC port in the plan (a stage's units out of service): not probed."""
        per_server = plan["models"]["server"]["gpus"]
        cabled = {gpu for gpu in self.gpus}
        gpus = [(srv["name"], g) for srv in plan["servers"] for g in range(per_server) if (srv["name"], g) not in cabled]
        return {"gpus": len(gpus), "servers": sorted({s for s, _ in gpus}),
                "note": "no NIC port in the plan: out of service, not probed" if gpus else "every GPU in service"}

    def gpu_port_pairs(self, a: tuple, b: tuple) -> list[tuple[str, str]]:
        """Ordered port pairs between GPUs a and b (same plane), both directions."""
        out = []
        for x in self.gpus[a]:
            for y in self.gpus[b]:
                if self.by_addr[x]["plane"] == self.by_addr[y]["plane"]:
                    out += [(x, y), (y, x)]
        return out


def gpu_pairs_for(ports: Ports, touched_switches: set[str], touched_cables: set[str], limit: int, seed: int) -> list[tuple]:
    """GPU pairs to measure after a failure: those with a GPU the failure touches (sampled when many), plus others."""
    keys = ports.gpu_keys
    hit = [g for g in keys if any(ports.by_addr[a]["switch"] in touched_switches or ports.by_addr[a]["cable"] in touched_cables
                                  for a in ports.gpus[g])]
    rng = random.Random(seed)
    every = [(keys[i], keys[j]) for i in range(len(keys)) for j in range(i + 1, len(keys)) if keys[i][0] != keys[j][0]] \
        if len(keys) <= 256 else None
    if every is not None and len(every) <= limit:
        return every
    chosen = set()
    hitset = set(hit)
    near = [(a, b) for a in hit for b in keys if a[0] != b[0] and not (b in hitset and b < a)]
    for a, b in rng.sample(near, min(len(near), limit * 3 // 4)):
        chosen.add((min(a, b), max(a, b)))
    while len(chosen) < limit:
        a, b = rng.sample(keys, 2)
        if a[0] != b[0]:
            chosen.add((min(a, b), max(a, b)))
    return sorted(chosen)


def _route_dev(state: dict, switch: str, src: str, dst: str, iif: str) -> str | None:
    """The interface the switch's kernel forwards (src -> dst, arriving on iif) out of: its real ECMP choice."""
    ns = state["switches"][switch]["netns"]
    p = subprocess.run(["nsenter", f"--net={netns.NETNS_DIR / ns}", "ip", "-4", "route", "get", dst, "from", src, "iif", iif,
                        "ipproto", "icmp"], capture_output=True, text=True)
    parts = p.stdout.split()
    return parts[parts.index("dev") + 1] if "dev" in parts else None


def _probe_flows(plan: dict, state: dict, ports: Ports, fail: failures.Failure, after) -> list[tuple[str, str]]:
    """Port pairs whose packets cross the failed element before it fails and that the analysis says survive it.

    For a fabric cable the switch's own kernel tells which flows hash onto it (``ip route get``).
    """
    fabric = {l["cable"]: l for l in state["links"] if l["kind"] == "fabric"}
    host_itf = {}
    for l in state["links"]:
        if l["kind"] == "host":
            host_itf[l["b"]["port"], l["b"]["device"]] = l["a"]["ifname"]
    cands = []
    for c in fail.cables:
        if c not in fabric:
            continue
        l = fabric[c]
        ends = (l["a"]["device"], l["b"]["device"])
        # both ends carry ports (ZCube): flows between them; one end only (a ROFT leaf's uplink): flows from it to any other switch
        both = all(any(p["switch"] == e for p in ports.by_addr.values()) for e in ends)
        for x, px in ports.by_addr.items():
            if px["switch"] not in ends:
                continue
            for y, py in ports.by_addr.items():
                if (py["switch"] in ends or not both) and py["switch"] != px["switch"] and px["plane"] == py["plane"]:
                    cands.append((x, y))
    rng = random.Random(7)
    rng.shuffle(cands)
    chosen = []
    nic_port = {n["address"]: n["port"] for s in plan["servers"] for n in s["nics"]}
    failed_devs = {(fabric[c][end]["device"], fabric[c][end]["ifname"]) for c in fail.cables if c in fabric for end in ("a", "b")}
    tried = 0
    for x, y in cands:
        if tried >= 300 or len(chosen) >= MAX_PROBES:
            break
        if not after([(x, y)])[0]:
            continue
        px = ports.by_addr[x]
        iif = host_itf.get((nic_port[x], px["server"]))
        if not iif:
            continue
        tried += 1
        if (px["switch"], _route_dev(state, px["switch"], x, y, iif)) in failed_devs:
            chosen.append((x, y))
    return chosen


def _fabric_sessions(plan: dict, fail: failures.Failure) -> list[tuple[str, str]]:
    """(switch, neighbour address) of every BGP session the failure takes down (both ends)."""
    out = []
    for sw in plan["switches"]:
        for itf in sw["interfaces"]:
            if itf["kind"] != "fabric":
                continue
            if itf["cable"] in fail.cables or sw["name"] in fail.switches or itf["peer"]["device"] in fail.switches:
                out.append((sw["name"], itf["peer"]["address"]))
    return out


def _set_bfd(plan: dict, state: dict, sessions: list[tuple[str, str]], profile: str) -> None:
    asn = {s["name"]: s["asn"] for s in plan["switches"]}
    for sw, addr in sessions:
        runtime.set_neighbor_bfd_profile(Path(state["switches"][sw]["run_dir"]), asn[sw], addr, profile)


def _dead_hops(plan: dict, fail: failures.Failure) -> tuple[dict[str, set[str]], set[str]]:
    """Per surviving switch, the next-hop addresses the failure kills; and the prefixes that must disappear."""
    dead: dict[str, set[str]] = {}
    prefixes: set[str] = set()
    for sw in plan["switches"]:
        if sw["name"] in fail.switches:
            prefixes |= {sw["host_block"], f"{sw['loopback']}/32"} - {None}  # (a ROFT spine has no host block)
            continue
        for itf in sw["interfaces"]:
            if itf["kind"] == "fabric" and (itf["cable"] in fail.cables or itf["peer"]["device"] in fail.switches):
                dead.setdefault(sw["name"], set()).add(itf["peer"]["address"])
    return dead, prefixes


def routing_of(plan: dict) -> str:
    return frr.routing_mode(plan)


def _tables(state: dict) -> dict[str, dict[str, tuple]]:
    return {name: fib.table(sw["netns"]) for name, sw in state["switches"].items()}


def _wait_restored(plan: dict, state: dict, before: dict, timeout: float = 60.0) -> bool:
    """Wait until every switch's FIB has the routes it had before the failure, each with as many live next hops."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fib.shape(_tables(state)) == before:
            return True
        time.sleep(0.3)
    return False


# ------------------------------------------------------------------------ the measurement records
@dataclass(frozen=True)
class Check:
    name: str
    ok: bool


@dataclass(frozen=True)
class Baseline:
    """The healthy fabric: every cross-group port pair reachable over exactly two switches (a ROFT's port pairs over
    their predicted path: one leaf, or leaf, spine, leaf). ``fewer_than_2_switches``: pairs answered with fewer switches
    than predicted; ``predicted_not_2_switches``: pairs whose predicted path is not the design's (ZCube 2; ROFT 1 or 3)."""

    pairs_tested: int
    pairs_total: int
    unreachable: int
    fewer_than_2_switches: int
    predicted_not_2_switches: int
    examples: list[list[str]]
    seconds: float
    expected: str = "2"  # the switches a healthy path crosses: ZCube's "2", a ROFT's "1 or 3"; per island in a stage
    islands: dict = field(default_factory=dict)  # island (design) -> pairs tested / of / unreachable / expected switches
    out_of_service: dict = field(default_factory=dict)  # GPUs without a NIC port in the plan: not probed, said so
    unit: str = "port pairs"  # or "GPU pairs" (--every-gpu-pair: one port pair per GPU pair of each island)

    @property
    def ok(self) -> bool:
        return not self.unreachable and not self.fewer_than_2_switches and not self.predicted_not_2_switches

    def check(self) -> Check:
        return Check(f"baseline: every pair reachable over exactly {self.expected} switches", self.ok)


@dataclass(frozen=True)
class FibConvergence:
    """When the surviving switches' FIBs were clean after a failure (ms after it; None: never, or not clean at the end)."""

    switches_watched: int = 0
    converge_ms: float | None = None               # no switch forwards to a dead next hop any more
    dead_prefixes_ms: float | None = None          # no switch holds a dead switch's prefix (None when none dies)
    last_change_ms: float | None = None
    next_hops_ms_per_switch: dict[str, float | None] | None = None
    dead_prefixes_ms_per_switch: dict[str, float | None] | None = None


@dataclass(frozen=True)
class Disagreement:
    src: str
    dst: str
    measured: bool
    predicted: bool


@dataclass(frozen=True)
class Comparison:
    """Reachability measured after a failure against the analysis' prediction, per port pair and per GPU pair."""

    gpu_pairs: int
    port_pairs: int
    gpu_unreachable: int
    gpu_unreachable_predicted: int
    port_unreachable: int
    port_unreachable_predicted: int
    disagreements: list[Disagreement]      # every port pair whose measured outcome is not the predicted one


def compare(groups: list[tuple[tuple, list[tuple[str, str]]]], measured: dict[tuple[str, str], bool],
            predicted: dict[tuple[str, str], bool]) -> Comparison:
    """Measured against predicted. ``groups``: each GPU pair with its port pairs (both directions); a GPU
    pair is reachable when some port pair of it is. Pure: the known-bad case feeds it a disagreement."""
    port_pairs = [pr for _, prs in groups for pr in prs]
    return Comparison(
        gpu_pairs=len(groups), port_pairs=len(port_pairs),
        gpu_unreachable=sum(not any(measured[pr] for pr in prs) for _, prs in groups),
        gpu_unreachable_predicted=sum(not any(predicted[pr] for pr in prs) for _, prs in groups),
        port_unreachable=sum(1 for v in measured.values() if not v),
        port_unreachable_predicted=sum(1 for v in predicted.values() if not v),
        disagreements=[Disagreement(a, b, measured[(a, b)], predicted[(a, b)]) for a, b in port_pairs
                       if measured[(a, b)] != predicted[(a, b)]])


@dataclass(frozen=True)
class FailureMeasurement:
    """One failure injected, measured and repaired."""

    failure: failures.Failure
    mode: str
    routing: str
    flows: list[traffic.FlowRecord]     # probe flows across the failed element
    fib: FibConvergence
    comparison: Comparison
    restored: bool                       # every FIB as before the failure once it was repaired

    @property
    def converged(self) -> bool:
        return all(f.recovered for f in self.flows)

    @property
    def converge_ms(self) -> float | None:
        """The longest outage of a probe flow (0 without flows; None when a flow never came back)."""
        if not self.converged:
            return None
        return max([f.outage_ms for f in self.flows if f.outage_ms is not None], default=0.0) if self.flows else None

    @property
    def packets_lost(self) -> int:
        return sum(f.lost or 0 for f in self.flows)

    @property
    def ok(self) -> bool:
        """Measured = predicted, flows back, FIBs restored; mode bgp: converged (flows and FIBs) within the limit."""
        bgp = self.routing == "bgp"
        fib_ok = not bgp or not self.fib.switches_watched or (self.fib.converge_ms is not None and self.fib.converge_ms <= CONVERGE_LIMIT_MS)
        flows_ok = self.converge_ms is None or not bgp or self.converge_ms <= CONVERGE_LIMIT_MS
        return not self.comparison.disagreements and self.converged and self.restored and fib_ok and flows_ok

    def check(self) -> Check:
        limit = f", converged <= {CONVERGE_LIMIT_MS:.0f} ms" if self.routing == "bgp" else ""
        return Check(f"{self.failure.label} ({self.mode}): measured = predicted{limit}", self.ok)

    def as_dict(self) -> dict:
        c, fw = self.comparison, self.fib
        return {
            "failure": self.failure.label, "spec": self.failure.spec, "mode": self.mode,
            "probe_flows": [asdict(f) for f in self.flows],
            "converge_ms": self.converge_ms, "converged": self.converged, "packets_lost": self.packets_lost,
            "fib_converge_ms": fw.converge_ms, "fib_switches_watched": fw.switches_watched,
            "fib_dead_prefixes_ms": fw.dead_prefixes_ms, "fib_last_change_ms": fw.last_change_ms,
            "fib_next_hops_ms_per_switch": fw.next_hops_ms_per_switch,
            "fib_dead_prefixes_ms_per_switch": fw.dead_prefixes_ms_per_switch,
            "predicted_probes_survive": True,
            "gpu_pairs_measured": c.gpu_pairs, "port_pairs_measured": c.port_pairs,
            "gpu_pairs_unreachable": c.gpu_unreachable, "gpu_pairs_unreachable_predicted": c.gpu_unreachable_predicted,
            "port_pairs_unreachable": c.port_unreachable, "port_pairs_unreachable_predicted": c.port_unreachable_predicted,
            "disagreements": len(c.disagreements), "disagreement_examples": [asdict(d) for d in c.disagreements[:5]],
            "restored": self.restored,
        }


class Measurement(Protocol):
    """A measurement a caller runs on the twin's session after the failures (e.g. a drain): its checks, its JSON
    record and its terminal tables."""

    def checks(self) -> list[Check]: ...

    def as_dict(self) -> dict: ...

    def tables(self) -> list: ...


@dataclass(frozen=True)
class TwinReport:
    """What `zcube twin test` measured; ``as_dict`` is the JSON report (DIR/test-report.json)."""

    twin: str
    cluster: str
    routing: str
    failure_mode: str
    seed: int
    bfd: dict | None
    baseline: Baseline
    failures: list[FailureMeasurement]
    extra: tuple[Measurement, ...] = ()   # measurements added by the caller (a drain: drain/twin.py)

    @property
    def checks(self) -> list[Check]:
        return [self.baseline.check()] + [f.check() for f in self.failures] + [c for m in self.extra for c in m.checks()]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def bfd_note(self) -> str | None:
        return self.bfd["note"] if self.bfd and self.bfd.get("others") else None

    def as_dict(self) -> dict:
        out = {"twin": self.twin, "cluster": self.cluster, "routing": self.routing, "failure_mode": self.failure_mode,
               "seed": self.seed, "bfd": self.bfd, "checks": [asdict(c) for c in self.checks],
               "baseline": asdict(self.baseline), "failures": [f.as_dict() for f in self.failures],
               "measurements": [m.as_dict() for m in self.extra], "ok": self.ok}
        if self.bfd_note:
            out["bfd_note"] = self.bfd_note
        return out


# ------------------------------------------------------------------------ the steps
@dataclass
class Session:
    """One `twin test` run: the twin, its plan, the ports and the options."""

    state: dict
    plan: dict
    ports: Ports
    routing: str
    mode: str
    seed: int
    gpu_pairs: int
    log: Callable[[str], None]
    fib_before: dict = field(default_factory=dict)

    @property
    def slow_bfd(self) -> dict | None:
        return (self.state.get("bfd") or {}).get("others")


def open_session(out_dir: str | Path, mode: str, seed: int, gpu_pairs: int, log) -> Session:
    """The twin in ``out_dir``, checked to be up, with its plan and ports."""
    state = build.load(out_dir)
    if state.get("state") != "up" or not set(state["namespaces"].values()) <= set(netns.existing_namespaces()):
        raise InputErrors(Problem(str(Path(out_dir) / build.TWIN_FILE), f"the twin is not up (state {state.get('state')!r})",
                                  "build it with: zcube twin up PLAN -o DIR"))
    if mode not in failures.MODES:
        raise InputErrors(Problem("--mode", f"{mode!r} is not one of {', '.join(failures.MODES)}"))
    plan = read_plan(state["plan"])  # validated as every command's plan (an edited or replaced plan.json: exit 2)
    return Session(state, plan, Ports(plan, state), frr.routing_mode(plan), mode, seed, gpu_pairs, log)


def measure_baseline(s: Session, pairs: int | None, every_gpu_pair: bool = False) -> Baseline:
    """Port pairs of each island with TTL h + 1 (must be answered) and TTL h (must not), h the predicted path's
    switches, which must be one its island's design takes (``designs.PathRule.switches_per_path``). With
    ``every_gpu_pair``: one port pair per GPU pair of each island (Ports.gpu_pair_ports), every one."""
    t0 = time.monotonic()
    pp, total = s.ports.gpu_pair_ports() if every_gpu_pair else s.ports.cross_group_pairs(pairs, s.seed)
    island = {p: s.ports.island_of(p[0]) for p in pp}
    allowed = {isl: designs.path_rule(isl).switches_per_path for isl in set(island.values())}
    fw = predict.Forwarding(s.plan)
    pred_hops = {}
    for p in pp:
        path = fw.path(*p)
        pred_hops[p] = len(path) if path else 0
    # a pair whose path crosses h switches: TTL h + 1 must be answered, TTL h must not (ZCube: h = 2 for every pair)
    bucket = {p: h if h >= 1 else 2 for p, h in pred_hops.items()}  # (a pair predicted unrouted is pinged as ZCube's)
    ttls = sorted(set(bucket.values()))
    said = {isl: " or ".join(str(h) for h in sorted(a)) for isl, a in allowed.items()}
    kinds = " and ".join(f"{isl} island" for isl in sorted(allowed)) if len(allowed) > 1 else \
        ("same-plane" if "roft" in allowed else "cross-group")
    oos = s.ports.out_of_service(s.plan)
    s.log(f"baseline: {len(pp)} of {total} {kinds} {'GPU pairs (a port pair each)' if every_gpu_pair else 'port pairs'}, TTL " + ", ".join(f"{h + 1} then {h}" for h in ttls)
          + (f"; {oos['gpus']} GPU(s) out of service, not probed" if oos["gpus"] else ""))
    reach, short = {}, {}
    for h in ttls:
        these = [p for p in pp if bucket[p] == h]
        reach.update(traffic.ping_pairs(these, s.ports.ns_of, ttl=h + 1))
        # TTL h: "time exceeded" comes back from the h-th switch at once; an echo reply would take a millisecond or
        # two in the twin, so 60 ms is ample and most of these fping runs only wait (hence twice the parallelism)
        short.update(traffic.ping_pairs([p for p in these if reach[p] and h > 1], s.ports.ns_of, ttl=h,
                                        timeout_ms=60, retry=False, jobs=2 * traffic.JOBS))
    t_ping = time.monotonic() - t0
    unreachable = [p for p in pp if not reach[p]]
    shorter = [p for p in pp if reach[p] and short.get(p)]
    per_island = {isl: {"pairs_tested": sum(1 for p in pp if island[p] == isl), "unreachable": sum(1 for p in unreachable if island[p] == isl),
                        "switches_per_path": said[isl]} for isl in sorted(allowed)}
    return Baseline(pairs_tested=len(pp), pairs_total=total, unreachable=len(unreachable) + total - len(pp) if every_gpu_pair else len(unreachable),
                    fewer_than_2_switches=len(shorter), unit="GPU pairs" if every_gpu_pair else "port pairs",
                    predicted_not_2_switches=sum(1 for p in pp if pred_hops[p] not in allowed[island[p]]),
                    examples=[list(p) for p in (unreachable + shorter)[:10]], seconds=round(t_ping, 2),
                    expected="; ".join(f"{said[i]} ({i} island)" for i in sorted(said)) if len(said) > 1 else next(iter(said.values()), "2"),
                    islands=per_island, out_of_service=oos)


def _fib_watch(s: Session, f: failures.Failure) -> tuple[list[str], dict[str, set[str]], set[str]]:
    """(switches whose FIB must change, the next hops each loses, the prefixes that must go) under failure ``f``."""
    dead, dead_prefixes = _dead_hops(s.plan, f)
    if s.routing != "bgp":
        dead_prefixes = set()  # static routes are not withdrawn: only the next hops over dead links go
        if s.mode == "silent":
            dead = {}  # and a silent failure takes nothing out of a static FIB: nothing to watch
    watched = [n for n in s.state["switches"] if n not in f.switches and (n in dead or dead_prefixes)]
    return watched, dead, dead_prefixes


def fib_convergence(watched: list[str], start_tables: dict, events: dict, end_tables: dict, dead: dict[str, set[str]],
                    dead_prefixes: set[str], t_fail: float) -> FibConvergence:
    """The FIB timeline (route events replayed onto the tables read before the failure), in ms after it;
    every time is None unless the tables read at the end are clean."""
    if not watched:
        return FibConvergence(0, None, None, None, {}, {} if dead_prefixes else None)
    clean_end = fib.is_clean(end_tables, dead, dead_prefixes)
    end_clean = {n: fib.is_clean({n: t}, dead, dead_prefixes) for n, t in end_tables.items()}
    tl = fib.timeline(start_tables, events, dead, dead_prefixes, t_fail, end_clean)

    def ms(t):
        return round((t - t_fail) * 1000, 1) if t is not None and clean_end else None

    per_switch = sorted(tl.per_switch.items())
    return FibConvergence(
        switches_watched=len(watched), converge_ms=ms(tl.next_hops),
        dead_prefixes_ms=ms(tl.prefixes) if dead_prefixes else None, last_change_ms=ms(tl.last_change),
        next_hops_ms_per_switch={n: ms(v.next_hops) for n, v in per_switch},
        dead_prefixes_ms_per_switch={n: ms(v.prefixes) for n, v in per_switch} if dead_prefixes else None)


def compare_reachability(s: Session, f: failures.Failure, k: int, after) -> Comparison:
    """GPU pairs the failure touches (and others), every port pair pinged once settled, against ``after``'s prediction."""
    cables, switches = set(f.cables), set(f.switches)
    touched_sw = switches | {l[end]["device"] for l in s.state["links"] if l["cable"] in cables for end in ("a", "b")
                             if l[end]["device"] in s.state["switches"]}
    groups = [((a, b), s.ports.gpu_port_pairs(a, b)) for a, b in gpu_pairs_for(s.ports, touched_sw, cables, s.gpu_pairs, s.seed + k)]
    port_pairs = [pr for _, prs in groups for pr in prs]
    measured = traffic.ping_pairs(port_pairs, s.ports.ns_of, ttl=None, timeout_ms=300)
    return compare(groups, measured, dict(zip(port_pairs, after(port_pairs))))


def measure_failure(s: Session, f: failures.Failure, k: int) -> FailureMeasurement:
    """Inject ``f``, measure the probe flows' outage, the FIBs' convergence and reachability against the
    prediction, repair it (always, even when the measurement fails) and wait for the FIBs to be as before."""
    fw_after = predict.Forwarding(s.plan, set(f.cables), set(f.switches), s.mode)

    def after(prs):
        return [fw_after.probe(a, b) for a, b in prs]

    sessions = _fabric_sessions(s.plan, f) if s.routing == "bgp" else []
    if s.slow_bfd and sessions:
        _set_bfd(s.plan, s.state, sessions, frr.BFD_PROFILE)
        time.sleep(1.0)
    probes = traffic.start_probes(_probe_flows(s.plan, s.state, s.ports, f, after), s.ports.ns_of)
    watched, dead, dead_prefixes = _fib_watch(s, f)
    start_tables = {n: fib.full_table(s.state["switches"][n]["netns"]) for n in watched}
    monitors = {n: fib.Monitor(s.state["switches"][n]["netns"]) for n in watched}
    time.sleep(0.2)
    t_fail = time.time()
    try:
        failures.inject(s.state, f, s.mode)
        bfd = s.plan.get("routing", {}).get("bfd", {"interval_ms": 300, "multiplier": 3})
        time.sleep(1.5 + (bfd["interval_ms"] * bfd["multiplier"] / 1000 if s.routing == "bgp" else 0))
        flows = [p.stop(t_fail) for p in probes]
        events = {n: m.stop() for n, m in monitors.items()}
        monitors = {}
        end_tables = {n: fib.table(s.state["switches"][n]["netns"]) for n in watched}
        convergence = fib_convergence(watched, start_tables, events, end_tables, dead, dead_prefixes, t_fail)
        comparison = compare_reachability(s, f, k, after)
    finally:  # an interrupted or failed measurement never leaves the failure (or a probe) in place
        for p in [*probes, *monitors.values()]:
            if p.proc.poll() is None:
                p.proc.kill()
                p.proc.wait()
        failures.repair(s.state, f, s.mode)
    restored = _wait_restored(s.plan, s.state, s.fib_before)
    if s.slow_bfd and sessions:
        _set_bfd(s.plan, s.state, sessions, frr.SLOW_BFD_PROFILE)
    return FailureMeasurement(f, s.mode, s.routing, flows, convergence, comparison, restored)


def run(out_dir: str | Path, pairs: int | None = None, seed: int = 1, fail: list[str] | None = None, mode: str = "carrier",
        gpu_pairs: int = GPU_PAIRS_PER_FAILURE, log=lambda *_: None,
        then: Callable[[Session], list[Measurement]] | None = None, every_gpu_pair: bool = False,
        first: Callable[[Session], list[Measurement]] | None = None) -> TwinReport:
    """The baseline, then ``first``'s measurements of the healthy twin (e.g. the FIB walk: twin/fibwalk.py), then each
    failure in turn (injected, measured, repaired), then ``then``'s measurements."""
    s = open_session(out_dir, mode, seed, gpu_pairs, log)
    fails = failures.parse(fail or [], s.state, seed)
    baseline = measure_baseline(s, pairs, every_gpu_pair)
    healthy = tuple(first(s)) if first else ()
    s.fib_before = fib.shape(_tables(s.state))
    results = []
    for k, f in enumerate(fails):
        log(f"failure {k + 1}/{len(fails)}: {f.label} ({mode})")
        results.append(measure_failure(s, f, k))
    extra = healthy + (tuple(then(s)) if then else ())
    return TwinReport(twin=s.state["dir"], cluster=s.state["cluster"], routing=s.routing, failure_mode=mode, seed=seed,
                      bfd=s.state.get("bfd"), baseline=baseline, failures=results, extra=extra)
