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


LABEL_FIELDS = ("id", "here_device", "here_port", "far_device", "far_port", "here_rack", "here_u", "far_rack", "far_u", "end")


class Labels(_M):
    """Two text lines per cable end (one label per end); each line at most max_length characters."""
    line1: str = "{id} {end} {here_device} {here_port}"
    line2: str = "> {far_rack} {far_device} {far_port}"
    max_length: int = Field(default=32, ge=8, le=200, description="characters per label line")

    @model_validator(mode="before")
    @classmethod
    def _old_end(cls, data):
        if isinstance(data, dict) and "end" in data:
            raise ValueError("labels.end (one line) was replaced by labels.line1 and labels.line2 (two lines per label)")
        return data

    @model_validator(mode="after")
    def _fields(self) -> "Labels":
        import string

        for line in (self.line1, self.line2):
            try:
                names = {f for _, f, _, _ in string.Formatter().parse(line) if f is not None}
            except ValueError as exc:
                raise ValueError(f"label line {line!r}: {exc}") from None
            unknown = sorted(names - set(LABEL_FIELDS))
            if unknown:
                raise ValueError(f"label line {line!r} uses unknown field(s) {unknown}; fields: {', '.join(LABEL_FIELDS)}")
        return self


class Column(_M):
    key: Literal["cable", "group", "plane", "a_rack", "a_u", "a_device", "a_port", "b_rack", "b_u", "b_device", "b_port",
                 "medium", "length_m", "part", "installed", "checked"]
    title: str
    width: float = Field(default=10, gt=0, le=100)

    @model_validator(mode="before")
    @classmethod
    def _no_labels(cls, data):
        if isinstance(data, dict) and data.get("key") in ("label_a", "label_b"):
            raise ValueError("label text is no longer a cut-sheet column: it is in labels.csv (one row per cable end)")
        return data


class Sheets(_M):
    per: Literal["rack", "row"] = "rack"
    paper: Literal["A4", "letter"] = Field(default="A4", description="paper the cut sheets print on (landscape)")
    plane_shade_percent: float = Field(default=12, ge=0, le=30, description="each plane's row fill this much darker than the previous")
    split_above_cables: int = Field(default=20000, ge=0,
                                    description="above this many cables: one workbook per layout row plus a summary workbook (0: never)")
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
