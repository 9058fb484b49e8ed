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

_WHAT = {"port_shut": "{section} is shut down on {device}; the plan has it up (verify: its cable's down finding, cause shut)",  # each names its switch (a line alone on a terminal)
         "stray_route": "{device} has {line!r}, inside the plan's pools but not in the plan",
         "missing_route": "{device} lacks the planned {line!r}",
         "config_changed": "{where}: {device} has {have!r}, the plan {want!r}",
         "config_stray": "{where}: {device} has {line!r}, the plan does not",
         "config_missing": "{where}: {device} lacks the planned {line!r}"}


def drift_id(kind: str, device: str, section: str, line: str) -> str:
    """A stable finding ID: the same drift on the same switch gets the same ID on every run."""
    return "A" + hashlib.sha1("|".join((kind, device, section, line)).encode()).hexdigest()[:10]


def drift_finding(device: str, kind: str, section: str, line: str, have: str | None, want: str | None, fix,
                  redact: Callable[[str], str] = str) -> dict:
    """One finding of ``kind`` (one of DRIFT_KINDS) on ``device``; ``redact`` masks secrets in every text
    (the platform's secret patterns: a hand-added key must not reach a report); the ID is taken first."""
    if kind not in DRIFT_KINDS:
        raise ValueError(f"unknown drift kind {kind!r}")
    fid = drift_id(kind, device, section, line)
    section, line = redact(section), redact(line)
    have, want = (redact(have) if have is not None else None), (redact(want) if want is not None else None)
    where = section if section == line else f"{section} / {line}"
    what = _WHAT[kind].format(section=section, line=line, have=have, want=want, where=where, device=device)
    return {"id": fid, "kind": kind, "device": device, "section": section,
            "line": line, "have": have, "want": want, "what": what, "fix": [redact(x) for x in fix]}


def config_drift(device: str, running: str, intended: str, owns: Callable[[str], bool] | None,
                 rows: Callable[..., list], redact: Callable[[str], str] = str) -> list[dict]:
    """Every drift of ``running`` from ``intended`` inside the scope ``owns`` (a test on a top-level line);
    ``rows`` is the platform's ``drift_rows``, ``redact`` masks secrets."""
    return [drift_finding(device, *row, redact=redact) for row in rows(running, intended, owns)]
