"""JSON Schemas: the inventory (from the pydantic model) and the documented minimum of plan.json.

The plan models list what users' scripts may rely on; plan.json carries more (extra="allow").
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from zcube_deploy.inventory.models import Inventory


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class End(_Open):
    device: str
    port: str


class Interface(_Open):
    name: str = Field(description="RGOS interface name")
    kind: Literal["host", "fabric"]
    address: str = Field(description="this switch's address on the /31")
    prefix_len: int
    cable: str
    peer: dict


class StaticRoute(_Open):
    prefix: str
    next_hop: str


class Switch(_Open):
    name: str
    group: Literal["odd", "even"]
    index: int = Field(description="r for O_r, j for E_j (0-based)")
    number: int = Field(description="human-facing number: O_r is 2r+1, E_j is 2j+2")
    plane: int
    mgmt_address: str
    loopback: str
    rack: str
    u: int
    interfaces: list[Interface]
    routes: list[StaticRoute] = Field(description="static routes (mode static); [] in mode bgp")
    asn: int | None = Field(description="BGP AS number (mode bgp), null in mode static")


class Server(_Open):
    name: str
    rack: str
    nics: list[dict]


class Cable(_Open):
    id: str
    kind: Literal["host", "fabric"]
    a: End = Field(description="host: the server NIC port; fabric: the odd switch")
    b: End = Field(description="host: the switch port; fabric: the even switch")


class RoutingSection(_Open):
    mode: Literal["static", "bgp"]
    asn_base: int
    bfd: dict
    same_group_fallback: bool


class Plan(_Open):
    schema_version: int
    tool_version: str
    inputs: dict
    sizing: dict
    routing: RoutingSection
    switches: list[Switch]
    servers: list[Server]
    cables: list[Cable]


def plan_schema() -> dict:
    return Plan.model_json_schema()


def inventory_schema() -> dict:
    return Inventory.model_json_schema()
