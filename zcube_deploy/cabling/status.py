"""Read (partly) filled-in workbooks back: progress per rack from the Installed / Checked columns.

One workbook, or a folder of them (a big hall's summary + row workbooks); columns found by their titles."""

from __future__ import annotations

from pathlib import Path

from openpyxl import load_workbook

from zcube_deploy.cabling.workbook import RACK_PREFIX, ROW_PREFIX, STATUS_VALUES
from zcube_deploy.errors import InputErrors, Problem


def workbooks_in(path: str | Path) -> list[Path]:
    """The workbook itself, or every .xlsx under a folder (a big hall's summary + row workbooks, or a build's output)."""
    p = Path(path)
    if p.is_dir():
        books = sorted(x for x in p.rglob("*.xlsx") if not x.name.startswith("~$"))
        if not books:
            raise InputErrors(Problem(str(p), "no .xlsx workbooks in this folder", "give the cabling.xlsx or the cabling/ folder `zcube cabling` wrote"))
        return books
    if not p.exists():
        raise InputErrors(Problem(str(p), "no such workbook or folder"))
    return [p]


def read_status(path: str | Path) -> dict:
    """Progress per rack sheet and overall (each cable once, however many sheets and workbooks it is on), and
    ``unreadable``: every cut-sheet row or sheet that could not be read (a tick that is not yes, no or issue, a
    row without a cable ID, a cut sheet whose header lost its columns), with its workbook, sheet and row."""
    sheets: list[dict] = []
    cables: dict[str, dict] = {}
    issues: list[dict] = []
    unreadable: list[dict] = []
    for book in workbooks_in(path):
        _read_book(book, sheets, cables, issues, unreadable)
    if not sheets and not unreadable:
        raise InputErrors(Problem(str(path), "no cut sheets found", "is this a workbook written by `zcube cabling`?"))
    overall = {"cables": len(cables), "installed": sum(v["installed"] for v in cables.values()),
               "checked": sum(v["checked"] for v in cables.values()), "issues": sum(v["issue"] for v in cables.values()),
               "unreadable": len(unreadable)}
    return {"sheets": sheets, "overall": overall, "issues": issues, "unreadable": unreadable, "found": sorted(cables)}


def missing_cables(status: dict, plan: dict) -> list[dict]:
    """The plan's cables that no cut sheet of the workbook(s) lists (a row deleted whole, a sheet removed): each
    with the racks whose cut sheets should list it. ``status`` is :func:`read_status`'s result."""
    found = set(status["found"])
    return [{"cable": c["id"], "racks": sorted({c["a"]["rack"], c["b"]["rack"]})} for c in plan["cables"] if c["id"] not in found]


NEEDED = ("Cable ID", "Installed", "Checked")
TICKS = ("", *STATUS_VALUES)


def _tick(value) -> str | None:
    """A tick cell as yes / no / issue / '' (blank), or None when it is something else (a date, a number, a typo)."""
    text = "" if value is None else value.strip().lower() if isinstance(value, str) else None
    return text if text in TICKS else None


def _read_book(p: Path, sheets: list[dict], cables: dict[str, dict], issues: list[dict], unreadable: list[dict]) -> None:
    try:
        wb = load_workbook(p, read_only=True, data_only=True)
    except FileNotFoundError:
        raise InputErrors(Problem(str(p), "no such workbook")) from None
    except Exception as exc:  # openpyxl raises several types for a file that is not a workbook
        raise InputErrors(Problem(str(p), f"not a readable .xlsx workbook ({type(exc).__name__})")) from None
    try:
        for ws in wb.worksheets:
            _read_sheet(p, ws, sheets, cables, issues, unreadable)
    finally:
        wb.close()


def _read_sheet(p: Path, ws, sheets: list[dict], cables: dict[str, dict], issues: list[dict], unreadable: list[dict]) -> None:
    """One sheet: a cut sheet is any sheet whose header has the Cable ID / Installed / Checked titles (a renamed
    sheet too); a sheet named as a cut sheet without them is unreadable, not skipped."""
    fabric = ws.title.startswith("Fabric")
    named = ws.title.startswith((RACK_PREFIX, ROW_PREFIX)) or fabric
    ws.reset_dimensions()  # streamed workbooks may carry no reliable dimension record
    it = ws.iter_rows(values_only=True)
    header = [str(h).strip() if h is not None else None for h in (next(it, None) or ())]
    if not set(NEEDED) <= set(header):
        if named:
            unreadable.append({"workbook": str(p), "sheet": ws.title, "row": 1, "cable": None,
                               "why": f"the header row lacks {', '.join(t for t in NEEDED if t not in header)}"})
        return
    ci, ii, ki = (header.index(t) for t in NEEDED)
    width = max(ci, ii, ki) + 1
    total = installed = checked = issue = 0
    for n, row in enumerate(it, start=2):
        if not row or all(v is None or v == "" for v in row):
            continue
        row = tuple(row) + (None,) * (width - len(row))  # trailing empty cells are not stored
        cid = row[ci]
        if cid is None or str(cid).strip() == "":
            unreadable.append({"workbook": str(p), "sheet": ws.title, "row": n, "cable": None, "why": "no cable ID in a row with values"})
            continue
        cid = str(cid).strip()
        inst, chk = _tick(row[ii]), _tick(row[ki])
        for title, value, t in (("Installed", row[ii], inst), ("Checked", row[ki], chk)):
            if t is None:
                unreadable.append({"workbook": str(p), "sheet": ws.title, "row": n, "cable": cid,
                                   "why": f"{title} is {str(value)[:40]!r}, not yes, no, issue or blank"})
        total += 1
        installed += inst == "yes"
        checked += chk == "yes"
        if "issue" in (inst, chk):
            issue += 1
            issues.append({"sheet": ws.title, "cable": cid})
        st = cables.setdefault(cid, {"installed": False, "checked": False, "issue": False})
        st["installed"] |= inst == "yes"
        st["checked"] |= chk == "yes"
        st["issue"] |= "issue" in (inst, chk)
    if not fabric:
        sheets.append({"sheet": ws.title, "cables": total, "installed": installed, "checked": checked, "issues": issue})
