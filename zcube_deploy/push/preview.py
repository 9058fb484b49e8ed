"""A bounded preview of a dry run's diffs (the diff files hold every line that would be sent)."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict


class SwitchPreview(TypedDict):
    name: str
    lines_changed: int
    diff: str
    head: list[str]
    more: int


def diff_preview(report: dict, per_switch: int = 12, switches: int = 3) -> tuple[list[SwitchPreview], int]:
    """The first ``per_switch`` lines of the first ``switches`` changing switches' diffs, and how many more switches change."""
    changing = [d for d in report["devices"] if d["status"] in ("would_change", "refused") and d.get("diff")]
    shown: list[SwitchPreview] = []
    for d in changing[:switches]:
        lines = Path(d["diff"]).read_text().splitlines()
        shown.append({"name": d["name"], "lines_changed": d["lines_changed"], "diff": d["diff"], "head": lines[:per_switch],
                      "more": max(0, len(lines) - per_switch)})
    return shown, max(0, len(changing) - switches)


def device_rows(report: dict) -> list[tuple[str, str, int, float, str]]:
    """(switch, status, lines changed, seconds, detail) per device: the error (and what to do about it), or a dry run's diff file."""
    rows = []
    for d in report["devices"]:
        st = d["status"]
        detail = d.get("error") or d.get("note") or (d.get("diff", "") if st == "would_change" else "")
        if d.get("action"):
            detail = f"{detail}\nwhat to do: {d['action']}"
        rows.append((d["name"], st, d["lines_changed"], d["duration_s"], detail or ""))
    return rows


def summary_text(summary: dict[str, int]) -> str:
    """A push report's summary for a person: ``16 changed, 48 unchanged`` (the report's order), ``nothing`` when empty.

    >>> summary_text({"changed": 16, "unchanged": 48})
    '16 changed, 48 unchanged'
    """
    return ", ".join(f"{n} {status.replace('_', ' ')}" for status, n in summary.items()) or "nothing"
