"""The technicians' workbook (openpyxl, write-only mode with lxml): Summary, BOM, Fabric, one cut sheet per rack.

Cut sheets are made to be printed and read in an aisle: one column per fact a technician acts on
(cable ID, from/to rack, U, device, port in the platform's short form, medium, length, Installed,
Checked), widths from the cabling catalog checked to fit the catalog's paper (A4 or US Letter,
landscape) one page wide at 100 % (11 pt), header row repeated on every printed page, rack and
page number in the page header and footer, group and plane as the row colour (conditional
formatting on two hidden key columns, so no per-cell styles) with the legend in the footer, and a
yes/no/issue drop-down in Installed / Checked. Big halls get one workbook per layout row.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import re
from operator import attrgetter
from pathlib import Path

from lxml import etree
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.page import PageMargins
from openpyxl.worksheet.pagebreak import Break

from zcube_deploy.plan.roles import design_of
from zcube_deploy.plan.summary import shape_text
from zcube_deploy.cabling.sheets import CableRows, bill_of_materials
from zcube_deploy.catalog.cabling import CablingCatalog
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.xlsx import neutral, new_workbook, save_workbook

STATUS_VALUES = ("yes", "no", "issue")
BOLD = Font(name="Calibri", bold=True)
HEADER_FILL = PatternFill("solid", fgColor="D9D9D9")
RACK_PREFIX = "Rack "
ROW_PREFIX = "Row "


PAPER = {"A4": (9, 11.69, 8.27), "letter": (1, 11.0, 8.5)}  # openpyxl paperSize code, long and short side in inches
MARGIN_IN = 0.4  # left and right
TOP_IN = BOTTOM_IN = 0.7  # page header and footer sit inside these (the bottom one taller for a legend of many lines)
FOOTER_IN = 0.3  # the footer's own margin from the paper's edge
FOOTER_GAP_PT = 12.0  # between the footer's legend (left) and its 'page n of m' (right)
LINE_EM = 1.25  # a footer line's height, in font sizes (LibreOffice: 1.0; room to spare)
BODY_PT = 11.0  # the workbook's default font (Calibri 11)
ROW_PT = 15.0  # every cut-sheet row (set, not left to the spreadsheet), so the pages are known in advance
MIN_PT = 8.0
HIDDEN_KEYS = ("group", "plane")  # the row colour; kept (hidden, not printed) for the colour rules and the filter
SHORT_PORT = {"a_port": "a_short", "b_port": "b_short"}
GROUP_WHAT = {"odd": "NIC port to an odd (rail) switch", "even": "NIC port to an even (single-rail, ToR) switch",
              "fabric": "odd switch to even switch", "leaf": "NIC port to a ROFT rail leaf"}
FABRIC_WHAT = {"zcube": "odd switch to even switch", "roft": "ROFT leaf to spine", "stage": "odd switch to even switch, or ROFT leaf to spine"}


def _header_cells(ws, titles: list[str]) -> list[WriteOnlyCell]:
    cells = []
    for t in titles:
        c = WriteOnlyCell(ws, value=t)
        c.font = BOLD
        c.fill = HEADER_FILL
        c.alignment = Alignment(wrap_text=True, vertical="center")
        cells.append(c)
    return cells


def _header(ws, titles: list[str]) -> None:
    ws.append(_header_cells(ws, titles))


_ILLEGAL = re.compile(r"[\000-\010\013\014\016-\037]")


def _text(value: str) -> str:
    v = _ILLEGAL.sub("", value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    space = ' xml:space="preserve"' if v != v.strip() else ""
    return f't="inlineStr"><is><t{space}>{v}</t></is></c>'


def _group_row(ws, ncols: int, groups: list[tuple[str, int, int]], letters: list[str]) -> str:
    """Row 1 of a sheet with column groups: each group's heading (bold, shaded, centred) merged over its columns
    (``groups``: text, first and last column, 0-based), every other cell of the row shaded as the header."""
    c = WriteOnlyCell(ws, value="")
    c.font, c.fill = BOLD, HEADER_FILL
    c.alignment = Alignment(horizontal="center", vertical="center")
    style = c.style_id
    text = {first: t for t, first, _ in groups}
    for _, first, last in groups:
        ws.merged_cells.add(f"{letters[first]}1:{letters[last]}1")
    return '<row r="1">' + "".join(f'<c r="{letters[i]}1" s="{style}" {_text(neutral(text[i]))}' if i in text
                                   else f'<c r="{letters[i]}1" s="{style}"/>' for i in range(ncols)) + "</row>"


def write_rows_fast(ws, titles: list[str], values, heights: list[float] | None = None,
                    groups: list[tuple[str, int, int]] | None = None) -> None:
    """The header row (bold, shaded) and the data rows of a write-only sheet, then close the sheet.

    Cells as openpyxl writes them (inline strings, numbers as "%.16g", empty cells left out), but the
    rows are built as text and put in place of a marker in the finished sheet file: openpyxl's
    per-cell writer costs 13 us a cell, and a 64k-GPU hall has 7 million cells. Call after every sheet
    property is set (openpyxl writes them around the rows). ``heights``: each data row's height (pt); with
    them every data cell wraps its text, top-aligned (task sheets: :func:`wrapped_heights`). ``groups``: a row of
    group headings above the header row (:func:`_group_row`); the data rows then start at row 3."""
    head = _header_cells(ws, titles)
    style = head[0].style_id if head else 0  # registers the header style with the workbook
    body = ""
    if heights is not None:
        c = WriteOnlyCell(ws, value="")
        c.alignment = Alignment(wrap_text=True, vertical="top")
        body = f's="{c.style_id}" '  # registers the wrapping style
    letters = [get_column_letter(i) for i in range(1, len(titles) + 1)]
    texts: dict[str, str] = {}
    top = 2 if groups else 1  # the header row
    parts = [_group_row(ws, len(titles), groups, letters)] if groups else []
    parts.append(f'<row r="{top}">' + "".join(f'<c r="{letters[i]}{top}" s="{style}" {_text(neutral(t))}' for i, t in enumerate(titles))
                 + "</row>")
    for n, row in enumerate(values, start=top + 1):
        cells = [f'<row r="{n}" ht="{heights[n - top - 1]:g}" customHeight="1">' if heights is not None else f'<row r="{n}">']
        for i, v in enumerate(row):
            if v is None or v == "":  # openpyxl leaves these cells out too
                continue
            if isinstance(v, str):
                t = texts.get(v)
                if t is None:
                    t = texts[v] = _text(neutral(v))  # (inline strings are never formulas; a copy into a CSV would be)
                cells.append(f'<c r="{letters[i]}{n}" {body}{t}')
            elif isinstance(v, bool):
                cells.append(f'<c r="{letters[i]}{n}" {body}t="b"><v>{int(v)}</v></c>')
            else:
                cells.append(f'<c r="{letters[i]}{n}" {body}t="n"><v>{v:.16g}</v></c>')
        cells.append("</row>")
        parts.append("".join(cells))
    ws._get_writer()
    writer = ws._writer
    xf = writer.xf.send(True)
    with xf.element("sheetData"):
        xf.write(etree.Element(_MARKER))
    writer.xf.send(None)
    ws._rows = _closed()  # tells close() the rows are written
    ws.close()
    with open(writer.out, "rb") as fh:
        xml = fh.read()
    marker = f"<{_MARKER}/>".encode()
    if xml.count(marker) != 1:
        raise RuntimeError(f"sheet {ws.title}: row marker not found once in openpyxl's output")
    with open(writer.out, "wb") as fh:
        fh.write(_footer_lines(xml.replace(marker, "".join(parts).encode("utf-8"), 1)))


def _footer_lines(xml: bytes) -> bytes:
    """The sheet's header and footer texts with their line breaks as line breaks: openpyxl writes one as the escape
    ``_x000a_``, which Excel reads and LibreOffice prints as it stands."""
    start, end = xml.find(b"<headerFooter"), xml.find(b"</headerFooter>")
    if start < 0 or end < 0:
        return xml
    return xml[:start] + xml[start:end].replace(b"_x000a_", b"\n") + xml[end:]


_MARKER = "zcubeRowsGoHere"


def _closed():
    yield


# Carlito's advance widths (metric-compatible with Calibri, the body font), 1/2048 em, for ASCII 32..126
_ADVANCE = (463, 667, 821, 1020, 1038, 1464, 1397, 452, 621, 621, 1020, 1020, 511, 627, 517, 791, 1038, 1038, 1038, 1038, 1038,
            1038, 1038, 1038, 1038, 1038, 548, 548, 1020, 1020, 1020, 949, 1831, 1185, 1114, 1092, 1260, 1000, 941, 1292, 1276, 516,
            653, 1064, 861, 1751, 1322, 1356, 1058, 1378, 1112, 941, 998, 1314, 1162, 1822, 1063, 998, 959, 628, 791, 628, 1020,
            1020, 596, 981, 1076, 866, 1076, 1019, 625, 964, 1076, 470, 490, 931, 470, 1636, 1076, 1080, 1076, 1076, 714, 801, 686,
            1076, 925, 1464, 887, 927, 809, 644, 943, 644, 1020)
_WIDEST = max(_ADVANCE)


def _px(text: str) -> float:
    """The width of ``text`` in Calibri 11 at 96 dpi (px); a character outside ASCII counts as the widest."""
    return sum(_ADVANCE[ord(ch) - 32] if 32 <= ord(ch) < 127 else _WIDEST for ch in text) * BODY_PT * 96 / 72 / 2048


def text_lines(text: str, width: float) -> int:
    """How many lines ``text`` takes wrapped in a column ``width`` characters wide (its own newlines kept): words
    moved to the next line at spaces, a word wider than the line broken; measured from the font's advance widths
    with a margin (10 %), so the printed row is never shorter than its text."""
    room = width * 7 * 0.9
    lines = 0
    for para in str(text).split("\n"):
        used, n = 0.0, 1
        for word in para.split(" "):
            w = _px(word)
            if used and used + _px(" ") + w > room:
                n, used = n + 1, 0.0
            used += (_px(" ") if used else 0.0) + w
            while used > room:  # a word wider than the line: broken where it runs over
                n, used = n + 1, used - room
        lines += n
    return lines


def wrapped_heights(columns: list[tuple[str, float]], values: list[tuple]) -> list[float]:
    """Each row's height (pt) with every cell's text wrapped in its column: ROW_PT per line of its tallest cell."""
    return [ROW_PT * max([1] + [text_lines(v, w) for v, (_, w) in zip(row, columns) if isinstance(v, str) and v]) for row in values]


def column_points(width: float) -> float:
    """Printed width in points of a column `width` characters wide (Calibri 11: 7 px per character + 5 px padding, 96 dpi)."""
    return (width * 7 + 5) * 0.75


def printed_size(cat: CablingCatalog) -> float:
    """Text size (pt) a cut sheet prints at when fitted one page wide on the catalog's paper (landscape)."""
    width = sum(column_points(c.width) for c in cat.sheets.columns)
    usable = (PAPER[cat.sheets.paper][1] - 2 * MARGIN_IN) * 72
    return BODY_PT * min(1.0, usable / width)


def check_printable(cat: CablingCatalog) -> None:
    size = printed_size(cat)
    if size < MIN_PT:
        raise InputErrors(Problem("cabling_catalog.sheets.columns",
                                  f"the cut-sheet columns are {sum(c.width for c in cat.sheets.columns):g} characters wide: fitted to "
                                  f"{cat.sheets.paper} landscape they would print at {size:.1f} pt (< {MIN_PT:g} pt)",
                                  "drop or narrow columns (full port names and label texts are in cables.csv and labels.csv)"))


def rows_per_page(cat: CablingCatalog) -> int:
    """Cable rows on one printed cut-sheet page: the body height in rows, less the repeated header row and two rows to spare."""
    body = (PAPER[cat.sheets.paper][2] - TOP_IN - BOTTOM_IN) * 72
    return int(body // ROW_PT) - 3


def shade(fill: str, percent: float) -> str:
    """`fill` (RGB hex) darkened by `percent` %."""
    f = max(0.0, 1 - percent / 100)
    return "".join(f"{round(int(fill[i:i + 2], 16) * f):02X}" for i in (0, 2, 4))


def legend_text(cat: CablingCatalog, planes: list[int]) -> str:
    text = "row colour: " + ", ".join(f"{c.label} = {g}" for g, c in cat.colours.items())
    if len(planes) > 1:
        text += f"; darker = higher plane ({planes[0]}..{planes[-1]})"
    return text


def _page_setup(ws, cat: CablingCatalog, bottom: float = BOTTOM_IN) -> None:
    ws.page_setup.orientation = "landscape"
    ws.page_setup.paperSize = PAPER[cat.sheets.paper][0]
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.page_margins = PageMargins(left=MARGIN_IN, right=MARGIN_IN, top=TOP_IN, bottom=bottom, header=0.3, footer=FOOTER_IN)


def _page_breaks(heights: list[float], room: float) -> list[int]:
    """The data rows (0-based) each page after the first starts at: rows filled in while their heights fit ``room``."""
    out, used = [], 0.0
    for i, h in enumerate(heights):
        if used and used + h > room + 1e-9:
            out.append(i)
            used = 0.0
        used += h
    return out


def _words_lines(text: str, room: float) -> list[str]:
    """``text`` broken at spaces into lines at most ``room`` px wide (the body font at 11 pt; a longer word alone)."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and _px(lines[-1] + " " + word) <= room:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def print_scale(widths: list[float], paper: str) -> float:
    """The scale a sheet of columns ``widths`` wide prints at, fitted one page wide on ``paper`` (landscape)."""
    return min(1.0, (PAPER[paper][1] - 2 * MARGIN_IN) * 72 / sum(column_points(w) for w in widths))


def footer_legend(legend: str, right: str, widths: list[float], paper: str) -> tuple[str, float]:
    """(the legend as the footer's left part prints it, the bottom margin in inches): the legend broken into lines
    that end before the right part (``right``: the sheet's 'page n of m' text) begins, with a margin (the footer
    prints at the sheet's scale: ``widths``, the printed columns, fitted one page wide on ``paper``), and the bottom
    margin tall enough for those lines above the footer's own margin, so no line runs into the other part or the
    rows (tests/test_migrate_print.py reads it back from LibreOffice's PDF)."""
    usable = (PAPER[paper][1] - 2 * MARGIN_IN) * 72
    scale = print_scale(widths, paper)
    room = (usable / scale - (_px(right) * 0.75 + 2 * FOOTER_GAP_PT)) / 0.75 * 0.9  # px of the unscaled font, 10 % spare
    lines = _words_lines(legend, room)
    return "\n".join(lines), max(BOTTOM_IN, FOOTER_IN + (len(lines) + 1) * BODY_PT * LINE_EM * scale / 72)


def _print_setup(ws, cat: CablingCatalog, ncols: int, nrows: int, title: str, cluster: str, legend: str,
                 heights: list[float] | None = None, header_rows: int = 1, widths: list[float] | None = None) -> None:
    """Landscape on the catalog's paper, one page wide, the ``header_rows`` on every page, a page break every
    rows_per_page() cables, or, with each row's ``heights`` (pt), wherever the next row would not fit the page's body
    at the sheet's print scale (so each sheet's page count is known and printed: 'page 2 of 5'). The legend in the
    footer's left part, broken into lines clear of its right part (:func:`footer_legend`; ``widths``: the printed
    columns, default the catalog's)."""
    ws.freeze_panes = f"A{header_rows + 1}"
    ws.auto_filter.ref = f"A{header_rows}:{get_column_letter(ncols)}{max(nrows + header_rows, header_rows + 1)}"
    ws.sheet_format.defaultRowHeight = ROW_PT
    ws.sheet_format.customHeight = True
    per_page = rows_per_page(cat)
    right = f"{title}, page &P of "
    text, bottom = footer_legend(legend, right.replace("&P", "999") + "999",
                                 widths or [c.width for c in cat.sheets.columns], cat.sheets.paper)
    # rows of their own heights fill a page's body at the sheet's scale (a row of 15 pt prints 15 x scale tall), less the
    # header rows and two rows to spare, 5 % for LibreOffice's rounding of the scale
    scale = print_scale(widths or [c.width for c in cat.sheets.columns], cat.sheets.paper)
    room = (PAPER[cat.sheets.paper][2] - TOP_IN - bottom) * 72 / scale * 0.95 - (2 + header_rows) * ROW_PT
    starts = _page_breaks(heights, room) if heights is not None else [k * per_page for k in range(1, -(-nrows // per_page))]
    pages = len(starts) + 1
    for k in starts:
        ws.row_breaks.append(Break(id=header_rows + k))
    _page_setup(ws, cat, bottom)
    ws.page_setup.firstPageNumber = 1
    ws.page_setup.useFirstPageNumber = True
    ws.print_title_rows = f"1:{header_rows}"
    ws.print_options.gridLines = True
    ws.oddHeader.left.text = cluster
    ws.oddHeader.center.text = title
    ws.oddHeader.right.text = f"page &P of {pages}"
    ws.oddFooter.left.text = text
    ws.oddFooter.right.text = f"{right}{pages}"


def _colour_rows(ws, cat: CablingCatalog, ncols: int, nrows: int, group_col: int, plane_col: int, planes: list[int]) -> None:
    if nrows == 0:
        return
    g, p = get_column_letter(group_col), get_column_letter(plane_col)
    rng = f"A2:{get_column_letter(ncols)}{nrows + 1}"
    for group, colour in cat.colours.items():
        for i, plane in enumerate(planes):
            fill = shade(colour.fill, i * cat.sheets.plane_shade_percent)
            formula = f'${g}2="{group}"' if len(planes) == 1 else f'AND(${g}2="{group}",${p}2={plane})'
            ws.conditional_formatting.add(rng, FormulaRule(formula=[formula], fill=PatternFill("solid", fgColor=fill, bgColor=fill)))


def sheet_keys(cat: CablingCatalog) -> tuple[list[str], list[str]]:
    """(the catalog's columns, the hidden colour-key columns after them)."""
    keys = [c.key for c in cat.sheets.columns]
    return keys, [k for k in HIDDEN_KEYS if k not in keys]


def sheet_values(rows: list[dict], cat: CablingCatalog) -> list[tuple]:
    """A cut sheet's cell values, row by row (short port names)."""
    keys, hidden = sheet_keys(cat)
    pick = attrgetter(*[SHORT_PORT.get(k, k) for k in keys + hidden])
    return [pick(r) for r in rows]


def _cut_sheet(wb: Workbook, title: str, values: list[tuple], cat: CablingCatalog, cluster: str, planes: list[int]) -> None:
    """One printable cut sheet: the catalog's columns (short port names), then the hidden colour keys."""
    ws = wb.create_sheet(title)
    cols = cat.sheets.columns
    keys, hidden = sheet_keys(cat)
    all_keys = keys + hidden
    for i, col in enumerate(cols, start=1):
        ws.column_dimensions[get_column_letter(i)].width = col.width
    for i in range(len(keys) + 1, len(all_keys) + 1):
        ws.column_dimensions[get_column_letter(i)].width = 8
        ws.column_dimensions[get_column_letter(i)].hidden = True
    dv = DataValidation(type="list", formula1='"' + ",".join(STATUS_VALUES) + '"', allow_blank=True,
                        showErrorMessage=True, errorTitle="Installed / Checked", error="yes, no or issue")
    n = len(values)
    for key in ("installed", "checked"):
        letter = get_column_letter(keys.index(key) + 1)
        dv.add(f"{letter}2:{letter}{max(n + 1, 2)}")
    ws.data_validations.append(dv)
    _print_setup(ws, cat, len(all_keys), n, title, cluster, legend_text(cat, planes))
    _colour_rows(ws, cat, len(keys), n, all_keys.index("group") + 1, all_keys.index("plane") + 1, planes)
    ws.print_area = f"A1:{get_column_letter(len(keys))}{n + 1}"  # the colour keys are hidden and not printed
    write_rows_fast(ws, [c.title for c in cols] + [k.capitalize() for k in hidden], values)


def task_sheet(wb: Workbook, title: str, columns: list[tuple[str, float]], values: list[tuple], cat: CablingCatalog, cluster: str,
               ticks: tuple[str, ...] = ("Done", "Checked"), legend: str = "", groups: list[tuple[str, int, int]] | None = None) -> None:
    """A printable work sheet laid out as the cut sheets are (landscape on the catalog's paper, one page wide,
    the header rows on every page, page n of m; each row as tall as its longest text wrapped in its column, so
    nothing is cut): ``columns`` (title, width) with the rows ``values``, then one tick column per name in ``ticks``
    with the yes/no/issue drop-down (zcube migrate's move sheets); ``groups`` (text, first and last column,
    0-based): a row of headings above the header row, each merged over its columns."""
    ws = wb.create_sheet(title)
    titles = [t for t, _ in columns] + list(ticks)
    widths = [w for _, w in columns] + [9.0] * len(ticks)
    for i, w in enumerate(widths, start=1):
        ws.column_dimensions[get_column_letter(i)].width = w
    n, head = len(values), 2 if groups else 1
    if ticks:
        dv = DataValidation(type="list", formula1='"' + ",".join(STATUS_VALUES) + '"', allow_blank=True,
                            showErrorMessage=True, errorTitle=" / ".join(ticks), error="yes, no or issue")
        for k in range(len(columns) + 1, len(titles) + 1):
            letter = get_column_letter(k)
            dv.add(f"{letter}{head + 1}:{letter}{max(n + head, head + 1)}")
        ws.data_validations.append(dv)
    heights = wrapped_heights(columns, values)  # every cell's text wrapped, the row as tall as its tallest: nothing cut
    _print_setup(ws, cat, len(titles), n, title, cluster, legend, heights, head, widths)
    write_rows_fast(ws, titles, [tuple(v) + (None,) * len(ticks) for v in values], heights, groups)


def _summary(wb: Workbook, plan: dict, bom: dict, cat: CablingCatalog, port_key: list[tuple[str, str]], sheets: list[str],
             planes: list[int], books: list[str] | None = None) -> None:
    ws = wb.create_sheet("Summary")
    ws.column_dimensions["A"].width = 24
    ws.column_dimensions["B"].width = 110
    _page_setup(ws, cat)
    sz = plan["sizing"]
    t = bom["totals"]
    title = WriteOnlyCell(ws, value=f"{'ROFT' if design_of(plan) == 'roft' else 'ZCube'} cabling: {plan['cluster']['name']}")
    title.font = Font(name="Calibri", bold=True, size=14)
    ws.append([title])
    lines = [
        ("cluster", plan["cluster"]["name"]),
        ("description", plan["cluster"].get("description", "")),
        ("shape", shape_text(sz)),
        ("GPUs", f"{sz['installed_gpus']} installed of {sz['capacity_gpus']} capacity ({sz['installed_servers']} servers)"),
        ("switches", f"{t['switches']} x {plan['cluster']['switch_model']}"),
        ("cables", f"{t['cables']} ({t['host_cables']} host, {t['fabric_cables']} fabric); {t['copper_cables']} copper, "
                   f"{t['aoc_cables']} AOC, {t['fibre_cables']} fibre; {t['cable_metres']} m in all"),
        ("optical modules", str(t["optical_modules"])),
        ("plan", f"tool {plan['tool_version']}, inventory sha256 {plan['inputs']['inventory_sha256'][:16]}"),
        ("", ""),
        ("legend (row colour)", ""),
    ]
    for k, v in lines:
        ws.append([k, v])
    for group, colour in cat.colours.items():
        for i, plane in enumerate(planes):
            c = WriteOnlyCell(ws, value=group if len(planes) == 1 else f"{group}, plane {plane}")
            c.fill = PatternFill("solid", fgColor=shade(colour.fill, i * cat.sheets.plane_shade_percent))
            what = FABRIC_WHAT.get(design_of(plan), GROUP_WHAT[group]) if group == "fabric" else GROUP_WHAT[group]
            ws.append([c, f"{what}; label colour {colour.label}"])
    ws.append([])
    ws.append(["port names", "the cut sheets and labels use the platform's short port names; full names are in cables.csv"])
    for short, long in port_key:
        ws.append([f"{short}<slot/port>", f"{long} <slot/port> (e.g. {short}0/1:2 = {long} 0/1:2)"])
    ws.append([])
    ws.append(["how to use these sheets", ""])
    for line in (
        "1. Each rack has its own sheet ('Rack <name>'); a cable between two racks is on both racks' sheets.",
        "   Print them as they are: landscape, one page wide, the header row on every page, 'page n of N' per rack.",
        "2. From (A end) and To (B end) give rack, U, device and port.",
        "   Host cables run from the server NIC (A) to the switch (B); fabric cables from the odd (A) to the even (B) switch.",
        "3. Print the labels from labels.csv (one per cable end, in walking order: rack, then U from the top);",
        "   fix each on its end before pulling the cable.",
        "4. Mark 'Installed' when the cable is in and both ends are seated; 'Checked' after the link is up and verified",
        "   (zcube verify). Use 'issue' for problems.",
        "5. The Fabric sheet lists every switch-to-switch cable; the BOM sheet what to order.",
        "6. `zcube cabling status <workbook or folder>` reads the Installed/Checked columns back and prints progress per rack.",
    ):
        ws.append(["", line])
    ws.append([])
    ws.append(["cut sheets", ", ".join(sheets[:40]) + (f" ... ({len(sheets)} in all)" if len(sheets) > 40 else "")])
    if books:
        ws.append(["workbooks", f"{len(books)} row workbooks beside this one: " + ", ".join(books[:20]) + (" ..." if len(books) > 20 else "")])


def _bom(wb: Workbook, bom: dict, cat: CablingCatalog) -> None:
    ws = wb.create_sheet("BOM")
    _page_setup(ws, cat)
    widths = [10, 28, 12, 10, 30, 10, 14, 14]
    for i, w in enumerate(widths, start=1):
        ws.column_dimensions[get_column_letter(i)].width = w
    _header(ws, ["Item", "Model / where", "Medium", "Length m", "Part number", "Quantity", "Unit USD", "Total USD"])
    for r in bom["switches"]:
        ws.append(["switch", r["model"], None, None, r["model"], r["quantity"], r["unit_price_usd"], r["total_usd"]])
    for r in bom["cables"]:
        ws.append(["cable", r["kind"], r["medium"], r["length_m"], r["part"], r["quantity"], r["unit_price_usd"], r["total_usd"]])
    for r in bom["optics"]:
        ws.append(["optic", r["where"], None, None, r["part"], r["quantity"], r["unit_price_usd"], r["total_usd"]])
    ws.append([])
    t = bom["totals"]
    for label, key in (("total switches", "switches"), ("total cables", "cables"), ("  host cables", "host_cables"),
                       ("  fabric cables", "fabric_cables"), ("  copper", "copper_cables"), ("  AOC", "aoc_cables"),
                       ("  fibre", "fibre_cables"), ("total optical modules", "optical_modules"), ("cable metres", "cable_metres"),
                       ("total USD", "total_usd")):
        c = WriteOnlyCell(ws, value=label)
        c.font = BOLD
        ws.append([c, None, None, None, None, t[key]])


def _save(wb: Workbook, path: Path) -> None:
    save_workbook(wb, path)  # same plan, same bytes (zcube_deploy/xlsx.py)


def _planes(plan: dict) -> list[int]:
    return sorted({c["plane"] for c in plan["cables"]})


def _sheet_names(rows: CableRows) -> tuple[dict[str, list[dict]], list[str]]:
    per_sheet = rows.by_sheet()
    prefix = RACK_PREFIX if rows.cat.sheets.per == "rack" else ROW_PREFIX
    return per_sheet, [f"{prefix}{k}"[:31] for k in per_sheet]


def write_workbook(plan: dict, cat: CablingCatalog, path: str | Path, rows: CableRows | None = None) -> dict:
    """Write the single workbook (Summary, BOM, Fabric, the cut sheets); returns {'sheets': [...], 'bom': ...}."""
    check_printable(cat)
    rows = rows or CableRows(plan, cat)
    bom = bill_of_materials(plan, cat)
    per_sheet, names = _sheet_names(rows)
    planes = _planes(plan)
    wb = new_workbook()
    _summary(wb, plan, bom, cat, rows.port_key(), names, planes)
    _bom(wb, bom, cat)
    cluster = plan["cluster"]["name"]
    _cut_sheet(wb, "Fabric", sheet_values(rows.fabric(), cat), cat, cluster, planes)
    for name, sheet_rows in zip(names, per_sheet.values()):
        _cut_sheet(wb, name, sheet_values(sheet_rows, cat), cat, cluster, planes)
    _save(wb, Path(path))
    return {"sheets": ["Summary", "BOM", "Fabric"] + names, "bom": bom, "workbooks": [str(path)]}


# ------------------------------------------------------------------ one workbook per layout row
# The workers are started by a fork server (a small clean process), not forked from this one: a
# forked worker would inherit the whole plan and, touching it, copy it page by page (1.8 GB for the
# 64k hall). Each task carries its own cell values; the catalog goes once to each worker.
_WORKER: dict = {}


def _init_worker(cat: CablingCatalog, cluster: str, planes: list[int]) -> None:
    _WORKER.update(cat=cat, cluster=cluster, planes=planes)


def _task(task: tuple) -> str:
    kind, path = task[0], Path(task[1])
    cat, cluster, planes = _WORKER["cat"], _WORKER["cluster"], _WORKER["planes"]
    wb = new_workbook()
    if kind == "row":
        for name, values in task[2]:  # the fabric cables ending in the row are on its racks' sheets
            _cut_sheet(wb, name, values, cat, cluster, planes)
    else:
        plan_head, bom, port_key, names, books, fabric = task[2:]
        _summary(wb, plan_head, bom, cat, port_key, names, planes, books)
        _bom(wb, bom, cat)
        _cut_sheet(wb, "Fabric", fabric, cat, cluster, planes)
    _save(wb, path)
    return str(path)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def write_split_workbooks(plan: dict, cat: CablingCatalog, folder: str | Path, rows: CableRows | None = None,
                          side_work: list | None = None, workers: int | None = None) -> dict:
    """One workbook per layout row (its racks' cut sheets, so also the fabric cables ending in the row)
    plus summary.xlsx (Summary, BOM, Fabric), written by worker processes, one per core; this process
    runs ``side_work`` (the CSV exports) meanwhile. Input errors are all raised before any file is written."""
    check_printable(cat)
    rows = rows or CableRows(plan, cat)
    bom = bill_of_materials(plan, cat)
    per_sheet, names = _sheet_names(rows)
    planes = _planes(plan)
    row_of = {r["name"]: r["row"] for r in plan["layout"]["racks"]}
    books: dict[str, list[tuple[str, list[dict]]]] = {}
    for name, (key, sheet_rows) in zip(names, per_sheet.items()):
        books.setdefault(row_of.get(key, key), []).append((name, sheet_rows))
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("row-*.xlsx"):  # a previous, differently laid-out run
        old.unlink()
    book_names = {r: f"row-{_safe(r)}.xlsx" for r in books}
    head = {k: plan[k] for k in ("sizing", "cluster", "tool_version", "inputs")}

    def tasks():
        yield ("summary", folder / "summary.xlsx", head, bom, rows.port_key(), names, list(book_names.values()),
               sheet_values(rows.fabric(), cat))
        # the biggest rows first, so that the workers finish together
        for r in sorted(books, key=lambda r: -sum(len(x) for _, x in books[r])):
            yield ("row", folder / book_names[r], [(name, sheet_values(x, cat)) for name, x in books[r]])

    n = max(1, min(workers or _cores(), len(books) + 1))
    init = (cat, plan["cluster"]["name"], planes)
    if n > 1 and "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload([__name__])
        with ctx.Pool(n, initializer=_init_worker, initargs=init) as pool:
            pending = pool.imap_unordered(_task, tasks(), chunksize=1)
            for job in side_work or []:
                job()
            done = list(pending)
    else:
        _init_worker(*init)
        done = [_task(t) for t in tasks()]
        for job in side_work or []:
            job()
    files = [str(folder / "summary.xlsx")] + sorted(d for d in done if not d.endswith("summary.xlsx"))
    return {"sheets": ["Summary", "BOM", "Fabric"] + names, "bom": bom, "workbooks": files}


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
