"""Read (partly) filled-in workbooks back: progress per rack from the Installed / Checked columns.

One workbook, or a folder of them (a big hall's summary + row workbooks); columns found by their titles."""

from __future__ import annotations

from pathlib import Path

from openpyxl import load_workbook

from zcube_deploy.cabling.workbook import RACK_PREFIX, ROW_PREFIX
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
    """Progress per rack sheet and overall (each cable once, however many sheets and workbooks it is on)."""
    sheets: list[dict] = []
    cables: dict[str, dict] = {}
    issues: list[dict] = []
    for book in workbooks_in(path):
        _read_book(book, sheets, cables, issues)
    if not sheets:
        raise InputErrors(Problem(str(path), "no cut sheets found", "is this a workbook written by `zcube cabling`?"))
    overall = {"cables": len(cables), "installed": sum(v["installed"] for v in cables.values()),
               "checked": sum(v["checked"] for v in cables.values()), "issues": sum(v["issue"] for v in cables.values())}
    return {"sheets": sheets, "overall": overall, "issues": issues}


def _read_book(p: Path, sheets: list[dict], cables: dict[str, dict], issues: list[dict]) -> None:
    try:
        wb = load_workbook(p, read_only=True, data_only=True)
    except FileNotFoundError:
        raise InputErrors(Problem(str(p), "no such workbook")) from None
    except Exception as exc:  # openpyxl raises several types for a file that is not a workbook
        raise InputErrors(Problem(str(p), f"not a readable .xlsx workbook ({type(exc).__name__})")) from None
    try:
        for ws in wb.worksheets:
            fabric = ws.title.startswith("Fabric")
            if not (ws.title.startswith((RACK_PREFIX, ROW_PREFIX)) or fabric):
                continue
            ws.reset_dimensions()  # streamed workbooks may carry no reliable dimension record
            it = ws.iter_rows(values_only=True)
            header = next(it, None)
            if not header or not {"Cable ID", "Installed", "Checked"} <= set(header):
                continue
            ci = header.index("Cable ID")
            ii, ki = header.index("Installed"), header.index("Checked")
            total = installed = checked = issue = 0
            width = max(ci, ii, ki) + 1
            for row in it:
                if not row or len(row) <= ci or row[ci] is None:
                    continue
                if len(row) < width:  # trailing empty cells are not stored
                    row = tuple(row) + (None,) * (width - len(row))
                cid = str(row[ci])
                inst = str(row[ii] or "").strip().lower()
                chk = str(row[ki] or "").strip().lower()
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
    finally:
        wb.close()
