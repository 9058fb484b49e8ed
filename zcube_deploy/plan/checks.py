"""The invariants of zcube.md section 4, evaluated on every plan.

``evaluate_invariants`` returns one row per invariant: passed, failed (with its violations) or
not_applicable. ``require_invariants`` stops the build on any failed row: a violation is a bug in
the planner, never a property of the input (InvariantViolation, exit 1), and the plan is not
written. Forwarding state comes from topology/forwarding.py, whatever the routing mode.

Each invariant is one function of the shared :class:`Facts` returning its row; ``INVARIANTS`` is
their table, in the order the rows are reported (the plan's ``checks`` section keeps that order).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from zcube_deploy.errors import InvariantViolation, Problem
from zcube_deploy.inventory import ResolvedInventory
from zcube_deploy.ipv4 import aton, ntoa
from zcube_deploy.topology.forwarding import network_from_plan, switch_tables

EXHAUSTIVE_PAIRS = 50_000
SAMPLED_PAIRS = 4_000
SEED = 20250901

Row = dict  # {name, status, detail} plus ``violations`` (up to 10) when failed


@dataclass
class Facts:
    """What the invariants read: the sizing, the planned rows and a few indices over them."""

    inv: ResolvedInventory
    acc: dict

    def __post_init__(self) -> None:
        sz = self.acc["sizing"]
        self.S, self.K, self.m, self.G, self.R = sz.S, sz.K, sz.m, sz.gpus_per_server, sz.logical_ports
        self.switches, self.cables, self.nics = self.acc["switches"], self.acc["cables"], self.acc["nics"]
        self.planes = self.inv.planes
        self.installed = len(self.inv.servers) * self.G
        self.group_of = {s["name"]: s["group"] for s in self.switches}
        self.index_of = {s["name"]: s["index"] for s in self.switches}

    @cached_property
    def tables(self) -> dict:
        """The direct paths (the cross-group walk needs no more; in mode bgp the best paths of AS-path
        length 1, the whole best-path model being in analysis/predict.py)."""
        return switch_tables(self.acc["routing"], self.switches, max_as_path=1)

    def forwarding(self, sources: set[tuple[str, str]] | None = None):
        """The plan's forwarding model; ``sources``: the only (server, port) a walk starts from (their host
        tables are the largest part of the model: a sampled check reads a few thousand of 32,768 at 16k GPUs)."""
        return network_from_plan(self.acc["routing"], self.switches, self.nics, tables=self.tables, sources=sources)


def _row(name: str, errors: list[str], detail: str) -> Row:
    row = {"name": name, "status": "failed" if errors else "passed", "detail": detail}
    if errors:
        row["violations"] = errors[:10]
    return row


def one_link_per_gpu_port(f: Facts) -> Row:
    """1. Every installed GPU: exactly one link to its odd switch and one to its even switch, per plane."""
    per_gpu = Counter((c["plane"], c["gpu"], c["group"]) for c in f.cables if c["kind"] == "host")
    errs = [f"GPU {g} plane {p} has {per_gpu[(p, g, grp)]} {grp} links"
            for p in range(f.planes) for g in range(f.installed) for grp in ("odd", "even") if per_gpu[(p, g, grp)] != 1]
    if len(per_gpu) != f.planes * f.installed * 2:
        errs.append(f"{len(per_gpu)} GPU-group links for {f.planes * f.installed * 2} expected")
    return _row("one_link_per_gpu_port", errs, f"{f.installed} GPUs x {f.planes} plane(s): one odd and one even link each")


def port_budget_and_cages(f: Facts) -> Row:
    """2. Port budget and cage separation."""
    K, S, m, R = f.K, f.S, f.m, f.R
    errs = []
    if K + S * m > R:
        errs.append(f"K + S*m = {K + S * m} > R = {R}")
    pm = f.acc["port_map"]
    host_set, fabric_set = set(pm["host_ports"]), set(pm["fabric_ports"])
    if pm["host_cages"][1] >= pm["fabric_cages"][0]:
        errs.append(f"host cages {pm['host_cages']} overlap fabric cages {pm['fabric_cages']}")
    for sw in f.switches:
        names = [i["name"] for i in sw["interfaces"]]
        if len(names) != len(set(names)):
            errs.append(f"{sw['name']} uses a port twice")
        hosts = sum(1 for i in sw["interfaces"] if i["kind"] == "host")
        if hosts > K:
            errs.append(f"{sw['name']} has {hosts} host links > K = {K}")
        for itf in sw["interfaces"]:
            if itf["name"] not in (host_set if itf["kind"] == "host" else fabric_set):
                errs.append(f"{sw['name']} {itf['name']}: a {itf['kind']} link outside the {itf['kind']} cages")
    return _row("port_budget_and_cages", errs,
                f"K + S*m = {K} + {S}*{m} = {K + S * m} <= R = {R}; host cages {pm['host_cages']}, fabric cages {pm['fabric_cages']}")


def complete_bipartite_fabric(f: Facts) -> Row:
    """3. Complete bipartite fabric with m links per pair, no same-group links."""
    pair = Counter()
    errs = []
    group_of = f.group_of
    for c in f.cables:
        if c["kind"] != "fabric":
            continue
        a, b = c["a"]["device"], c["b"]["device"]
        if group_of[a] == group_of[b]:
            errs.append(f"{c['id']} joins {a} and {b}, both {group_of[a]}")
        pair[(c["plane"], a, b)] += 1
    bad = [k for k, v in pair.items() if v != f.m]
    if bad:
        errs.append(f"{len(bad)} odd/even pairs do not have m = {f.m} links, e.g. {bad[0]}")
    expected = f.planes * f.S * f.S
    if len(pair) != expected:
        errs.append(f"{len(pair)} odd/even pairs linked, {expected} expected")
    return _row("complete_bipartite_fabric", errs, f"{expected} odd/even pairs x m = {f.m} links, no same-group link")


def rail_switches(f: Facts) -> Row:
    """4. The rail property (when S is a multiple of G)."""
    S, G = f.S, f.G
    if S % G:
        return {"name": "rail_switches", "status": "not_applicable", "detail": f"S = {S} is not a multiple of G = {G}"}
    index_of = f.index_of
    errs = [f"{c['id']}: GPU {c['gpu']} (local {c['gpu'] % G}) on {c['b']['device']} (rail {index_of[c['b']['device']] % G})"
            for c in f.cables if c["kind"] == "host" and c["group"] == "odd" and index_of[c["b"]["device"]] % G != c["gpu"] % G]
    return _row("rail_switches", errs, f"S = {S} is a multiple of G = {G}: every odd switch carries one GPU rail")


def server_on_one_even_switch(f: Facts) -> Row:
    """5. The top-of-rack property (when K is a multiple of G)."""
    K, G = f.K, f.G
    if K % G:
        return {"name": "server_on_one_even_switch", "status": "not_applicable", "detail": f"K = {K} is not a multiple of G"}
    evens = defaultdict(set)
    for c in f.cables:
        if c["kind"] == "host" and c["group"] == "even":
            evens[(c["plane"], c["a"]["device"])].add(c["b"]["device"])
    errs = [f"{srv} plane {p} lands on {sorted(v)}" for (p, srv), v in evens.items() if len(v) != 1]
    return _row("server_on_one_even_switch", errs, f"K = {K} is a multiple of G = {G}: each server's even-side links share one switch")


def addresses_unique_next_hops_connected(f: Facts) -> Row:
    """7. Addresses unique; next hops directly connected (evaluated before 6, whose walk relies on it)."""
    errs = []
    seen: dict[str, tuple[str, str]] = {}  # address -> (device, port): the words of a message, joined only for one
    for sw in f.switches:
        for label, a in [("loopback", sw["loopback"]), ("mgmt", sw["mgmt_address"])] + [(i["name"], i["address"]) for i in sw["interfaces"]]:
            if a in seen:
                errs.append(f"{a} on {sw['name']} {label} is also {' '.join(seen[a])}")
            seen[a] = (sw["name"], label)
    for server, entries in f.nics.items():
        for nic in entries:
            if nic["address"] in seen:
                errs.append(f"{nic['address']} on {server} {nic['port']} is also {' '.join(seen[nic['address']])}")
            seen[nic["address"]] = (server, nic["port"])
    tables = f.tables
    for sw in f.switches:
        own = {aton(i["address"]) for i in sw["interfaces"]}
        for entry in tables[sw["name"]]:
            for nh in entry[2]:
                if (nh ^ 1) not in own:
                    errs.append(f"{sw['name']} route {entry.prefix} via {ntoa(nh)}: next hop not directly connected")
    return _row("addresses_unique_next_hops_connected", errs, f"{len(seen)} addresses unique; every static route's next hop is a /31 peer")


def one_path_at_most_two_switches(f: Facts) -> Row:
    """6. Exactly one path, at most two switches, for GPU-port pairs in different groups: every pair
    walked up to EXHAUSTIVE_PAIRS, else SAMPLED_PAIRS drawn with a fixed seed."""
    by_pg = defaultdict(list)
    for server, entries in f.nics.items():
        for nic in entries:
            by_pg[(nic["plane"], nic["group"])].append((server, nic["port"], nic["plane"], nic["group"], aton(nic["address"])))
    total = sum(len(by_pg[(p, "odd")]) * len(by_pg[(p, "even")]) * 2 for p in range(f.planes))
    if total <= EXHAUSTIVE_PAIRS:
        pairs = ((src, dst) for p in range(f.planes) for a_grp, b_grp in (("odd", "even"), ("even", "odd"))
                 for src in by_pg[(p, a_grp)] for dst in by_pg[(p, b_grp)])
        fwd = f.forwarding()
        how = "exhaustive"
    else:
        rng = random.Random(SEED)
        keys = [k for k in by_pg if by_pg[k]]
        drawn = []
        for _ in range(SAMPLED_PAIRS):
            p, grp = keys[rng.randrange(len(keys))]
            other = (p, "even" if grp == "odd" else "odd")
            if not by_pg[other]:
                continue
            drawn.append((rng.choice(by_pg[(p, grp)]), rng.choice(by_pg[other])))
        pairs = iter(drawn)
        fwd = f.forwarding(sources={(src[0], src[1]) for src, _ in drawn})
        how = f"sampled (seed {SEED})"
    errs: list[str] = []
    group_of = f.group_of
    checked = 0
    for src, dst in pairs:
        path, err = fwd.walk((src[0], src[1]), dst[4])
        if err is None and len(path) > 2:
            err = f"{len(path)} switches"
        if err is None and (len(path) != 2 or group_of[path[0]] == group_of[path[1]]):
            err = f"path {path} is not odd->even / even->odd"
        if err:
            errs.append(f"{src[0]} {src[1]} -> {dst[0]} {dst[1]}: {err} (path {path})")
        checked += 1
    return _row("one_path_at_most_two_switches", errs,
                f"{checked} of {total} cross-group GPU-port pairs walked, {how}: one next hop per step, 2 switches")


# the invariants in the order their rows are reported (7 before 6: the walk relies on connected next hops)
INVARIANTS: tuple[Callable[[Facts], Row], ...] = (
    one_link_per_gpu_port, port_budget_and_cages, complete_bipartite_fabric, rail_switches, server_on_one_even_switch,
    addresses_unique_next_hops_connected, one_path_at_most_two_switches,
)


def evaluate_invariants(inv: ResolvedInventory, acc: dict) -> list[Row]:
    """One row per invariant of ``INVARIANTS``: ``{name, status, detail}``, plus ``violations`` (up to 10) when failed."""
    facts = Facts(inv, acc)
    return [check(facts) for check in INVARIANTS]


def require_invariants(results: list[dict]) -> None:
    """Raise InvariantViolation naming every violation of every failed invariant."""
    failures = [Problem(f"invariant {r['name']}", v) for r in results if r["status"] == "failed" for v in r["violations"]]
    if failures:
        raise InvariantViolation(failures, "the plan breaks ZCube invariants (a planner bug)")
