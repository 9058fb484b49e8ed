"""Apply the rendered host files (hosts/<server>.yaml netplan, hosts/<server>.sysctl.conf) with ``ip``.

The twin configures its servers from these files, not from the plan, so the files themselves are
what gets tested. Only what a ZCube host file uses is understood (addresses, MTU, routes with
metric/table/on-link/from/type, routing-policy); anything else in ``ethernets`` is reported, never
silently ignored.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from zcube_deploy.errors import InputErrors, Problem

KNOWN_PORT_KEYS = {"match", "set-name", "dhcp4", "dhcp6", "accept-ra", "link-local", "mtu", "addresses", "routes",
                   "routing-policy", "optional"}
KNOWN_ROUTE_KEYS = {"to", "via", "metric", "table", "on-link", "from", "type", "scope"}
KNOWN_RULE_KEYS = {"from", "to", "table", "priority"}
ROUTE_TYPES = {"unicast", "unreachable", "blackhole", "prohibit", "throw"}
NEXTHOP_LESS_TYPES = {"unreachable", "blackhole", "prohibit", "throw"}


def netplan_commands(path: Path, names: dict[str, str] | None = None) -> tuple[list[str], list[Problem]]:
    """``ip -batch`` lines that configure what the netplan file says (run inside the server's namespace).

    ``names`` maps a netplan interface name to the twin's interface name (identity by default).
    """
    names = names or {}
    problems: list[Problem] = []
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        return [], [Problem(str(path), f"cannot read the netplan file: {exc}")]
    eth = ((doc.get("network") or {}).get("ethernets")) or {}
    links, addrs, routes, rules = [], [], [], []
    for port in sorted(eth):
        cfg = eth[port] or {}
        where = f"{path.name}:network.ethernets.{port}"
        extra = sorted(set(cfg) - KNOWN_PORT_KEYS)
        if extra:
            problems.append(Problem(where, f"the twin does not implement {', '.join(extra)}"))
        dev = names.get(cfg.get("set-name", port), cfg.get("set-name", port))
        mtu = f" mtu {int(cfg['mtu'])}" if cfg.get("mtu") else ""
        links.append(f"link set dev {dev}{mtu} up")
        for a in cfg.get("addresses") or []:
            addrs.append(f"address add {a} dev {dev}")
        for k, r in enumerate(cfg.get("routes") or []):
            extra = sorted(set(r) - KNOWN_ROUTE_KEYS)
            if extra:
                problems.append(Problem(f"{where}.routes[{k}]", f"the twin does not implement {', '.join(extra)}"))
            kind = r.get("type", "unicast")
            if kind not in ROUTE_TYPES:
                problems.append(Problem(f"{where}.routes[{k}].type", f"the twin does not implement route type {kind!r}"))
                continue
            line = f"route add {kind} {r['to']}"
            if kind in NEXTHOP_LESS_TYPES:
                # the kernel takes no gateway and no device for these (networkd, too, installs them without one)
                if "via" in r:
                    problems.append(Problem(f"{where}.routes[{k}]", f"a {kind} route has no 'via'"))
                    continue
            else:
                if "via" in r:
                    line += f" via {r['via']}"
                line += f" dev {dev}"
            if r.get("on-link"):
                line += " onlink"
            if "from" in r:
                line += f" src {r['from']}"
            if "scope" in r:
                line += f" scope {r['scope']}"
            line += f" table {r.get('table', 'main')}"
            if "metric" in r:
                line += f" metric {int(r['metric'])}"
            routes.append(line)
        for k, rule in enumerate(cfg.get("routing-policy") or []):
            extra = sorted(set(rule) - KNOWN_RULE_KEYS)
            if extra:
                problems.append(Problem(f"{where}.routing-policy[{k}]", f"the twin does not implement {', '.join(extra)}"))
            line = "rule add"
            if "from" in rule:
                line += f" from {rule['from']}"
            if "to" in rule:
                line += f" to {rule['to']}"
            if "priority" in rule:
                line += f" priority {int(rule['priority'])}"
            line += f" table {rule['table']}"
            rules.append(line)
    # links up and addresses first: a route's gateway must be reachable when it is added
    return links + addrs + routes + rules, problems


def sysctl_settings(path: Path) -> tuple[list[tuple[str, str]], list[Problem]]:
    """(key, value) pairs of a sysctl.conf file (systemd-sysctl syntax: '#'/';' comments, '-' prefix)."""
    out, problems = [], []
    if not path.exists():
        return [], []
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if "=" not in line:
            problems.append(Problem(f"{path.name}:{n}", f"not a 'key = value' line: {line!r}"))
            continue
        key, value = (s.strip() for s in line.split("=", 1))
        key = key.lstrip("-")
        if not key.startswith("net.") or ".." in key or "/" in key:
            problems.append(Problem(f"{path.name}:{n}", f"the twin applies only net.* keys in a namespace, not {key!r}"))
            continue
        out.append((key, value))
    return out, problems


def check(problems: list[Problem]) -> None:
    if problems:
        raise InputErrors(problems, "the rendered host files use what the twin cannot apply")
