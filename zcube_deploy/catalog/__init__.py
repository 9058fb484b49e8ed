"""Hardware catalog: switch, NIC and server models, loaded from YAML (data, not code)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from zcube_deploy.errors import InputErrors, Problem, not_utf8
from zcube_deploy.platform_data import catalog_defaults
from zcube_deploy.resources import data_dir
from zcube_deploy.safety import check_interface

_SPEED_RE = re.compile(r"^(\d+)G$")


def parse_speed(text: str) -> int:
    """'200G' -> 200 (Gbit/s)."""
    m = _SPEED_RE.match(text)
    if not m:
        raise ValueError(f"speed {text!r} is not of the form '200G'")
    return int(m.group(1))


def _pattern(value: str) -> str:
    sample = value.format(cage=1, lane=1, port=1, slot=1, gpu=0, port0=0)
    problem = check_interface(sample)
    if problem:
        raise ValueError(f"interface pattern {value!r} gives {sample!r}, which {problem}")
    return value


Pattern = Annotated[str, AfterValidator(_pattern)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SpeedMode(_Model):
    lanes: int = Field(ge=1, le=8, description="logical ports per cage at this speed")
    name: Pattern
    abbreviation: str | None = None
    confirmed: bool = False


class BgpSyntax(_Model):
    """Platform data for mode bgp: the lines no vendor guide has confirmed (ruijie.md, [U]).

    The session, fall-over and interface BFD lines are confirmed and live in the platform's
    template; everything here is rendered as given. A field an entry leaves out comes from its
    platform (``platforms/<name>/platform.yaml``, ``catalog_defaults.bgp``)."""

    confirmed: bool = False
    router_id: str = Field(description="field {router_id}")
    global_lines: list[str] = Field(default_factory=list, description="lines right after the BGP instance line, e.g. multipath relax")
    address_family: str | None = Field(description="None: no address-family block")
    exit_address_family: str
    network: str = Field(description="fields {network}, {mask}, {prefix_len}")
    maximum_paths: str = Field(description="field {paths}")
    max_paths: int = Field(default=64, ge=1, le=1024, description="ECMP path limit rendered by default")
    discard_route: str | None = Field(description="static discard route that makes the host block exist for `network`")


class SwitchModel(_Model):
    description: str = ""
    placeholder: bool = False
    platform: str
    capacity: str
    u_height: int = Field(ge=1, le=16)
    cages: int = Field(ge=1, le=1024)
    cage_form_factor: str
    mgmt_interface: str = Field(description="default: the platform's (platform.yaml catalog_defaults)")
    speeds: dict[str, SpeedMode]
    breakout_command: str | None = Field(default=None, description="per split cage; fields {cage}, {speed}, {lanes}, {name}")
    config_lines: list[str] = Field(default_factory=list, description="global lines; fields {switch_mtu}")
    unit_price_usd: float | None = None
    bgp: BgpSyntax | None = Field(default=None, description="mode bgp syntax (platform data, unconfirmed lines)")

    @model_validator(mode="before")
    @classmethod
    def _platform_defaults(cls, data):
        """Fields an entry leaves out take its platform's defaults (platform.yaml ``catalog_defaults``)."""
        if not isinstance(data, dict) or not isinstance(data.get("platform"), str):
            return data
        defaults = catalog_defaults(data["platform"])
        out = {**{k: v for k, v in defaults.items() if k != "bgp"}, **data}
        if isinstance(data.get("bgp"), dict):
            out["bgp"] = {**defaults.get("bgp", {}), **data["bgp"]}
        return out

    def logical_ports(self, speed: str) -> int:
        """R: logical ports at ``speed``."""
        return self.cages * self.speeds[speed].lanes

    def port_name(self, speed: str, cage: int, lane: int) -> str:
        """RGOS name of lane ``lane`` (1-based) of cage ``cage`` (1-based) at ``speed``."""
        mode = self.speeds[speed]
        return mode.name.format(cage=cage, lane=lane, port=(cage - 1) * mode.lanes + lane)


class NicModel(_Model):
    description: str = ""
    ports: int = Field(ge=1, le=8)
    speed: str
    unit_price_usd: float | None = None


class ServerModel(_Model):
    description: str = ""
    gpus: int = Field(ge=1, le=64)
    u_height: int = Field(ge=1, le=16)
    nic_model: str
    nic_interface: Pattern
    lldp_port_id: str = Field(default="interface_name", pattern="^(interface_name|mac)$")

    def nic_port_name(self, gpu: int, port: int) -> str:
        """Host interface name of NIC port ``port`` (1-based) of GPU ``gpu`` (0-based)."""
        return self.nic_interface.format(gpu=gpu, slot=gpu + 1, port=port, port0=port - 1)


class Catalog(_Model):
    switch_models: dict[str, SwitchModel]
    nic_models: dict[str, NicModel]
    server_models: dict[str, ServerModel]
    sha256: str = ""


def _merge(base: dict, extra: dict) -> dict:
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in base.items()}
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def default_catalog_path() -> Path:
    return data_dir("inventories") / "catalog.yaml"


def load_catalog(extra: Path | None = None) -> Catalog:
    """Load the bundled catalog, optionally extended/overridden by the user's ``extra`` file."""
    texts = [default_catalog_path().read_text(encoding="utf-8")]
    if extra is not None:
        try:
            texts.append(Path(extra).read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputErrors(Problem("catalog", f"cannot read {extra}: {exc.strerror}")) from None
        except UnicodeDecodeError as exc:
            raise InputErrors(not_utf8(extra, exc), "cannot read the hardware catalog") from None
    data: dict = {}
    for text in texts:
        try:
            loaded = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise InputErrors(Problem("catalog", f"not valid YAML: {exc}")) from None
        data = _merge(data, loaded)
    digest = hashlib.sha256("\n---\n".join(texts).encode()).hexdigest()
    try:
        return Catalog.model_validate({**data, "sha256": digest})
    except ValidationError as exc:
        raise InputErrors(
            [Problem("catalog." + ".".join(str(p) for p in e["loc"]), e["msg"]) for e in exc.errors()],
            "invalid hardware catalog",
        ) from None
