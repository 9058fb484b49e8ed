"""The invariants of a ROFT (docs/roft.md, "What is checked"), evaluated on every ROFT plan.

``evaluate_invariants`` returns one row per invariant (passed, failed with its violations, or
not_applicable), as plan/checks.py does for ZCube. It reads the planner's accumulator or a written
plan alike (:func:`facts_from_plan`), and only the switches and servers it is given: a migration
stage checks its ROFT island with it. A failed row stops the build (a planner bug, exit 1).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from zcube_deploy.ipv4 import aton, ntoa
from zcube_deploy.plan.checks import _row
from zcube_deploy.topology.forwarding import network_from_plan, switch_tables

EXHAUSTIVE_PAIRS = 20_000
SAMPLED_PAIRS = 2_000
SEED = 20250901

Row = dict


@dataclass
class Facts:
    """What the invariants read: the sizing, the port maps of leaf and spine, the rows, and indices over them."""

    sizing: dict
    port_maps: dict
    switches: list[dict]
    cables: list[dict]
    nics: dict[str, list[dict]]  # server name -> NIC rows, in server order
    routing: dict
    server_index: dict[str, int] | None = None  # server name -> its position in the plan (default: the order of ``nics``)

    def __post_init__(self) -> None:
        if self.server_index is None:
            self.server_index = {name: i for i, name in enumerate(self.nics)}
        self.by_name = {s["name"]: s for s in self.switches}
        self.leaves = [s for s in self.switches if s["group"] == "leaf"]
        self.spines = [s for s in self.switches if s["group"] == "spine"]

    @cached_property
    def network(self):
        return network_from_plan(self.routing, self.switches, self.nics, tables=switch_tables(self.routing, self.switches))


def facts_from_acc(acc: dict) -> Facts:
    return Facts(acc["sizing"], acc["port_maps"], acc["switches"], acc["cables"], acc["nics"], acc["routing"])


def facts_from_plan(plan: dict) -> Facts:
    """The facts of a written plan (or of a plan's ROFT island: its leaf/spine switches, their servers and cables)."""
    maps = plan.get("port_maps") or {}
    return Facts(plan["sizing"], {"leaf": maps.get("leaf", plan["port_map"]), "spine": maps.get("spine", plan["port_map"])},
                 plan["switches"], plan["cables"], {s["name"]: s["nics"] for s in plan["servers"]}, plan["routing"],
                 {s["name"]: s["index"] for s in plan["servers"]})


def rail_leaf_per_gpu_port(f: Facts) -> Row:
    """1. Every NIC port of GPU r of a server in pod q: exactly one host cable, to leaf (q, r) of the port's plane
    (planes 1: every port on plane 0; planes 2: port p on plane p-1)."""
    sz = f.sizing
    pod_size = sz["servers_per_pod"]
    per_plane = sz["host_ports_per_leaf"] // pod_size  # NIC ports of a GPU on one plane
    errs = []
    ends = Counter()
    leaf_at = {}
    for c in f.cables:
        if c["kind"] == "host":
            ends[(c["a"]["device"], c["a"]["port"])] += 1
            leaf_at[(c["a"]["device"], c["a"]["port"])] = c["b"]["device"]
    ports = 0
    for server, rows in f.nics.items():
        pod = f.server_index[server] // pod_size
        for nic in rows:
            ports += 1
            key = (server, nic["port"])
            want_plane = (nic["nic_port"] - 1) // per_plane
            sw = f.by_name.get(leaf_at.get(key, ""))
            if ends[key] != 1:
                errs.append(f"{server} {nic['port']} has {ends[key]} host cables")
            elif sw is None or sw["group"] != "leaf" or (sw.get("pod"), sw["index"], sw["plane"]) != (pod, nic["gpu"], want_plane):
                where = f"{sw['group']} {sw['name']} pod {sw.get('pod')} rail {sw['index']} plane {sw['plane']}" if sw else "no switch"
                errs.append(f"{server} {nic['port']} (pod {pod}, GPU {nic['gpu']}, plane {want_plane}) is cabled to {where}")
            elif nic["switch"] != sw["name"]:
                errs.append(f"{server} {nic['port']}: the NIC row names {nic['switch']}, its cable {sw['name']}")
    return _row("rail_leaf_per_gpu_port", errs, f"{ports} NIC ports, each on the rail leaf of its pod and plane")


def port_budget_and_cages(f: Facts) -> Row:
    """2. Each switch uses ports of its role's port map only, each once: host links on the leaf's host ports (a spine
    has none), fabric links on the fabric ports; a leaf's host and fabric cages apart."""
    errs = []
    leaf, spine = f.port_maps["leaf"], f.port_maps["spine"]
    if leaf["host_cages"][1] >= leaf["fabric_cages"][0]:
        errs.append(f"leaf host cages {leaf['host_cages']} overlap its fabric cages {leaf['fabric_cages']}")
    sets = {r: (set(pm["host_ports"]), set(pm["fabric_ports"])) for r, pm in (("leaf", leaf), ("spine", spine))}
    for sw in f.switches:
        if sw["group"] not in sets:
            continue
        names = [i["name"] for i in sw["interfaces"]]
        if len(names) != len(set(names)):
            errs.append(f"{sw['name']} uses a port twice")
        host, fabric = sets[sw["group"]]
        for itf in sw["interfaces"]:
            if itf["name"] not in (host if itf["kind"] == "host" else fabric):
                errs.append(f"{sw['group']} {sw['name']} {itf['name']}: a {itf['kind']} link outside the {sw['group']}'s {itf['kind']} ports")
    return _row("port_budget_and_cages", errs, f"leaf: {len(leaf['host_ports'])} host ports (cages {leaf['host_cages']}), "
                f"{len(leaf['fabric_ports'])} uplinks (cages {leaf['fabric_cages']}); spine: {len(spine['fabric_ports'])} downlinks")


def leaf_spine_mesh(f: Facts) -> Row:
    """3. Per plane, every leaf to every spine with exactly ``links_per_pair`` links (``uplinks_per_leaf`` per leaf),
    a leaf at end a and a spine at end b of the same plane; no leaf-leaf, spine-spine or cross-plane link."""
    sz = f.sizing
    m = sz["links_per_pair"]
    pair = Counter()
    errs = []
    for c in f.cables:
        if c["kind"] != "fabric":
            continue
        a, b = f.by_name.get(c["a"]["device"]), f.by_name.get(c["b"]["device"])
        if a is None or b is None or a["group"] != "leaf" or b["group"] != "spine":
            errs.append(f"{c['id']} joins {c['a']['device']} and {c['b']['device']}: a fabric cable runs leaf (a) to spine (b)")
            continue
        if a["plane"] != b["plane"] or c["plane"] != a["plane"]:
            errs.append(f"{c['id']} joins {a['name']} (plane {a['plane']}) and {b['name']} (plane {b['plane']})")
        pair[(a["name"], b["name"])] += 1
    for lf in f.leaves:
        for sp in f.spines:
            if sp["plane"] == lf["plane"] and pair[(lf["name"], sp["name"])] != m:
                errs.append(f"{lf['name']} - {sp['name']}: {pair[(lf['name'], sp['name'])]} links, {m} expected")
    expected = sum(1 for lf in f.leaves for sp in f.spines if sp["plane"] == lf["plane"])
    return _row("leaf_spine_mesh", errs, f"{expected} leaf-spine pairs x {m} links ({sz['uplinks_per_leaf']} uplinks per leaf)")


def asn_per_leaf_spines_share(f: Facts) -> Row:
    """4. eBGP: every leaf its own ASN; the spines of a plane one ASN, no leaf's."""
    errs = []
    leaf_asns = Counter(s["asn"] for s in f.leaves)
    for s in f.leaves:
        if s["asn"] is None or leaf_asns[s["asn"]] > 1:
            errs.append(f"leaf {s['name']} AS {s['asn']} is not its own")
    per_plane = defaultdict(set)
    for s in f.spines:
        per_plane[s["plane"]].add(s["asn"])
        if s["asn"] in leaf_asns or s["asn"] is None:
            errs.append(f"spine {s['name']} AS {s['asn']} is also a leaf's (or none)")
    errs += [f"the spines of plane {p} have ASNs {sorted(v, key=str)}, one expected" for p, v in per_plane.items() if len(v) != 1]
    if f.routing["mode"] != "bgp":
        errs.append(f"routing mode {f.routing['mode']!r}: a ROFT routes with eBGP")
    return _row("asn_per_leaf_spines_share", errs, f"{len(f.leaves)} leaf ASNs, one spine ASN per plane ({len(per_plane)})")


def addresses_unique_peers_connected(f: Facts) -> Row:
    """5. Addresses unique; every interface's peer address is the other end of its /31 and is the peer's; every NIC
    port's gateway is its leaf port's address."""
    errs = []
    seen: dict[str, str] = {}

    def see(a: str, what: str) -> None:
        if a in seen:
            errs.append(f"{a} on {what} is also {seen[a]}")
        seen[a] = what

    port_addr = {}
    for sw in f.switches:
        see(sw["loopback"], f"{sw['name']} loopback")
        see(sw["mgmt_address"], f"{sw['name']} mgmt")
        for i in sw["interfaces"]:
            see(i["address"], f"{sw['name']} {i['name']}")
            port_addr[(sw["name"], i["name"])] = i["address"]
            if aton(i["peer"]["address"]) != aton(i["address"]) ^ 1:
                errs.append(f"{sw['name']} {i['name']} {i['address']}: peer {i['peer']['address']} is not the other end of the /31")
    for server, rows in f.nics.items():
        for nic in rows:
            see(nic["address"], f"{server} {nic['port']}")
            port_addr[(server, nic["port"])] = nic["address"]
            if nic["gateway"] != port_addr.get((nic["switch"], nic["switch_port"])):
                errs.append(f"{server} {nic['port']}: gateway {nic['gateway']} is not {nic['switch']} {nic['switch_port']}'s address")
    for sw in f.switches:
        for i in sw["interfaces"]:
            have = port_addr.get((i["peer"]["device"], i["peer"]["port"]))
            if have is not None and have != i["peer"]["address"]:
                errs.append(f"{sw['name']} {i['name']}: peer {i['peer']['device']} {i['peer']['port']} has {have}, "
                            f"not {i['peer']['address']}")
    return _row("addresses_unique_peers_connected", errs, f"{len(seen)} addresses unique; every /31's two ends agree")


def rail_paths(f: Facts) -> Row:
    """6. Every GPU port reaches every other server's GPU ports of its plane along every ECMP path: over its one leaf
    when both are on it, else leaf -> spine -> leaf through each of the plane's spines. All pairs walked up to
    EXHAUSTIVE_PAIRS, else SAMPLED_PAIRS drawn with a fixed seed."""
    by_plane = defaultdict(list)
    for server, rows in f.nics.items():
        for nic in rows:
            by_plane[nic["plane"]].append((server, nic["port"], nic["switch"], aton(nic["address"])))
    total = sum(len(v) * (len(v) - 1) for v in by_plane.values())
    if total <= EXHAUSTIVE_PAIRS:
        pairs = [(s, d) for v in by_plane.values() for s in v for d in v if s[0] != d[0]]
        how = "exhaustive"
    else:
        rng = random.Random(SEED)
        planes = [p for p in sorted(by_plane) if len(by_plane[p]) > 1]
        pairs = []
        for _ in range(SAMPLED_PAIRS):
            v = by_plane[planes[rng.randrange(len(planes))]]
            s, d = rng.choice(v), rng.choice(v)
            if s[0] != d[0]:
                pairs.append((s, d))
        how = f"sampled (seed {SEED})"
    spines_of = defaultdict(set)
    for sp in f.spines:
        spines_of[sp["plane"]].add(sp["name"])
    plane_of = {s["name"]: s["plane"] for s in f.switches}
    net = f.network
    errs = []
    for src, dst in pairs:
        paths, err = net.walk_all((src[0], src[1]), dst[3])
        if err is None:
            if src[2] == dst[2]:
                want = {(src[2],)}
            else:
                want = {(src[2], sp, dst[2]) for sp in spines_of[plane_of[src[2]]]}
            if set(paths) != want:
                err = f"paths {sorted(paths)[:3]} ({len(paths)}), expected {len(want)} via {'its leaf' if len(want) == 1 else 'every spine'}"
        if err:
            errs.append(f"{src[0]} {src[1]} -> {dst[0]} {dst[1]} ({ntoa(dst[3])}): {err}")
    return _row("rail_paths", errs, f"{len(pairs)} of {total} same-plane GPU-port pairs walked, {how}: "
                "one leaf, or leaf-spine-leaf through every spine")


INVARIANTS: tuple[Callable[[Facts], Row], ...] = (
    rail_leaf_per_gpu_port, port_budget_and_cages, leaf_spine_mesh, asn_per_leaf_spines_share, addresses_unique_peers_connected,
    rail_paths,
)


def evaluate(f: Facts) -> list[Row]:
    return [check(f) for check in INVARIANTS]


def evaluate_invariants(acc: dict) -> list[Row]:
    """One row per invariant of ``INVARIANTS`` on the planner's accumulator."""
    return evaluate(facts_from_acc(acc))
