"""Routing proof from the rendered files alone (not the plan).

Reads the DIR/configs/* that render's manifest.json lists (without one: every file) through each platform's neutral
parse (``platforms/<name>``: ``config_facts``, chosen by the file's suffix) and DIR/hosts/*.yaml (netplan), builds every device's forwarding
table (switches: connected /31s and static routes, or in mode bgp the best paths of the
configured sessions: a session counts when both ends name each other with the right ASN;
hosts: the policy table of the source address, longest prefix then lowest metric), and walks
packets from every NIC port to every port its table routes to: each must be delivered to the
right NIC through at most two switches, the first being a switch of the source's NIC, the last
the destination port's switch (zcube.md section 6), with one next switch per step, no loop and
no black hole. Cross-group pairs take the source port's switch; same-group pairs the other
port's switch (its fallback through the other port) or, on one switch, that switch alone.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

import yaml

from zcube_deploy.designs import SwitchRoles, island_of, path_rule
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.ipv4 import aton
from zcube_deploy.platforms import config_readers
from zcube_deploy.plan.model import DESIGN_DEFAULT
from zcube_deploy.plan.roles import ROLES
from zcube_deploy.render.owned import foreign, previous_render
from zcube_deploy.platforms.facts import ConfigFacts
from zcube_deploy.topology.bestpaths import best_routes, shared_asns
from zcube_deploy.topology.forwarding import Network

try:  # the C loader is ~10x faster on thousands of files
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


def _net(prefix: str) -> tuple[int, int]:
    net, _, plen = prefix.partition("/")
    if not plen.isdigit():
        raise ValueError(f"unreadable prefix {prefix!r}")
    return aton(net), int(plen)


def load_switch(facts: ConfigFacts) -> tuple[str, list[tuple[str, int, int]], list[tuple[int, int, int]]]:
    """(hostname, [(interface, address, prefix length)] of every interface not shut down,
    [(network, prefix length, next hop)] of the static routes; discard routes forward nothing)."""
    if not facts.hostnames:
        raise ValueError("no hostname line")
    shut = set(facts.shutdown)
    interfaces = [(name, *_net(a)) for name, a in facts.addresses if name not in shut]
    routes = [(*_net(prefix), aton(nh)) for prefix, nh in facts.routes if nh]
    return facts.hostnames[0], interfaces, routes


def load_bgp(facts: ConfigFacts) -> dict | None:
    """The first BGP instance: {asn, neighbors: {address: remote AS}, networks: [(net, plen)]}."""
    if not facts.bgp:
        return None
    b = facts.bgp[0]
    return {"asn": b["asn"], "neighbors": {aton(a): asn for a, asn in b["neighbors"]},
            "networks": [_net(p) for p in b["networks"]]}


def load_host(text: str, name: str) -> list[dict]:
    """NIC ports of one netplan file, each with the routes of its source-policy table."""
    doc = yaml.load(text, Loader=_Loader) or {}
    ports = []
    for port, cfg in (doc.get("network", {}).get("ethernets") or {}).items():
        addrs = cfg.get("addresses") or []
        if not addrs:
            continue
        address = str(addrs[0]).split("/")[0]
        tables = [p["table"] for p in cfg.get("routing-policy", []) if str(p.get("from", "")).split("/")[0] == address]
        ports.append({"host": name, "port": port, "address": aton(address), "tables": tables,
                      "own": [r for r in cfg.get("routes", []) if "table" not in r]})
    # a table's routes may sit under any interface (a fallback leaves on the other port)
    every = [r for cfg in (doc.get("network", {}).get("ethernets") or {}).values() for r in cfg.get("routes", []) if "table" in r]
    for p in ports:
        routes = [r for r in every if r["table"] in p["tables"]] if p["tables"] else p["own"]
        parsed = []
        for r in routes:
            if r.get("type", "unicast") != "unicast":
                continue  # the table's terminal "unreachable" routes: a lookup ending there delivers nothing, as no route
            net, plen = str(r["to"]).split("/")
            parsed.append((int(plen), int(r.get("metric", 0)), aton(net), aton(str(r["via"]))))
        parsed.sort(key=lambda x: (-x[0], x[1]))  # the kernel: longest prefix, then lowest metric
        p["routes"] = [(n, plen, via) for plen, _, n, via in parsed]
        del p["tables"], p["own"]
    return ports


def _bgp_best_routes(parsed: list) -> dict[str, list[tuple[int, int, int]]]:
    """Best paths over the sessions the configs establish: A's neighbour X counts when X is an
    address of switch B on a /31 shared with A, A's remote-as for X is B's ASN, and B has A's
    address as a neighbour with A's ASN."""
    speakers = {name: bgp for name, _, _, bgp in parsed if bgp}
    if not speakers:
        return {}
    owner = {addr: name for name, interfaces, _, _ in parsed for _, addr, _ in interfaces}
    sessions: dict[str, list[tuple[int, str]]] = {name: [] for name in speakers}
    for name, interfaces, _, bgp in parsed:
        if not bgp:
            continue
        mine = {addr for _, addr, plen in interfaces if plen == 31}
        for addr, remote_as in bgp["neighbors"].items():
            peer = owner.get(addr)
            local = addr ^ 1
            if peer in speakers and local in mine and speakers[peer]["asn"] == remote_as \
                    and speakers[peer]["neighbors"].get(local) == bgp["asn"]:
                sessions[name].append((addr, peer))
    shared = shared_asns([{"name": name, "asn": bgp["asn"]} for name, bgp in speakers.items()])  # a ROFT's spines share one
    routes = best_routes(sessions, {name: bgp["networks"] for name, bgp in speakers.items()}, shared_asn=shared)
    return {name: [(n, plen, nh) for n, plen, hops in rs for nh in hops] for name, rs in routes.items()}


# what a hand-edited file can raise in the readers: each is the file's problem, named with it, never a traceback
_UNREADABLE = (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError, KeyError, IndexError, TypeError, AttributeError)


def listed(directory: Path) -> set[str] | None:
    """The files render's manifest.json lists (what the proof reads), None without a readable one (then every config
    and netplan file in the folder: load_roles says what is wrong with the manifest)."""
    previous = previous_render(directory / "manifest.json")
    return set(previous["files"]) if previous else None


def rendered_files(d: Path, readers) -> tuple[list[Path], list[Path], list[Problem]]:
    """The configs and netplan files of a render folder: the manifest's (a file it lists and the folder lacks is a
    problem), or without one every file with a reader's suffix; a file no manifest lists is not read (prove_routing
    names it)."""
    own = listed(d)
    configs = sorted(p for p in (d / "configs").glob("*") if p.suffix in readers and (own is None or f"configs/{p.name}" in own))
    hosts = sorted(p for p in (d / "hosts").glob("*.yaml") if own is None or f"hosts/{p.name}" in own)
    missing = sorted(rel for rel in own or () if not (d / rel).is_file())
    hint = "re-render it with `zcube render PLAN -o DIR`"
    return configs, hosts, [Problem(str(d / rel), "listed in manifest.json but missing", hint) for rel in missing]


def load_rendered(directory: str | Path) -> tuple[Network, list[dict]]:
    """The forwarding model of a render folder; every file that cannot be read is one problem (InputErrors, exit 2)."""
    d = Path(directory)
    readers = config_readers()
    configs, hosts, problems = rendered_files(d, readers)
    if not configs or not hosts:
        raise InputErrors(Problem(str(d), "no rendered configs/*.cfg and hosts/*.yaml here", "run `zcube render PLAN -o DIR` first"))
    hint = "re-render it with `zcube render PLAN -o DIR`"
    parsed = []
    for path in configs:
        try:
            facts = readers[path.suffix](path.read_text(encoding="utf-8"))
            parsed.append((*load_switch(facts), load_bgp(facts)))
        except _UNREADABLE as exc:
            problems.append(Problem(str(path), f"cannot read this config: {type(exc).__name__}: {exc}", hint))
    host_ports: list[dict] = []
    for path in hosts:
        try:
            host_ports += load_host(path.read_text(encoding="utf-8"), path.stem)
        except _UNREADABLE as exc:
            problems.append(Problem(str(path), f"cannot read this netplan file: {type(exc).__name__}: {exc}", hint))
    names = [name for name, _, _, _ in parsed]
    problems += [Problem(str(d / "configs"), f"hostname {n} in more than one config", hint) for n in sorted({n for n in names if names.count(n) > 1})]
    if problems:
        raise InputErrors(problems, f"{d}: unreadable rendered files")
    extra = _bgp_best_routes(parsed)
    net = Network()
    for name, interfaces, routes, _ in parsed:
        net.add_switch(name, interfaces, routes + extra.get(name, []))
    for p in host_ports:
        net.add_host_port(p["host"], p["port"], p["address"], p["routes"])
    return net, host_ports


def load_roles(directory: str | Path, net: Network) -> tuple[SwitchRoles | None, str]:
    """The switches' roles and the plan's design from render's manifest.json (None: a manifest of an older render,
    without roles: every switch is then held to ZCube's rule). A role the manifest lacks for a rendered switch, or
    an unreadable manifest, is an input error."""
    path = Path(directory) / "manifest.json"
    hint = "re-render it with `zcube render PLAN -o DIR`"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        raw = manifest.get("roles")
        design = str(manifest.get("design") or DESIGN_DEFAULT)
        if raw is None:
            return None, design
        roles = SwitchRoles({str(n): (str(r[0]), int(r[1])) for n, r in raw.items()})
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, TypeError, IndexError) as exc:
        raise InputErrors(Problem(str(path), f"cannot read the roles of this manifest: {type(exc).__name__}: {exc}", hint),
                          f"{directory}: unreadable manifest") from None
    problems = [Problem(str(path), f"switch {n} is rendered but has no role here", hint) for n in sorted(set(net.tables) - set(roles.of))]
    problems += [Problem(f"{path}: roles.{n}", f"unknown role {r!r}", "known: " + ", ".join(sorted(ROLES)))
                 for n, (r, _) in sorted(roles.of.items()) if r not in ROLES]
    if problems:
        raise InputErrors(problems, f"{directory}: the manifest's roles do not fit the rendered files")
    return roles, design


def _show(paths) -> str:
    ps = sorted(paths)
    return " | ".join("-".join(p) for p in ps[:3]) + (f" (+{len(ps) - 3} more)" if len(ps) > 3 else "")


class _Proof:
    """The walk of one render folder: each port's island (the design of its switch's role; all ``zcube`` without
    roles), each pair judged by its island's path rule (designs.PathRule), the counts per island."""

    def __init__(self, net: Network, ports: list[dict], roles: SwitchRoles | None):
        self.net, self.ports, self.roles = net, ports, roles
        self.switch_of = {p["address"]: net.port_of.get(p["address"] ^ 1, (None,))[0] for p in ports}
        self.island = {a: self.island_of(sw) for a, sw in self.switch_of.items()}
        self.attached: dict[str, set] = defaultdict(set)
        for p in ports:
            self.attached[p["host"]].add(self.switch_of[p["address"]])
        names = sorted(roles.of) if roles else sorted(net.tables)
        self.stats = {}
        for isl in sorted({self.island_of(n) for n in names}):
            rule = path_rule(isl)
            self.stats[isl] = {"switches": sum(1 for n in names if self.island_of(n) == isl),
                               "ports": sum(1 for v in self.island.values() if v == isl), "pairs_routed": 0, "walked": 0,
                               "delivered": 0, "max_switches": rule.max_switches, "path_lengths": {},
                               "reach": {"pairs": 0, "checked": 0, "not_routed": 0}}
        self.between = 0  # routed pairs whose ports sit in two islands: no traffic between islands is expected

    def island_of(self, switch: str | None) -> str:
        if self.roles is None or switch is None:
            return "zcube"
        return island_of(self.roles.of[switch][0]) if switch in self.roles.of else "zcube"

    def judge(self, src: dict, dst: dict) -> tuple[list, str | None]:
        """(the switch paths walked, what is wrong or None) of a pair of one island."""
        net = self.net
        paths, err = net.walk_all((src["host"], src["port"]), dst["address"], max_switches=6)
        if err is not None:
            return paths, err
        via = next(r[2] for r in src["routes"] if dst["address"] >> (32 - r[1]) == r[0] >> (32 - r[1]))
        first, last = net.owner.get(via), self.switch_of[dst["address"]]
        rule = path_rule(self.island[src["address"]])
        if first not in self.attached[src["host"]]:
            return paths, f"first switch {first} is not cabled to {src['host']}"
        if self.roles is not None and first not in self.roles.of:
            return paths, f"first switch {first} has no role"
        longest = max(len(p) for p in paths)
        if longest > rule.max_switches:
            return paths, f"{longest} switches"
        if any(len(set(p)) < len(p) for p in paths):
            return paths, "loop"
        want = rule.expected(self.roles, first, last)
        if isinstance(want, str):
            return paths, want
        if set(paths) != want:
            return paths, f"{len(paths)} path(s) {_show(paths)}, not the {len(want)} its design takes: {_show(want)}"
        return paths, None


def prove_routing(directory: str | Path, samples: int | None = None, seed: int = 1, exhaustive_limit: int = 200_000) -> dict:
    """Walk packets between NIC ports of one island (every port of a ZCube or a ROFT; a migration stage's two sides
    apart), each pair along every ECMP branch against its design's path rule, and check that each port's table
    routes to every port its design says it must reach. Exhaustive when small, else a seeded sample."""
    net, ports = load_rendered(directory)
    roles, design = load_roles(directory, net)
    proof = _Proof(net, ports, roles)
    targets, members = _targets(ports)
    total = 0
    for src, outer, _ in targets:  # routed pairs per island, counted (never listed: at 16k GPUs a billion pairs)
        for key in outer:
            for isl, n in _islands_in(proof, members, key).items():
                n -= isl == proof.island[src["address"]] and _inside(src["address"], key)
                total += n
                if isl == proof.island[src["address"]]:
                    proof.stats[isl]["pairs_routed"] += n
                else:
                    proof.between += n
    own = listed(Path(directory))
    report = {"design": design, "roles": "manifest.json" if roles else "none in manifest.json: every switch held to ZCube's rule",
              # files in configs/ and hosts/ that the manifest does not list: not the render's, not read
              "not_read": foreign(Path(directory), own) if own is not None else [],
              "ports": len(ports), "switches": len(net.tables), "pairs_total": total, "checked": 0, "delivered": 0,
              "max_switches": 0, "path_lengths": {}, "path_kinds": {}, "failures": [], "islands": proof.stats,
              "between_islands": {"pairs_routed": proof.between, "what": "not expected: no traffic between islands (not walked)"}}

    def fail(msg: str) -> None:
        report["failures"].append(msg) if len(report["failures"]) < 20 else None

    def check(src: dict, dst: dict) -> bool:
        isl = proof.island[src["address"]]
        if isl != proof.island[dst["address"]]:
            return False
        paths, err = proof.judge(src, dst)
        report["checked"] += 1
        st = proof.stats[isl]
        st["walked"] += 1
        if err:
            shown = "" if " path(s) " in err else f" (path {_show(paths) if paths else 'none'})"
            fail(f"{src['host']} {src['port']} -> {dst['host']} {dst['port']}: {err}{shown}")
            return True
        report["delivered"] += 1
        st["delivered"] += 1
        own = proof.switch_of[src["address"]]
        kind = "same switch" if len(paths[0]) == 1 else ("via own switch" if paths[0][0] == own else "via the other port's switch")
        report["path_kinds"][kind] = report["path_kinds"].get(kind, 0) + 1
        n = max(len(p) for p in paths)
        report["max_switches"] = max(report["max_switches"], n)
        report["path_lengths"][n] = report["path_lengths"].get(n, 0) + 1
        st["path_lengths"][n] = st["path_lengths"].get(n, 0) + 1
        return True

    in_islands = total - proof.between
    if samples is None and in_islands <= exhaustive_limit:
        report["mode"] = "exhaustive"
        for src, outer, _ in targets:
            for key in outer:
                for dst in members(*key):
                    if dst is not src:
                        check(src, dst)
    else:
        n = samples or 20_000
        report["mode"] = f"sampled ({n} pairs, seed {seed})"
        _sample(targets, members, n, random.Random(seed), check)
    _must_reach(proof, report, samples, seed, exhaustive_limit, fail)
    if report["checked"] == 0:  # not a pass: there was nothing to walk (no port routes to another)
        report["failures"].insert(0, f"no NIC port of the {len(ports)} rendered has a route to another port of its island: "
                                     "no pair was walked")
    for isl, st in proof.stats.items():
        if st["ports"] and not st["walked"] and report["checked"]:
            report["failures"].insert(0, f"{isl} island: {st['ports']} NIC ports, no pair of them walked")
        st["path_lengths"] = {str(k): v for k, v in sorted(st["path_lengths"].items())}
    report["path_lengths"] = {str(k): v for k, v in sorted(report["path_lengths"].items())}
    missing = sum(st["reach"]["not_routed"] for st in proof.stats.values())
    report["ok"] = report["checked"] > 0 and report["delivered"] == report["checked"] and not missing and \
        all(st["walked"] for st in proof.stats.values() if st["ports"])
    return report


def _inside(address: int, key: tuple[int, int]) -> bool:
    net_, plen = key
    return address >> (32 - plen) == net_ >> (32 - plen) if plen else True


def _islands_in(proof: _Proof, members, key: tuple[int, int]) -> dict[str, int]:
    """How many ports of each island lie inside prefix ``key`` (cached per prefix)."""
    cache = proof.__dict__.setdefault("_islands_cache", {})
    if key not in cache:
        counts: dict[str, int] = defaultdict(int)
        for p in members(*key):
            counts[proof.island[p["address"]]] += 1
        cache[key] = dict(counts)
    return cache[key]


def _targets(ports: list[dict]):
    """(every port with its outermost routed prefixes and how many destinations they hold, members(net, plen)).
    Prefixes are nested or disjoint, so a port's destinations are the members of its outermost prefixes."""
    by_plen: dict[int, dict[int, list[dict]]] = defaultdict(lambda: defaultdict(list))
    plens = sorted({r[1] for p in ports for r in p["routes"]})
    for p in ports:
        for plen in plens:
            by_plen[plen][p["address"] >> (32 - plen)].append(p)

    def members(net_: int, plen: int) -> list[dict]:
        return by_plen[plen].get(net_ >> (32 - plen), [])

    targets = []
    for p in ports:
        keys = sorted({(r[0] >> (32 - r[1]) << (32 - r[1]) if r[1] else 0, r[1]) for r in p["routes"]}, key=lambda k: k[1])
        outer: list[tuple[int, int]] = []
        for net_, plen in keys:
            if not any(pl <= plen and net_ >> (32 - pl) == n >> (32 - pl) for n, pl in outer):
                outer.append((net_, plen))
        count = sum(len(members(*k)) for k in outer) - any(_inside(p["address"], k) for k in outer)
        targets.append((p, outer, count))
    return targets, members


def _sample(targets, members, n: int, rng: random.Random, check) -> None:
    """``n`` seeded random pairs of one island, each a destination drawn uniformly among its source's routed ones;
    a draw across islands is not walked (at most 20 draws per pair)."""
    with_targets = [(src, outer) for src, outer, count in targets if count > 0]
    walked, draws = 0, 0
    while with_targets and walked < n and draws < 20 * n:
        draws += 1
        src, outer = with_targets[rng.randrange(len(with_targets))]
        while True:
            pick = rng.randrange(sum(len(members(*k)) for k in outer))
            for key in outer:
                group = members(*key)
                if pick < len(group):
                    break
                pick -= len(group)
            if group[pick] is not src:
                break
        walked += check(src, group[pick])


def _must_reach(proof: _Proof, report: dict, samples: int | None, seed: int, limit: int, fail) -> None:
    """Every port's table routes to each port its island's design says it must reach (``PathRule.reaches``: ZCube
    odd <-> even, ROFT leaf -> leaf, on the port's plane): all such pairs when at most ``limit``, else a seeded
    sample. Without roles (an older manifest) this is not checked, and said so."""
    if proof.roles is None:
        report["must_reach"] = "not checked: manifest.json has no roles"
        return
    groups: dict[tuple[str, str, int], list[dict]] = defaultdict(list)  # (island, role, plane) -> ports
    for p in proof.ports:
        sw = proof.switch_of[p["address"]]
        if sw in proof.roles.of:
            role, plane = proof.roles.of[sw]
            groups[(proof.island[p["address"]], role, plane)].append(p)
    blocks = []  # (island, sources, destinations)
    for (isl, role, plane), srcs in sorted(groups.items(), key=lambda kv: kv[0]):
        for to in path_rule(isl).reaches.get(role, ()):
            blocks.append((isl, srcs, groups.get((isl, to, plane), [])))
    rng = random.Random(seed)
    how = []
    for isl in sorted({b[0] for b in blocks}):
        mine = [(srcs, dsts) for b_isl, srcs, dsts in blocks if b_isl == isl]
        sizes = [len(a) * len(b) for a, b in mine]
        st = proof.stats[isl]["reach"]
        st["pairs"] = sum(size - (len(a) if a is b else 0) for (a, b), size in zip(mine, sizes))  # not a port to itself
        exhaustive = samples is None and sum(sizes) <= limit
        picks = range(sum(sizes)) if exhaustive or not sum(sizes) else \
            sorted(rng.randrange(sum(sizes)) for _ in range(samples or 20_000))
        how.append(f"{isl}: " + ("exhaustive" if exhaustive else f"sampled ({len(picks)} pairs, seed {seed})"))
        for i in picks:
            k = 0
            while i >= sizes[k]:  # the block holding pair i
                i -= sizes[k]
                k += 1
            srcs, dsts = mine[k]
            src, dst = srcs[i // len(dsts)], dsts[i % len(dsts)]
            if src is dst:
                continue
            st["checked"] += 1
            if proof.net.first_hop((src["host"], src["port"]), dst["address"]) is None:
                st["not_routed"] += 1
                fail(f"{src['host']} {src['port']} -> {dst['host']} {dst['port']}: its table has no route to it "
                     f"(the {isl} design says it must reach it)")
    report["must_reach"] = "; ".join(how)


def island_lines(report: dict) -> list[str]:
    """What the proof checked in each island (one line each) and between them, for the terminal."""
    lines = []
    for isl, st in report["islands"].items():
        reach = st["reach"]
        lines.append(f"{isl} island: {st['switches']} switches, {st['ports']} NIC ports; pairs routed {st['pairs_routed']:,}, "
                     f"walked {st['walked']:,}, delivered {st['delivered']:,}; path lengths {st['path_lengths']} (at most "
                     f"{st['max_switches']}); must-reach pairs {reach['checked']:,} of {reach['pairs']:,} checked, "
                     f"{reach['not_routed']:,} without a route")
    if len(report["islands"]) > 1 or report["between_islands"]["pairs_routed"]:
        lines.append(f"between the islands: {report['between_islands']['pairs_routed']:,} pairs routed, "
                     + report["between_islands"]["what"])
    if report["must_reach"].startswith("not checked"):
        lines.append(f"must-reach pairs {report['must_reach']}")
    return lines
