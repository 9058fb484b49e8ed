"""Cabling: workbook cell values (golden for lab-64), BOM totals, print settings, status read-back, exports."""

from __future__ import annotations

import csv
import json
import re

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
        assert header[-2:] == ("Installed", "Checked")
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
    assert ws.freeze_panes == "A2"
    assert ws.auto_filter.ref.startswith("A1:R")
    assert ws.page_setup.orientation == "landscape"
    assert ws.page_setup.fitToWidth == 1 and ws.sheet_properties.pageSetUpPr.fitToPage
    assert ws.print_title_rows == "$1:$1"
    assert ws.column_dimensions["A"].width == 10
    dv = ws.data_validations.dataValidation
    assert dv and dv[0].formula1 == '"' + ",".join(STATUS_VALUES) + '"'
    assert {str(r) for r in dv[0].sqref.ranges} == {f"Q2:Q{ws.max_row}", f"R2:R{ws.max_row}"}
    assert len(ws.conditional_formatting) == 1  # colour by group
    assert "glm1k" in ws.oddHeader.center.text


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
    ids = []
    for i, row in enumerate(ws.iter_rows(min_row=2), start=2):
        if i <= 11:  # a technician marks ten cables installed, four of them checked, one issue
            row[16].value = "yes"
            if i <= 5:
                row[17].value = "yes"
            ids.append(row[0].value)
    ws.cell(row=12, column=17, value="issue")
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
    for name in ("cabling.xlsx", "cables.csv", "netbox-cables.csv", "topology.dot"):
        assert (tmp_path / name).stat().st_size > 0


def test_label_too_long_is_an_input_error(tmp_path):
    cat = yaml.safe_load((ROOT / "cabling" / "cabling.yaml").read_text())
    cat["labels"]["max_length"] = 20
    (tmp_path / "cab.yaml").write_text(yaml.safe_dump(cat))
    inv = yaml.safe_load((INVENTORIES / "lab-64.yaml").read_text())
    inv["cabling_catalog"] = str(tmp_path / "cab.yaml")
    (tmp_path / "inv.yaml").write_text(yaml.safe_dump(inv))
    r = run_zcube("build", str(tmp_path / "inv.yaml"), "-o", str(tmp_path / "o"))
    assert r.returncode == 2
    assert "labels are too long" in r.stderr and "H000001" in r.stderr


def test_switches_that_do_not_fit_are_reported(tmp_path):
    inv = yaml.safe_load((INVENTORIES / "lab-64.yaml").read_text())
    inv["layout"]["rows"][0]["racks"] = [{"name": "A01", "role": "compute"}, {"name": "A02", "role": "compute"},
                                         {"name": "A03", "role": "network", "u_height": 8}]
    (tmp_path / "inv.yaml").write_text(yaml.safe_dump(inv))
    r = run_zcube("plan", str(tmp_path / "inv.yaml"), "-o", str(tmp_path))
    assert r.returncode == 2
    assert "no room for switch" in r.stderr
