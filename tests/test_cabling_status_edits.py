"""Issue 23 item 6: `cabling status` on cut-sheet workbooks edited by hand (with openpyxl, as a spreadsheet
program would save them): every cable is counted or reported unreadable with its sheet and row, never
silently left out, and never a traceback."""

from __future__ import annotations

import json

import datetime
import shutil

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openpyxl import load_workbook

from conftest import run_zcube
from zcube_deploy.cabling.status import read_status
from zcube_deploy.cli import cli


@pytest.fixture(scope="module")
def book(tmp_path_factory, lab64_build):
    d = tmp_path_factory.mktemp("status")
    shutil.copy(lab64_build / "cabling.xlsx", d / "cabling.xlsx")
    shutil.copy(lab64_build / "plan.json", d / "plan.json")
    return d / "cabling.xlsx", read_status(d / "cabling.xlsx")


def edit(src, tmp_path, fn):
    wb = load_workbook(src)
    fn(wb)
    wb.save(tmp_path / "edited.xlsx")
    return tmp_path / "edited.xlsx"


def first_rack(wb):
    return wb[next(n for n in wb.sheetnames if n.startswith("Rack "))]


def test_odd_tick_values_are_reported_with_sheet_and_row(book, tmp_path):
    src, clean = book

    def fn(wb):
        ws = first_rack(wb)
        ws["L2"], ws["M2"], ws["L3"], ws["L4"] = "Y", datetime.datetime(2026, 1, 1), 1, " Yes "

    p = edit(src, tmp_path, fn)
    st_ = read_status(p)
    sheet = first_rack(load_workbook(p)).title
    assert [(u["sheet"], u["row"], u["why"].split(" is ")[0]) for u in st_["unreadable"]] == \
        [(sheet, 2, "Installed"), (sheet, 2, "Checked"), (sheet, 3, "Installed")]
    assert st_["overall"]["cables"] == clean["overall"]["cables"] and st_["overall"]["installed"] == 1  # " Yes " counts
    r = run_zcube("cabling", "status", str(p))
    assert r.returncode == 1 and f"unreadable {sheet} row 2" in r.stdout and "Traceback" not in r.stderr


def test_a_renamed_sheet_is_still_counted_and_a_broken_header_is_reported(book, tmp_path):
    src, clean = book

    def fn(wb):
        first_rack(wb).title = "first rack (done)"

    st_ = read_status(edit(src, tmp_path, fn))
    assert st_["overall"]["cables"] == clean["overall"]["cables"] and not st_["unreadable"]
    assert "first rack (done)" in [s["sheet"] for s in st_["sheets"]]

    def fn2(wb):
        first_rack(wb)["L1"] = "Inst."

    st_ = read_status(edit(src, tmp_path, fn2))
    assert [(u["row"], u["why"]) for u in st_["unreadable"]] == [(1, "the header row lacks Installed")]


def test_a_row_without_its_cable_id_is_reported(book, tmp_path):
    src, _ = book

    def fn(wb):
        first_rack(wb)["A5"] = None

    st_ = read_status(edit(src, tmp_path, fn))
    assert [(u["row"], u["why"]) for u in st_["unreadable"]] == [(5, "no cable ID in a row with values")]


EDITS = st.sampled_from(["tick", "formula", "date", "huge", "merge", "number", "rename", "blank id", "header"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(EDITS, st.integers(2, 40), st.integers(1, 13)), min_size=1, max_size=4), text=st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=30))
def test_hand_edited_workbooks_are_counted_or_reported(book, tmp_path_factory, edits, text):
    """Every cable of the clean workbook is counted, or its row (or sheet) is reported unreadable, or (a sheet no
    longer recognisable as a cut sheet: renamed and its header broken) reported missing against the plan (--plan).

    The CLI runs in-process (click's runner: the same command, exit code and output, without a new interpreter per
    example); `cabling status --plan --json` as a real subprocess is test_cabling_status_plan.py's, and the
    plain table's is test_odd_tick_values_are_reported_with_sheet_and_row's."""
    src, clean = book

    def fn(wb):
        ws = first_rack(wb)
        for kind, row, col in edits:
            c = ws.cell(row=row, column=col)
            if kind == "tick":
                ws.cell(row=row, column=12).value = text
            elif kind == "formula":
                c.value = "=1+1"
            elif kind == "date":
                c.value = datetime.date(2026, 1, 2)
            elif kind == "huge":
                c.value = "x" * 5000 + str(row)
            elif kind == "merge" and col < 13:
                ws.merge_cells(start_row=row, start_column=col, end_row=row, end_column=col + 1)
            elif kind == "number":
                c.value = -1.5
            elif kind == "rename":
                ws.title = "renamed " + str(row)
            elif kind == "blank id":
                ws.cell(row=row, column=1).value = None
            elif kind == "header":
                ws.cell(row=1, column=col).value = text or None

    p = edit(src, tmp_path_factory.mktemp("ed"), fn)
    r = CliRunner().invoke(cli, ["cabling", "status", str(p), "--json", "--plan", str(src.parent / "plan.json")],
                           env={"COLUMNS": "200", "NO_COLOR": "1", "ZCUBE_DEBUG": ""})
    assert r.exit_code in (0, 1) and isinstance(r.exception, (SystemExit, type(None))), r.stdout + r.stderr + repr(r.exception)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    st_ = json.loads(r.stdout)
    lost = clean["overall"]["cables"] - st_["overall"]["cables"]
    said = [u for u in st_["unreadable"] if u["cable"] is None]
    # a cable not counted any more is an unreadable row (no ID), its whole sheet is (broken header), or it is missing
    assert lost <= len(said) + sum(1000 for u in said if u["row"] == 1) + len(st_["missing"]), (lost, st_["unreadable"][:5])
    assert (r.exit_code == 1) == bool(st_["unreadable"] or st_["missing"])
