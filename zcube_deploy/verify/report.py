"""verify.json and verify.xlsx (the fix list technicians work from, sorted by rack and U)."""

from __future__ import annotations

import json
from pathlib import Path

from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.datavalidation import DataValidation

from zcube_deploy.verify.classify import notes
from zcube_deploy.vocabulary import FindingKind
from zcube_deploy.xlsx import new_workbook, save_workbook

COLUMNS = [("Rack", 8), ("U", 5), ("Device", 12), ("Port", 32), ("Kind", 11), ("Cable(s)", 16), ("What is wrong", 60),
           ("What to do", 70), ("Finding ID", 13), ("Done", 7)]


def write_reports(findings: list[dict], summary: dict, errors: dict[str, str], out_dir: str | Path, meta: dict) -> tuple[Path, Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    jpath = out / "verify.json"
    jpath.write_text(json.dumps({**meta, "summary": summary, "unreachable": errors, "findings": findings}, indent=1, sort_keys=True) + "\n")
    wb = new_workbook()
    ws = wb.create_sheet("Fixes")
    for i, (_, w) in enumerate(COLUMNS, start=1):
        ws.column_dimensions[get_column_letter(i)].width = w
    n = len(findings)
    ws.freeze_panes = "A2"
    ws.auto_filter.ref = f"A1:{get_column_letter(len(COLUMNS))}{max(n + 1, 2)}"
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.print_title_rows = "1:1"
    ws.oddHeader.center.text = f"{meta.get('cluster', '')}: cabling fixes"
    ws.oddFooter.right.text = "page &P of &N"
    dv = DataValidation(type="list", formula1='"yes,no"', allow_blank=True)
    letter = get_column_letter(len(COLUMNS))
    dv.add(f"{letter}2:{letter}{max(n + 1, 2)}")
    ws.data_validations.append(dv)
    header = []
    for title, _ in COLUMNS:
        c = WriteOnlyCell(ws, value=title)
        c.font = Font(bold=True)
        c.fill = PatternFill("solid", fgColor="D9D9D9")
        header.append(c)
    ws.append(header)
    wrap = Alignment(wrap_text=True, vertical="top")
    for f in findings:
        e = f["ends"][0]
        row = [e["rack"], e["u"], e["device"], e["port"], f["kind"], ", ".join(f["cables"]), f["what"], f["instruction"], f["id"], None]
        cells = []
        for v in row:
            c = WriteOnlyCell(ws, value=v)
            c.alignment = wrap
            cells.append(c)
        ws.append(cells)
    if summary.get(FindingKind.NOT_CHECKED):  # checks that could not run on some switches: said, not silently skipped
        ws3 = wb.create_sheet("Notes")
        ws3.column_dimensions["A"].width = 120
        ws3.append(["Not checked"])
        for line in notes(summary, shown=None):  # every switch, as verify.json
            ws3.append([line])
    if errors:
        ws2 = wb.create_sheet("Unreachable")
        ws2.append(["Switch", "Error"])
        for name, err in sorted(errors.items()):
            ws2.append([name, err])
    xpath = out / "verify.xlsx"
    save_workbook(wb, xpath)
    return jpath, xpath
