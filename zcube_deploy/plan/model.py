"""The one model of plan.json: every section and row as a typed dict, validated by pydantic.

A plan stays plain JSON data (dicts and lists) everywhere, so the writer's bytes and every
consumer's subscript access are unchanged; this module says what that data is:

- ``PLAN_ADAPTER`` parses and validates a whole plan.json in one pass (pydantic-core, in Rust);
- :func:`projection` builds the reduced reads of the big commands (render, cabling, lab, push,
  verify, analyze, hall) from the model's own field names: a field the model does not have is a
  programming error at import time, and the projected rows are validated as they are read;
- :func:`plan_json_schema` is what `zcube schema plan` prints;
- :func:`validation_problems` turns a pydantic error into the tool's collected problems
  (a data path such as ``switches[3].interfaces[0].address``, a message and a hint).

Strict: a hand-edited "8" for an integer, a misspelt key or a truncated row is an error, never
coerced. ``models.*`` are the catalog's entries, copied as they are (see catalog.md).
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from pydantic import ConfigDict, Discriminator, Field, Tag, TypeAdapter, ValidationError, with_config
from typing_extensions import NotRequired, TypedDict

from zcube_deploy.errors import Problem

SCHEMA_VERSION = 2  # 2: routing section, switches[].asn, host fallback routes (issue 14)

_CLOSED = ConfigDict(strict=True, extra="forbid")
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
IPv4 = Annotated[str, Field(pattern=rf"^{_OCTET}(\.{_OCTET}){{3}}$", description="dotted-quad IPv4 address")]
Prefix = Annotated[str, Field(pattern=rf"^{_OCTET}(\.{_OCTET}){{3}}/([0-9]|[12][0-9]|3[0-2])$", description="IPv4 prefix a.b.c.d/len")]
Group = Literal["odd", "even", "leaf", "spine"]  # the switch's role: ZCube odd/even, ROFT leaf/spine (designs.md)
Design = Literal["zcube", "roft", "stage"]
Kind = Literal["host", "fabric"]
Pair = Annotated[list[int], Field(min_length=2, max_length=2)]
Number = Union[int, float]


# ---------------------------------------------------------------- switches
@with_config(_CLOSED)
class Peer(TypedDict):
    """The far end of a switch interface: a NIC port (host) or the other switch (fabric)."""

    address: IPv4
    device: str
    gpu: NotRequired[int]
    port: str


@with_config(_CLOSED)
class Interface(TypedDict):
    address: IPv4
    cable: str
    kind: Kind
    link: NotRequired[int]
    name: str
    peer: Peer
    port_index: NotRequired[int]
    prefix_len: int


@with_config(_CLOSED)
class StaticRoute(TypedDict):
    fallback: NotRequired[bool]
    next_hop: IPv4
    prefix: Prefix


@with_config(_CLOSED)
class Switch(TypedDict):
    asn: Annotated[int | None, Field(description="BGP AS number (mode bgp), null in mode static")]
    group: Annotated[Group, Field(description="the switch's role: odd/even (ZCube), leaf/spine (ROFT)")]
    host_block: Annotated[Prefix | None, Field(description="the switch's host block; null for a switch with no hosts (a ROFT spine)")]
    index: Annotated[int, Field(description="r for O_r, j for E_j; a ROFT leaf's rail, a spine's number in its plane (0-based)")]
    interfaces: list[Interface]
    loopback: IPv4
    mgmt_address: IPv4
    model: str
    name: str
    number: Annotated[int, Field(description="human-facing number: O_r is 2r+1, E_j is 2j+2")]
    plane: int
    pod: NotRequired[Annotated[int, Field(description="a ROFT leaf's pod (0-based)")]]
    rack: str
    routes: Annotated[list[StaticRoute], Field(description="static routes (mode static); [] in mode bgp")]
    routing_mode: NotRequired[Annotated[Literal["static", "bgp"], Field(description="this switch's mode when not the plan's "
                                                                                  "routing.mode (a migration stage)")]]
    u: int


# ---------------------------------------------------------------- servers
@with_config(_CLOSED)
class HostRoute(TypedDict):
    dev: str
    metric: int
    role: Literal["cross-group", "same-switch", "other-port", "same-group", "plane"]
    to: Prefix
    via: IPv4


@with_config(_CLOSED)
class Nic(TypedDict):
    address: IPv4
    cable: str
    gateway: IPv4
    gpu: Annotated[int, Field(description="the GPU's position in its server (0-based)")]
    group: Group
    host_port_index: int
    mac: NotRequired[str]
    nic_port: int
    plane: int
    port: str
    prefix_len: int
    routes: list[HostRoute]
    switch: str
    switch_port: str
    table: int


@with_config(_CLOSED)
class Server(TypedDict):
    index: int
    model: str
    name: str
    nics: list[Nic]
    rack: str
    serial: NotRequired[str]
    u: int


# ---------------------------------------------------------------- cables
@with_config(_CLOSED)
class CableEnd(TypedDict):
    device: str
    port: str
    rack: str
    u: int


@with_config(_CLOSED)
class Cable(TypedDict):
    a: Annotated[CableEnd, Field(description="host: the server NIC port; fabric: the odd switch (ROFT: the leaf)")]
    b: Annotated[CableEnd, Field(description="host: the switch port; fabric: the even switch (ROFT: the spine)")]
    estimate_m: float
    gpu: NotRequired[int]
    group: NotRequired[Group]
    id: str
    kind: Kind
    length_m: float
    link: NotRequired[int]
    medium: str
    part: str
    plane: int


# ---------------------------------------------------------------- small sections
@with_config(_CLOSED)
class Check(TypedDict):
    detail: str
    name: str
    status: Literal["passed", "failed", "not_applicable"]


@with_config(_CLOSED)
class Cluster(TypedDict):
    description: str | None
    name: str
    nic_model: str
    platform: str
    server_model: str
    switch_model: str


@with_config(_CLOSED)
class Counts(TypedDict):
    bgp_sessions: int
    cables: int
    fabric_cables: int
    gpus: int
    host_cables: int
    servers: int
    static_routes: int
    switches: int


@with_config(_CLOSED)
class Inputs(TypedDict):
    cabling_catalog: str | None
    cabling_catalog_sha256: str
    catalog_sha256: str
    inventory: str | None
    inventory_sha256: str


@with_config(_CLOSED)
class Rack(TypedDict):
    allow_switches: bool
    name: str
    position: int
    role: str
    row: str
    row_index: int
    u_height: int


@with_config(_CLOSED)
class Layout(TypedDict):
    rack_pitch_m: Number
    racks: list[Rack]
    row_spacing_m: Number
    u_pitch_m: Number


@with_config(_CLOSED)
class PortMap(TypedDict):
    breakout_command: str | None
    cage_of: Annotated[dict[str, list[Union[str, int]]], Field(description="used port name -> [short name, cage, lane]")]
    cages: int
    fabric_cages: Pair
    fabric_ports: list[str]
    fabric_speed: NotRequired[Annotated[str, Field(description="the fabric ports' speed when it is not `speed` (ROFT uplinks)")]]
    host_cages: Annotated[Pair, Field(description="first and last host cage; [0, 0] when the switch has no host ports (a ROFT spine)")]
    host_ports: list[str]
    lanes_per_cage: int
    names_confirmed: bool
    native_speed: str | None
    speed: str
    unused_cages: Pair | None
    unused_ports: list[str]


@with_config(_CLOSED)
class Aggregate(TypedDict):
    even: NotRequired[Prefix]
    hosts: NotRequired[Annotated[Prefix, Field(description="ROFT: every leaf's host block of the plane")]]
    odd: NotRequired[Prefix]
    plane: int


@with_config(_CLOSED)
class Addressing(TypedDict):
    aggregate_size: int
    aggregates: list[Aggregate]
    block_size: int
    fabric_pool: Prefix
    host_pool: Prefix
    loopback_pool: Prefix
    management_network: Prefix
    other_pools: NotRequired[Annotated[list[Prefix], Field(description="the pools of the other islands of a migration stage "
                                                                          "(push's managed scope takes them too)")]]
    size: dict[str, int]
    used: dict[str, int]


@with_config(_CLOSED)
class Bfd(TypedDict):
    interval_ms: int
    multiplier: int


@with_config(_CLOSED)
class Routing(TypedDict):
    """How the switches forward: ``mode`` is the kind, the rest its parameters (routing.md)."""

    asn_base: int
    asn_last: int | None
    bfd: Bfd
    fallback_paths: int | None
    maximum_paths: int | None
    mode: Literal["static", "bgp"]
    same_group_fallback: bool


@with_config(ConfigDict(strict=True, extra="allow"))
class CatalogEntry(TypedDict):
    """A catalog entry as the catalog holds it (catalog.md), plus its name."""

    name: str


@with_config(_CLOSED)
class Models(TypedDict):
    nic: CatalogEntry
    server: CatalogEntry
    switch: CatalogEntry


@with_config(_CLOSED)
class Lossless(TypedDict):
    enabled: bool
    interface_lines: list[str]
    lines: list[str]


@with_config(_CLOSED)
class Settings(TypedDict):
    lossless: Lossless
    mgmt_gateway: IPv4 | None
    mgmt_prefix_len: int
    mtu: int
    same_group_fallback: bool
    switch_mtu: int


@with_config(_CLOSED)
class Sizing(TypedDict):
    """S, K, m and how they were chosen (plan.md, topology/sizing.py), plus the planes and the fill."""

    K: int
    S: int
    cages: int
    capacity_gpus: int
    capacity_servers: int
    effective_oversubscription: Number
    fabric_cages: int
    fabric_ports: int
    gpus_per_server: int
    gpus_requested: int
    host_cages: int
    installed_gpus: int
    installed_servers: int
    lanes_per_cage: int
    logical_ports: int
    m: int
    oversubscription: Number
    planes: int
    rail: bool
    reasons: list[str]


@with_config(_CLOSED)
class RoftSizing(TypedDict):
    """A ROFT's shape (roft.md, designs/roft/sizing.py): pods of rail leaves, spines, links per leaf-spine pair."""

    capacity_gpus: int
    capacity_servers: int
    fabric_speed: str
    gpus_per_server: int
    host_ports_per_leaf: int
    installed_gpus: int
    installed_servers: int
    leaves_per_plane: int
    links_per_pair: int
    logical_ports: int
    oversubscription: Number
    planes: int
    pods: int
    reasons: list[str]
    servers_per_pod: int
    spine_ports: int
    spines_per_plane: int
    uplinks_per_leaf: int


def _sizing_kind(value: Any) -> str:
    return "roft" if isinstance(value, dict) and "leaves_per_plane" in value else "zcube"


AnySizing = Annotated[Union[Annotated[Sizing, Tag("zcube")], Annotated[RoftSizing, Tag("roft")]], Discriminator(_sizing_kind)]


@with_config(_CLOSED)
class Plan(TypedDict):
    """plan.json (schema version 2)."""

    addressing: Addressing
    cables: list[Cable]
    checks: list[Check]
    cluster: Cluster
    counts: Counts
    design: NotRequired[Annotated[Design, Field(description="the fabric's design (designs.md); a plan without it is a ZCube plan")]]
    inputs: Inputs
    layout: Layout
    models: Models
    port_map: Annotated[PortMap, Field(description="the switches' ports (ZCube: every switch; ROFT: the leaves')")]
    port_maps: NotRequired[Annotated[dict[str, PortMap], Field(description="role -> its ports, when roles differ (ROFT leaf/spine)")]]
    routing: Routing
    schema_version: Literal[2]
    servers: list[Server]
    settings: Settings
    sizing: AnySizing
    switches: list[Switch]
    tool_version: str


PLAN_ADAPTER: TypeAdapter = TypeAdapter(Plan)
SECTIONS: frozenset[str] = frozenset(Plan.__annotations__)
REQUIRED_SECTIONS: frozenset[str] = frozenset(k for k, tp in get_type_hints(Plan, include_extras=True).items() if get_origin(tp) is not NotRequired)
DESIGN_DEFAULT = "zcube"  # a plan without ``design`` (written before designs existed)


def _hints(td: type) -> dict[str, Any]:
    return get_type_hints(td, include_extras=True)


def _row_type(tp: Any) -> type | None:
    """The typed dict a field holds, directly or as the element of a list (None for a plain value)."""
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    if get_origin(tp) is list:
        return _row_type(get_args(tp)[0])
    if get_origin(tp) is NotRequired:
        return _row_type(get_args(tp)[0])
    return tp if isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__annotations__") else None


Spec = Union[None, set, frozenset, dict]


def _check_spec(td: type, spec: dict | set | frozenset, where: str) -> None:
    hints = _hints(td)
    for name in spec:
        if name not in hints:
            raise KeyError(f"{where}.{name}: plan.json has no such field (fields: {', '.join(sorted(hints))})")
        sub = spec[name] if isinstance(spec, dict) else None
        if sub is not None:
            row = _row_type(hints[name])
            if row is None:
                raise KeyError(f"{where}.{name} holds no rows to project")
            _check_spec(row, sub, f"{where}.{name}")


def check_projection(spec: dict) -> None:
    """Raise KeyError when ``spec`` names a section or field the plan model does not have."""
    _check_spec(Plan, spec, "plan")


def _closed(tp: Any) -> bool:
    """True when every value under ``tp`` is a closed typed dict or a plain value (no free-form dict)."""
    while get_origin(tp) in (Annotated, NotRequired):
        tp = get_args(tp)[0]
    origin = get_origin(tp)
    if origin is dict or tp is dict or tp is Any:
        return False
    if origin in (list, Union) or str(origin) == "types.UnionType" or type(tp).__name__ == "UnionType":
        return all(_closed(a) for a in get_args(tp))
    if _row_type(tp) is not None:
        return getattr(tp, "__pydantic_config__", {}).get("extra") == "forbid" and all(_closed(h) for h in _hints(tp).values())
    return True


@functools.lru_cache(maxsize=1)
def sorted_rows() -> frozenset[str]:
    """The list sections whose rows are closed typed dicts all the way down: validating such a row
    yields its keys in the model's (sorted) order, so it serialises canonically without re-sorting."""
    out = set()
    for name, tp in _hints(Plan).items():
        row = _row_type(tp)
        if row is not None and _is_list(tp) and _closed(row) and all(list(_hints(t)) == sorted(_hints(t)) for t in _typed_dicts(row)):
            out.add(name)
    return frozenset(out)


def _typed_dicts(td: type) -> list[type]:
    out = [td]
    for h in _hints(td).values():
        row = _row_type(h)
        if row is not None:
            out += _typed_dicts(row)
    return out


@functools.lru_cache(maxsize=None)
def float_fields(section: str) -> tuple[tuple[str, ...], ...]:
    """The paths (field names, through nested rows and their lists) of the float fields of a list section's rows."""
    return tuple(_float_paths(_row_type(_hints(Plan)[section])))


def _float_paths(td: type) -> list[tuple[str, ...]]:
    out = []
    for name, tp in _hints(td).items():
        while get_origin(tp) in (Annotated, NotRequired):
            tp = get_args(tp)[0]
        row = _row_type(tp)
        if row is not None:
            out += [(name, *rest) for rest in _float_paths(row)]
        elif tp is float or float in get_args(tp):
            out.append((name,))
    return out


def projection(**sections: Spec) -> dict[str, Spec]:
    """A reduced read of plan.json, checked against the model: section -> None (whole) or the
    fields to keep of each row (a set, or a dict field -> sub-projection for nested rows).

    Example: ``projection(switches={"name", "mgmt_address"}, servers={"name": None, "nics": {"port", "mac"}})``.
    """
    check_projection(sections)
    return {k: (v if v is None or isinstance(v, dict) else set(v)) for k, v in sections.items()}


def _freeze(spec: Spec):
    if spec is None:
        return None
    if isinstance(spec, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in spec.items()))
    return tuple(sorted((k, None) for k in spec))


def _projected(td: type, frozen: tuple | None) -> Any:
    """``td`` reduced to the projected fields (required ones stay required; other fields ignored)."""
    if frozen is None:
        return td
    hints = _hints(td)
    required = {k for k, tp in hints.items() if get_origin(tp) is not NotRequired}  # (__required_keys__ misses string NotRequired)
    fields: dict[str, Any] = {}
    for name, sub in frozen:
        tp = hints[name]
        if sub is not None:
            inner = _projected(_row_type(tp), sub)
            tp = list[inner] if _is_list(tp) else inner
        fields[name] = tp if name in required else NotRequired[tp]
    return with_config(ConfigDict(strict=True, extra="ignore"))(TypedDict(f"{td.__name__}_projected", fields))  # type: ignore[operator]


def _is_list(tp: Any) -> bool:
    while get_origin(tp) in (Annotated, NotRequired):
        tp = get_args(tp)[0]
    return get_origin(tp) is list


@functools.lru_cache(maxsize=64)
def _section_adapter(section: str, frozen: tuple | None) -> TypeAdapter:
    tp = _hints(Plan)[section]
    if get_origin(tp) is NotRequired:  # an optional section (design, port_maps): its value's type
        tp = get_args(tp)[0]
    if frozen is None:
        return TypeAdapter(tp)
    inner = _projected(_row_type(tp), frozen)
    return TypeAdapter(list[inner] if _is_list(tp) else inner)


def section_adapter(section: str, spec: Spec = None) -> TypeAdapter:
    """A validator for one top-level section, reduced to ``spec`` (see :func:`projection`)."""
    return _section_adapter(section, _freeze(spec))


def plan_json_schema() -> dict:
    schema = PLAN_ADAPTER.json_schema()
    schema["title"] = "ZCube plan.json"
    return schema


# ---------------------------------------------------------------- errors
_HINTS = {
    "missing": "a truncated or hand-edited plan: re-run `zcube plan` rather than editing plan.json",
    "extra_forbidden": "plan.json has no such field in this schema version (a typo, or a plan from another zcube version)",
    "string_pattern_mismatch": "expected an IPv4 address (a.b.c.d) or prefix (a.b.c.d/len)",
}


_MESSAGES = {"string_pattern_mismatch": "not an IPv4 address or prefix in dotted-quad form", "missing": "missing",
             "extra_forbidden": "unknown field"}


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not (isinstance(part, str) and (part.startswith(("function-", "list[", "tagged-union")) or part in ("str", "int", "float", "none", "zcube", "roft"))):
            out += f".{part}" if out else str(part)
    return out


def validation_problems(exc: ValidationError, prefix: str = "", limit: int = 20, positions: list[int] | None = None) -> list[Problem]:
    """A pydantic error as the tool's problems: one per distinct data path (a union's branches merge).

    ``positions``: the error is of a list of some of a section's elements (read_plan's ``pick``); an
    element's path then names its position in the whole section.
    """
    seen: dict[str, Problem] = {}
    for e in exc.errors(include_url=False):
        loc = tuple(e["loc"])
        if positions is not None and loc and isinstance(loc[0], int) and loc[0] < len(positions):
            loc = (positions[loc[0]],) + loc[1:]
        path = _path(((prefix,) if prefix else ()) + loc)
        if path in seen:
            continue
        value = e.get("input")
        shown = "" if e["type"] == "missing" or isinstance(value, (dict, list)) else f" (found {value!r:.60})"
        msg = _MESSAGES.get(e["type"], e["msg"])
        seen[path] = Problem(path or "plan.json", msg[:1].lower() + msg[1:] + shown, _HINTS.get(e["type"], "re-run `zcube plan` to write a valid plan"))
    problems = list(seen.values())
    if len(problems) > limit:
        problems = problems[:limit] + [Problem("", f"... and {len(problems) - limit} more")]
    return problems


__all__ = ["PLAN_ADAPTER", "SCHEMA_VERSION", "SECTIONS", "Plan", "ValidationError", "check_projection", "plan_json_schema", "projection",
           "section_adapter", "sorted_rows", "validation_problems"]
