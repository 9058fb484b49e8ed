"""Routing proof from the rendered files alone (not the plan).

Reads DIR/configs/* through each platform's neutral parse (``platforms/<name>``: ``config_facts``,
chosen by the file's suffix) and DIR/hosts/*.yaml (netplan), builds every device's forwarding
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

import random
from collections import defaultdict
from pathlib import Path

import yaml

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.ipv4 import aton
from zcube_deploy.platforms import config_readers
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


def load_rendered(directory: str | Path) -> tuple[Network, list[dict]]:
    """The forwarding model of a render folder; every file that cannot be read is one problem (InputErrors, exit 2)."""
    d = Path(directory)
    readers = config_readers()
    configs = sorted(p for p in (d / "configs").glob("*") if p.suffix in readers)
    hosts = sorted((d / "hosts").glob("*.yaml"))
    if not configs or not hosts:
        raise InputErrors(Problem(str(d), "no rendered configs/*.cfg and hosts/*.yaml here", "run `zcube render PLAN -o DIR` first"))
    hint = "re-render it with `zcube render PLAN -o DIR`"
    problems: list[Problem] = []
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


def prove_routing(directory: str | Path, samples: int | None = None, seed: int = 1, exhaustive_limit: int = 200_000) -> dict:
    """Walk packets between NIC ports of different groups. Exhaustive when small, else a seeded sample."""
    net, ports = load_rendered(directory)
    # the destinations of a port: every port inside the prefixes its table routes to (cross-group,
    # and its own group through its fallbacks). Prefixes are nested or disjoint, so a port's
    # destinations are the members of its outermost prefixes: counted, never listed (at 16k GPUs
    # that list would hold a billion pairs).
    by_plen: dict[int, dict[int, list[dict]]] = defaultdict(lambda: defaultdict(list))
    plens = sorted({r[1] for p in ports for r in p["routes"]})
    for p in ports:
        for plen in plens:
            by_plen[plen][p["address"] >> (32 - plen)].append(p)

    def members(net_: int, plen: int) -> list[dict]:
        return by_plen[plen].get(net_ >> (32 - plen), [])

    targets = []  # (port, its outermost prefixes, how many destinations)
    for p in ports:
        keys = sorted({(r[0] >> (32 - r[1]) << (32 - r[1]) if r[1] else 0, r[1]) for r in p["routes"]}, key=lambda k: k[1])
        outer: list[tuple[int, int]] = []
        for net_, plen in keys:
            if not any(pl <= plen and net_ >> (32 - pl) == n >> (32 - pl) for n, pl in outer):
                outer.append((net_, plen))
        count = sum(len(members(*k)) for k in outer)
        if any(p["address"] >> (32 - pl) == n >> (32 - pl) for n, pl in outer):
            count -= 1  # not itself
        targets.append((p, outer, count))
    attached: dict[str, set] = defaultdict(set)
    for p in ports:
        attached[p["host"]].add(net.port_of.get(p["address"] ^ 1, (None,))[0])
    total = sum(count for _, _, count in targets)
    report = {"ports": len(ports), "switches": len(net.tables), "pairs_total": total, "checked": 0, "delivered": 0,
              "max_switches": 0, "path_lengths": {}, "path_kinds": {}, "failures": []}

    def check(src: dict, dst: dict) -> None:
        path, err = net.walk((src["host"], src["port"]), dst["address"])
        report["checked"] += 1
        if err is None:
            via = next(r[2] for r in src["routes"] if dst["address"] >> (32 - r[1]) == r[0] >> (32 - r[1]))
            first = net.owner.get(via)
            last = net.port_of.get(dst["address"] ^ 1, (None,))[0]
            if len(path) > 2:
                err = f"{len(path)} switches"
            elif first not in attached[src["host"]]:
                err = f"first switch {first} is not cabled to {src['host']}"
            elif path[0] != first or path[-1] != last:
                err = f"path {path} is not {first} -> {last}"
            elif len(path) == 2 and path[0] == path[1]:
                err = "loop"
        if err:
            if len(report["failures"]) < 20:
                report["failures"].append(f"{src['host']} {src['port']} -> {dst['host']} {dst['port']}: {err} (path {path})")
            return
        report["delivered"] += 1
        own = net.port_of.get(src["address"] ^ 1, (None,))[0]
        kind = "same switch" if len(path) == 1 else ("via own switch" if path[0] == own else "via the other port's switch")
        report["path_kinds"][kind] = report["path_kinds"].get(kind, 0) + 1
        report["max_switches"] = max(report["max_switches"], len(path))
        report["path_lengths"][len(path)] = report["path_lengths"].get(len(path), 0) + 1

    if samples is None and total <= exhaustive_limit:
        report["mode"] = "exhaustive"
        for src, outer, _ in targets:
            for key in outer:
                for dst in members(*key):
                    if dst is not src:
                        check(src, dst)
    else:
        n = samples or 20_000
        report["mode"] = f"sampled ({n} pairs, seed {seed})"
        rng = random.Random(seed)
        with_targets = [(src, outer) for src, outer, count in targets if count > 0]
        for _ in range(n if with_targets else 0):
            src, outer = with_targets[rng.randrange(len(with_targets))]
            while True:  # a destination uniformly among the port's destinations
                pick = rng.randrange(sum(len(members(*k)) for k in outer))
                for key in outer:
                    group = members(*key)
                    if pick < len(group):
                        break
                    pick -= len(group)
                if group[pick] is not src:
                    break
            check(src, group[pick])
    if report["checked"] == 0:  # not a pass: there was nothing to walk (no port routes to another)
        report["failures"].append(f"no NIC port of the {len(ports)} rendered has a route to another port: no pair was walked")
    report["path_lengths"] = {str(k): v for k, v in sorted(report["path_lengths"].items())}
    report["ok"] = report["checked"] > 0 and report["delivered"] == report["checked"]
    return report
