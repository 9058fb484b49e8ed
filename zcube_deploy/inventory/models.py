"""Inventory model (pydantic v2): what the user writes in ``inventory.yaml``.

Structure and field types are checked here; cross-references (models exist, racks exist, names
unique, pools do not overlap) are checked in :mod:`zcube_deploy.inventory.load`, which collects
every problem before reporting.
"""

from __future__ import annotations

import builtins
from ipaddress import IPv4Address, IPv4Network
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from zcube_deploy.platform_data import known_platforms
from zcube_deploy.safety import NAME_HINT, check_name


def _safe_name(value: str) -> str:
    problem = check_name(value)
    if problem:
        raise ValueError(f"{value!r} {problem}; {NAME_HINT}")
    return value


def _mac(value: str) -> str:
    text = value.strip().lower().replace("-", ":")
    if len(text) == 14 and text.count(".") == 2:  # Cisco/Ruijie dotted form 001f.ce62.1e4e
        raw = text.replace(".", "")
        text = ":".join(raw[i : i + 2] for i in range(0, 12, 2))
    parts = text.split(":")
    if len(parts) != 6 or not all(len(p) == 2 and all(c in "0123456789abcdef" for c in p) for p in parts):
        raise ValueError(f"{value!r} is not a MAC address (like 'b8:3f:d2:00:00:01')")
    return text


def _platform(value: str) -> str:
    if value not in known_platforms():
        raise ValueError(f"unknown platform {value!r}; known: {', '.join(known_platforms())} (a folder under zcube_deploy/platforms/)")
    return value


Name = Annotated[str, AfterValidator(_safe_name)]
Mac = Annotated[str, AfterValidator(_mac)]
Platform = Annotated[str, AfterValidator(_platform)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RackSpec(_Model):
    name: Name
    position: int | None = Field(default=None, ge=1, description="position in the row (1-based); default: list order")
    role: Literal["compute", "network"] = "compute"
    u_height: int = Field(default=48, ge=4, le=60)
    allow_switches: bool | None = Field(default=None, description="may hold switches; default: role == network")


class RackGenerator(_Model):
    count: int = Field(ge=1, le=10000)
    name: str = Field(description="Python format pattern with {n} (1-based), e.g. 'A{n:02d}'")
    start: int = Field(default=1, ge=0)
    role: Literal["compute", "network"] = "compute"
    u_height: int = Field(default=48, ge=4, le=60)
    allow_switches: bool | None = None


class Row(_Model):
    name: Name
    racks: list[RackSpec] = []
    generate: list[RackGenerator] = Field(default_factory=list, description="rack generators, placed after the listed racks")


class RowGenerator(_Model):
    count: int = Field(ge=1, le=1000)
    name: str = Field(description="format pattern with {n} (1-based), e.g. 'R{n:02d}'")
    start: int = Field(default=1, ge=0)
    generate: list[RackGenerator] = Field(min_length=1, description="racks of every generated row; rack patterns may use {row}")


class SwitchPlace(_Model):
    rack: Name
    u: int = Field(ge=1, le=60, description="lowest U the switch occupies")


class Placement(_Model):
    even: Literal["near_servers", "network_racks"] = Field(
        default="near_servers", description="even (single-rail, ToR-like) switches: near the servers they serve"
    )
    odd: Literal["network_racks", "near_servers"] = "network_racks"
    top_u: int | None = Field(default=None, ge=1, description="switches are stacked downwards from this U (default: rack top)")
    switches: dict[Name, SwitchPlace] = Field(
        default_factory=dict, description="explicit switch -> place (rack, lowest U); the others are placed by the rule around them"
    )


class Layout(_Model):
    rack_pitch_m: float = Field(default=0.6, gt=0, le=5)
    row_spacing_m: float = Field(default=2.4, gt=0, le=50)
    u_pitch_m: float = Field(default=0.04445, gt=0)
    rows: list[Row] = Field(default_factory=list)
    generate_rows: RowGenerator | None = None
    placement: Placement = Placement()


class ServerEntry(_Model):
    name: Name
    rack: Name
    u: int = Field(ge=1, le=60, description="lowest U the server occupies")
    serial: Name | None = None
    macs: dict[str, Mac] = Field(default_factory=dict, description="NIC interface name -> MAC")


class ServerGenerator(_Model):
    count: int = Field(ge=0, le=200000)
    name: str = Field(default="gpu{n:04d}", description="format pattern with {n} (1-based)")
    racks: list[Name] | None = Field(default=None, description="racks to fill in order; default: every compute rack")
    per_rack: int = Field(default=4, ge=1, le=60)
    first_u: int = Field(default=1, ge=1, le=60)
    serial: str | None = Field(default=None, description="format pattern with {n}, e.g. 'SN{n:06d}'")


class Servers(_Model):
    generate: ServerGenerator | None = None
    list: builtins.list[ServerEntry] = []
    csv: str | None = Field(default=None, description="CSV file (relative to the inventory): name,rack,u,serial[,<nic>...]")


class Topology(_Model):
    oversubscription: float = Field(default=1.0, ge=1.0, le=16.0, description="1.0 = non-blocking")
    capacity_servers: int | None = Field(default=None, ge=1, description="servers the fabric is sized for (growth)")
    nic_port_speed: str = "200G"
    mtu: int = Field(default=9000, ge=1280, le=9216, description="host NIC MTU")
    switch_mtu: int = Field(default=9216, ge=1500, le=9216)
    same_group_fallback: bool = Field(default=False, description="also route the own group's aggregate via the other group "
                                      "(when not given, routing.same_group_fallback decides: true by default)")
    fallback_paths: int = Field(default=4, ge=1, le=64, description="ECMP next hops of the fallback route")


class Management(_Model):
    network: IPv4Network
    gateway: IPv4Address | None = None
    first: IPv4Address | None = Field(default=None, description="first address handed out from the pool")
    addresses: dict[Name, IPv4Address] = Field(default_factory=dict, description="explicit switch -> address")


class Addressing(_Model):
    host_pool: IPv4Network
    fabric_pool: IPv4Network
    loopback_pool: IPv4Network
    management: Management


class Lossless(_Model):
    enabled: bool = False
    lines: list[str] = Field(default_factory=list, description="global RoCE/PFC/ECN lines (RGOS syntax unconfirmed)")
    interface_lines: list[str] = Field(default_factory=list, description="lines added under every fabric/host port")


class Bfd(_Model):
    interval_ms: int = Field(default=300, ge=50, le=10000, description="BFD transmit and minimum receive interval (ms)")
    multiplier: int = Field(default=3, ge=2, le=50, description="missed packets before the session goes down")


class Routing(_Model):
    """How the fabric routes (docs/routing.md). ``static``: today's switch static routes, nothing
    reroutes around a failure. ``bgp``: eBGP with BFD on every fabric /31, one private ASN per switch."""

    mode: Literal["static", "bgp"] = "static"
    asn_base: int = Field(default=4200000000, ge=1, le=4294967294,
                          description="ASN of the first switch; the others follow (RFC 6996 private 4-byte range by default)")
    bfd: Bfd = Bfd()
    same_group_fallback: bool | None = Field(default=None, description="mode static: also route the own group's aggregate via the "
                                             "other group (default: topology.same_group_fallback if given, else true; docs/routing.md)")
    maximum_paths: int | None = Field(default=None, ge=1, le=1024,
                                      description="mode bgp: ECMP paths (default: the switch model's bgp.maximum_paths)")


class Roft(_Model):
    """``design: roft`` (docs/roft.md): a rail-optimized fat tree of rail leaves per pod and spines."""

    planes: Literal[1, 2] = Field(default=1, description="1: every NIC port of a GPU on its rail leaf; 2: NIC port p on plane p-1")
    servers_per_pod: int | None = Field(default=None, ge=1, description="servers per pod (default: as many as a leaf's host half holds)")
    spines: int | None = Field(default=None, ge=1, description="spines per plane (default: the fewest that take every uplink)")
    fabric_speed: str | None = Field(default=None, description="leaf-spine link speed (default: twice the NIC port speed)")
    leaf_naming: str = Field(default="R-L{number:03d}", description="fields: cluster, plane, pod, rail, index, number")
    spine_naming: str = Field(default="R-S{number:03d}", description="fields: cluster, plane, index, number")


class Inventory(_Model):
    design: Literal["zcube", "roft"] = Field(default="zcube", description="the fabric's design (docs/designs.md)")
    roft: Roft | None = Field(default=None, description="design roft: its shape (docs/roft.md)")
    cluster: Name
    description: str = ""
    platform: Platform = Field(default="ruijie_rgos", description="a folder under zcube_deploy/platforms/ (docs/platforms.md)")
    catalog: str | None = Field(default=None, description="extra catalog YAML (relative to the inventory)")
    cabling_catalog: str | None = Field(default=None, description="cabling catalog YAML replacing the bundled one (relative to the inventory)")
    switch_model: str
    server_model: str
    switch_naming: str = Field(default="ZC-{G}{number:03d}", description="fields: cluster, G (O/E), group, number, index, plane")
    topology: Topology = Topology()
    layout: Layout
    servers: Servers
    addressing: Addressing
    lossless: Lossless = Lossless()
    routing: Routing = Routing()
