"""Workbooks are saved deterministically (zcube_deploy/xlsx.py): the same content, the same bytes,
whatever the clock, the umask or the temporary files of a write-only sheet."""

from __future__ import annotations

import os
import time
import zipfile

import openpyxl
import pytest
from openpyxl import Workbook

from zcube_deploy.xlsx import save_workbook


def _book(write_only: bool) -> Workbook:
    wb = Workbook(write_only=write_only)
    ws = wb.create_sheet("Cables") if write_only else wb.active
    for i in range(300):
        ws.append([f"C{i:05d}", "A01", i, 1.5 * i])
    return wb


@pytest.mark.parametrize("write_only", [False, True])
def test_same_workbook_same_bytes_at_another_time(tmp_path, monkeypatch, write_only):
    save_workbook(_book(write_only), tmp_path / "a.xlsx")
    later = time.time() + 86_400 * 400
    monkeypatch.setattr(time, "time", lambda: later)  # zipfile dates its entries by time.time()
    old = os.umask(0o077)
    try:
        save_workbook(_book(write_only), tmp_path / "b.xlsx")
    finally:
        os.umask(old)
    assert (tmp_path / "a.xlsx").read_bytes() == (tmp_path / "b.xlsx").read_bytes()
    with zipfile.ZipFile(tmp_path / "a.xlsx") as z:
        assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        assert z.testzip() is None
    wb = openpyxl.load_workbook(tmp_path / "a.xlsx")
    ws = wb["Cables"] if write_only else wb.active
    assert ws.max_row == 300 and ws["A300"].value == "C00299" and ws["D2"].value == 1.5
    assert not list(tmp_path.glob("*.tmp"))


def test_source_date_epoch_is_honoured(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # 2023-11-14 22:13:20 UTC
    save_workbook(_book(False), tmp_path / "a.xlsx")
    with zipfile.ZipFile(tmp_path / "a.xlsx") as z:
        assert {i.date_time for i in z.infolist()} == {(2023, 11, 14, 22, 13, 20)}
    assert str(openpyxl.load_workbook(tmp_path / "a.xlsx").properties.created) == "2023-11-14 22:13:20"


def test_cli_workbooks_are_byte_identical_across_runs(tmp_path, glm1k_build):
    """`zcube cabling` twice on one plan: every workbook the same bytes (the manifest hashes them)."""
    from conftest import run_zcube

    plan = glm1k_build / "plan.json"
    books = {}
    for k in ("a", "b"):
        r = run_zcube("cabling", str(plan), "-o", str(tmp_path / k))
        assert r.returncode == 0, r.stderr
        books[k] = {p.relative_to(tmp_path / k): p.read_bytes() for p in sorted((tmp_path / k).rglob("*.xlsx"))}
    assert books["a"] and books["a"] == books["b"]


@pytest.mark.parametrize("value, year", [("²", None), ("-5", None), ("1e9", None), ("99999999999999999999", 2107), ("0", 1980), ("", 1980)])
def test_a_bad_source_date_epoch_is_an_input_error_or_clamped(tmp_path, monkeypatch, value, year):
    from zcube_deploy.errors import InputErrors

    monkeypatch.setenv("SOURCE_DATE_EPOCH", value)
    if year is None:
        with pytest.raises(InputErrors, match="SOURCE_DATE_EPOCH"):
            save_workbook(_book(False), tmp_path / "a.xlsx")
        return
    save_workbook(_book(False), tmp_path / "a.xlsx")
    with zipfile.ZipFile(tmp_path / "a.xlsx") as z:
        assert {i.date_time[0] for i in z.infolist()} == {year}


def test_a_bad_source_date_epoch_on_the_cli_is_one_clear_message(tmp_path, lab64_plan):
    """Exit 2 with the problem and its hint, and nothing else on stderr (no half-written sheet's traceback)."""
    from conftest import run_zcube
    from zcube_deploy.plan.io import write_plan

    write_plan(lab64_plan, tmp_path)
    r = run_zcube("cabling", str(tmp_path / "plan.json"), "-o", str(tmp_path), env={**os.environ, "SOURCE_DATE_EPOCH": "abc"})
    assert r.returncode == 2
    out = r.stdout + r.stderr
    assert "SOURCE_DATE_EPOCH: 'abc' is not a number of seconds" in out
    assert "Traceback" not in out and "Exception ignored" not in out, out
