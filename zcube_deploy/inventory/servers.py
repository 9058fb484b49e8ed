"""The servers: generated, listed and read from a CSV file, resolved into :class:`Server` records
placed in the layout's racks, with every problem (unknown racks, overlapping U, repeated names or
MACs, unknown NIC interfaces) collected; a CSV problem names its line."""

from __future__ import annotations

import csv
import difflib
import io
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from zcube_deploy.catalog import ServerModel
from zcube_deploy.errors import Problem
from zcube_deploy.inventory import models as m
from zcube_deploy.inventory.checks import format_pattern
from zcube_deploy.inventory.errors import pydantic_problems
from zcube_deploy.inventory.layout import Rack


@dataclass(frozen=True)
class Server:
    name: str
    rack: str
    u: int
    serial: str | None = None
    macs: dict[str, str] = field(default_factory=dict)


def _csv_servers(path: Path, label: str, problems: list[Problem]) -> list[tuple[m.ServerEntry, int]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        problems.append(Problem(label, f"cannot read {path}: {exc.strerror}", "the path is relative to the inventory file"))
        return []
    except UnicodeDecodeError as exc:
        line = exc.object.count(b"\n", 0, exc.start) + 1
        problems.append(Problem(f"{label}:line {line}", f"{path} is not UTF-8 text (byte {exc.object[exc.start]:#04x})", "save the file as UTF-8"))
        return []
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    missing = [c for c in ("name", "rack", "u") if c not in header]
    if missing:
        problems.append(Problem(label, f"CSV header lacks column(s) {', '.join(missing)}", "header: name,rack,u,serial[,<nic interface>...]"))
        return []
    out = []
    for line_no, row in enumerate(reader, start=2):
        macs = {k: v for k, v in row.items() if k not in ("name", "rack", "u", "serial") and k and v}
        data = {"name": row.get("name", ""), "rack": row.get("rack", ""), "u": row.get("u", ""), "macs": macs}
        if row.get("serial"):
            data["serial"] = row["serial"]
        try:
            out.append((m.ServerEntry.model_validate(data), line_no))
        except ValidationError as exc:
            problems.extend(pydantic_problems(exc, prefix=f"{label}:line {line_no}:"))
    return out


def _generated(spec: m.Inventory, racks: list[Rack], rack_by_name: dict[str, Rack], smodel: ServerModel | None,
               problems: list[Problem]) -> list[tuple[m.ServerEntry, str]]:
    """``servers.generate``'s servers, filling the target racks in order from ``first_u``."""
    entries: list[tuple[m.ServerEntry, str]] = []
    gen = spec.servers.generate
    if gen is None or not gen.count:
        return entries
    gpath = "servers.generate"
    names_ok = format_pattern(gen.name, gpath + ".name", {"n": 1, "cluster": spec.cluster}, problems)
    serial_ok = gen.serial is None or format_pattern(gen.serial, gpath + ".serial", {"n": 1, "cluster": spec.cluster}, problems)
    targets = _generator_racks(gen, racks)
    for i, name in enumerate(targets if gen.racks is not None else []):
        if name not in rack_by_name:
            problems.append(_unknown_rack(f"{gpath}.racks[{i}]", name, rack_by_name))
    height = smodel.u_height if smodel else 1
    if names_ok and serial_ok and targets:
        if gen.count > gen.per_rack * len(targets):
            problems.append(Problem(gpath + ".count", f"{gen.count} servers do not fit {len(targets)} racks x {gen.per_rack} per rack",
                                    "add racks or raise per_rack"))
        else:
            for k in range(gen.count):
                n = k + 1
                rack, u = _generator_slot(gen, targets, k, height)
                serial = gen.serial.format(n=n, cluster=spec.cluster) if gen.serial else None
                try:
                    entry = m.ServerEntry(name=gen.name.format(n=n, cluster=spec.cluster), rack=rack, u=u, serial=serial)
                except ValidationError as exc:
                    problems.extend(pydantic_problems(exc, prefix=f"{gpath}[{k}]."))
                    break
                entries.append((entry, f"{gpath}[{k}]"))
    return entries


def _generator_racks(gen: m.ServerGenerator, racks: list[Rack]) -> list[str]:
    """The racks ``servers.generate`` fills, in order (its ``racks``, else every compute rack)."""
    return [r.name for r in racks if r.role == "compute"] if gen.racks is None else list(gen.racks)


def _generator_slot(gen: m.ServerGenerator, targets: list[str], k: int, height: int) -> tuple[str, int]:
    """Rack and U of the generator's server ``k`` (0-based): ``per_rack`` servers a rack from ``first_u`` up."""
    return targets[k // gen.per_rack], max(1, min(gen.first_u + (k % gen.per_rack) * height, 60))


def projected_slots(spec: m.Inventory, racks: tuple[Rack, ...] | list[Rack], servers: tuple[Server, ...] | list[Server],
                    height: int, capacity: int) -> list[tuple[str, int] | None]:
    """(rack, U) of every server index up to the capacity: the installed servers' own, then where
    ``servers.generate`` will put the servers not installed yet, or None where that is not known.

    The planner places switches from this (not from the installed servers alone) so that servers
    added later within the capacity move no switch (zcube.md section 3, growth). The generator
    tells where its next servers go only when it is the last source of servers: a listed or CSV
    server after it would take the next GPU indices, and where those go nobody knows yet.

    >>> from zcube_deploy.inventory.layout import Rack
    >>> spec = m.Inventory.model_construct(servers=m.Servers(generate=m.ServerGenerator(count=1, per_rack=2, first_u=3)))
    >>> racks = [Rack("A1", "A", 0, 1, "compute", 48, False), Rack("A2", "A", 0, 2, "compute", 48, False)]
    >>> projected_slots(spec, racks, [Server("gpu0001", "A1", 3)], height=8, capacity=5)
    [('A1', 3), ('A1', 11), ('A2', 3), ('A2', 11), None]
    """
    slots: list[tuple[str, int] | None] = [(s.rack, s.u) for s in servers[:capacity]]
    gen = spec.servers.generate
    known = {r.name for r in racks}
    if gen is None or spec.servers.list or spec.servers.csv or len(servers) != gen.count:
        return slots + [None] * (capacity - len(slots))
    targets = _generator_racks(gen, list(racks))
    for k in range(len(slots), capacity):
        fits = k < gen.per_rack * len(targets) and targets[k // gen.per_rack] in known
        slots.append(_generator_slot(gen, targets, k, height) if fits else None)
    return slots


def resolve_servers(spec: m.Inventory, base: Path, racks: list[Rack], smodel: ServerModel | None, problems: list[Problem]) -> list[Server]:
    """Every server (generated, listed, then from the CSV file relative to ``base``), checked against the racks and each other."""
    rack_by_name = {r.name: r for r in racks}
    entries = _generated(spec, racks, rack_by_name, smodel, problems)
    for i, entry in enumerate(spec.servers.list):
        entries.append((entry, f"servers.list[{i}]"))
    if spec.servers.csv:
        label = "servers.csv"
        for entry, line_no in _csv_servers(base / spec.servers.csv, label, problems):
            entries.append((entry, f"{label}:line {line_no}:"))

    servers: list[Server] = []
    seen: dict[str, str] = {}
    occupied: dict[str, dict[int, str]] = {}
    height = smodel.u_height if smodel else 1
    known = {smodel.nic_port_name(g, p) for g in range(smodel.gpus) for p in range(1, 9)} if smodel else set()  # once, not per server
    for entry, path in entries:
        if entry.name in seen:
            problems.append(Problem(_sub(path, "name"), f"server name {entry.name!r} is already used at {seen[entry.name].rstrip(':')}", "server names must be unique"))
        seen.setdefault(entry.name, path)
        rack = rack_by_name.get(entry.rack)
        if rack is None:
            if not path.startswith("servers.generate"):
                problems.append(_unknown_rack(_sub(path, "rack"), entry.rack, rack_by_name))
        else:
            _place(entry, path, rack, height, occupied.setdefault(rack.name, {}), problems)
        if smodel:
            for nic in entry.macs:
                if nic not in known:
                    problems.append(Problem(f"{path}.macs.{nic}", f"{nic!r} is not a NIC interface of {spec.server_model}",
                                            f"e.g. {smodel.nic_port_name(0, 1)!r}"))
        servers.append(Server(entry.name, entry.rack, entry.u, entry.serial, dict(sorted(entry.macs.items()))))
    macs: dict[str, str] = {}
    for s in servers:
        for nic, mac in s.macs.items():
            if mac in macs:
                problems.append(Problem(f"servers[{s.name}].macs.{nic}", f"MAC {mac} is also used by {macs[mac]}"))
            macs[mac] = f"{s.name} {nic}"
    return servers


def _place(entry: m.ServerEntry, path: str, rack: Rack, height: int, slots: dict[int, str], problems: list[Problem]) -> None:
    """The server fits its rack's height and overlaps no server placed before it (``slots``: U -> server)."""
    top = entry.u + height - 1
    if top > rack.u_height:
        problems.append(Problem(_sub(path, "u"), f"server {entry.name} at U{entry.u} (height {height}U) ends at U{top}, above rack {rack.name}'s {rack.u_height}U"))
    for u in range(entry.u, top + 1):
        if u in slots:
            problems.append(Problem(_sub(path, "u"), f"server {entry.name} overlaps {slots[u]} at U{u} in rack {rack.name}"))
            break
    for u in range(entry.u, top + 1):
        slots.setdefault(u, entry.name)


def _sub(path: str, key: str) -> str:
    return path + key if path.endswith(":") else f"{path}.{key}"


def _unknown_rack(path: str, name: str, racks: dict[str, Rack]) -> Problem:
    close = difflib.get_close_matches(name, list(racks), n=1)
    return Problem(path, f"rack {name!r} does not exist in layout.rows", f"did you mean {close[0]!r}?" if close else "define it under layout.rows")
