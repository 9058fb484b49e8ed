"""The drain records beside a plan (``drains/<kind>-<name>.json``, written by drain/run.py): read and checked,
and what they say is shut now.

Apart from run.py because push, verify and replace read them: reading a record needs no device library
(run.py imports push, and with it napalm: ~0.7 s CPU that an offline ``zcube verify`` paid for nothing).
"""

from __future__ import annotations

import json
from pathlib import Path

from zcube_deploy.errors import InputErrors, Problem

RECORDS = "drains"


def _check_record(p: Path, doc) -> str | None:
    """What is wrong with a record's shape (None: nothing)."""
    if not isinstance(doc, dict):
        return "not a JSON object"
    el = doc.get("element")
    if not isinstance(el, str) or el.replace(":", "-", 1) != p.stem:
        return f"its element {el!r} does not match its file name"
    ports = doc.get("ports")
    if not isinstance(ports, dict) or not all(isinstance(k, str) and isinstance(v, list) and all(isinstance(x, str) for x in v)
                                             for k, v in ports.items()):
        return "`ports` is not a map of switch -> list of port names"
    steps = doc.get("steps")
    if not isinstance(steps, list) or not all(isinstance(st, dict) and isinstance(st.get("ok"), bool)
                                              and isinstance(st.get("shut"), dict) for st in steps):
        return "`steps` is not a list of steps with `ok` and `shut`"
    return None


def read_records(plan_dir: str | Path, plan: dict | None = None) -> list[dict]:
    """Every drain record beside the plan (the fabric's drained elements), each checked (against ``plan``'s
    switches and ports when given); every problem at once (exit 2)."""
    d = Path(plan_dir) / RECORDS
    out, problems = [], []
    ports_of = {s["name"]: {i["name"] for i in s.get("interfaces", ())} for s in plan["switches"]} if plan else None
    for p in sorted(d.glob("*.json")) if d.is_dir() else ():
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError, RecursionError) as exc:
            problems.append(Problem(str(p), f"not a drain record: {exc}", "written by `zcube drain`; remove it only if you know why"))
            continue
        wrong = _check_record(p, doc)
        if wrong is None and ports_of is not None:
            bad = [f"{sw} {x}" for sw, ps in doc["ports"].items() for x in ps if x not in ports_of.get(sw, ())]
            wrong = f"names ports the plan does not have: {', '.join(bad[:3])}" if bad else None
        if wrong:
            problems.append(Problem(str(p), f"not a drain record: {wrong}", "written by `zcube drain`; remove it only if you know why"))
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
