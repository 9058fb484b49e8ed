"""An expansion pushed into the data-plane twin under continuous probes (`zcube expand ... --twin DIR`).

The twin in DIR runs the OLD plan (`zcube twin up OLD_PLAN -o DIR`). While the prober (twin/probe.py)
pings port pairs between the existing GPUs without pause:

1. the technicians' part: each new server gets its namespace, sysctls and veths (one per new cable;
   the switch end created down, as a reserved port is shut) and its rendered netplan file applied;
2. the push: each changed switch gets the lines its FRR config gains, in one vtysh call (a new
   port's `interface` block with its description and address, then `no shutdown`, which brings the
   port up), the switches one after the other as push's batches go;
3. the new GPU pairs are pinged until each answers (the expansion works), then the prober stops.

Before anything is sent the two FRR renders are compared: every section of the old one must be in
the new one unchanged (the twin's own add-only check). Measured: echoes lost between existing GPUs
from the first new namespace to the end (target 0), the prober's lag, new port pairs answering.
The measurement is written to DIR/expand.json; twin.json then describes the grown twin (its
namespaces, interfaces, links), so `zcube twin down` removes all of it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.platforms import frr
from zcube_deploy.platforms.frr import runtime
from zcube_deploy.render import render_all
from zcube_deploy.twin import build, hostfiles, netns, probe
from zcube_deploy.twin.test import Ports

PERIOD_MS = 100.0
RATE = 3000  # echoes per second the twin forwards on this shared machine (drain/twin.py measured the same figure)
NEW_PAIRS = 64  # new port pairs pinged after the push (all when fewer)
REACH_LIMIT_S = 60.0
REACH_ROUND_S = 2.0
# A loaded machine deschedules the prober now and then (drain/twin.py measured 100-200 ms at load 11 on 2 cores): up to
# this many periods of lag the loss count stands, at a resolution of period + lag; beyond it it is not checked.
LAG_LIMIT = 2
ORDERS = {
    "add": "zcube expand's push: the lines each changed switch gains, nothing else",
    "bounce": "known bad: each changed switch's existing ports rewritten too (down for BOUNCE_S, as a push that replaced "
              "whole interface blocks would)",
}
BOUNCE_S = 0.5
REPORT = "expand.json"  # the measurement, in the twin's folder


def _blocks(text: str) -> dict[str, list[str]]:
    """An FRR config as top-level line -> its indented lines (comments and `exit` left out)."""
    out: dict[str, list[str]] = {}
    head = None
    for line in text.splitlines():
        if not line.strip() or line.startswith("!") or line.strip() == "exit":
            continue
        if line[0] == " ":
            out[head].append(line.strip())
        else:
            head = line
            out.setdefault(head, [])
    return out


def frr_changes(old: dict, new: dict, names: dict[str, dict[str, str]]) -> tuple[dict[str, list[str]], list[str]]:
    """Per switch, the vtysh lines of the sections its FRR config gains (each new port's block ending
    with `no shutdown`); and the problems: an old section that changes or goes."""
    by_name = {s["name"]: s for s in old["switches"]}
    lines: dict[str, list[str]] = {}
    problems: list[str] = []
    for sw in new["switches"]:
        was = _blocks(frr.render_switch(old, by_name[sw["name"]], names[sw["name"]].__getitem__))
        now = _blocks(frr.render_switch(new, sw, names[sw["name"]].__getitem__))
        problems += [f"{sw['name']}: '{h}' would change in the FRR config" for h, body in was.items() if now.get(h) != body]
        added = [h for h in now if h not in was]
        if added:
            lines[sw["name"]] = [x for h in added for x in (h, *now[h], "no shutdown", "exit")]
    return lines, problems


def _grow_state(state: dict, new: dict, prefix: str, names: dict[str, dict[str, str]], plan_path: str) -> tuple[list[dict], list[str]]:
    """twin.json extended to the grown plan: new namespaces, interface names and links (numbered after the
    old ones); returns the new links and the new servers."""
    old_servers = set(state["namespaces"])
    servers = [s["name"] for s in new["servers"] if s["name"] not in old_servers]
    have = {link["cable"] for link in state["links"]}
    links = [link for link in build._links(new) if link["cable"] not in have]
    idx = max((e["ifindex"] for link in state["links"] for e in (link["a"], link["b"])), default=build.IFINDEX_BASE) + 1
    for link in links:
        for end in ("a", "b"):
            e = link[end]
            e["ifname"], e["ifindex"] = names[e["device"]][e["port"]], idx
            idx += 1
    state["namespaces"] = dict(sorted({**state["namespaces"], **{s: prefix + s for s in servers}}.items()))
    state["interfaces"] = names
    state["links"] = sorted(state["links"] + links, key=lambda link: link["cable"])
    state["plan"] = str(Path(plan_path).resolve())
    return links, servers


def measure_expansion(old: dict, new: dict, new_plan_path: str, twin_dir: str | Path, period_ms: float = PERIOD_MS, rate: int = RATE,
                      seed: int = 1, order: str = "add", log=lambda *_: None) -> dict:
    """Push the expansion from ``old`` to ``new`` into the twin of ``old`` in ``twin_dir`` while probing (module
    docstring); returns the measurement. One function of ~80 lines on purpose: the steps share the running
    prober and the times they stamp, and read top to bottom as the expansion happens."""
    if order not in ORDERS:
        raise InputErrors(Problem("order", f"{order!r} is not one of {', '.join(ORDERS)}"))
    out = Path(twin_dir).resolve()
    state = build.load(out)
    if sorted(state["switches"]) != sorted(s["name"] for s in old["switches"]) or \
            any(s["name"] not in state["namespaces"] for s in old["servers"]):
        raise InputErrors(Problem(str(out / build.TWIN_FILE), "this twin does not run the old plan", "zcube twin up OLD_PLAN -o DIR"))
    names = build.port_names(new)
    for dev, ports in state["interfaces"].items():
        if any(names[dev].get(p) != n for p, n in ports.items()):
            raise InputErrors(Problem(str(out / build.TWIN_FILE), f"{dev}: the twin's interface names differ from the grown plan's"))
    changes, problems = frr_changes(old, new, names)
    if problems:
        raise InputErrors([Problem("twin", p) for p in problems], "cannot push the expansion into the twin")
    render_all(new, out / "rendered-grown")
    ports = Ports(old, state)
    pairs, total = ports.cross_group_pairs(int(rate * period_ms / 1000), seed)
    links, servers = _grow_state(state, new, state["prefix"], names, new_plan_path)
    ns = state["namespaces"]
    mtu = new["settings"].get("switch_mtu", 9216)
    switch_names = set(state["switches"])
    log(f"expand in the twin: {len(servers)} servers, {len(links)} cables, {len(changes)} switches; "
        f"probing {len(pairs)} of {total} existing port pairs every {period_ms:.0f} ms")
    prober = probe.Prober(pairs, ports.ns_of, period_ms=period_ms).start()
    steps = []
    try:
        time.sleep(1.0)
        t0 = time.time()
        build._save(out, state)  # before the first namespace: `twin down` removes whatever exists
        netns.batch([f"netns add {ns[s]}" for s in servers])
        for s in servers:
            netns.set_sysctls(ns[s], build.SERVER_BASE_SYSCTLS)
        lines = []
        for link in links:
            a, z = link["a"], link["b"]
            ma, mz = (f" mtu {mtu}" if e["device"] in switch_names else "" for e in (a, z))
            lines.append(f"link add {a['ifname']} index {a['ifindex']} netns {ns[a['device']]}{ma} type veth "
                         f"peer name {z['ifname']} index {z['ifindex']} netns {ns[z['device']]}{mz}")
        netns.batch(lines)
        host_problems: list[Problem] = []
        per_ns = {}
        for s in servers:
            cmds, p = hostfiles.netplan_commands(out / "rendered-grown" / "hosts" / f"{s}.yaml", names[s])
            sysctls, q = hostfiles.sysctl_settings(out / "rendered-grown" / "hosts" / f"{s}.sysctl.conf")
            host_problems += p + q
            netns.set_sysctls(ns[s], sysctls, strict=False)
            per_ns[ns[s]] = ["link set dev lo up"] + cmds
        hostfiles.check(host_problems)
        netns.batches(per_ns)
        steps.append({"step": "cabled", "start": t0, "end": time.time(), "servers": len(servers), "cables": len(links)})
        for sw, cmds in sorted(changes.items()):
            t = time.time()
            run_dir = Path(state["switches"][sw]["run_dir"])
            if order == "bounce":
                existing = [names[sw][i["name"]] for i in next(x for x in old["switches"] if x["name"] == sw)["interfaces"]]
                runtime.vtysh(run_dir, *frr.drain_commands(None, existing, [], None))
                time.sleep(BOUNCE_S)
                runtime.vtysh(run_dir, *frr.drain_commands(None, [], existing, None))
            runtime.vtysh(run_dir, "configure terminal", *cmds, "end")
            steps.append({"step": f"push {sw}", "start": t, "end": time.time(), "lines": len(cmds)})
        t_pushed = time.time()
        reached, tried = _reach_new(new, old, ns, seed)
        t_reached = time.time()
        time.sleep(1.0)
    finally:
        result = prober.stop()
    lost_during = sum(p.lost_between(t0, time.time()) for p in result.pairs)
    lag = {st["step"]: result.max_lag_between(st["start"], st["end"]) for st in steps}
    doc = {"order": order, "servers_added": len(servers), "cables_added": len(links), "switches_pushed": len(changes),
            "lines_pushed": sum(len(c) for c in changes.values()), "existing_pairs_probed": len(pairs), "existing_pairs_total": total,
            "echoes_sent": result.sent, "echoes_lost": result.lost, "echoes_lost_during_expansion": lost_during,
            "max_lag_ms": result.max_lag_ms, "kept_rate": result.max_lag_ms <= LAG_LIMIT * period_ms, "period_ms": period_ms,
            "push_s": round(t_pushed - t0, 2), "new_pairs_reached": reached, "new_pairs_tried": tried,
            "reach_s": round(t_reached - t_pushed, 2), "steps": steps, "max_lag_ms_by_step": lag, "probe": result.as_dict()}
    (out / REPORT).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return doc


def _reach_new(new: dict, old: dict, ns: dict[str, str], seed: int) -> tuple[int, int]:
    """Probe cross-group port pairs with a new GPU at one end, in rounds of REACH_ROUND_S, until each pair's last
    echo is answered (or the limit); (pairs answering, pairs tried)."""
    old_servers = {s["name"] for s in old["servers"]}
    ports = Ports(new, {"namespaces": ns})
    pairs, _ = ports.cross_group_pairs(None, seed)
    fresh = [(a, b) for a, b in pairs if ports.by_addr[a]["server"] not in old_servers or ports.by_addr[b]["server"] not in old_servers]
    todo = fresh[:: max(1, len(fresh) // NEW_PAIRS)][:NEW_PAIRS]
    left, deadline = list(todo), time.monotonic() + REACH_LIMIT_S
    while left and time.monotonic() < deadline:
        prober = probe.Prober(left, ports.ns_of, period_ms=PERIOD_MS).start()
        time.sleep(REACH_ROUND_S)
        answered = {(p.src, p.dst) for p in prober.stop().pairs if p.back}
        left = [pair for pair in left if pair not in answered]
    return len(todo) - len(left), len(todo)
