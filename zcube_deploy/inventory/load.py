"""Load ``inventory.yaml``, check it against the catalog, and resolve generators into plain lists.

Every problem is collected with its data path (``servers.list[12].rack``), what is wrong and a
hint, then raised at once as :class:`~zcube_deploy.errors.InputErrors`.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import io
import string
from dataclasses import dataclass, field
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from zcube_deploy.catalog import Catalog, NicModel, ServerModel, SwitchModel, load_catalog
from zcube_deploy.catalog.cabling import CablingCatalog, load_cabling_catalog
from zcube_deploy.errors import InputErrors, Problem, ZCubeError
from zcube_deploy.inventory import models as m
from zcube_deploy.safety import NAME_HINT, check_name


@dataclass(frozen=True)
class Rack:
    name: str
    row: str
    row_index: int  # 0-based order of the row in the hall
    position: int  # 1-based position in the row
    role: str
    u_height: int
    allow_switches: bool


@dataclass(frozen=True)
class Server:
    name: str
    rack: str
    u: int
    serial: str | None = None
    macs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ResolvedInventory:
    """A checked inventory with generators expanded: the planner's only input besides the catalog."""

    spec: m.Inventory
    catalog: Catalog
    switch_model: SwitchModel
    server_model: ServerModel
    nic_model: NicModel
    racks: tuple[Rack, ...]
    servers: tuple[Server, ...]
    capacity_servers: int
    cabling: CablingCatalog | None = None
    source: str = ""
    sha256: str = ""
    cabling_source: str | None = None

    @property
    def planes(self) -> int:
        return self.nic_model.ports // 2


def path_of(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Allowed field names of the sub-model at ``loc`` (for 'did you mean' hints)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or current is None:
            continue
        info = getattr(current, "model_fields", {}).get(part)
        if info is None:
            return list(getattr(current, "model_fields", {}))
        current = _model_in(info.annotation)
    return list(getattr(current, "model_fields", {})) if current else []


def _model_in(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_in(arg)
        if found:
            return found
    return None


def _pydantic_problems(exc: ValidationError, prefix: str = "") -> list[Problem]:
    problems = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        path = prefix + path_of(loc)
        msg = err["msg"].removeprefix("Value error, ")
        hint = ""
        if err["type"] == "extra_forbidden":
            allowed = _fields_at(m.Inventory, loc[:-1])
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            msg = "unknown field"
            hint = f"did you mean {close[0]!r}?" if close else "allowed here: " + ", ".join(allowed)
        elif err["type"] == "missing":
            msg = "required field is missing"
        elif "input" in err and err["type"] not in ("value_error",) and not isinstance(err["input"], (dict, list)):
            msg = f"{msg} (got {err['input']!r})"
        problems.append(Problem(path, msg, hint))
    return problems


def _format_pattern(pattern: str, path: str, fields: dict[str, Any], problems: list[Problem]) -> bool:
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


def _expand_rows(spec: m.Inventory, problems: list[Problem]) -> list[tuple[m.Row, str]]:
    rows = [(row, f"layout.rows[{i}]") for i, row in enumerate(spec.layout.rows)]
    gen = spec.layout.generate_rows
    if gen is not None and _format_pattern(gen.name, "layout.generate_rows.name", {"n": 1}, problems):
        for k in range(gen.count):
            name = gen.name.format(n=gen.start + k)
            try:
                rows.append((m.Row(name=name, generate=gen.generate), "layout.generate_rows"))
            except Exception as exc:  # pydantic ValidationError on an unsafe generated name
                problems.append(Problem("layout.generate_rows.name", f"generated row name {name!r} is not valid: {exc.errors()[0]['msg'] if hasattr(exc, 'errors') else exc}"))
                break
    if not rows:
        problems.append(Problem("layout.rows", "the layout has no rows", "add layout.rows or layout.generate_rows"))
    return rows


def _racks(spec: m.Inventory, problems: list[Problem]) -> list[Rack]:
    racks: list[Rack] = []
    rows = _expand_rows(spec, problems)
    for ri, (row, rpath) in enumerate(rows):
        entries: list[tuple[str, m.RackSpec | m.RackGenerator, int | None, str]] = []
        for i, r in enumerate(row.racks):
            entries.append((r.name, r, r.position, f"{rpath}.racks[{i}]"))
        for gi, gen in enumerate(row.generate):
            gpath = f"{rpath}.generate[{gi}]"
            if _format_pattern(gen.name, gpath + ".name", {"n": 1, "row": row.name}, problems):
                for k in range(gen.count):
                    n = gen.start + k
                    name = gen.name.format(n=n, row=row.name)
                    bad = check_name(name)
                    if bad:
                        problems.append(Problem(gpath + ".name", f"generated rack name {name!r} {bad}", NAME_HINT))
                        break
                    entries.append((name, gen, None, gpath))
        if not entries:
            problems.append(Problem(rpath, "row has no racks", "add 'racks:' or 'generate:'"))
        used_pos: dict[int, str] = {}
        for order, (name, r, pos, _path) in enumerate(entries, start=1):
            position = pos if pos is not None else order
            if position in used_pos:
                problems.append(Problem(_path + ".position", f"racks {used_pos[position]} and {name} share position {position} in row {row.name}"))
            used_pos[position] = name
            allow = r.allow_switches if r.allow_switches is not None else r.role == "network"
            racks.append(Rack(name, row.name, ri, position, r.role, r.u_height, allow))
    seen: dict[str, int] = {}
    for rack in racks:
        if rack.name in seen:
            problems.append(Problem("layout.rows", f"rack name {rack.name!r} is used twice", "rack names must be unique in the hall"))
        seen[rack.name] = 1
    row_names = [r.name for r, _ in rows]
    for name in {n for n in row_names if row_names.count(n) > 1}:
        problems.append(Problem("layout.rows", f"row name {name!r} is used twice"))
    if racks and not any(r.allow_switches for r in racks):
        problems.append(Problem("layout.rows", "no rack may hold switches",
                                "give at least one rack role: network or allow_switches: true"))
    return racks


def _csv_servers(path: Path, label: str, problems: list[Problem]) -> list[tuple[m.ServerEntry, int]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        problems.append(Problem(label, f"cannot read {path}: {exc.strerror}", "the path is relative to the inventory file"))
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
            problems.extend(_pydantic_problems(exc, prefix=f"{label}:line {line_no}:"))
    return out


def _servers(spec: m.Inventory, base: Path, racks: list[Rack], smodel: ServerModel | None, problems: list[Problem]) -> list[Server]:
    rack_by_name = {r.name: r for r in racks}
    entries: list[tuple[m.ServerEntry, str]] = []
    gen = spec.servers.generate
    if gen is not None and gen.count:
        gpath = "servers.generate"
        names_ok = _format_pattern(gen.name, gpath + ".name", {"n": 1, "cluster": spec.cluster}, problems)
        serial_ok = gen.serial is None or _format_pattern(gen.serial, gpath + ".serial", {"n": 1, "cluster": spec.cluster}, problems)
        if gen.racks is None:
            targets = [r.name for r in racks if r.role == "compute"]
        else:
            targets = list(gen.racks)
            for i, name in enumerate(targets):
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
                    rack = targets[k // gen.per_rack]
                    u = gen.first_u + (k % gen.per_rack) * height
                    serial = gen.serial.format(n=n, cluster=spec.cluster) if gen.serial else None
                    try:
                        entry = m.ServerEntry(name=gen.name.format(n=n, cluster=spec.cluster), rack=rack, u=max(1, min(u, 60)), serial=serial)
                    except ValidationError as exc:
                        problems.extend(_pydantic_problems(exc, prefix=f"{gpath}[{k}]."))
                        break
                    entries.append((entry, f"{gpath}[{k}]"))
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
    for entry, path in entries:
        if entry.name in seen:
            problems.append(Problem(_sub(path, "name"), f"server name {entry.name!r} is already used at {seen[entry.name].rstrip(':')}", "server names must be unique"))
        seen.setdefault(entry.name, path)
        rack = rack_by_name.get(entry.rack)
        if rack is None:
            if not path.startswith("servers.generate"):
                problems.append(_unknown_rack(_sub(path, "rack"), entry.rack, rack_by_name))
        else:
            top = entry.u + height - 1
            if top > rack.u_height:
                problems.append(Problem(_sub(path, "u"), f"server {entry.name} at U{entry.u} (height {height}U) ends at U{top}, above rack {rack.name}'s {rack.u_height}U"))
            slots = occupied.setdefault(rack.name, {})
            for u in range(entry.u, top + 1):
                if u in slots:
                    problems.append(Problem(_sub(path, "u"), f"server {entry.name} overlaps {slots[u]} at U{u} in rack {rack.name}"))
                    break
            for u in range(entry.u, top + 1):
                slots.setdefault(u, entry.name)
        if smodel:
            known = {smodel.nic_port_name(g, p) for g in range(smodel.gpus) for p in range(1, 9)}
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


def _sub(path: str, key: str) -> str:
    return path + key if path.endswith(":") else f"{path}.{key}"


def _unknown_rack(path: str, name: str, racks: dict[str, Rack]) -> Problem:
    close = difflib.get_close_matches(name, list(racks), n=1)
    return Problem(path, f"rack {name!r} does not exist in layout.rows", f"did you mean {close[0]!r}?" if close else "define it under layout.rows")


def _model_lookup(kind: str, path: str, name: str, table: dict, problems: list[Problem]):
    if name in table:
        return table[name]
    close = difflib.get_close_matches(name, list(table), n=1)
    hint = f"did you mean {close[0]!r}?" if close else "known: " + ", ".join(sorted(table))
    problems.append(Problem(path, f"unknown {kind} {name!r}", hint))
    return None


def _check_pools(spec: m.Inventory, problems: list[Problem]) -> None:
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


def _prune(data: Any, err: dict, n: int) -> bool:
    """Neutralise what failed at the error's location so the rest can still be checked.

    The bad value is replaced by a placeholder of a plausible type (so list indices, and so the
    data paths of later problems, stay the same) or, for an optional key, removed.
    """
    loc = tuple(err["loc"])
    node = data
    for part in loc[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    key = loc[-1] if loc else None
    if not isinstance(node, (dict, list)) or (isinstance(node, list) and not isinstance(key, int)):
        return False
    typ = err["type"]
    numeric = typ.startswith(("int", "greater_than", "less_than", "float", "multiple_of"))
    if typ == "extra_forbidden" or (numeric and isinstance(node, dict) and not isinstance(err.get("input"), str)):
        del node[key]  # optional: the default applies; required: the next round says 'missing'
    elif numeric:
        node[key] = 1
    elif typ == "missing" or isinstance(err.get("input"), str):
        node[key] = f"invalid-value-{n}"
    elif isinstance(node, dict):
        del node[key]
    else:
        return False
    return True


def _check_routing(spec: m.Inventory, sw: SwitchModel | None, problems: list[Problem]) -> None:
    """routing: what can be checked before sizing (the ASN range is checked by the planner)."""
    rt = spec.routing
    if rt.mode == "bgp":
        if rt.same_group_fallback is not None:
            problems.append(Problem("routing.same_group_fallback", "applies to mode static only (BGP finds same-group paths itself)",
                                    "remove it, or set routing.mode: static"))
        if sw is not None and sw.bgp is None:
            problems.append(Problem("routing.mode", f"switch model {spec.switch_model} has no `bgp:` syntax entry in the catalog",
                                    "add one (see RG-S6990-128QC2XS in inventories/catalog.yaml) or use mode: static"))
        elif sw is not None:
            b = sw.bgp
            for key, line in [("router_id", b.router_id), ("address_family", b.address_family or ""),
                              ("exit_address_family", b.exit_address_family), ("network", b.network),
                              ("maximum_paths", b.maximum_paths), ("discard_route", b.discard_route or "")] + \
                             [(f"global_lines[{i}]", x) for i, x in enumerate(b.global_lines)]:
                if any(c in line for c in "\r\n!?") or any(ord(c) < 32 for c in line):
                    problems.append(Problem(f"catalog.switch_models.{spec.switch_model}.bgp.{key}",
                                            f"{line!r} contains a line break, '!', '?' or a control character"))
    else:
        if rt.maximum_paths is not None:
            problems.append(Problem("routing.maximum_paths", "applies to mode bgp only", "remove it, or set routing.mode: bgp"))


def _validate_structure(data: dict) -> tuple[m.Inventory | None, list[Problem]]:
    """Validate; on errors, neutralise the bad parts and retry so the semantic checks can still run."""
    import copy

    try:
        return m.Inventory.model_validate(data), []
    except ValidationError as exc:
        problems = _pydantic_problems(exc)
        errors = exc.errors()
    work = copy.deepcopy(data)
    n = 0
    for _ in range(5):
        for e in errors:
            n += 1
            if not _prune(work, e, n):
                return None, problems
        try:
            return m.Inventory.model_validate(work), problems
        except ValidationError as exc:
            errors = exc.errors()
    return None, problems


def parse_inventory_text(text: str, source: str = "inventory") -> dict:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise InputErrors(Problem(where, f"not valid YAML: {getattr(exc, 'problem', exc)}"), "cannot read inventory") from None
    if not isinstance(data, dict):
        raise InputErrors(Problem(source, "the inventory must be a YAML mapping (key: value)"), "cannot read inventory")
    return data


def load_inventory(path: str | Path) -> ResolvedInventory:
    """Read, validate and resolve an inventory file. Raises InputErrors listing every problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputErrors(Problem(str(path), f"cannot read the inventory: {exc.strerror}"), "cannot read inventory") from None
    return resolve_inventory(parse_inventory_text(text, str(path)), base=path.parent, source=str(path), text=text)


def resolve_inventory(data: dict, base: Path = Path("."), source: str = "inventory", text: str | None = None,
                      catalog: Catalog | None = None) -> ResolvedInventory:
    """Validate an inventory mapping; ``catalog`` overrides the bundled one (tests, tools)."""
    spec, problems = _validate_structure(data)
    structural = len(problems)
    if spec is None:
        raise InputErrors(problems, f"invalid inventory {source}")
    if catalog is None:
        catalog = load_catalog(base / spec.catalog if spec.catalog else None)
    cabling = load_cabling_catalog(base / spec.cabling_catalog if spec.cabling_catalog else None)
    sw = _model_lookup("switch model", "switch_model", spec.switch_model, catalog.switch_models, problems)
    srv = _model_lookup("server model", "server_model", spec.server_model, catalog.server_models, problems)
    nic = _model_lookup("NIC model", "server_model.nic_model", srv.nic_model, catalog.nic_models, problems) if srv else None
    if sw is not None:
        if sw.platform != spec.platform:
            problems.append(Problem("switch_model", f"{spec.switch_model} runs {sw.platform}, not {spec.platform}"))
        if spec.topology.nic_port_speed not in sw.speeds:
            problems.append(Problem("topology.nic_port_speed", f"{spec.switch_model} has no {spec.topology.nic_port_speed} ports",
                                    "available: " + ", ".join(sw.speeds)))
    if nic is not None:
        if nic.speed != spec.topology.nic_port_speed:
            problems.append(Problem("topology.nic_port_speed", f"{srv.nic_model} ports run at {nic.speed}, not {spec.topology.nic_port_speed}"))
        if nic.ports % 2:
            problems.append(Problem("server_model", f"{srv.nic_model} has {nic.ports} ports; ZCube needs 2 per plane"))
    racks = _racks(spec, problems)
    servers = _servers(spec, base, racks, srv, problems)
    capacity = spec.topology.capacity_servers if spec.topology.capacity_servers is not None else len(servers)
    if capacity < len(servers):
        problems.append(Problem("topology.capacity_servers", f"capacity {capacity} is below the {len(servers)} servers in the inventory",
                                "raise capacity_servers or remove it to size for the installed servers"))
    if capacity == 0:
        problems.append(Problem("servers", "no servers and no capacity_servers", "add servers or set topology.capacity_servers"))
    fields = {"cluster": spec.cluster, "G": "O", "group": "odd", "number": 1, "index": 0, "plane": 0}
    if _format_pattern(spec.switch_naming, "switch_naming", fields, problems):
        bad = check_name(spec.switch_naming.format(**fields))
        if bad:
            problems.append(Problem("switch_naming", f"gives {spec.switch_naming.format(**fields)!r}, which {bad}", NAME_HINT))
        elif nic is not None and nic.ports > 2 and "{plane" not in spec.switch_naming:
            problems.append(Problem("switch_naming", "the NIC has several planes but the pattern has no {plane}", "add {plane}, e.g. 'ZC-P{plane}-{G}{number:03d}'"))
        elif "{number" not in spec.switch_naming and "{index" not in spec.switch_naming:
            problems.append(Problem("switch_naming", "the pattern has no {number} or {index}, so switch names would repeat"))
    _check_pools(spec, problems)
    for key in ("lines", "interface_lines"):
        for i, line in enumerate(getattr(spec.lossless, key)):
            if any(c in line for c in "\r\n!?") or any(ord(c) < 32 for c in line):
                problems.append(Problem(f"lossless.{key}[{i}]", f"{line!r} contains a line break, '!', '?' or a control character"))
    _check_routing(spec, sw, problems)
    if problems:
        # semantic checks ran on the inventory with the structurally bad parts left out: report
        # those, and the semantic problems that are not just echoes of them
        bad_paths = {p.path for p in problems[:structural]}
        rest = [p for p in problems[structural:] if p.path not in bad_paths]
        raise InputErrors(problems[:structural] + rest, f"invalid inventory {source}")
    if text is None:
        text = yaml.safe_dump(data, sort_keys=True)
    digest = _digest(text, base / spec.servers.csv if spec.servers.csv else None, catalog.sha256, cabling.sha256)
    cabling_source = str(base / spec.cabling_catalog) if spec.cabling_catalog else None
    return ResolvedInventory(spec, catalog, sw, srv, nic, tuple(racks), tuple(servers), capacity, cabling, source,
                             digest, cabling_source)


def _digest(text: str, servers_csv: Path | None, catalog_sha256: str, cabling_sha256: str) -> str:
    """An inventory's fingerprint: its text, its servers CSV and the catalogs it was resolved with."""
    digest = hashlib.sha256(text.encode())
    if servers_csv is not None:
        digest.update(servers_csv.read_bytes())
    digest.update(catalog_sha256.encode())
    digest.update(cabling_sha256.encode())
    return digest.hexdigest()


def inventory_digest(path: str | Path) -> str | None:
    """The fingerprint :func:`load_inventory` gives the file at ``path`` (``ResolvedInventory.sha256``),
    without resolving its servers: what tells a command cheaply that a plan's inventory is unchanged.
    None when the file, its CSV or a catalog cannot be read (load_inventory says why)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = parse_inventory_text(text, str(path))
        catalog, cabling, servers = data.get("catalog"), data.get("cabling_catalog"), data.get("servers")
        csv = servers.get("csv") if isinstance(servers, dict) else None
        if not all(v is None or isinstance(v, str) for v in (catalog, cabling, csv)):
            return None
        return _digest(text, path.parent / csv if csv else None,
                       load_catalog(path.parent / catalog if catalog else None).sha256,
                       load_cabling_catalog(path.parent / cabling if cabling else None).sha256)
    except (ZCubeError, OSError, UnicodeDecodeError):
        return None
