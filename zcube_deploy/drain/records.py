"""The drain records beside a plan (``drains/<kind>-<name>.json``, written by drain/run.py): read and checked,
and what they say is shut now.

Apart from run.py because push, verify and replace read them: reading a record needs no device library
(run.py imports push, and with it napalm: ~0.7 s CPU that an offline ``zcube verify`` paid for nothing).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import TypeAdapter
from typing_extensions import NotRequired, TypedDict

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.plan.state import state_problems

RECORDS = "drains"


class _Step(TypedDict):
    ok: bool
    shut: dict[str, list[str]]  # switch -> its ports shut after the step
    graceful: NotRequired[list[str]]


class _Blast(TypedDict):
    host_ports: NotRequired[list[str]]


class _Record(TypedDict):
    """The fields of a drain record (drains/<element>.json, ``drain``) that verify, push, replace and undrain read."""

    element: str
    ports: dict[str, list[str]]
    steps: list[_Step]
    blast: NotRequired[_Blast]


_RECORD = TypeAdapter(_Record)
_RECORD_HINT = "written by `zcube drain`; remove it only if you know why"


def _stray(p: Path) -> list[Problem]:
    """A JSON object without an ``element`` in drains/ (someone's notes, another tool's file): one problem saying it is
    no drain record and what it holds, rather than every field a record would have ([]: not such a file)."""
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []
    if not isinstance(doc, dict) or "element" in doc:
        return []
    keys = ", ".join(sorted(map(str, doc))[:6]) + (", ..." if len(doc) > 6 else "") or "nothing"
    return [Problem(str(p), f"it has no `element`, so it is no drain record (it holds: {keys})",
                    "drains/ holds the drain records only: move the file elsewhere")]


def read_records(plan_dir: str | Path, plan: dict | None = None) -> list[dict]:
    """Every drain record beside the plan (the fabric's drained elements), each checked: its shape (plan.state), its
    element against its file name, and against ``plan``'s switches and ports when given; every problem at once (exit 2)."""
    d = Path(plan_dir) / RECORDS
    out, problems = [], []
    ports_of = {s["name"]: {i["name"] for i in s.get("interfaces", ())} for s in plan["switches"]} if plan else None
    for p in sorted(d.glob("*.json")) if d.is_dir() else ():
        wrong, doc = state_problems(p, _RECORD, "a drain record", _RECORD_HINT)
        if wrong:
            problems += _stray(p) or wrong
            continue
        if doc["element"].replace(":", "-", 1) != p.stem:
            problems.append(Problem(f"{p}: element", f"not a drain record: its element {doc['element']!r} does not match its file name",
                                    _RECORD_HINT))
            continue
        bad = [f"{sw} {x}" for sw, ps in doc["ports"].items() for x in ps if x not in ports_of.get(sw, ())] if ports_of is not None else []
        if bad:
            problems.append(Problem(f"{p}: ports", f"not a drain record: names ports the plan does not have: {', '.join(bad[:3])}",
                                    _RECORD_HINT))
        else:
            out.append(doc)
    if problems:
        raise InputErrors(problems, "bad drain records")
    return out


def shut_now(doc: dict) -> dict[str, tuple[str, ...]]:
    """switch -> ports a record's drain has shut (its last step that was applied)."""
    done = [st for st in doc["steps"] if st["ok"]]
    return {sw: tuple(p) for sw, p in done[-1]["shut"].items()} if done else {}


def graceful_now(doc: dict) -> set[str]:
    """The switches on which a record's drain has graceful shutdown on."""
    done = [st for st in doc["steps"] if st["ok"]]
    return set(done[-1].get("graceful", ())) if done else set()


def drained_ports(plan_dir: str | Path, plan: dict | None = None, but: str | None = None) -> dict[str, set[str]]:
    """switch -> its ports shut by drains (for verify and push); ``but``: leave that element's record out."""
    out: dict[str, set[str]] = {}
    for doc in read_records(plan_dir, plan):
        if doc["element"] == but:
            continue
        for sw, ports in shut_now(doc).items():
            out.setdefault(sw, set()).update(ports)
    return out


def held_switches(plan_dir: str | Path, plan: dict | None = None) -> dict[str, set[str]]:
    """switch -> its ports shut by drains, for every switch a drain record names whatever its status (a drain that
    failed or was interrupted may have changed it: push refuses them all unless asked)."""
    out: dict[str, set[str]] = {}
    for doc in read_records(plan_dir, plan):
        for sw in doc["ports"]:
            out.setdefault(sw, set())
        for sw, ports in shut_now(doc).items():
            out[sw].update(ports)
    return out
