"""The technicians' workbook (openpyxl, write-only mode with lxml): Summary, BOM, Fabric, one cut sheet per rack.

Cut sheets: frozen header, autofilter, widths from the cabling catalog, landscape, fit to one
page wide, header row repeated on every printed page, rack and page number in the page header
and footer, rows coloured by group (conditional formatting, so no per-cell styles), and
Installed / Checked columns with a yes/no/issue drop-down.
"""

from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.datavalidation import DataValidation

from zcube_deploy.cabling.sheets import CableRows, bill_of_materials
from zcube_deploy.catalog.cabling import CablingCatalog

STATUS_VALUES = ("yes", "no", "issue")
BOLD = Font(bold=True)
HEADER_FILL = PatternFill("solid", fgColor="D9D9D9")
RACK_PREFIX = "Rack "
ROW_PREFIX = "Row "


def _header(ws, titles: list[str]) -> None:
    cells = []
    for t in titles:
        c = WriteOnlyCell(ws, value=t)
        c.font = BOLD
        c.fill = HEADER_FILL
        c.alignment = Alignment(wrap_text=True, vertical="center")
        cells.append(c)
    ws.append(cells)


def _print_setup(ws, ncols: int, nrows: int, title: str, cluster: str) -> None:
    ws.freeze_panes = "A2"
    ws.auto_filter.ref = f"A1:{get_column_letter(ncols)}{max(nrows + 1, 2)}"
    ws.page_setup.orientation = "landscape"
    ws.page_setup.paperSize = 9  # A4
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.print_title_rows = "1:1"
    ws.print_options.gridLines = True
    ws.oddHeader.center.text = f"{cluster}: {title}"
    ws.oddFooter.right.text = "page &P of &N"
    ws.oddFooter.left.text = "zcube-deploy cut sheet"


def _colour_rows(ws, cat: CablingCatalog, ncols: int, nrows: int, group_col: int | None) -> None:
    if group_col is None or nrows == 0:
        return
    letter = get_column_letter(group_col)
    rng = f"A2:{get_column_letter(ncols)}{nrows + 1}"
    for group, colour in cat.colours.items():
        ws.conditional_formatting.add(rng, FormulaRule(formula=[f'${letter}2="{group}"'], fill=PatternFill("solid", fgColor=colour.fill, bgColor=colour.fill)))


def _cut_sheet(wb: Workbook, title: str, rows: list[dict], cat: CablingCatalog, cluster: str) -> None:
    ws = wb.create_sheet(title)
    cols = cat.sheets.columns
    keys = [c.key for c in cols]
    for i, col in enumerate(cols, start=1):
        ws.column_dimensions[get_column_letter(i)].width = col.width
    dv = DataValidation(type="list", formula1='"' + ",".join(STATUS_VALUES) + '"', allow_blank=True,
                        showErrorMessage=True, errorTitle="Installed / Checked", error="yes, no or issue")
    n = len(rows)
    for key in ("installed", "checked"):
        letter = get_column_letter(keys.index(key) + 1)
        dv.add(f"{letter}2:{letter}{max(n + 1, 2)}")
    ws.data_validations.append(dv)
    _print_setup(ws, len(cols), n, title, cluster)
    _colour_rows(ws, cat, len(cols), n, keys.index("group") + 1 if "group" in keys else None)
    _header(ws, [c.title for c in cols])
    append = ws.append
    for r in rows:
        append([r[k] for k in keys])


def _summary(wb: Workbook, plan: dict, bom: dict, cat: CablingCatalog, sheets: list[str]) -> None:
    ws = wb.create_sheet("Summary")
    ws.column_dimensions["A"].width = 28
    ws.column_dimensions["B"].width = 90
    sz = plan["sizing"]
    t = bom["totals"]
    title = WriteOnlyCell(ws, value=f"ZCube cabling: {plan['cluster']['name']}")
    title.font = Font(bold=True, size=14)
    ws.append([title])
    rows = [
        ("cluster", plan["cluster"]["name"]),
        ("description", plan["cluster"].get("description", "")),
        ("shape", f"S={sz['S']} switches per group, K={sz['K']} host ports, m={sz['m']} links per odd/even pair, {sz['planes']} plane(s)"),
        ("GPUs", f"{sz['installed_gpus']} installed of {sz['capacity_gpus']} capacity ({sz['installed_servers']} servers)"),
        ("switches", f"{t['switches']} x {plan['cluster']['switch_model']}"),
        ("cables", f"{t['cables']} ({t['host_cables']} host, {t['fabric_cables']} fabric); {t['copper_cables']} copper, "
                   f"{t['aoc_cables']} AOC, {t['fibre_cables']} fibre; {t['cable_metres']} m in all"),
        ("optical modules", str(t["optical_modules"])),
        ("plan", f"tool {plan['tool_version']}, inventory sha256 {plan['inputs']['inventory_sha256'][:16]}"),
        ("", ""),
        ("legend", ""),
    ]
    for k, v in rows:
        ws.append([k, v])
    for group, colour in cat.colours.items():
        c = WriteOnlyCell(ws, value=group)
        c.fill = PatternFill("solid", fgColor=colour.fill)
        what = {"odd": "NIC port to an odd (rail) switch", "even": "NIC port to an even (single-rail, ToR) switch",
                "fabric": "odd switch to even switch"}[group]
        ws.append([c, f"{what}; label colour {colour.label}"])
    ws.append([])
    ws.append(["how to use these sheets", ""])
    for line in (
        "1. Each rack has its own sheet ('Rack <name>'); a cable between two racks is on both racks' sheets.",
        "2. A end and B end give rack, U, device and port; host cables run from the server NIC (A) to the switch (B); fabric cables from the odd (A) to the even (B) switch.",
        "3. Print the label texts (Label A end / Label B end) and fix each on its end before pulling the cable.",
        "4. Mark 'Installed' when the cable is in and both ends are seated; mark 'Checked' after the link is up and verified (zcube verify). Use 'issue' for problems.",
        "5. The Fabric sheet lists every switch-to-switch cable; the BOM sheet what to order.",
        "6. `zcube cabling status cabling.xlsx` reads the Installed/Checked columns back and prints progress per rack.",
    ):
        ws.append(["", line])
    ws.append([])
    ws.append(["cut sheets", ", ".join(sheets[:40]) + (f" ... ({len(sheets)} in all)" if len(sheets) > 40 else "")])


def _bom(wb: Workbook, bom: dict) -> None:
    ws = wb.create_sheet("BOM")
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


def write_workbook(plan: dict, cat: CablingCatalog, path: str | Path, rows: CableRows | None = None) -> dict:
    """Write the workbook; returns {'sheets': [...], 'bom': ...}."""
    rows = rows or CableRows(plan, cat)
    bom = bill_of_materials(plan, cat)
    per_sheet = rows.by_sheet()
    prefix = RACK_PREFIX if cat.sheets.per == "rack" else ROW_PREFIX
    names = [f"{prefix}{k}"[:31] for k in per_sheet]
    wb = Workbook(write_only=True)
    _summary(wb, plan, bom, cat, names)
    _bom(wb, bom)
    cluster = plan["cluster"]["name"]
    _cut_sheet(wb, "Fabric", rows.fabric(), cat, cluster)
    for name, (key, sheet_rows) in zip(names, per_sheet.items()):
        _cut_sheet(wb, name, sheet_rows, cat, cluster)
    path = Path(path)
    tmp = path.with_suffix(".xlsx.tmp")
    wb.save(tmp)
    tmp.replace(path)
    return {"sheets": ["Summary", "BOM", "Fabric"] + names, "bom": bom}
