"""Config drift inside the managed scope: the running config against the rendered one (pure).

The platform reads the difference (``drift_rows`` of ``platforms/<name>``: for RGOS the
remediation, the very lines push would send, block by block) into rows of these kinds:

| kind | what the switch has |
|---|---|
| ``port_shut`` | a planned port shut down |
| ``stray_route`` | a static route inside the plan's pools that the plan does not have |
| ``missing_route`` | a planned static route gone |
| ``config_changed`` | a planned line with another value (same key: hostname, a port's description or address, a route's prefix with another next hop) |
| ``config_stray`` | a line inside the managed scope that the rendered config does not have |
| ``config_missing`` | a rendered line the switch does not have |

Lines outside the managed scope (users, SNMP, vty, management routes, ...) are never compared:
they are the site's. Each finding has a stable ID (the same drift gives the same ID on every run)
and its fix: the remediation lines of its block, which ``zcube push --only SWITCH`` sends.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

DRIFT_KINDS = ("port_shut", "stray_route", "missing_route", "config_changed", "config_stray", "config_missing")

_WHAT = {"port_shut": "{section} is shut down on the switch; the plan has it up",
         "stray_route": "the switch has {line!r}, inside the plan's pools but not in the plan",
         "missing_route": "the switch lacks the planned {line!r}",
         "config_changed": "{where}: the switch has {have!r}, the plan {want!r}",
         "config_stray": "{where}: the switch has {line!r}, the plan does not",
         "config_missing": "{where}: the switch lacks the planned {line!r}"}


def drift_id(kind: str, device: str, section: str, line: str) -> str:
    """A stable finding ID: the same drift on the same switch gets the same ID on every run."""
    return "A" + hashlib.sha1("|".join((kind, device, section, line)).encode()).hexdigest()[:10]


def drift_finding(device: str, kind: str, section: str, line: str, have: str | None, want: str | None, fix) -> dict:
    """One finding of ``kind`` (one of DRIFT_KINDS) on ``device``."""
    if kind not in DRIFT_KINDS:
        raise ValueError(f"unknown drift kind {kind!r}")
    where = section if section == line else f"{section} / {line}"
    what = _WHAT[kind].format(section=section, line=line, have=have, want=want, where=where)
    return {"id": drift_id(kind, device, section, line), "kind": kind, "device": device, "section": section,
            "line": line, "have": have, "want": want, "what": what, "fix": list(fix)}


def config_drift(device: str, running: str, intended: str, owns: Callable[[str], bool] | None,
                 rows: Callable[..., list]) -> list[dict]:
    """Every drift of ``running`` from ``intended`` inside the scope ``owns`` (a test on a top-level line);
    ``rows`` is the platform's ``drift_rows``."""
    return [drift_finding(device, *row) for row in rows(running, intended, owns)]
