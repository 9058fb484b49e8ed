"""`zcube cabling status --plan`: a planned cable whose rows were deleted whole from every cut sheet is reported
missing with its racks (issue 23 item 6: every planned cable is counted or reported)."""

from __future__ import annotations

import json

from openpyxl import load_workbook

from conftest import run_zcube


def _delete_rows(src, dst, cable: str) -> int:
    wb = load_workbook(src)
    deleted = 0
    for ws in wb.worksheets:
        for row in range(ws.max_row, 0, -1):
            if any(c.value == cable for c in ws[row]):
                ws.delete_rows(row)
                deleted += 1
    wb.save(dst)
    return deleted


def test_rows_deleted_whole_are_missing_cables(lab64_build, tmp_path):
    book = tmp_path / "edited.xlsx"
    assert _delete_rows(lab64_build / "cabling.xlsx", book, "H000001") >= 2  # both racks' sheets (and the lists)
    r = run_zcube("cabling", "status", str(book), "--plan", str(lab64_build / "plan.json"), "--json")
    assert r.returncode == 1, r.stderr
    st = json.loads(r.stdout)
    assert st["missing"] == [{"cable": "H000001", "racks": ["A01", "A03"]}]
    # the known-bad case: without the plan the deletion cannot be seen (and the run says nothing is missing)
    r = run_zcube("cabling", "status", str(book), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["missing"] is None
    # the untouched workbook with the plan: nothing missing, exit 0
    r = run_zcube("cabling", "status", str(lab64_build / "cabling.xlsx"), "--plan", str(lab64_build / "plan.json"), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["missing"] == []
