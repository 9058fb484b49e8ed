"""A bounded preview of a dry run's diffs (the diff files hold every line that would be sent)."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from zcube_deploy.platforms import platform_module


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


class SectionChange(TypedDict):
    section: str  # a kind of section: its top-level line's words before the first one holding a digit
    sections: int  # how many sections (or top-level lines) of that kind the diff sends
    add: int  # lines it adds (a line the intended config holds, a negation too)
    remove: int  # lines it removes (a negation the intended config does not hold)


def section_kind(head: str) -> str:
    """A top-level line's kind: its words before the first one holding a digit (a port, an address, a number, a name).

    >>> [section_kind(h) for h in ["interface Port 0/1:1", "static path 10.0.0.0/8 drop", "hostname ZC-O001", "42"]]
    ['interface Port', 'static path', 'hostname', '42']
    """
    words = head.split()
    first = next((k for k, w in enumerate(words) if any(c.isdigit() for c in w)), len(words))
    return " ".join(words[:first]) or head


def section_changes(sent: list[str], intended: str, pm) -> list[SectionChange]:
    """What a diff (``sent``: the lines push would send, in order) adds and removes, per kind of section in the order
    the diff first sends it: a line of a section counts, and a top-level line without sub-lines; a line removes when
    it is a negation (the platform's ``NEGATION``) that the intended config does not hold (``pm``: the platform module)."""
    want = {s.text: set(s.lines()[1:]) for s in pm.numbered_sections(intended)}
    rows: dict[str, SectionChange] = {}
    for sec in pm.numbered_sections("\n".join(sent)):
        if sec.text == pm.SECTION_END:
            continue
        kind = section_kind(sec.text.removeprefix(pm.NEGATION))
        row = rows.setdefault(kind, {"section": kind, "sections": 0, "add": 0, "remove": 0})
        row["sections"] += 1
        held = want.get(sec.text, set())
        lines = [ln for ln in sec.lines()[1:] if ln != pm.SECTION_END] or [sec.text]
        for line in lines:
            gone = line.startswith(pm.NEGATION) and line not in held and not (line == sec.text and line in want)
            row["remove" if gone else "add"] += 1
    return list(rows.values())


def fleet_section_changes(per_switch: dict[str, list[SectionChange]]) -> list[dict]:
    """The switches' :func:`section_changes` summed per kind of section, with how many switches each kind touches, in
    the order the kinds first appear (switches by name): a dry run of a fleet at a glance.

    >>> a = [{"section": "static path", "sections": 2, "add": 2, "remove": 0}]
    >>> b = [{"section": "interface Port", "sections": 1, "add": 3, "remove": 1}, {"section": "static path", "sections": 1, "add": 0, "remove": 1}]
    >>> fleet_section_changes({"sw2": b, "sw1": a})
    [{'section': 'static path', 'switches': 2, 'sections': 3, 'add': 2, 'remove': 1}, {'section': 'interface Port', 'switches': 1, 'sections': 1, 'add': 3, 'remove': 1}]
    """
    rows: dict[str, dict] = {}
    for name in sorted(per_switch):
        for r in per_switch[name]:
            row = rows.setdefault(r["section"], {"section": r["section"], "switches": 0, "sections": 0, "add": 0, "remove": 0})
            row["switches"] += 1
            for k in ("sections", "add", "remove"):
                row[k] += r[k]
    return list(rows.values())


class FleetSections(TypedDict):
    rows: list[dict]  # fleet_section_changes
    switches: int  # the switches summed up
    unread: list[str]  # changing switches whose diff or rendered config could not be read again (not summed up)


def dry_run_sections(report: dict, configs_dir: str | Path, platform: str) -> FleetSections:
    """:func:`fleet_section_changes` of a dry run's report: each changing switch's diff file (every line that would be
    sent) against its rendered config in ``configs_dir``/configs (the file push read and checked). A file gone or
    unreadable since leaves that switch out, named in ``unread``, never a failed dry run."""
    pm = platform_module(platform)
    per_switch, unread = {}, []
    for d in report["devices"]:
        if d["status"] == "would_change" and d.get("diff"):
            try:
                intended = (Path(configs_dir) / "configs" / f"{d['name']}{pm.CONFIG_SUFFIX}").read_text(encoding="utf-8")
                sent = Path(d["diff"]).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                unread.append(d["name"])
                continue
            per_switch[d["name"]] = section_changes(sent, intended, pm)
    return {"rows": fleet_section_changes(per_switch), "switches": len(per_switch), "unread": unread}


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
