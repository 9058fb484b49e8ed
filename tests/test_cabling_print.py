"""Cut sheets in print: the glm-1k workbook converted to PDF by LibreOffice, read back from the PDF's text boxes.

Font size from a text box: poppler (pdftotext -bbox) makes a word's box as tall as the font's ascent
plus descent at the font's size, so box height = k x size with k fixed by the font. k is measured
here, not assumed: a calibration workbook with known 11 pt text printed at 100 % goes through the
same LibreOffice and poppler with the same fonts, and k = its box height / 11. A cut-sheet word's
size is then its box height / k.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from openpyxl import Workbook

from conftest import ROOT, run_zcube

SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
PDFTOTEXT = shutil.which("pdftotext")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) is not installed: the printed cut sheets cannot be checked "
                                              "(Debian: apt-get install libreoffice-calc-nogui fonts-crosextra-carlito)"),
    pytest.mark.skipif(PDFTOTEXT is None, reason="pdftotext is not installed (Debian: apt-get install poppler-utils)"),
]

PRINTED_COLUMNS = ["Cable ID", "From rack", "From U", "From device", "From port", "To rack", "To U", "To device", "To port",
                   "Medium", "Length m", "Installed", "Checked"]  # the catalog's columns (group and plane are hidden)
PAPER_PT = {"A4": (841.9, 595.3), "letter": (792.0, 612.0)}  # landscape
CAL_TEXT = "Hxgp0123456789"
WORD = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>')
PAGE = re.compile(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', re.S)
FOOTER = re.compile(r"(?:^| )(Rack \S+), page (\d+) of (\d+)$")


def pdf_pages(pdf: Path) -> list[dict]:
    out = subprocess.run([PDFTOTEXT, "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = []
    for w, h, body in PAGE.findall(out):
        words = [(float(a), float(b), float(c), float(d), html.unescape(t)) for a, b, c, d, t in WORD.findall(body)]
        pages.append({"width": float(w), "height": float(h), "words": words})
    return pages


def lines_of(words):
    """Words grouped into text lines (same baseline within 1 pt), each line's text joined with spaces."""
    lines: dict[float, list] = {}
    for _x0, _y0, _x1, y1, t in sorted(words, key=lambda w: (round(w[3]), w[0])):
        key = next((k for k in lines if abs(k - y1) < 1), y1)
        lines.setdefault(key, []).append(t)
    return [" ".join(ws) for ws in lines.values()]


def calibration_workbook(path: Path) -> None:
    wb = Workbook()
    ws = wb.active
    ws.page_setup.orientation = "landscape"
    ws.page_setup.scale = 100
    for r in range(1, 6):
        ws.cell(row=r, column=1, value=CAL_TEXT)  # the default font: Calibri 11, as on the cut sheets
    ws.column_dimensions["A"].width = 30
    wb.save(path)


@pytest.fixture(scope="module")
def printed(tmp_path_factory, glm1k_build):
    """The glm-1k workbook on A4 (the catalog's default) and on US Letter, plus the calibration page, as PDFs."""
    d = tmp_path_factory.mktemp("print")
    cat = yaml.safe_load((ROOT / "cabling" / "cabling.yaml").read_text())
    assert cat["sheets"]["paper"] == "A4"
    cat["sheets"]["paper"] = "letter"
    (d / "letter.yaml").write_text(yaml.safe_dump(cat))
    r = run_zcube("cabling", str(glm1k_build / "plan.json"), "-o", str(d / "letter"), "--catalog", str(d / "letter.yaml"), "--accept-catalog-change")
    assert r.returncode == 0, r.stderr
    shutil.copy(glm1k_build / "cabling.xlsx", d / "a4.xlsx")
    shutil.copy(d / "letter" / "cabling.xlsx", d / "letter.xlsx")
    calibration_workbook(d / "calibration.xlsx")
    profile = d / "lo-profile"  # a private LibreOffice profile: no clash with another soffice running on the machine
    r = subprocess.run([SOFFICE, f"-env:UserInstallation=file://{profile}", "--headless", "--convert-to", "pdf", "--outdir", str(d),
                        str(d / "calibration.xlsx"), str(d / "a4.xlsx"), str(d / "letter.xlsx")],
                       capture_output=True, text=True, timeout=600)
    for name in ("calibration", "a4", "letter"):
        assert (d / f"{name}.pdf").exists(), f"LibreOffice did not convert {name}.xlsx: {r.stdout} {r.stderr}"
    cal = [w for w in pdf_pages(d / "calibration.pdf")[0]["words"] if w[4] == CAL_TEXT]
    assert len(cal) == 5
    k = max(w[3] - w[1] for w in cal) / 11.0
    assert 0.9 < k < 1.6, f"implausible ascent+descent of the body font: {k:.2f} em"
    return {"dir": d, "k": k, "plan": json.loads((glm1k_build / "plan.json").read_text())}


@pytest.mark.parametrize("paper", ["A4", "letter"])
def test_every_rack_sheet_prints_readable_and_complete(printed, paper):
    plan, k = printed["plan"], printed["k"]
    pages = pdf_pages(printed["dir"] / f"{'a4' if paper == 'A4' else 'letter'}.pdf")
    racks: dict[str, dict] = {}
    for page in pages:
        footer = [m for line in lines_of(page["words"]) if (m := FOOTER.search(line))]
        if not footer:
            continue  # Summary, BOM, Fabric
        rack, n, of = footer[0].group(1)[5:], int(footer[0].group(2)), int(footer[0].group(3))
        assert (page["width"], page["height"]) == pytest.approx(PAPER_PT[paper], abs=1), f"{rack} page {n}: not {paper} landscape"
        sizes = [(w[3] - w[1]) / k for w in page["words"]]
        small = [(w[4], round(s, 1)) for w, s in zip(page["words"], sizes) if s < 8.0]
        assert not small, f"Rack {rack} page {n} on {paper}: text below 8 pt: {small[:5]}"
        texts = {w[4] for w in page["words"]}
        assert "Cable ID" in " ".join(lines_of(page["words"])), f"Rack {rack} page {n}: header row not repeated"
        head = next(line for line in lines_of(page["words"]) if "Cable ID" in line)
        gone = [t for t in PRINTED_COLUMNS if t not in head]  # every column printed, not the first one only
        assert not gone, f"Rack {rack} page {n} on {paper}: columns not printed: {gone}"
        assert f"Rack {rack}" in " ".join(lines_of(page["words"])[:3]), "rack name in the page header"
        r = racks.setdefault(rack, {"pages": set(), "of": of, "words": set()})
        r["pages"].add(n)
        r["words"] |= texts
        assert r["of"] == of
    expected: dict[str, set[str]] = {}
    for c in plan["cables"]:
        for end in ("a", "b"):
            expected.setdefault(c[end]["rack"], set()).add(c["id"])
    assert set(racks) == set(expected), "every rack with cables has its printed sheet"
    for rack, r in racks.items():
        assert r["pages"] == set(range(1, r["of"] + 1)), f"Rack {rack}: pages {sorted(r['pages'])} of {r['of']}"
        missing = expected[rack] - r["words"]
        assert not missing, f"Rack {rack} on {paper}: {len(missing)} cable(s) not printed, e.g. {sorted(missing)[:5]}"


MOVE_HEAD = ["Step", "Do", "ID", "Rack", "U", "Device", "Port", "Label", "New", "Rack", "U", "Device", "Port", "New", "Part", "Done",
             "Checked"]  # the first word of each printed column title of a migration's move sheet


@pytest.fixture(scope="module")
def printed_moves(tmp_path_factory):
    """roft-small -> zcube-small-inplace migrated (roles in temporary places: long labels, rebreak parts), each stage's
    move workbook converted to PDF by LibreOffice."""
    d = tmp_path_factory.mktemp("moves")
    for name in ("roft-small", "zcube-small-inplace"):
        r = run_zcube("plan", str(ROOT / "tests" / "inventories" / f"{name}.yaml"), "-o", str(d / name))
        assert r.returncode == 0, r.stderr
    r = run_zcube("migrate", str(d / "roft-small"), str(d / "zcube-small-inplace"), "-o", str(d / "mig"), "--unit", "4-gpu",
                  "--capacity-floor", "0.5")
    assert r.returncode == 0, r.stderr
    books = sorted((d / "mig").glob("stage-*/moves.xlsx"))
    for b in books:
        shutil.copy(b, d / f"{b.parent.name}.xlsx")
    r = subprocess.run([SOFFICE, f"-env:UserInstallation=file://{d / 'lo-profile'}", "--headless", "--convert-to", "pdf", "--outdir", str(d),
                        *[str(d / f"{b.parent.name}.xlsx") for b in books]], capture_output=True, text=True, timeout=600)
    assert all((d / f"{b.parent.name}.pdf").exists() for b in books), r.stdout + r.stderr
    return d, [b.parent.name for b in books]


def _printed_cells(page: dict) -> dict[int, list[tuple[str, list]]]:
    """Step -> the words printed in each column of that row of a move sheet page: columns from the header row's titles
    (a column runs from its title to the next title), rows from the step numbers in the first column down to the next."""
    words = page["words"]
    head_y = min(w[1] for w in words if w[4] == "Step")
    head = sorted((w for w in words if abs(w[1] - head_y) < 2), key=lambda w: w[0])
    starts = []
    for title in MOVE_HEAD:  # the titles in order, left to right ("Label now": its first word)
        x = next(w[0] for w in head if w[4] == title and (not starts or w[0] > starts[-1]))
        starts.append(x)
    bounds = [s - 1 for s in starts] + [page["width"]]  # a cell's text starts 1.4 pt inside its column
    col = lambda x: max(i for i, b in enumerate(bounds[:-1]) if x >= b)  # noqa: E731
    steps = sorted((w[1], int(w[4])) for w in words if w[1] > head_y + 2 and w[4].isdigit() and col(w[0]) == 0)
    foot = page["height"] - 0.7 * 72
    out = {}
    for k, (top, step) in enumerate(steps):
        bottom = steps[k + 1][0] if k + 1 < len(steps) else foot
        mine = [w for w in words if top - 2 <= w[1] < bottom - 2]
        out[step] = [(MOVE_HEAD[i], sorted((w for w in mine if col(w[0]) == i), key=lambda w: (round(w[1]), w[0])), bounds[i + 1])
                     for i in range(len(MOVE_HEAD))]
    return out


def test_printed_move_sheets_cut_no_text(printed_moves):
    """Every cell of every row of each stage's printed move sheet (LibreOffice -> PDF -> pdftotext) is printed in full
    inside its column: the label texts (two lines each) and the rebreak rows' parts wrap, the row as tall as its text;
    and every step is printed once, on the pages the footer counts."""
    import openpyxl

    d, stages = printed_moves
    long_seen = 0
    for stage in stages:
        ws = openpyxl.load_workbook(d / f"{stage}.xlsx").worksheets[0]
        want = {row[0]: row[:15] for row in ws.iter_rows(min_row=3, values_only=True)}  # rows 1-2: group headings, titles
        title = f"Stage {stage[-2:]} moves"  # the moves sheet's pages (the parts sheet follows)
        pages = [p for p in pdf_pages(d / f"{stage}.pdf") if title in lines_of(p["words"])[0]]
        seen = {}
        for n, page in enumerate(pages, start=1):
            assert f"{n} of {len(pages)}" in " ".join(lines_of(page["words"])), f"{stage} page {n}: the page count is not {len(pages)}"
            for step, cells in _printed_cells(page).items():
                assert step not in seen, f"{stage}: step {step} printed twice"
                seen[step] = True
                for (title, words, right), value in zip(cells, want[step], strict=False):
                    text = "".join(w[4] for w in words)
                    expected = "".join(str(value if value is not None else "").split())
                    assert text == expected, f"{stage} step {step} {title}: printed {text!r}, the cell holds {expected!r}"
                    over = [w[4] for w in words if w[2] > right]
                    assert not over, f"{stage} step {step} {title}: {over} run past the column"
                    long_seen += len(expected) > 30
        assert sorted(seen) == sorted(want), f"{stage}: steps not printed: {sorted(set(want) - set(seen))[:5]}"
    assert long_seen  # labels and parts longer than a line were printed


def _overlap(a, b, shrink: float = 0.25) -> bool:
    """Whether two word boxes overlap, each shrunk by ``shrink`` of its height top and bottom (poppler's box is the
    font's ascent + descent, taller than the line pitch: the boxes of two lines of one cell touch)."""
    ha, hb = (a[3] - a[1]) * shrink, (b[3] - b[1]) * shrink
    return a[0] < b[2] and b[0] < a[2] and a[1] + ha < b[3] - hb and b[1] + hb < a[3] - ha


def test_printed_move_sheets_footer_clear_of_everything(printed_moves):
    """On every printed page of each stage's move sheet the footer's legend (left) and its 'Stage NN moves, page n of
    m' (right) are printed in full, no word of the footer overlaps another word, and the rows end above the footer;
    the group headings (UNPLUG, PLUG) are printed above the column titles on every page. Known-bad: the legend as one
    line with the bottom margin of a one-line footer (as it was) runs into the page count."""
    from collections import Counter

    import openpyxl

    d, stages = printed_moves
    for stage in stages:
        ws = openpyxl.load_workbook(d / f"{stage}.xlsx").worksheets[0]
        legend = ws.oddFooter.left.text.split()
        body_bottom = PAPER_PT["A4"][1] - ws.page_margins.bottom * 72
        title = f"Stage {stage[-2:]} moves"
        pages = [p for p in pdf_pages(d / f"{stage}.pdf") if title in lines_of(p["words"])[0]]
        for n, page in enumerate(pages, start=1):
            words = page["words"]
            foot = [w for w in words if w[1] >= body_bottom]
            rest = [w for w in words if w[1] < body_bottom]
            counter = f"{title}, page {n} of {len(pages)}".split()
            assert Counter(w[4] for w in foot) == Counter(legend + counter), f"{stage} page {n}: the footer is not the legend and page count"
            clash = [(a[4], b[4]) for i, a in enumerate(foot) for b in words if b is not a and _overlap(a, b)]
            assert not clash, f"{stage} page {n}: footer words overlap {clash[:5]}"
            assert max(w[3] for w in rest) < min(w[1] for w in foot), f"{stage} page {n}: the rows run into the footer"
            assert all(w[2] <= page["width"] and w[3] <= page["height"] for w in foot), f"{stage} page {n}: the footer runs off the page"
            step_y = min(w[1] for w in words if w[4] == "Step")
            groups = [w for w in words if w[4] in ("UNPLUG:", "PLUG:")]
            assert len(groups) == 2 and all(w[3] <= step_y + 1 for w in groups), f"{stage} page {n}: group headings not above the titles"
