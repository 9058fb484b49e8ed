"""Issue 23 item 6: no text the tool writes into a CSV or a workbook becomes a spreadsheet formula.

A cable ID `=1+2` (a hand-edited plan.json) used to land in cables.csv, labels.csv and
netbox-cables.csv as a formula. Every CSV and workbook writer goes through xlsx.neutral: a text cell
beginning with =, +, -, @ (or a tab or carriage return) gets a leading apostrophe; numbers and texts
that are plain numbers are unchanged.
"""

from __future__ import annotations

import csv
import json

import pytest
from openpyxl import load_workbook

from conftest import run_zcube
from zcube_deploy.xlsx import FORMULA_START, neutral

EVIL = ["=1+2", "+cmd|'!A0", "-2+3", "@SUM(A1)", "=HYPERLINK(1)"]  # short: the labels hold 32 characters


@pytest.mark.parametrize("text", EVIL + ["\t=1", "\r=1"])
def test_formula_like_text_is_neutralised(text):
    assert neutral(text) == "'" + text


@pytest.mark.parametrize("value", ["-1.5", "+3", "-7", "1e5", -2, 3.5, None, "H000001", "> A03 ZC-O001", ""])
def test_numbers_and_plain_text_are_unchanged(value):
    assert neutral(value) == value


def risky(cell) -> bool:
    """A cell a spreadsheet would evaluate: text starting with a formula character (plain numbers aside)."""
    return isinstance(cell, str) and cell.startswith(FORMULA_START) and neutral(cell) != cell


@pytest.fixture(scope="module")
def evil_outputs(tmp_path_factory, lab64_build):
    """lab-64's plan with five cable IDs edited into formulas, through `zcube cabling`."""
    d = tmp_path_factory.mktemp("evil")
    plan = json.loads((lab64_build / "plan.json").read_text())
    renamed = {}
    for c, new in zip(plan["cables"], EVIL):
        renamed[c["id"]] = new
        c["id"] = new
    for s in plan["switches"]:
        for i in s["interfaces"]:
            i["cable"] = renamed.get(i["cable"], i["cable"])
    (d / "plan.json").write_text(json.dumps(plan))
    r = run_zcube("cabling", str(d / "plan.json"), "-o", str(d / "out"))
    assert r.returncode == 0, r.stdout + r.stderr
    return d / "out"


@pytest.mark.parametrize("name", ["cables.csv", "labels.csv", "netbox-cables.csv"])
def test_no_csv_cell_is_a_formula(evil_outputs, name):
    with open(evil_outputs / name, newline="", encoding="utf-8") as fh:
        cells = [c for row in csv.reader(fh) for c in row]
    assert not [c for c in cells if risky(c)]
    for text in EVIL:  # each cable ID is there, as text
        assert "'" + text in cells


def test_no_workbook_cell_is_a_formula(evil_outputs):
    wb = load_workbook(evil_outputs / "cabling.xlsx")
    found = set()
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                assert c.data_type != "f" and not risky(c.value), (ws.title, c.coordinate, c.value)
                found.add(c.value)
    assert {"'" + t for t in EVIL} <= found


def test_no_verify_report_cell_is_a_formula(tmp_path):
    from zcube_deploy.verify.report import write_reports

    end = {"rack": "=A1", "u": 3, "device": "@dev", "port": "-p"}
    f = {"id": "V1", "kind": "hostname", "cables": [], "ends": [end], "what": "=HYPERLINK(\"x\")", "instruction": "+1+1", "fix": []}
    write_reports([f], {"findings": 1}, {"SW": "=cmd()"}, tmp_path, {"cluster": "c"})
    wb = load_workbook(tmp_path / "verify.xlsx")
    cells = [c for ws in wb.worksheets for row in ws.iter_rows() for c in row if c.value is not None]
    assert not [(c.coordinate, c.value) for c in cells if c.data_type == "f" or risky(c.value)]
    assert {"'=HYPERLINK(\"x\")", "'+1+1", "'=cmd()", "'=A1"} <= {c.value for c in cells}
