"""Saving an openpyxl workbook deterministically: the same workbook, the same bytes.

openpyxl stamps a workbook with the time of saving twice: in its document properties
(``docProps/core.xml``: created, modified) and in every ZIP entry's date, and copies the file
mode of the temporary files a write-only sheet is streamed through. Technicians print these
files and the manifest hashes them, so a re-run that changes nothing must not change a byte.
:func:`save_workbook` writes both dates as ``SOURCE_DATE_EPOCH`` (the reproducible-builds
convention) when it is set, else as 1980-01-01 00:00 UTC (the earliest date a ZIP entry can
carry), and gives every entry the same mode. A ``SOURCE_DATE_EPOCH`` that is not a number is an
input error; one beyond what a ZIP entry can carry is clamped to 2107-12-31.
"""

from __future__ import annotations

import datetime
import re
import os
import shutil
from pathlib import Path
from zipfile import ZIP_DEFLATED, ZipFile, ZipInfo

from openpyxl import Workbook
from openpyxl.writer.excel import ExcelWriter

from zcube_deploy.errors import InputErrors, Problem

_EARLIEST = datetime.datetime(1980, 1, 1)  # the first date a ZIP entry can carry
_LATEST = datetime.datetime(2107, 12, 31, 23, 59, 58)  # the last date a ZIP entry can carry


def _fixed_time() -> datetime.datetime:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None or epoch == "":
        return _EARLIEST
    if not (epoch.isascii() and epoch.isdigit()):
        raise InputErrors(Problem("SOURCE_DATE_EPOCH", f"{epoch!r} is not a number of seconds since 1970-01-01 UTC",
                                  "unset it, or set it to e.g. $(git log -1 --format=%ct)"))
    seconds = min(int(epoch), int((_LATEST - datetime.datetime(1970, 1, 1)).total_seconds()))
    when = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)
    return min(max(when, _EARLIEST), _LATEST)


class _FixedDateZip(ZipFile):
    """A ZIP archive whose entries all carry one date and mode, whatever the clock or the source file."""

    def __init__(self, *args, when: datetime.datetime, **kwargs):
        super().__init__(*args, **kwargs)
        self._when = when.timetuple()[:6]

    def _info(self, arcname: str) -> ZipInfo:
        info = ZipInfo(arcname, date_time=self._when)
        info.compress_type = ZIP_DEFLATED
        info.external_attr = 0o600 << 16
        return info

    def writestr(self, zinfo_or_arcname, data, *args, **kwargs):
        name = zinfo_or_arcname.filename if isinstance(zinfo_or_arcname, ZipInfo) else zinfo_or_arcname
        return super().writestr(self._info(name), data, *args, **kwargs)

    def write(self, filename, arcname=None, *args, **kwargs):
        info = self._info(arcname if arcname is not None else os.path.basename(filename))
        info.file_size = os.path.getsize(filename)  # so that a part over 2 GiB is written as ZIP64
        with open(filename, "rb") as src, self.open(info, "w") as dest:
            shutil.copyfileobj(src, dest, 1 << 20)


class _NeutralWorkbook(Workbook):
    """A write-only workbook whose sheets' ``append`` puts every cell through :func:`neutral`: no text the tool
    writes becomes a formula (openpyxl stores a text beginning with "=" as one)."""

    def create_sheet(self, title=None, index=None):
        ws = super().create_sheet(title, index)
        append = ws.append

        def neutral_append(row):
            cells = []
            for v in row:
                if hasattr(v, "value") and not isinstance(v, str):  # a WriteOnlyCell with its style
                    v.value = neutral(v.value)
                    cells.append(v)
                else:
                    cells.append(neutral(v))
            return append(cells)

        ws.append = neutral_append
        return ws


def new_workbook() -> Workbook:
    """A write-only workbook for :func:`save_workbook` (its sheets neutralise formula-like text: :func:`neutral`);
    a bad ``SOURCE_DATE_EPOCH`` is said here, before any sheet is streamed (a write-only workbook given up
    half-written leaves openpyxl's generators complaining)."""
    _fixed_time()
    return _NeutralWorkbook(write_only=True)


def save_workbook(wb: Workbook, path: str | Path) -> Path:
    """Save ``wb`` to ``path`` (through a temporary file beside it, then renamed) with fixed dates."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    when = _fixed_time()
    if wb.write_only and not wb.worksheets:  # as Workbook.save does: a workbook has at least one sheet
        wb.create_sheet()
    wb.properties.created = wb.properties.modified = when
    wb.properties.creator = "zcube-deploy"
    archive = _FixedDateZip(tmp, "w", ZIP_DEFLATED, allowZip64=True, when=when)
    try:
        ExcelWriter(wb, archive).save()  # writes every part and closes the archive
    except BaseException:
        archive.close()
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(path)
    return path


# What a spreadsheet reads as the start of a formula when it opens a CSV file or a cell is re-entered
# (OWASP "CSV injection": =, +, -, @, and tab / carriage return before them)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def neutral(value):
    """``value`` as a cell the tool writes (every CSV and workbook goes through this): a text that a
    spreadsheet would take for a formula (it begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
    return) gets a leading apostrophe, so it stays text; numbers, and texts that are plain numbers
    ("-1.5"), are unchanged.

    >>> neutral("=1+2"), neutral("@SUM(A1)"), neutral("-1.5"), neutral(-2), neutral("H000001")
    ("'=1+2", "'@SUM(A1)", '-1.5', -2, 'H000001')
    """
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def neutral_row(row) -> list:
    """Every cell of ``row`` through :func:`neutral`."""
    return [neutral(v) for v in row]
