"""The hall's layout: rows and racks (listed or generated) resolved into :class:`Rack` records, with
every problem (unsafe or repeated names, shared positions, no rack for switches) collected."""

from __future__ import annotations

from dataclasses import dataclass

from zcube_deploy.errors import Problem
from zcube_deploy.inventory import models as m
from zcube_deploy.inventory.checks import format_pattern
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


def _expand_rows(spec: m.Inventory, problems: list[Problem]) -> list[tuple[m.Row, str]]:
    rows = [(row, f"layout.rows[{i}]") for i, row in enumerate(spec.layout.rows)]
    gen = spec.layout.generate_rows
    if gen is not None and format_pattern(gen.name, "layout.generate_rows.name", {"n": 1}, problems):
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


def _row_entries(row: m.Row, rpath: str, problems: list[Problem]) -> list[tuple[str, m.RackSpec | m.RackGenerator, int | None, str]]:
    """A row's racks in order, listed then generated: (name, spec, position if given, data path)."""
    entries: list[tuple[str, m.RackSpec | m.RackGenerator, int | None, str]] = []
    for i, r in enumerate(row.racks):
        entries.append((r.name, r, r.position, f"{rpath}.racks[{i}]"))
    for gi, gen in enumerate(row.generate):
        gpath = f"{rpath}.generate[{gi}]"
        if format_pattern(gen.name, gpath + ".name", {"n": 1, "row": row.name}, problems):
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
    return entries


def resolve_racks(spec: m.Inventory, problems: list[Problem]) -> list[Rack]:
    """Every rack of the hall, row by row; problems with the rows and racks appended to ``problems``."""
    racks: list[Rack] = []
    rows = _expand_rows(spec, problems)
    for ri, (row, rpath) in enumerate(rows):
        used_pos: dict[int, str] = {}
        for order, (name, r, pos, _path) in enumerate(_row_entries(row, rpath, problems), start=1):
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
