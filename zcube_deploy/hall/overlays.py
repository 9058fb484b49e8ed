"""The overlay files `zcube hall` reads beside the plan (verify.json, analyze.json, traffic.json), checked whole.

A file that is not what its option expects is an input error naming the file, the place in it
(a data path such as ``findings[3].ends[0].rack``) and what is wrong: every problem at once (up to
MAX_PROBLEMS), never a traceback from the drawing code further on. The models below say what the
hall reads of each file; other fields are ignored.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from typing import Annotated

from pydantic import BaseModel, ConfigDict, PlainValidator, ValidationError

from zcube_deploy.errors import InputErrors, Problem

MAX_PROBLEMS = 20


class _Read(BaseModel):
    """Strict (no "1" for 1, no 1 for "1"); fields the hall does not read are ignored."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class FindingEnd(_Read):
    device: str | None = None
    rack: str | None = None


class Finding(_Read):
    id: str
    kind: str
    cables: list[str]
    ends: list[FindingEnd]
    instruction: str
    what: str = ""


class VerifyDoc(_Read):
    """What the hall reads of a verify.json (as `zcube verify -o DIR` writes it)."""

    cluster: str | None = None
    mode: str | None = None
    summary: dict = {}
    unreachable: dict[str, str] | None = None   # switch -> why it could not be verified
    findings: list[Finding]


def _number(v: object) -> int | float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError("a number is expected")
    return v


# a JSON number as written (an int stays an int: the page prints it as it is)
Number = Annotated[int | float, PlainValidator(_number)]


class Mean(_Read):
    mean: Number


class FailureRow(_Read):
    p: Number
    zcube: Mean
    dual_plane_clos: Mean


class AnalyzeDoc(_Read):
    """What the hall reads of an analyze.json (as `zcube analyze -o DIR` writes it)."""

    random_link_failures: list[FailureRow]


class TrafficRow(_Read):
    design: str
    workload: str
    failure: str | None = None
    fabric_cable_utilisation: dict[str, Number] | None = None


class TrafficDoc(_Read):
    """What the hall reads of a traffic.json (as `zcube traffic -o DIR` writes it): the ZCube rows."""

    designs: list[TrafficRow]


def _where(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _problems(exc: ValidationError) -> list[Problem]:
    """One problem per place (data path), the value found where it is short enough to show."""
    seen: dict[str, Problem] = {}
    for err in exc.errors(include_url=False):
        where = _where(tuple(err["loc"])) or "(the whole file)"
        if where in seen:
            continue
        value = err.get("input")
        found = "" if err["type"] == "missing" or isinstance(value, (dict, list)) else f" (found {value!r:.60})"
        msg = "missing" if err["type"] == "missing" else err["msg"].removeprefix("Value error, ")
        msg = msg[:1].lower() + msg[1:]
        seen[where] = Problem(where, msg + found)
    problems = list(seen.values())
    if len(problems) > MAX_PROBLEMS:
        problems = problems[:MAX_PROBLEMS] + [Problem("", f"... and {len(problems) - MAX_PROBLEMS} more")]
    return problems


def _read_json(p: Path, flag: str, hint: str):
    """An overlay file's JSON, or one clear problem naming the option that gave it."""
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputErrors(Problem(flag, f"{p}: no such file", hint)) from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InputErrors(Problem(flag, f"{p}: not a readable JSON file ({type(exc).__name__}: {str(exc)[:200]})")) from None


def _validated(model: type[_Read], doc, p: Path, what: str):
    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        raise InputErrors(_problems(exc), f"{p} is not {what}") from None
    except RecursionError:
        raise InputErrors(Problem("(the whole file)", "nested too deeply"), f"{p} is not {what}") from None


def load_verify(path: str | Path, plan: dict) -> dict:
    """A verify.json (as `zcube verify -o DIR` writes it), checked whole and against the plan's cluster.

    Returns what the hall reads of it (the fields of VerifyDoc) as plain data.
    """
    p = Path(path)
    doc = _read_json(p, "--verify", "run `zcube verify PLAN ... -o DIR` to write DIR/verify.json")
    ver = _validated(VerifyDoc, doc, p, "a verify.json (give the verify.json that `zcube verify -o DIR` writes)")
    cluster = plan["cluster"].get("name")
    if ver.cluster not in (None, cluster):
        raise InputErrors(Problem("--verify", f"{p} is for cluster {ver.cluster!r}, the plan is {cluster!r}"))
    return ver.model_dump()


def load_analysis(path: str | Path) -> dict:
    """The figures the page shows from analyze.json, and unreachability.png next to it (base64)."""
    p = Path(path)
    doc = _read_json(p, "--analyze", "run `zcube analyze PLAN -o DIR` to write DIR/analyze.json")
    ana = _validated(AnalyzeDoc, doc, p, "an analyze.json (give the analyze.json that `zcube analyze -o DIR` writes)")
    rows = [{"p": r.p, "zcube": r.zcube.mean, "clos": r.dual_plane_clos.mean} for r in ana.random_link_failures]
    png = p.parent / "unreachability.png"
    try:
        png_base64 = base64.b64encode(png.read_bytes()).decode("ascii") if png.is_file() else None
    except OSError as exc:
        raise InputErrors(Problem("--analyze", f"{png}: not readable ({exc})")) from None
    return {"rows": rows, "png_base64": png_base64}


def load_traffic(path: str | Path, plan: dict) -> dict:
    """The per fabric cable utilisation of traffic.json's first healthy ZCube row: ``{"cables":
    {cable id: utilisation}, "workload": str}``; the cables must be the plan's."""
    p = Path(path)
    doc = _read_json(p, "--traffic", "run `zcube traffic PLAN -o DIR` to write DIR/traffic.json")
    tr = _validated(TrafficDoc, doc, p, "a traffic.json (give the traffic.json that `zcube traffic -o DIR` writes)")
    row = next((r for r in tr.designs if r.design == "zcube" and r.failure is None and r.fabric_cable_utilisation), None)
    if row is None:
        raise InputErrors(Problem("--traffic", f"{p} has no healthy ZCube row with fabric_cable_utilisation",
                                  "run `zcube traffic` with --design zcube (the default)"))
    fabric = {c["id"] for c in plan["cables"] if c["kind"] == "fabric"}
    unknown = sorted(set(row.fabric_cable_utilisation) - fabric)
    if unknown:
        raise InputErrors(Problem("--traffic", f"{p}: {len(unknown)} cables are not fabric cables of this plan, e.g. {unknown[0]!r}",
                                  "give the traffic.json of this plan"))
    return {"cables": dict(row.fabric_cable_utilisation), "workload": row.workload}
