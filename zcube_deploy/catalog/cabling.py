"""Cabling catalog (cabling/cabling.yaml): media, stock lengths, parts, colours, labels, sheet layout."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.resources import data_dir


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LengthModel(_M):
    tray_above_rack_m: float = Field(default=0.6, ge=0)
    slack_m: float = Field(default=1.0, ge=0)
    slack_percent: float = Field(default=10, ge=0, le=100)
    same_rack_slack_m: float = Field(default=0.5, ge=0)


class Medium(_M):
    kind: Literal["copper", "aoc", "fibre"]
    description: str = ""
    reach_m: float = Field(gt=0)
    lengths_m: list[float] = Field(min_length=1)
    part: str
    optics: bool = False
    unit_price_usd: float | None = None

    @model_validator(mode="after")
    def _sorted(self) -> "Medium":
        if list(self.lengths_m) != sorted(self.lengths_m):
            raise ValueError("lengths_m must be in increasing order")
        return self


class Optic(_M):
    part: str
    unit_price_usd: float | None = None


class Optics(_M):
    switch_cage: dict[str, Optic]
    nic_port: Optic
    by_speed: dict[str, float] = Field(default_factory=dict, description="unit price (USD) of one module per link speed, for `zcube compare`")


class Colour(_M):
    fill: str = Field(pattern="^[0-9A-Fa-f]{6}$")
    label: str


class Labels(_M):
    end: str = "{id} {here_device} {here_port} > {far_device} {far_port}"
    max_length: int = Field(default=60, ge=8, le=200)


class Column(_M):
    key: Literal["cable", "group", "plane", "a_rack", "a_u", "a_device", "a_port", "b_rack", "b_u", "b_device", "b_port",
                 "medium", "length_m", "part", "label_a", "label_b", "installed", "checked"]
    title: str
    width: float = Field(default=10, gt=0, le=100)


class Sheets(_M):
    per: Literal["rack", "row"] = "rack"
    columns: list[Column]

    @model_validator(mode="after")
    def _needs(self) -> "Sheets":
        keys = [c.key for c in self.columns]
        for needed in ("cable", "installed", "checked"):
            if needed not in keys:
                raise ValueError(f"the cut sheet needs a '{needed}' column")
        if len(keys) != len(set(keys)):
            raise ValueError("a column appears twice")
        return self


class CablingCatalog(_M):
    length_model: LengthModel = LengthModel()
    media_preference: list[str] = Field(min_length=1)
    media: dict[str, Medium]
    optics: Optics
    colours: dict[Literal["odd", "even", "fabric"], Colour]
    labels: Labels = Labels()
    sheets: Sheets
    sha256: str = ""

    @model_validator(mode="after")
    def _known(self) -> "CablingCatalog":
        unknown = [m for m in self.media_preference if m not in self.media]
        if unknown:
            raise ValueError(f"media_preference names unknown media {unknown}")
        return self


def load_cabling_catalog(path: Path | None = None) -> CablingCatalog:
    p = Path(path) if path else data_dir("cabling") / "cabling.yaml"
    try:
        text = p.read_text(encoding="utf-8")
        data = yaml.safe_load(text) or {}
    except OSError as exc:
        raise InputErrors(Problem("cabling_catalog", f"cannot read {p}: {exc.strerror}")) from None
    except yaml.YAMLError as exc:
        raise InputErrors(Problem("cabling_catalog", f"{p} is not valid YAML: {exc}")) from None
    try:
        return CablingCatalog.model_validate({**data, "sha256": hashlib.sha256(text.encode()).hexdigest()})
    except ValidationError as exc:
        raise InputErrors([Problem("cabling_catalog." + ".".join(str(x) for x in e["loc"]), e["msg"]) for e in exc.errors()],
                          f"invalid cabling catalog {p}") from None
