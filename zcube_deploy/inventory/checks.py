"""An inventory's semantic checks, each appending :class:`~zcube_deploy.errors.Problem` to a list:
name patterns, catalog models, capacity, switch naming, address pools, the lines a user gives for
switch configs, and the routing settings that can be checked before sizing."""

from __future__ import annotations

import difflib
import string
from ipaddress import IPv4Network
from typing import Any

from zcube_deploy.catalog import NicModel, ServerModel, SwitchModel
from zcube_deploy.errors import Problem
from zcube_deploy.inventory import models as m
from zcube_deploy.safety import NAME_HINT, check_config_line, check_name


def format_pattern(pattern: str, path: str, fields: dict[str, Any], problems: list[Problem]) -> bool:
    """True when ``pattern`` formats with ``fields``; else a problem at ``path`` says why."""
    try:
        names = {f for _, f, _, _ in string.Formatter().parse(pattern) if f is not None}
    except ValueError as exc:
        problems.append(Problem(path, f"invalid pattern {pattern!r}: {exc}"))
        return False
    unknown = sorted(n for n in names if n.split(".")[0].split("[")[0] not in fields)
    if unknown:
        problems.append(Problem(path, f"pattern {pattern!r} uses unknown field(s) {', '.join(unknown)}",
                                "available: " + ", ".join(sorted(fields))))
        return False
    try:
        pattern.format(**fields)
    except (ValueError, KeyError, IndexError) as exc:
        problems.append(Problem(path, f"pattern {pattern!r} cannot be formatted: {exc}"))
        return False
    return True


def model_lookup(kind: str, path: str, name: str, table: dict, problems: list[Problem]):
    """The catalog entry ``name`` of ``table``, or None with a problem naming the closest entry."""
    if name in table:
        return table[name]
    close = difflib.get_close_matches(name, list(table), n=1)
    hint = f"did you mean {close[0]!r}?" if close else "known: " + ", ".join(sorted(table))
    problems.append(Problem(path, f"unknown {kind} {name!r}", hint))
    return None


def check_models(spec: m.Inventory, sw: SwitchModel | None, srv: ServerModel | None, nic: NicModel | None,
                 problems: list[Problem]) -> None:
    """The switch and NIC models fit the inventory: the platform, the port speed, ports in pairs."""
    if sw is not None:
        if sw.platform != spec.platform:
            problems.append(Problem("switch_model", f"{spec.switch_model} runs {sw.platform}, not {spec.platform}"))
        if spec.topology.nic_port_speed not in sw.speeds:
            problems.append(Problem("topology.nic_port_speed", f"{spec.switch_model} has no {spec.topology.nic_port_speed} ports",
                                    "available: " + ", ".join(sw.speeds)))
    if nic is not None:
        if nic.speed != spec.topology.nic_port_speed:
            problems.append(Problem("topology.nic_port_speed", f"{srv.nic_model} ports run at {nic.speed}, not {spec.topology.nic_port_speed}"))
        if nic.ports % 2 and spec.design == "zcube":
            problems.append(Problem("server_model", f"{srv.nic_model} has {nic.ports} ports; ZCube needs 2 per plane"))


def capacity_servers(spec: m.Inventory, installed: int, problems: list[Problem]) -> int:
    """The number of servers to size the fabric for (``topology.capacity_servers``, else the installed ones)."""
    capacity = spec.topology.capacity_servers if spec.topology.capacity_servers is not None else installed
    if capacity < installed:
        problems.append(Problem("topology.capacity_servers", f"capacity {capacity} is below the {installed} servers in the inventory",
                                "raise capacity_servers or remove it to size for the installed servers"))
    if capacity == 0:
        problems.append(Problem("servers", "no servers and no capacity_servers", "add servers or set topology.capacity_servers"))
    return capacity


def check_switch_naming(spec: m.Inventory, nic: NicModel | None, problems: list[Problem]) -> None:
    """``switch_naming`` gives safe names that differ per switch (and per plane when there are several)."""
    fields = {"cluster": spec.cluster, "G": "O", "group": "odd", "number": 1, "index": 0, "plane": 0}
    if format_pattern(spec.switch_naming, "switch_naming", fields, problems):
        bad = check_name(spec.switch_naming.format(**fields))
        if bad:
            problems.append(Problem("switch_naming", f"gives {spec.switch_naming.format(**fields)!r}, which {bad}", NAME_HINT))
        elif nic is not None and nic.ports > 2 and "{plane" not in spec.switch_naming:
            problems.append(Problem("switch_naming", "the NIC has several planes but the pattern has no {plane}", "add {plane}, e.g. 'ZC-P{plane}-{G}{number:03d}'"))
        elif "{number" not in spec.switch_naming and "{index" not in spec.switch_naming:
            problems.append(Problem("switch_naming", "the pattern has no {number} or {index}, so switch names would repeat"))


def check_pools(spec: m.Inventory, problems: list[Problem]) -> None:
    """The address pools are disjoint; the management gateway, first address and fixed addresses fit its network."""
    a = spec.addressing
    pools: dict[str, IPv4Network] = {
        "addressing.host_pool": a.host_pool,
        "addressing.fabric_pool": a.fabric_pool,
        "addressing.loopback_pool": a.loopback_pool,
        "addressing.management.network": a.management.network,
    }
    names = list(pools)
    for i, x in enumerate(names):
        for y in names[i + 1 :]:
            if pools[x].overlaps(pools[y]):
                problems.append(Problem(x, f"{pools[x]} overlaps {y} {pools[y]}", "pools and the management network must be disjoint"))
    mg = a.management
    if mg.gateway is not None and mg.gateway not in mg.network:
        problems.append(Problem("addressing.management.gateway", f"{mg.gateway} is outside {mg.network}"))
    if mg.first is not None and mg.first not in mg.network:
        problems.append(Problem("addressing.management.first", f"{mg.first} is outside {mg.network}"))
    seen: dict[str, str] = {}
    for name, addr in mg.addresses.items():
        where = f"addressing.management.addresses.{name}"
        if addr not in mg.network:
            problems.append(Problem(where, f"{addr} is outside the management network {mg.network}"))
        elif addr in (mg.network.network_address, mg.network.broadcast_address) and mg.network.prefixlen < 31:
            problems.append(Problem(where, f"{addr} is the network or broadcast address of {mg.network}"))
        if mg.gateway is not None and addr == mg.gateway:
            problems.append(Problem(where, f"{addr} is the management gateway"))
        if str(addr) in seen:
            problems.append(Problem(where, f"{addr} is also given to {seen[str(addr)]}"))
        seen[str(addr)] = name


def check_lines(lines: list[tuple[str, str]], problems: list[Problem]) -> None:
    """Config lines given as data (path, line): each must be one safe device command."""
    for path, line in lines:
        bad = check_config_line(line)
        if bad:
            problems.append(Problem(path, f"{line!r} {bad}"))


def check_lossless(spec: m.Inventory, problems: list[Problem]) -> None:
    """The user's RoCE/PFC/ECN lines (``lossless.lines``, ``lossless.interface_lines``)."""
    check_lines([(f"lossless.{key}[{i}]", line) for key in ("lines", "interface_lines")
                 for i, line in enumerate(getattr(spec.lossless, key))], problems)


ROFT_NAMING_FIELDS = {"leaf_naming": {"cluster": "c", "plane": 0, "pod": 0, "rail": 0, "index": 0, "number": 1},
                      "spine_naming": {"cluster": "c", "plane": 0, "index": 0, "number": 1}}


def check_roft(spec: m.Inventory, sw: SwitchModel | None, nic: NicModel | None, problems: list[Problem]) -> None:
    """design roft (docs/roft.md): what can be checked before sizing (the sizing's own limits: designs/roft/sizing.py).
    ROFT routes with eBGP only; the NIC's ports split evenly over the planes; the naming patterns give safe names
    that tell leaves from spines; the fabric speed is one the switch model has."""
    r = spec.roft or m.Roft()
    if "mode" in spec.routing.model_fields_set and spec.routing.mode != "bgp":
        problems.append(Problem("routing.mode", f"{spec.routing.mode!r}: a ROFT routes with eBGP (mode bgp) only",
                                "set routing.mode: bgp or leave it out"))
    if nic is not None and nic.ports % r.planes:
        problems.append(Problem("roft.planes", f"{r.planes} planes do not split the {nic.ports} ports of {spec.server_model}'s NIC evenly"))
    if sw is not None:
        speed = r.fabric_speed or double_speed(spec.topology.nic_port_speed)
        if speed not in sw.speeds:
            problems.append(Problem("roft.fabric_speed" if r.fabric_speed else "roft", f"{spec.switch_model} has no {speed} ports for the "
                                    "leaf-spine links", "set roft.fabric_speed to one of: " + ", ".join(sw.speeds)))
    if "switch_naming" in spec.model_fields_set:
        problems.append(Problem("switch_naming", "applies to design zcube; a ROFT names its switches with roft.leaf_naming and "
                                "roft.spine_naming", "remove it"))
    names = {}
    for key, fields in ROFT_NAMING_FIELDS.items():
        pattern = getattr(r, key)
        fields = {**fields, "cluster": spec.cluster}
        if format_pattern(pattern, f"roft.{key}", fields, problems):
            name = pattern.format(**fields)
            bad = check_name(name)
            if bad:
                problems.append(Problem(f"roft.{key}", f"gives {name!r}, which {bad}", NAME_HINT))
            elif "{number" not in pattern:
                problems.append(Problem(f"roft.{key}", "the pattern has no {number}, so switch names would repeat"))
            names[key] = name
    if len(names) == 2 and names["leaf_naming"] == names["spine_naming"]:
        problems.append(Problem("roft.spine_naming", f"gives {names['spine_naming']!r} like roft.leaf_naming", "tell spines from leaves, e.g. 'R-S{number:03d}'"))


def double_speed(speed: str) -> str:
    """'200G' -> '400G' (ROFT's leaf-spine default: one link at twice the NIC port speed, as `zcube compare` counts)."""
    digits = speed.rstrip("GgTt")
    return f"{2 * int(digits)}G" if digits.isdigit() and speed[-1:] in "Gg" else speed


def check_routing(spec: m.Inventory, sw: SwitchModel | None, problems: list[Problem]) -> None:
    """routing: what can be checked before sizing (the ASN range is checked by the planner)."""
    rt = spec.routing
    if spec.roft is not None and spec.design != "roft":
        problems.append(Problem("roft", "applies to design: roft only", "add `design: roft` or remove the roft section"))
    if rt.mode == "bgp" or spec.design == "roft":
        if rt.same_group_fallback is not None:
            problems.append(Problem("routing.same_group_fallback", "applies to mode static only (BGP finds same-group paths itself)",
                                    "remove it, or set routing.mode: static"))
        if sw is not None and sw.bgp is None:
            problems.append(Problem("routing.mode", f"switch model {spec.switch_model} has no `bgp:` syntax entry in the catalog",
                                    "add one (see RG-S6990-128QC2XS in inventories/catalog.yaml) or use mode: static"))
        elif sw is not None:
            b = sw.bgp
            where = f"catalog.switch_models.{spec.switch_model}.bgp"
            check_lines([(f"{where}.{key}", line) for key, line in
                         [("router_id", b.router_id), ("address_family", b.address_family or ""),
                          ("exit_address_family", b.exit_address_family), ("network", b.network),
                          ("maximum_paths", b.maximum_paths), ("discard_route", b.discard_route or "")]
                         + [(f"global_lines[{i}]", x) for i, x in enumerate(b.global_lines)]], problems)
    else:
        if rt.maximum_paths is not None:
            problems.append(Problem("routing.maximum_paths", "applies to mode bgp only", "remove it, or set routing.mode: bgp"))
