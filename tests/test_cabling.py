"""Cabling: workbook cell values (golden for lab-64), BOM totals, print settings, status read-back, exports."""

from __future__ import annotations

import csv
import json
import re

import pytest
import yaml
from openpyxl import load_workbook

from conftest import GOLDEN, INVENTORIES, ROOT, check_golden, run_zcube
from zcube_deploy.cabling.workbook import STATUS_VALUES


def dump_workbook(path) -> str:
    wb = load_workbook(path)
    lines = []
    for ws in wb.worksheets:
        lines.append(f"=== {ws.title}")
        for row in ws.iter_rows(values_only=True):
            lines.append("\t".join("" if v is None else str(v) for v in row).rstrip("\t"))
    return "\n".join(lines) + "\n"


def test_golden_workbook_lab64(lab64_build, update_golden):
    check_golden(GOLDEN / "lab-64" / "cabling.txt", dump_workbook(lab64_build / "cabling.xlsx"), update_golden)


def test_every_cable_in_exactly_the_sheets_of_its_racks(glm1k_build):
    plan = json.loads((glm1k_build / "plan.json").read_text())
    wb = load_workbook(glm1k_build / "cabling.xlsx", read_only=True)
    seen: dict[str, set[str]] = {}
    fabric_sheet = set()
    for ws in wb.worksheets:
        if not (ws.title.startswith("Rack ") or ws.title == "Fabric"):
            continue
        ws.reset_dimensions()
        rows = ws.iter_rows(values_only=True)
        header = next(rows)
        assert {"Installed", "Checked"} <= set(header) and header[0] == "Cable ID"
        for row in rows:
            if ws.title == "Fabric":
                fabric_sheet.add(row[0])
            else:
                seen.setdefault(row[0], set()).add(ws.title[len("Rack "):])
    for c in plan["cables"]:
        assert seen[c["id"]] == {c["a"]["rack"], c["b"]["rack"]}, c["id"]
    assert fabric_sheet == {c["id"] for c in plan["cables"] if c["kind"] == "fabric"}
    assert len(seen) == len(plan["cables"]) == 3072


def test_bom_totals_match_the_plan(glm1k_build):
    plan = json.loads((glm1k_build / "plan.json").read_text())
    wb = load_workbook(glm1k_build / "cabling.xlsx")
    ws = wb["BOM"]
    rows = [r for r in ws.iter_rows(values_only=True)]
    cable_qty = sum(r[5] for r in rows if r[0] == "cable")
    switch_qty = sum(r[5] for r in rows if r[0] == "switch")
    totals = {r[0].strip(): r[5] for r in rows if r[0] and r[0].startswith(("total", "  "))}
    assert cable_qty == totals["total cables"] == plan["counts"]["cables"] == 3072
    assert totals["host cables"] == 2048 and totals["fabric cables"] == 1024
    assert switch_qty == totals["total switches"] == 16
    assert totals["copper"] + totals["AOC"] + totals["fibre"] == 3072
    # optics: one per fibre NIC end, one per switch cage with fibre legs
    fibre = [c for c in plan["cables"] if c["medium"] == "SMF"]
    cage_of = plan["port_map"]["cage_of"]
    cages = {(e["device"], cage_of[e["port"]][1]) for c in fibre for e in (c["a"], c["b"]) if e["port"] in cage_of}
    nic = sum(1 for c in fibre if c["kind"] == "host")
    assert totals["total optical modules"] == len(cages) + nic


def test_print_settings_and_sheet_features(glm1k_build):
    wb = load_workbook(glm1k_build / "cabling.xlsx")
    assert wb.sheetnames[:3] == ["Summary", "BOM", "Fabric"]
    ws = wb["Rack A01"]
    header = [c.value for c in ws[1]]
    assert header == ["Cable ID", "From rack", "From U", "From device", "From port", "To rack", "To U", "To device", "To port",
                      "Medium", "Length m", "Installed", "Checked", "Group", "Plane"]
    assert ws.freeze_panes == "A2"
    assert ws.auto_filter.ref.startswith("A1:O")
    assert ws.page_setup.orientation == "landscape" and ws.page_setup.paperSize == 9  # A4 from the catalog
    assert ws.page_setup.fitToWidth == 1 and ws.page_setup.fitToHeight == 0 and ws.sheet_properties.pageSetUpPr.fitToPage
    assert ws.print_title_rows == "$1:$1"
    assert ws.column_dimensions["A"].width == 10
    # every rack sheet prints every catalog column (A to M: Cable ID to Checked) and every row, not its first column only
    for sheet in (wb[n] for n in wb.sheetnames if n.startswith("Rack ")):
        assert sheet.print_area == f"'{sheet.title}'!$A$1:$M${sheet.max_row}", sheet.title
    # group and plane: hidden key columns that drive the row colour, not printed
    assert ws.column_dimensions["N"].hidden and ws.column_dimensions["O"].hidden and not ws.column_dimensions["M"].hidden
    dv = ws.data_validations.dataValidation
    assert dv and dv[0].formula1 == '"' + ",".join(STATUS_VALUES) + '"'
    assert {str(r) for r in dv[0].sqref.ranges} == {f"L2:L{ws.max_row}", f"M2:M{ws.max_row}"}
    rules = [r for cf in ws.conditional_formatting for r in cf.rules]
    assert sorted(r.formula[0] for r in rules) == ['$N2="even"', '$N2="fabric"', '$N2="odd"']  # one plane: colour by group
    # rack and page in header and footer; the page count is the sheet's own (a break every rows_per_page cables)
    cables = ws.max_row - 1
    breaks = [b.id for b in ws.row_breaks.brk]
    per_page = breaks[0] - 1
    pages = -(-cables // per_page)
    assert breaks == [1 + k * per_page for k in range(1, pages)] and pages >= 2
    assert ws.oddHeader.center.text == "Rack A01" and ws.oddHeader.left.text == "glm1k"
    assert ws.oddHeader.right.text == f"page &P of {pages}" and ws.oddFooter.right.text == f"Rack A01, page &P of {pages}"
    assert "blue = odd" in ws.oddFooter.left.text
    # short port names on the sheet, full names in cables.csv
    ports = [r[4] for r in ws.iter_rows(min_row=2, values_only=True)] + [r[8] for r in ws.iter_rows(min_row=2, values_only=True)]
    assert any(re.fullmatch(r"TH0/\d+:\d", p) for p in ports) and not any("Ethernet" in p for p in ports)
    assert "TwoHundredGigabitEthernet 0/" in (glm1k_build / "cables.csv").read_text()


def test_a_layout_too_wide_for_the_paper_is_an_input_error(tmp_path, glm1k_build):
    cat = yaml.safe_load((ROOT / "cabling" / "cabling.yaml").read_text())
    cat["sheets"]["paper"] = "letter"
    cat["sheets"]["columns"].insert(1, {"key": "part", "title": "Part number", "width": 60})
    (tmp_path / "cab.yaml").write_text(yaml.safe_dump(cat))
    r = run_zcube("cabling", str(glm1k_build / "plan.json"), "-o", str(tmp_path / "o"), "--catalog", str(tmp_path / "cab.yaml"), "--accept-catalog-change")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "letter landscape they would print at" in r.stderr and not (tmp_path / "o" / "cabling.xlsx").exists()
    cat["sheets"]["columns"][1]["key"] = "label_a"
    (tmp_path / "cab.yaml").write_text(yaml.safe_dump(cat))
    r = run_zcube("cabling", str(glm1k_build / "plan.json"), "-o", str(tmp_path / "o"), "--catalog", str(tmp_path / "cab.yaml"), "--accept-catalog-change")
    assert r.returncode == 2 and "labels.csv" in r.stderr


def test_media_by_reach_lab64(lab64_build):
    plan = json.loads((lab64_build / "plan.json").read_text())
    for c in plan["cables"]:
        if c["kind"] == "host" and c["group"] == "even":
            assert c["a"]["rack"] == c["b"]["rack"] and c["medium"] == "DAC" and c["length_m"] <= 3
        if c["kind"] == "host" and c["group"] == "odd":
            assert c["medium"] == "SMF" and c["length_m"] >= c["estimate_m"]


def test_status_reads_a_technicians_edits(tmp_path, lab64_build):
    wb = load_workbook(lab64_build / "cabling.xlsx")
    ws = wb["Rack A01"]
    header = [c.value for c in ws[1]]
    inst, chk = header.index("Installed"), header.index("Checked")
    ids = []
    for i, row in enumerate(ws.iter_rows(min_row=2), start=2):
        if i <= 11:  # a technician marks ten cables installed, four of them checked, one issue
            row[inst].value = "yes"
            if i <= 5:
                row[chk].value = "yes"
            ids.append(row[0].value)
    ws.cell(row=12, column=inst + 1, value="issue")
    path = tmp_path / "edited.xlsx"
    wb.save(path)
    r = run_zcube("cabling", "status", str(path), "--json")
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout)
    a01 = next(s for s in st["sheets"] if s["sheet"] == "Rack A01")
    assert (a01["installed"], a01["checked"], a01["issues"]) == (10, 4, 1)
    assert st["overall"]["installed"] == 10 and st["overall"]["checked"] == 4
    assert st["overall"]["cables"] == 192
    r = run_zcube("cabling", "status", str(path))
    assert "Rack A01" in r.stdout and "issue" in r.stdout


def test_status_refuses_a_non_workbook(tmp_path):
    (tmp_path / "x.xlsx").write_text("not a workbook")
    r = run_zcube("cabling", "status", str(tmp_path / "x.xlsx"))
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_exports(glm1k_build):
    rows = list(csv.DictReader(open(glm1k_build / "cables.csv")))
    assert len(rows) == 3072 and len({r["cable"] for r in rows}) == 3072
    nb = list(csv.DictReader(open(glm1k_build / "netbox-cables.csv")))
    assert list(nb[0])[:6] == ["side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type", "side_b_name"]
    assert {r["type"] for r in nb} <= {"smf", "dac-passive", "aoc"} and nb[0]["side_a_type"] == "dcim.interface"
    dot = (glm1k_build / "topology.dot").read_text()
    edges = re.findall(r'^  "[^"]+":"[^"]+" -- "[^"]+":"[^"]+"', dot, re.M)
    assert len(edges) == 3072 and dot.startswith('graph "glm1k" {')


def test_cabling_cli_writes_outputs(tmp_path, glm1k_build):
    r = run_zcube("cabling", str(glm1k_build / "plan.json"), "-o", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["totals"]["cables"] == 3072
    for name in ("cabling.xlsx", "cables.csv", "labels.csv", "netbox-cables.csv", "topology.dot"):
        assert (tmp_path / name).stat().st_size > 0


def test_label_too_long_is_an_input_error(tmp_path):
    cat = yaml.safe_load((ROOT / "cabling" / "cabling.yaml").read_text())
    cat["labels"]["max_length"] = 20
    (tmp_path / "cab.yaml").write_text(yaml.safe_dump(cat))
    inv = yaml.safe_load((INVENTORIES / "lab-64.yaml").read_text())
    inv["cabling_catalog"] = str(tmp_path / "cab.yaml")
    (tmp_path / "inv.yaml").write_text(yaml.safe_dump(inv))
    r = run_zcube("build", str(tmp_path / "inv.yaml"), "-o", str(tmp_path / "o"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "labels are too long" in r.stderr and "H000001" in r.stderr
    # collected: every offending cable counted, the first ones listed with their data path
    assert "labels.line1" in r.stderr and "H000002" in r.stderr and "more cable(s)" in r.stderr
    assert not (tmp_path / "o" / "cabling.xlsx").exists()


def test_switches_that_do_not_fit_are_reported(tmp_path):
    inv = yaml.safe_load((INVENTORIES / "lab-64.yaml").read_text())
    inv["layout"]["rows"][0]["racks"] = [{"name": "A01", "role": "compute"}, {"name": "A02", "role": "compute"},
                                         {"name": "A03", "role": "network", "u_height": 8}]
    (tmp_path / "inv.yaml").write_text(yaml.safe_dump(inv))
    r = run_zcube("plan", str(tmp_path / "inv.yaml"), "-o", str(tmp_path))
    assert r.returncode == 2
    assert "no room for switch" in r.stderr


LABEL_COLUMNS = ["cable", "end", "line1", "line2", "barcode", "colour", "rack", "u", "device", "port"]


def test_labels_csv_one_label_per_cable_end_in_walking_order(glm1k_build):
    plan = json.loads((glm1k_build / "plan.json").read_text())
    cat = yaml.safe_load((ROOT / "cabling" / "cabling.yaml").read_text())
    raw = (glm1k_build / "labels.csv").read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n") == 2 * 3072 + 1  # RFC 4180: header + one CRLF line per label
    rows = list(csv.reader(raw.decode("utf-8").splitlines()))
    assert rows[0] == LABEL_COLUMNS
    labels = [dict(zip(LABEL_COLUMNS, r)) for r in rows[1:]]
    # one label per cable end, each at the rack/U/device/port of that end (short port name of the plan)
    short = {name: v[0] for name, v in plan["port_map"]["cage_of"].items()}
    expected = {}
    for c in plan["cables"]:
        for end in ("a", "b"):
            e = c[end]
            expected[(c["id"], end.upper())] = (e["rack"], str(e["u"]), e["device"], short.get(e["port"], e["port"]))
    got = {(lab["cable"], lab["end"]): (lab["rack"], lab["u"], lab["device"], lab["port"]) for lab in labels}
    assert len(got) == len(labels) == 2 * len(plan["cables"])
    assert got == expected
    colour = {g: v["label"] for g, v in cat["colours"].items()}
    kinds = {c["id"]: ("fabric" if c["kind"] == "fabric" else c["group"]) for c in plan["cables"]}
    for lab in labels:
        assert lab["barcode"] == lab["cable"]
        assert lab["colour"] == colour[kinds[lab["cable"]]]
        assert 0 < len(lab["line1"]) <= cat["labels"]["max_length"] and 0 < len(lab["line2"]) <= cat["labels"]["max_length"]
        assert lab["cable"] in lab["line1"] and lab["device"] in lab["line1"] and lab["port"] in lab["line1"]
        far = expected[(lab["cable"], "B" if lab["end"] == "A" else "A")]
        assert far[2] in lab["line2"] and far[3] in lab["line2"]
    # walking order: racks in layout order, in a rack from the top U down
    rank = {r["name"]: i for i, r in enumerate(plan["layout"]["racks"])}
    keys = [(rank[lab["rack"]], -int(lab["u"])) for lab in labels]
    assert keys == sorted(keys)
    assert [lab["rack"] for lab in labels][0] == plan["layout"]["racks"][0]["name"]


def split_catalog(tmp_path, above: int) -> str:
    cat = yaml.safe_load((ROOT / "cabling" / "cabling.yaml").read_text())
    cat["sheets"]["split_above_cables"] = above
    path = tmp_path / f"cab-{above}.yaml"
    path.write_text(yaml.safe_dump(cat))
    return str(path)


@pytest.mark.slow
def test_big_hall_one_workbook_per_row_and_status_on_the_folder(tmp_path, glm1k_build):
    plan = json.loads((glm1k_build / "plan.json").read_text())
    out = tmp_path / "o"
    r = run_zcube("cabling", str(glm1k_build / "plan.json"), "-o", str(out), "--catalog", split_catalog(tmp_path, 1000), "--accept-catalog-change")
    assert r.returncode == 0, r.stderr
    row_of = {rk["name"]: rk["row"] for rk in plan["layout"]["racks"]}
    rows = sorted(set(row_of.values()))
    books = sorted(p.name for p in (out / "cabling").glob("*.xlsx"))
    assert books == sorted(["summary.xlsx"] + [f"row-{r}.xlsx" for r in rows]) and not (out / "cabling.xlsx").exists()
    assert (out / "labels.csv").exists() and (out / "cables.csv").exists()
    seen: dict[str, set[str]] = {}
    for name in books:
        wb = load_workbook(out / "cabling" / name, read_only=True)
        if name == "summary.xlsx":
            assert wb.sheetnames == ["Summary", "BOM", "Fabric"]
            continue
        for ws in wb.worksheets:
            assert ws.title.startswith("Rack ") and row_of[ws.title[5:]] == name[4:-5]  # only this row's racks
            ws.reset_dimensions()
            for row in list(ws.iter_rows(values_only=True))[1:]:
                seen.setdefault(row[0], set()).add(ws.title[5:])
        wb.close()
    for c in plan["cables"]:  # each cable on exactly the sheets of its racks, whichever workbook they are in
        assert seen[c["id"]] == {c["a"]["rack"], c["b"]["rack"]}, c["id"]
    # a technician fills in one row's workbook; status reads the folder
    path = out / "cabling" / f"row-{rows[0]}.xlsx"
    wb = load_workbook(path)
    ws = wb.worksheets[0]
    header = [c.value for c in ws[1]]
    for row in ws.iter_rows(min_row=2, max_row=6):
        row[header.index("Installed")].value = "yes"
    wb.save(path)
    r = run_zcube("cabling", "status", str(out / "cabling"), "--json")
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout)
    assert st["overall"]["cables"] == 3072 and st["overall"]["installed"] == 5
    assert {s["sheet"] for s in st["sheets"]} == {f"Rack {rk}" for rk in row_of}
    # back under the split size: one workbook again, the row workbooks removed
    r = run_zcube("cabling", str(glm1k_build / "plan.json"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "cabling.xlsx").exists() and not list((out / "cabling").glob("*.xlsx"))
    r = run_zcube("cabling", "status", str(tmp_path / "nothing-here"))
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_fast_row_writer_reads_back_as_openpyxl_writes(tmp_path):
    """The cut sheets' text-built rows (write_rows_fast) read back cell for cell like openpyxl's own writer."""
    from openpyxl import Workbook

    from zcube_deploy.cabling.workbook import write_rows_fast

    titles = ["Cable ID", "U", "Device", "Length m", "Installed", "Note"]
    values = [("H000001", 47, "gpu<01>&co", 1.5, None, " leading space"), ("F00002", 1, 'q"uote', 10.0, "yes", None),
              ("H000003", 0, "\u00e9t\u00e9", 2.25, None, "tab\there"), ("X", -3, "", 1e-7, True, "trailing ")]
    for fast in (False, True):
        wb = Workbook(write_only=True)
        ws = wb.create_sheet("S")
        if fast:
            write_rows_fast(ws, titles, values)
        else:
            ws.append(titles)
            for v in values:
                ws.append(list(v))
        wb.save(tmp_path / f"{fast}.xlsx")
    ours, theirs = load_workbook(tmp_path / "True.xlsx")["S"], load_workbook(tmp_path / "False.xlsx")["S"]
    got = [[c.value for c in row] for row in ours.iter_rows()]
    assert got == [[c.value for c in row] for row in theirs.iter_rows()]
    assert got[1] == ["H000001", 47, "gpu<01>&co", 1.5, None, " leading space"]
    assert ours["A1"].font.b and ours["A1"].fill.fgColor.rgb.endswith("D9D9D9") and ours.max_row == 5
