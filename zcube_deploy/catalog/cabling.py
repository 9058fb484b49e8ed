"""Cabling catalog (cabling/cabling.yaml): media, stock lengths, parts, colours, labels, sheet layout."""

from __future__ import annotations

import hashlib
import string
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from zcube_deploy.errors import InputErrors, Problem, not_utf8
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
    except UnicodeDecodeError as exc:
        raise InputErrors(not_utf8(p, exc), "cannot read the cabling catalog") from None
    except yaml.YAMLError as exc:
        raise InputErrors(Problem("cabling_catalog", f"{p} is not valid YAML: {exc}")) from None
    try:
        return CablingCatalog.model_validate({**data, "sha256": hashlib.sha256(text.encode()).hexdigest()})
    except ValidationError as exc:
        raise InputErrors([Problem("cabling_catalog." + ".".join(str(x) for x in e["loc"]), e["msg"]) for e in exc.errors()],
                          f"invalid cabling catalog {p}") from None


def _flat(value, path: str, out: dict[str, object]) -> dict[str, object]:
    """``value`` (a catalog's model_dump) as {data path: leaf value}."""
    if isinstance(value, dict):
        for k, v in value.items():
            _flat(v, f"{path}.{k}" if path else str(k), out)
    else:
        out[path] = value
    return out


def catalog_differences(old: CablingCatalog, new: CablingCatalog) -> list[str]:
    """What differs between two catalogs, one line per data path ("media.SMF.unit_price_usd: 120.0 -> 1200.0",
    "media.AOC: added"), media first."""
    a, b = _flat(old.model_dump(exclude={"sha256"}), "", {}), _flat(new.model_dump(exclude={"sha256"}), "", {})
    out = []
    for m in sorted(set(old.media) - set(new.media)):
        out.append(f"media.{m}: removed")
    for m in sorted(set(new.media) - set(old.media)):
        out.append(f"media.{m}: added")
    gone = {f"media.{m}" for m in set(old.media) ^ set(new.media)}
    for k in sorted(set(a) | set(b), key=lambda k: (not k.startswith("media."), k)):
        if k.rsplit(".", 1)[0] in gone or ".".join(k.split(".")[:2]) in gone:
            continue
        if k not in b:
            out.append(f"{k}: removed (was {a[k]!r})")
        elif k not in a:
            out.append(f"{k}: added ({b[k]!r})")
        elif a[k] != b[k]:
            out.append(f"{k}: {a[k]!r} -> {b[k]!r}")
    return out


def _plan_catalog_original(plan: dict, sha256: str) -> CablingCatalog | None:
    """The catalog the plan was made with, when it can still be found: the file the plan names, else the bundled one."""
    named = (plan.get("inputs") or {}).get("cabling_catalog")
    for p in ([Path(named)] if named else []) + [None]:
        try:
            cat = load_cabling_catalog(p)
        except InputErrors:
            continue
        if cat.sha256 == sha256:
            return cat
    return None


ACCEPT_FLAG = "--accept-catalog-change"


def plan_catalog(plan: dict, path: str | Path | None, accept_changed: bool = False) -> tuple[CablingCatalog, list[str]]:
    """The cabling catalog at ``path`` (None: the bundled one) checked against ``plan``: (the catalog, what differs
    from the one the plan was made with, [] when it is that one).

    Every medium the plan's cables use must be in it (else an input error naming each cable's data path). A
    catalog other than the plan's (``inputs.cabling_catalog_sha256``) is refused (exit 2, what differs) unless
    ``accept_changed``: its prices, lengths and media would silently change the BOM and the cut sheets."""
    cat = load_cabling_catalog(Path(path) if path else None)
    where = str(path) if path else "the bundled cabling catalog"
    unknown: dict[str, list[int]] = {}  # medium -> the cables (indexes) using it
    for i, c in enumerate(plan.get("cables") or []):
        if c.get("medium") not in cat.media:
            unknown.setdefault(str(c.get("medium")), []).append(i)
    if unknown:
        raise InputErrors([Problem(f"cables[{ix[0]}].medium" + (f" (and {len(ix) - 1} more cables)" if len(ix) > 1 else ""),
                                   f"medium {m!r} is not in {where}", f"its media: {', '.join(sorted(cat.media))}")
                           for m, ix in sorted(unknown.items())], "the cabling catalog lacks media the plan uses")
    want = (plan.get("inputs") or {}).get("cabling_catalog_sha256")
    if not want or cat.sha256 == want:
        return cat, []
    original = _plan_catalog_original(plan, want)
    diff = catalog_differences(original, cat) if original is not None else [
        f"(the plan's own catalog, sha256 {want[:12]}, is not at hand to compare: neither the file the plan names nor the bundled one)"]
    if not accept_changed:
        shown = diff[:12] + ([f"... and {len(diff) - 12} more"] if len(diff) > 12 else [])
        raise InputErrors(Problem("inputs.cabling_catalog_sha256",
                                  f"{where} (sha256 {cat.sha256[:12]}) is not the catalog the plan was made with ({want[:12]}); "
                                  "it differs in: " + "; ".join(shown),
                                  f"re-plan with this catalog, or pass {ACCEPT_FLAG} to use it for this run"),
                          "a different cabling catalog")
    return cat, diff
