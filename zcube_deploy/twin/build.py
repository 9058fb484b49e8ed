"""``zcube twin up`` and ``zcube twin down``: build the twin of a plan and remove every trace of it.

Order of ``up`` (``prepare``, then the named ``STEPS``, each measured in twin.json["timings"]):
render the host files and the FRR configs; raise the ARP-table limits of the initial namespace (the neighbour table is global,
pitfall 1); create the namespaces; set the switches' and servers' sysctls (before the veths exist,
so they inherit ``conf.default``); create one veth pair per cable, each end directly in its
namespace with a unique ifindex (pitfall 4); configure every server from its rendered netplan and
sysctl files with ``ip -batch`` through ``nsenter`` (pitfalls 2, 3); start FRR on every switch;
wait until every switch has installed the routes the plan expects. twin.json is written before
the first namespace exists, so ``down`` can clean up after a build that failed half-way.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ConfigDict, TypeAdapter, with_config
from typing_extensions import TypedDict

from zcube_deploy.plan.roles import FABRIC_END, cage_of
from zcube_deploy.plan.state import read_state
from zcube_deploy.errors import InputErrors, Problem, ZCubeError
from zcube_deploy.platforms import frr
from zcube_deploy.platforms.frr import runtime
from zcube_deploy.render import render_all
from zcube_deploy.topology.forwarding import switch_tables
from zcube_deploy.twin import hostfiles, netns
from zcube_deploy.twin.names import device_names

TWIN_FILE = "twin.json"
RUN_BASE = Path("/run/zcube-twin")
IFINDEX_BASE = 20000
SWITCH_SYSCTLS = [
    ("net.ipv6.conf.all.disable_ipv6", "1"), ("net.ipv6.conf.default.disable_ipv6", "1"),
    ("net.ipv4.ip_forward", "1"), ("net.ipv4.conf.all.forwarding", "1"),
    ("net.ipv4.conf.all.rp_filter", "0"), ("net.ipv4.conf.default.rp_filter", "0"),
    ("net.ipv4.conf.all.ignore_routes_with_linkdown", "1"), ("net.ipv4.conf.default.ignore_routes_with_linkdown", "1"),
    ("net.ipv4.fib_multipath_hash_policy", "1"), ("net.ipv4.icmp_ratelimit", "0"),
]
# a server namespace gets only what isolates the twin (no IPv6 chatter); the rest comes from its host files
SERVER_BASE_SYSCTLS = [("net.ipv6.conf.all.disable_ipv6", "1"), ("net.ipv6.conf.default.disable_ipv6", "1"),
                       ("net.ipv4.icmp_ratelimit", "0")]
# BFD on the sessions not under test when there are too many for 2 cores (shared/docs/twin.md: bfdd is FRR's limit)
SLOW_BFD = {"interval_ms": 1000, "multiplier": 3}
SLOW_BFD_ABOVE_SESSIONS = 256


class TwinUnavailable(ZCubeError):
    """The machine cannot run the twin (no root, no namespaces, no FRR): exit 2 with what to install."""

    exit_code = 2


def require_support() -> None:
    why = netns.missing_support() or runtime.missing()
    if why:
        raise TwinUnavailable(f"cannot run the twin: {why}")


def _ms(t0: float) -> float:
    return round((time.monotonic() - t0) * 1000, 1)


def port_names(plan: dict) -> dict[str, dict[str, str]]:
    """device -> {plan port name -> Linux interface name} for every cabled port."""
    abbrev = {name: v[0] for name, v in (cage_of(plan) if plan.get("port_map") else {}).items()}
    ports: dict[str, list[str]] = {}
    for sw in plan["switches"]:
        ports[sw["name"]] = [i["name"] for i in sw["interfaces"]]
    for srv in plan["servers"]:
        ports[srv["name"]] = [n["port"] for n in srv["nics"]]
    return {dev: device_names(p, abbrev) for dev, p in ports.items()}


def _links(plan: dict) -> list[dict]:
    """One entry per cable: the two ends (device, port), from the switches' interfaces (no cable list needed)."""
    links = []
    for sw in plan["switches"]:
        for itf in sw["interfaces"]:
            peer = itf["peer"]
            if itf["kind"] == "fabric" and FABRIC_END[sw["group"]] != "a":
                continue  # each fabric cable once, from its a end (a ZCube odd switch, a ROFT leaf)
            links.append({"cable": itf["cable"], "kind": itf["kind"],
                          "a": {"device": sw["name"], "port": itf["name"]},
                          "b": {"device": peer["device"], "port": peer["port"]}})
    links.sort(key=lambda l: l["cable"])
    return links


def _new_prefix() -> str:
    existing = netns.existing_namespaces()
    while True:
        prefix = f"zt{secrets.token_hex(3)}-"
        if not any(n.startswith(prefix) for n in existing):
            return prefix


def _bgp_sessions(plan: dict) -> int:
    return sum(1 for sw in plan["switches"] for i in sw["interfaces"] if i["kind"] == "fabric") // 2


@dataclass
class Build:
    """One `twin up`: the plan, where everything goes, and what the steps share."""

    plan: dict
    out: Path
    mode: str                                   # the plan's routing mode
    names: dict[str, dict[str, str]]            # device -> plan port -> Linux interface name
    ns_of: dict[str, str]                       # device -> its namespace
    run_dirs: dict[str, Path]                   # switch -> FRR's run directory
    host_cmds: dict[str, list[str]]             # server -> `ip -batch` lines of its netplan file
    host_sysctls: dict[str, list[tuple[str, str]]]
    links: list[dict]
    state: dict = field(default_factory=dict)   # twin.json

    @property
    def switches(self) -> list[dict]:
        return self.plan["switches"]

    @property
    def servers(self) -> list[dict]:
        return self.plan["servers"]


def _refuse_running(out: Path) -> None:
    if (out / TWIN_FILE).exists():
        state = load(out)
        if any(ns in netns.existing_namespaces() for ns in state["namespaces"].values()):
            raise InputErrors(Problem(str(out / TWIN_FILE), "a twin is already running from this folder",
                                      f"remove it first: zcube twin down {out}"))


def prepare(plan: dict, out: Path, slow: dict | None, prefix: str, run_base: Path) -> Build:
    """Every switch's FRR config (DIR/frr/<switch>/frr.conf and its run directory), the servers' rendered
    netplan and sysctl files read back, every veth end numbered."""
    names = port_names(plan)
    switches, servers = plan["switches"], plan["servers"]
    run_dirs = {}
    for sw in switches:
        rd = run_base / sw["name"]
        text = frr.render_switch(plan, sw, names[sw["name"]].__getitem__, slow)
        runtime.prepare_dir(rd, text, runtime.TWIN_ZEBRA_LINES)
        (out / "frr" / sw["name"]).mkdir(parents=True, exist_ok=True)
        (out / "frr" / sw["name"] / "frr.conf").write_text(text)
        run_dirs[sw["name"]] = rd
    host_cmds, host_sysctls, problems = {}, {}, []
    for srv in servers:
        cmds, p = hostfiles.netplan_commands(out / "rendered" / "hosts" / f"{srv['name']}.yaml", names[srv["name"]])
        sysctls, q = hostfiles.sysctl_settings(out / "rendered" / "hosts" / f"{srv['name']}.sysctl.conf")
        host_cmds[srv["name"]], host_sysctls[srv["name"]] = cmds, sysctls
        problems += p + q
    hostfiles.check(problems)
    links = _links(plan)
    idx = IFINDEX_BASE
    for l in links:
        for end in ("a", "b"):
            e = l[end]
            e["ifname"] = names[e["device"]][e["port"]]
            e["ifindex"] = idx
            idx += 1
    return Build(plan, out, frr.routing_mode(plan), names, {d["name"]: prefix + d["name"] for d in switches + servers},
                 run_dirs, host_cmds, host_sysctls, links)


def _bfd_state(plan: dict, mode: str, slow: dict | None) -> dict | None:
    if mode != "bgp":
        return None
    sessions = _bgp_sessions(plan)
    note = (f"{sessions} BFD sessions: the twin runs them at {slow['interval_ms']} ms x {slow['multiplier']} "
            "and puts each session under test on the plan's profile while it is tested") if slow else \
        f"all {sessions} sessions at the plan's profile"
    return {"plan": plan["routing"]["bfd"], "others": slow, "note": note}


def initial_state(b: Build, plan_path: str, prefix: str, run_base: Path, slow: dict | None, timings: dict) -> dict:
    """twin.json as it is written before the first namespace exists (so that `down` can clean up a failed build)."""
    return {
        "version": 1, "plan": str((Path(plan_path) / "plan.json" if Path(plan_path).is_dir() else Path(plan_path)).resolve()),
        "cluster": b.plan["cluster"]["name"], "mode": b.mode,
        "prefix": prefix, "dir": str(b.out), "run_base": str(run_base),
        "namespaces": dict(sorted(b.ns_of.items())),
        "interfaces": b.names,
        "links": b.links,
        "switches": {sw["name"]: {"netns": b.ns_of[sw["name"]], "run_dir": str(b.run_dirs[sw["name"]]), "asn": sw.get("asn"),
                                  "pids": {}} for sw in b.switches},
        "bfd": _bfd_state(b.plan, b.mode, slow),
        "host_sysctls_saved": {}, "timings": timings, "state": "building",
    }


def step_namespaces(b: Build) -> None:
    """The machine's ARP-table limits raised (kept to restore), then every namespace in one batch."""
    b.state["host_sysctls_saved"] = _raise_arp_limits()
    _save(b.out, b.state)
    netns.batch([f"netns add {n}" for n in b.ns_of.values()])


def step_sysctls(b: Build) -> None:
    """Switches' and servers' sysctls, before the veths exist so that they inherit ``conf.default``."""
    for sw in b.switches:
        netns.set_sysctls(b.ns_of[sw["name"]], SWITCH_SYSCTLS)
    for srv in b.servers:
        netns.set_sysctls(b.ns_of[srv["name"]], SERVER_BASE_SYSCTLS)
        # like systemd-sysctl at boot: before the NICs appear (conf.default reaches them) ...
        netns.set_sysctls(b.ns_of[srv["name"]], b.host_sysctls[srv["name"]], strict=False)


def step_veths(b: Build) -> None:
    """One veth pair per cable, each end created in its namespace with its own ifindex (switch ends at the plan's MTU)."""
    mtu = b.plan["settings"].get("switch_mtu", 9216)
    switch_names = {s["name"] for s in b.switches}
    lines = []
    for l in b.links:
        a, z = l["a"], l["b"]
        ma = f" mtu {mtu}" if a["device"] in switch_names else ""
        mz = f" mtu {mtu}" if z["device"] in switch_names else ""
        lines.append(f"link add {a['ifname']} index {a['ifindex']} netns {b.ns_of[a['device']]}{ma} type veth "
                     f"peer name {z['ifname']} index {z['ifindex']} netns {b.ns_of[z['device']]}{mz}")
    netns.batch(lines)


def step_configure(b: Build) -> None:
    """Links up; every server configured from its netplan file (``ip -batch``), its sysctls set again."""
    per_ns = {}
    for sw in b.switches:
        per_ns[b.ns_of[sw["name"]]] = ["link set dev lo up"] + [f"link set dev {b.names[sw['name']][i['name']]} up" for i in sw["interfaces"]]
    for srv in b.servers:
        per_ns[b.ns_of[srv["name"]]] = ["link set dev lo up"] + b.host_cmds[srv["name"]]
    netns.batches(per_ns)
    for srv in b.servers:  # ... and again once they exist (udev re-applies per-interface keys)
        absent = netns.set_sysctls(b.ns_of[srv["name"]], b.host_sysctls[srv["name"]], strict=False)
        if absent:
            raise InputErrors(Problem(f"hosts/{srv['name']}.sysctl.conf", f"no such setting in the twin: {', '.join(absent[:5])}"))


def step_frr_start(b: Build) -> None:
    errors = runtime.start([(b.ns_of[sw["name"]], b.run_dirs[sw["name"]]) for sw in b.switches], frr.daemons(b.plan))
    for sw in b.switches:
        b.state["switches"][sw["name"]]["pids"] = runtime.pids(b.run_dirs[sw["name"]])
    _save(b.out, b.state)
    if errors:
        raise netns.TwinSystemError("FRR did not start:\n  " + "\n  ".join(errors[:10]))


def step_converge(b: Build) -> None:
    left = wait_converged(b.plan, b.state)
    if left:
        raise netns.TwinSystemError("routes did not converge within the time limit: " + "; ".join(left[:5]))


# each step timed into twin.json["timings"] as "<name>_ms"
STEPS: list[tuple[str, Callable[[Build], None]]] = [
    ("namespaces", step_namespaces),
    ("sysctls", step_sysctls),
    ("veths", step_veths),
    ("configure", step_configure),
    ("frr_start", step_frr_start),
    ("converge", step_converge),
]


def up(plan: dict, plan_path: str, out_dir: str | Path, slow_bfd: bool | None = None, log=print) -> dict:
    """Build the twin of ``plan`` in ``out_dir``; returns the twin description (also DIR/twin.json).

    Render the plan, ``prepare``, write twin.json, then STEPS in order; a step that fails marks the twin
    failed and takes down whatever was built."""
    require_support()
    out = Path(out_dir).resolve()
    _refuse_running(out)
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    t_all = t0 = time.monotonic()
    render_all(plan, out / "rendered")
    mode = frr.routing_mode(plan)
    sessions = _bgp_sessions(plan) if mode == "bgp" else 0
    slow = SLOW_BFD if (mode == "bgp" and (slow_bfd if slow_bfd is not None else sessions > SLOW_BFD_ABOVE_SESSIONS)) else None
    prefix = _new_prefix()
    # FRR runs as user frr: its run directories live under /run (reachable by frr whatever DIR's permissions are);
    # the configurations are also written to DIR/frr/<switch>/frr.conf and the logs copied there by `down`
    run_base = RUN_BASE / prefix.rstrip("-")
    RUN_BASE.mkdir(mode=0o755, exist_ok=True)
    run_base.mkdir(mode=0o755)
    b = prepare(plan, out, slow, prefix, run_base)
    timings["render_ms"] = _ms(t0)
    b.state = initial_state(b, plan_path, prefix, run_base, slow, timings)
    _save(out, b.state)
    try:
        for name, step in STEPS:
            t0 = time.monotonic()
            step(b)
            timings[f"{name}_ms"] = _ms(t0)
        timings["total_ms"] = _ms(t_all)
        b.state["state"] = "up"
        _save(out, b.state)
    except BaseException:
        b.state["state"] = "failed"
        _save(out, b.state)
        down(out, log=lambda *_: None)
        raise
    return b.state


def expected_routes(plan: dict) -> dict[str, tuple[str, set[str]]]:
    """Per switch: (protocol, prefixes) its kernel table must hold once converged, i.e. its forwarding
    entries (topology/forwarding.py: mode static's routes, mode bgp's best paths on the healthy fabric);
    the protocol is the routing kind's name."""
    routing = plan.get("routing") or {"mode": frr.routing_mode(plan)}
    return {name: (routing["mode"], {e.prefix for e in entries})
            for name, entries in switch_tables(routing, plan["switches"]).items()}


def installed_routes(ns: str, proto: str = "") -> set[str]:
    """Prefixes in the main table of ``ns`` (zebra's protocol numbers print differently per machine, so no filter:
    a remote switch's block or loopback can only come from the routing daemons)."""
    p = subprocess.run(["nsenter", f"--net={netns.NETNS_DIR / ns}", "ip", "-4", "route", "show"],
                       capture_output=True, text=True)
    out = set()
    for line in p.stdout.splitlines():
        if line and not line[0].isspace():
            pfx = line.split()[0]
            if pfx in ("unreachable", "blackhole", "prohibit"):
                continue
            out.add(pfx if "/" in pfx else pfx + "/32")
    return out


def fib(ns: str) -> list[str]:
    """The switch's IPv4 main table as text without kernel object ids: routes and every nexthop."""
    p = subprocess.run(["nsenter", f"--net={netns.NETNS_DIR / ns}", "ip", "-4", "route", "show"], capture_output=True, text=True)
    return sorted(re.sub(r" nhid \d+", "", l).strip() for l in p.stdout.splitlines() if "linkdown" not in l)


def wait_converged(plan: dict, state: dict, timeout: float = 180.0) -> list[str]:
    """Poll every switch's kernel routes until each holds exactly what the plan expects; returns what is still missing."""
    deadline = time.monotonic() + timeout
    pending = expected_routes(plan)
    while True:
        for name in list(pending):
            proto, want = pending[name]
            if want <= installed_routes(state["switches"][name]["netns"], proto):
                del pending[name]
        if not pending or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    left = [f"{n}: {len(w - installed_routes(state['switches'][n]['netns'], p))} of {len(w)} {p} routes missing"
            for n, (p, w) in sorted(pending.items())]
    if left or frr.routing_mode(plan) != "bgp":
        return left
    # mode bgp: every session Established, then the FIBs unchanged for a second (detours found before the
    # direct sessions came up are replaced by the shortest paths and every ECMP member is in)
    while time.monotonic() < deadline:
        counts = [runtime.bgp_established(Path(sw["run_dir"])) for sw in state["switches"].values()]
        if all(e == n and n > 0 for e, n in counts):
            break
        time.sleep(0.3)
    else:
        return ["BGP sessions not all Established"]
    last = None
    while time.monotonic() < deadline:
        now = {n: fib(sw["netns"]) for n, sw in state["switches"].items()}
        if now == last:
            return []
        last = now
        time.sleep(1.0)
    return ["switch FIBs still changing"]


def _save(out: Path, state: dict) -> None:
    tmp = out / (TWIN_FILE + ".tmp")
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n")
    tmp.replace(out / TWIN_FILE)


class _End(TypedDict):
    device: str
    port: str
    ifname: str
    ifindex: int


class _Link(TypedDict):
    cable: str
    kind: str
    a: _End
    b: _End


class _TwinSwitch(TypedDict):
    netns: str
    run_dir: str
    asn: int | None
    pids: dict[str, int]


@with_config(ConfigDict(extra="allow"))
class _TwinDoc(TypedDict):
    """The fields of twin.json (``initial_state``) its readers use; the others are kept as they are."""

    version: int
    plan: str
    cluster: str
    mode: str
    prefix: str
    dir: str
    run_base: str
    namespaces: dict[str, str]
    interfaces: dict[str, dict[str, str]]
    links: list[_Link]
    switches: dict[str, _TwinSwitch]
    state: str


_TWIN_DOC = TypeAdapter(_TwinDoc)


def load(out_dir: str | Path) -> dict:
    """DIR/twin.json, its shape checked (plan.state): a folder without one, or a file of another shape there (a plan.json,
    a lab.json, a truncated file), is an input error naming the file and the place of each problem."""
    path = Path(out_dir) / TWIN_FILE
    if not path.is_file():
        raise InputErrors(Problem(str(path), "no twin here", "build one with: zcube twin up PLAN -o DIR"))
    return read_state(path, _TWIN_DOC, "a twin description", "DIR is the folder `zcube twin up PLAN -o DIR` wrote")


SAVED_SYSCTLS = RUN_BASE / "arp-sysctls-saved.json"
TWIN_NETNS = re.compile(r"^zt[0-9a-f]{6}-")


def _raise_arp_limits() -> dict[str, str]:
    """Raise the global ARP-table limits (pitfall 1). The machine's own values are kept in one file shared by
    every twin on the machine, written by the first that changes them, so that twins up at the same time
    never take each other's raised values for the machine's."""
    saved = json.loads(SAVED_SYSCTLS.read_text()) if SAVED_SYSCTLS.exists() else {}
    for k, v in netns.ARP_GC.items():
        old = netns.read_sysctl(k)
        if int(old) < int(v):
            saved.setdefault(k, old)
            netns.write_sysctl(k, v)
    if saved:
        SAVED_SYSCTLS.parent.mkdir(parents=True, exist_ok=True)
        SAVED_SYSCTLS.write_text(json.dumps(saved, sort_keys=True))
    return saved


def _restore_arp_limits(ours: set[str]) -> dict[str, str]:
    """Put the machine's own values back when the last twin on the machine goes down."""
    others = [n for n in netns.existing_namespaces() if TWIN_NETNS.match(n) and n not in ours]
    if others or not SAVED_SYSCTLS.exists():
        return {}
    saved = json.loads(SAVED_SYSCTLS.read_text())
    for k, v in saved.items():
        netns.write_sysctl(k, v)
    SAVED_SYSCTLS.unlink()
    return saved


def down(out_dir: str | Path, log=print) -> dict:
    """Stop every daemon by PID, delete every namespace, restore the initial namespace's sysctls."""
    out = Path(out_dir).resolve()
    state = load(out)
    t0 = time.monotonic()
    stopped, pids = 0, []
    for sw in state["switches"].values():
        found = {**sw.get("pids", {}), **runtime.pids(Path(sw["run_dir"]))}
        ours = {d: p for d, p in found.items() if runtime.is_ours(p, sw["run_dir"])}
        # SIGKILL: the namespace is deleted next, so a daemon's graceful route removal is wasted work (~1 s)
        stopped += len(runtime.stop(ours, signal.SIGKILL))
        pids += list(ours.values())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
        time.sleep(0.02)
    for p in pids:
        if Path(f"/proc/{p}").exists():
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
    existing = set(netns.existing_namespaces())
    mine = [n for n in state["namespaces"].values() if n in existing]
    netns.batch([f"netns del {n}" for n in mine], force=True)
    restored = _restore_arp_limits(set(mine))
    run_base = state.get("run_base")
    if run_base and Path(run_base).parent == RUN_BASE and Path(run_base).is_dir():
        for name in state["switches"]:
            for log in runtime.log_files(Path(run_base) / name):
                (out / "frr" / name).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(log, out / "frr" / name / log.name)
        shutil.rmtree(run_base, ignore_errors=True)
    left = [n for n in state["namespaces"].values() if n in set(netns.existing_namespaces())]
    state["state"] = "down" if not left else "down-incomplete"
    state["down_ms"] = _ms(t0)
    _save(out, state)
    result = {"namespaces_deleted": len(mine) - len(left), "daemons_stopped": stopped, "namespaces_left": left,
              "sysctls_restored": restored, "down_ms": state["down_ms"]}
    if left:
        raise netns.TwinSystemError(f"could not delete namespaces: {', '.join(left[:5])}")
    return result
