"""Routing proof from the rendered files alone (not the plan).

Reads DIR/configs/*.cfg (RGOS) and DIR/hosts/*.yaml (netplan), builds every device's forwarding
table (switches: connected /31s and static routes; hosts: the policy table of the source
address), and walks packets between NIC ports in different groups: each must be delivered to
the right NIC through at most two switches, the source port's switch then the destination
port's switch (zcube.md section 6), with one next hop per step, no loop and no black hole.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import yaml

from zcube_deploy.devices.hconfig import parse_config
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.plan.ipam import aton
from zcube_deploy.topology.forwarding import Network

try:  # the C loader is ~10x faster on thousands of files
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


def _plen(mask: str) -> int:
    return bin(aton(mask)).count("1")


def load_switch(text: str) -> tuple[str, list[tuple[str, int, int]], list[tuple[int, int, int]]]:
    cfg = parse_config(text)
    hostname = next((c.text.split(None, 1)[1] for c in cfg.get_children(startswith="hostname ")), None)
    if hostname is None:
        raise ValueError("no hostname line")
    interfaces = []
    for itf in cfg.get_children(startswith="interface "):
        kids = [c.text for c in itf.children]
        if "shutdown" in kids:
            continue
        for line in kids:
            if line.startswith("ip address "):
                _, _, addr, mask = line.split()[:4]
                interfaces.append((itf.text[len("interface "):], aton(addr), _plen(mask)))
    routes = []
    for rt in cfg.get_children(startswith="ip route "):
        parts = rt.text.split()
        routes.append((aton(parts[2]), _plen(parts[3]), aton(parts[4])))
    return hostname, interfaces, routes


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
        routes = [r for r in cfg.get("routes", []) if (r.get("table") in tables) if tables] or \
                 [r for r in cfg.get("routes", []) if "table" not in r]
        parsed = []
        for r in routes:
            net, plen = str(r["to"]).split("/")
            parsed.append((aton(net), int(plen), aton(str(r["via"]))))
        ports.append({"host": name, "port": port, "address": aton(address), "routes": parsed})
    return ports


def load_rendered(directory: str | Path) -> tuple[Network, list[dict]]:
    d = Path(directory)
    configs = sorted((d / "configs").glob("*.cfg"))
    hosts = sorted((d / "hosts").glob("*.yaml"))
    if not configs or not hosts:
        raise InputErrors(Problem(str(d), "no rendered configs/*.cfg and hosts/*.yaml here", "run `zcube render PLAN -o DIR` first"))
    net = Network()
    for path in configs:
        name, interfaces, routes = load_switch(path.read_text(encoding="utf-8"))
        net.add_switch(name, interfaces, routes)
    ports: list[dict] = []
    for path in hosts:
        for p in load_host(path.read_text(encoding="utf-8"), path.stem):
            net.add_host_port(p["host"], p["port"], p["address"], p["routes"])
            ports.append(p)
    return net, ports


def prove_routing(directory: str | Path, samples: int | None = None, seed: int = 1, exhaustive_limit: int = 200_000) -> dict:
    """Walk packets between NIC ports of different groups. Exhaustive when small, else a seeded sample."""
    net, ports = load_rendered(directory)
    prefixes = sorted({(r[0], r[1]) for p in ports for r in p["routes"]})
    members: dict[tuple[int, int], list[dict]] = defaultdict(list)
    for p in ports:
        for net_, plen in prefixes:
            if p["address"] >> (32 - plen) == net_ >> (32 - plen):
                members[(net_, plen)].append(p)
    # the destinations of a port are the ports inside the prefixes it routes to (the other group)
    targets = [(p, [members[(r[0], r[1])] for r in p["routes"]]) for p in ports]
    total = sum(len(g) for _, groups in targets for g in groups)
    report = {"ports": len(ports), "switches": len(net.tables), "pairs_total": total, "checked": 0, "delivered": 0,
              "max_switches": 0, "path_lengths": {}, "failures": []}

    def check(src: dict, dst: dict) -> None:
        path, err = net.walk((src["host"], src["port"]), dst["address"])
        report["checked"] += 1
        if err is None:
            first = net.owner.get(src["routes"][0][2]) if src["routes"] else None
            last = net.port_of.get(dst["address"] ^ 1, (None,))[0]
            if len(path) > 2:
                err = f"{len(path)} switches"
            elif path[0] != first or path[-1] != last:
                err = f"path {path} is not {first} -> {last}"
            elif len(path) == 2 and path[0] == path[1]:
                err = "loop"
        if err:
            if len(report["failures"]) < 20:
                report["failures"].append(f"{src['host']} {src['port']} -> {dst['host']} {dst['port']}: {err} (path {path})")
            return
        report["delivered"] += 1
        report["max_switches"] = max(report["max_switches"], len(path))
        report["path_lengths"][len(path)] = report["path_lengths"].get(len(path), 0) + 1

    if samples is None and total <= exhaustive_limit:
        report["mode"] = "exhaustive"
        for src, groups in targets:
            for group in groups:
                for dst in group:
                    check(src, dst)
    else:
        n = samples or 20_000
        report["mode"] = f"sampled ({n} pairs, seed {seed})"
        rng = random.Random(seed)
        with_targets = [(s, [g for g in groups if g]) for s, groups in targets if any(groups)]
        for _ in range(n):
            src, groups = with_targets[rng.randrange(len(with_targets))]
            group = groups[rng.randrange(len(groups))]
            check(src, group[rng.randrange(len(group))])
    report["path_lengths"] = {str(k): v for k, v in sorted(report["path_lengths"].items())}
    report["ok"] = report["checked"] > 0 and report["delivered"] == report["checked"]
    return report
