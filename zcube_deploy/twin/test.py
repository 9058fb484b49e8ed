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

import json
import random
import subprocess
import time
from pathlib import Path

from zcube_deploy.analysis import predict
from zcube_deploy.errors import InputErrors, Problem
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

    def cross_group_pairs(self, n: int | None, seed: int) -> tuple[list[tuple[str, str]], int]:
        """Ordered cross-group port pairs of each plane between different servers (all, or a seeded sample of n),
        and how many exist. Pairs inside one server are left out: its kernel delivers them locally, they never
        reach the fabric (and GPUs of one server talk over NVLink)."""
        blocks = []
        for plane in sorted({p["plane"] for p in self.by_addr.values()}):
            odd = sorted(a for a, p in self.by_addr.items() if p["plane"] == plane and p["group"] == "odd")
            even = sorted(a for a, p in self.by_addr.items() if p["plane"] == plane and p["group"] == "even")
            blocks += [(odd, even), (even, odd)]
        sizes = [len(a) * len(b) for a, b in blocks]
        grand = sum(sizes)
        srv = {a: p["server"] for a, p in self.by_addr.items()}
        per_server: dict[tuple[str, int, str], int] = {}
        for p in self.by_addr.values():
            key = (p["server"], p["plane"], p["group"])
            per_server[key] = per_server.get(key, 0) + 1
        same = sum(c * per_server.get((s, pl, "even" if g == "odd" else "odd"), 0) for (s, pl, g), c in per_server.items())
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

    def gpu_port_pairs(self, a: tuple, b: tuple) -> list[tuple[str, str]]:
        """Ordered port pairs between GPUs a and b (same plane), both directions."""
        out = []
        for x in self.gpus[a]:
            for y in self.gpus[b]:
                if self.by_addr[x]["plane"] == self.by_addr[y]["plane"]:
                    out += [(x, y), (y, x)]
        return out


def _gpu_pairs_for(ports: Ports, touched_switches: set[str], touched_cables: set[str], limit: int, seed: int) -> list[tuple]:
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
        for x, px in ports.by_addr.items():
            if px["switch"] not in ends:
                continue
            for y, py in ports.by_addr.items():
                if py["switch"] in ends and py["switch"] != px["switch"] and px["plane"] == py["plane"]:
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
            prefixes |= {sw["host_block"], f"{sw['loopback']}/32"}
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


def run(out_dir: str | Path, pairs: int | None = None, seed: int = 1, fail: list[str] | None = None, mode: str = "carrier",
        gpu_pairs: int = GPU_PAIRS_PER_FAILURE, log=lambda *_: None) -> dict:
    state = build.load(out_dir)
    if state.get("state") != "up" or not set(state["namespaces"].values()) <= set(netns.existing_namespaces()):
        raise InputErrors(Problem(str(Path(out_dir) / build.TWIN_FILE), f"the twin is not up (state {state.get('state')!r})",
                                  "build it with: zcube twin up PLAN -o DIR"))
    if mode not in failures.MODES:
        raise InputErrors(Problem("--mode", f"{mode!r} is not one of {', '.join(failures.MODES)}"))
    plan = json.loads(Path(state["plan"]).read_text())
    fails = failures.parse(fail or [], state, seed)
    ports = Ports(plan, state)
    routing = frr.routing_mode(plan)
    report: dict = {"twin": state["dir"], "cluster": state["cluster"], "routing": routing, "failure_mode": mode, "seed": seed,
                    "bfd": state.get("bfd"), "checks": []}

    # 1. baseline
    t0 = time.monotonic()
    pp, total = ports.cross_group_pairs(pairs, seed)
    log(f"baseline: {len(pp)} of {total} cross-group port pairs, TTL 3 then TTL 2")
    reach = traffic.ping_pairs(pp, ports.ns_of, ttl=3)
    # TTL 2: "time exceeded" comes back from the second switch at once; an echo reply would take a millisecond or
    # two in the twin, so 60 ms is ample and most of these fping runs only wait (hence twice the parallelism)
    short = traffic.ping_pairs([p for p in pp if reach[p]], ports.ns_of, ttl=2, timeout_ms=60, retry=False,
                               jobs=2 * traffic.JOBS)
    t_ping = time.monotonic() - t0
    fw = predict.Forwarding(plan)
    pred_hops = {}
    for p in pp:
        path = fw.path(*p)
        pred_hops[p] = len(path) if path else 0
    unreachable = [p for p in pp if not reach[p]]
    not_two = [p for p in pp if reach[p] and short.get(p)]
    pred_not_two = [p for p in pp if pred_hops[p] != 2]
    report["baseline"] = {"pairs_tested": len(pp), "pairs_total": total, "unreachable": len(unreachable),
                          "fewer_than_2_switches": len(not_two), "predicted_not_2_switches": len(pred_not_two),
                          "examples": [list(p) for p in (unreachable + not_two)[:10]], "seconds": round(t_ping, 2)}
    report["checks"].append({"name": "baseline: every pair reachable over exactly 2 switches",
                             "ok": not unreachable and not not_two and not pred_not_two})

    # 2. failures
    results = []
    slow = (state.get("bfd") or {}).get("others")
    fib_before = fib.shape(_tables(state))
    for k, f in enumerate(fails):
        log(f"failure {k + 1}/{len(fails)}: {f.label} ({mode})")
        cables, switches = set(f.cables), set(f.switches)

        # the analysis' forwarding state under this failure (and this failure mode)
        fw_after = predict.Forwarding(plan, cables, switches, mode)

        def after(prs, fw_after=fw_after):
            return [fw_after.probe(a, b) for a, b in prs]

        sessions = _fabric_sessions(plan, f) if routing == "bgp" else []
        if slow and sessions:
            _set_bfd(plan, state, sessions, frr.BFD_PROFILE)
            time.sleep(1.0)
        flows = _probe_flows(plan, state, ports, f, after)
        probes = traffic.start_probes(flows, ports.ns_of)
        dead, dead_prefixes = _dead_hops(plan, f)
        if routing != "bgp":
            dead_prefixes = set()  # static routes are not withdrawn: only the next hops over dead links go
            if mode == "silent":
                dead = {}  # and a silent failure takes nothing out of a static FIB: nothing to watch
        watched = [n for n in state["switches"] if n not in f.switches and (n in dead or dead_prefixes)]
        start_tables = {n: fib.full_table(state["switches"][n]["netns"]) for n in watched}
        monitors = {n: fib.Monitor(state["switches"][n]["netns"]) for n in watched}
        time.sleep(0.2)
        watch: dict = {}
        t_fail = time.time()
        try:
            failures.inject(state, f, mode)
            bfd = plan.get("routing", {}).get("bfd", {"interval_ms": 300, "multiplier": 3})
            settle = 1.5 + (bfd["interval_ms"] * bfd["multiplier"] / 1000 if routing == "bgp" else 0)
            time.sleep(settle)
            flow_results = [p.stop(t_fail) for p in probes]
            events = {n: m.stop() for n, m in monitors.items()}
            monitors = {}
            end_tables = {n: fib.table(state["switches"][n]["netns"]) for n in watched}
            # the tables read at the end must be clean; when they are, the replayed events say since when
            clean_end = fib.is_clean(end_tables, dead, dead_prefixes) if watched else None
            end_clean = {n: fib.is_clean({n: t}, dead, dead_prefixes) for n, t in end_tables.items()}
            tl = fib.timeline(start_tables, events, dead, dead_prefixes, t_fail, end_clean) if watched else {}

            def ms(t, t_fail=t_fail, clean_end=clean_end):
                return round((t - t_fail) * 1000, 1) if t is not None and clean_end else None

            watch = {"fib_switches_watched": len(watched), "fib_converge_ms": ms(tl.get("next_hops")),
                     "fib_dead_prefixes_ms": ms(tl.get("prefixes")) if dead_prefixes else None,
                     "fib_last_change_ms": ms(tl.get("last_change")),
                     "fib_next_hops_ms_per_switch": {n: ms(v["next_hops"]) for n, v in sorted(tl.get("per_switch", {}).items())},
                     "fib_dead_prefixes_ms_per_switch": {n: ms(v["prefixes"]) for n, v in sorted(tl.get("per_switch", {}).items())}
                     if dead_prefixes else None}
            touched_sw = switches | {l[end]["device"] for l in state["links"] if l["cable"] in cables for end in ("a", "b")
                                     if l[end]["device"] in state["switches"]}
            gp = _gpu_pairs_for(ports, touched_sw, cables, gpu_pairs, seed + k)
            port_pairs = [pr for a, b in gp for pr in ports.gpu_port_pairs(a, b)]
            measured = traffic.ping_pairs(port_pairs, ports.ns_of, ttl=None, timeout_ms=300)
            predicted = dict(zip(port_pairs, after(port_pairs)))
            disagree = [pr for pr in port_pairs if measured[pr] != predicted[pr]]
            m_bad = p_bad = 0
            for a, b in gp:
                prs = ports.gpu_port_pairs(a, b)
                m_bad += not any(measured[pr] for pr in prs)
                p_bad += not any(predicted[pr] for pr in prs)
            outages = [r["outage_ms"] for r in flow_results]
            converged = all(r["recovered"] for r in flow_results)
            converge_ms = max([o for o in outages if o is not None], default=0.0) if flow_results else None
            lost = sum(r["lost"] or 0 for r in flow_results)
        finally:  # an interrupted or failed measurement never leaves the failure (or a probe) in place
            for p in [*probes, *monitors.values()]:
                if p.proc.poll() is None:
                    p.proc.kill()
                    p.proc.wait()
            failures.repair(state, f, mode)
        restored = _wait_restored(plan, state, fib_before)
        if slow and sessions:
            _set_bfd(plan, state, sessions, frr.SLOW_BFD_PROFILE)
        res = {
            "failure": f.label, "spec": f.spec, "mode": mode,
            "probe_flows": flow_results,
            "converge_ms": converge_ms if converged else None,
            "fib_converge_ms": watch.get("fib_converge_ms"), "fib_switches_watched": watch.get("fib_switches_watched", 0),
            "fib_dead_prefixes_ms": watch.get("fib_dead_prefixes_ms"), "fib_last_change_ms": watch.get("fib_last_change_ms"),
            "fib_next_hops_ms_per_switch": watch.get("fib_next_hops_ms_per_switch"),
            "fib_dead_prefixes_ms_per_switch": watch.get("fib_dead_prefixes_ms_per_switch"),
            "converged": converged,
            "packets_lost": lost,
            "predicted_probes_survive": True,
            "gpu_pairs_measured": len(gp), "port_pairs_measured": len(port_pairs),
            "gpu_pairs_unreachable": m_bad, "gpu_pairs_unreachable_predicted": p_bad,
            "port_pairs_unreachable": sum(1 for v in measured.values() if not v),
            "port_pairs_unreachable_predicted": sum(1 for v in predicted.values() if not v),
            "disagreements": len(disagree),
            "disagreement_examples": [{"src": a, "dst": b, "measured": measured[(a, b)], "predicted": predicted[(a, b)]}
                                      for a, b in disagree[:5]],
            "restored": restored,
        }
        results.append(res)
        fib_ms = watch.get("fib_converge_ms")
        fib_ok = routing != "bgp" or not watch.get("fib_switches_watched") or (fib_ms is not None and fib_ms <= CONVERGE_LIMIT_MS)
        ok = (not disagree and converged and restored and fib_ok
              and (converge_ms is None or routing != "bgp" or converge_ms <= CONVERGE_LIMIT_MS))
        report["checks"].append({"name": f"{f.label} ({mode}): measured = predicted"
                                 + (f", converged <= {CONVERGE_LIMIT_MS:.0f} ms" if routing == "bgp" else ""), "ok": ok})
    report["failures"] = results
    if state.get("bfd") and state["bfd"].get("others"):
        report["bfd_note"] = state["bfd"]["note"]
    report["ok"] = all(c["ok"] for c in report["checks"])
    return report
