"""`zcube hall`: the page's drawings checked against the plan, counted independently of the hall code."""

from __future__ import annotations

import base64
import copy
import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from conftest import ROOT, run_zcube

SVG = "{http://www.w3.org/2000/svg}"


# ------------------------------------------------------------------ reading the page back
def _svgs(text: str) -> list[str]:
    return re.findall(r"<svg\b.*?</svg>", text, re.S)


def floor_of(html: str) -> etree._Element:
    """The floor plan SVG, parsed as strict XML."""
    m = re.search(r'<svg [^>]*id="floor".*?</svg>', html, re.S)
    assert m, "no floor plan SVG in the page"
    return etree.fromstring(m.group(0).encode())


def row_details(html: str) -> dict[str, dict[str, str]]:
    """Row -> rack -> the rack's detail fragment, from the JSON the page keeps per row."""
    out = {}
    for row, blob in re.findall(r'<script type="application/json" class="row-data" id="row-([^"]+)">(.*?)</script>', html, re.S):
        out[row] = json.loads(blob)
    return out


def elevations(html: str) -> dict[str, etree._Element]:
    """Rack -> its elevation SVG, parsed as strict XML."""
    out = {}
    for racks in row_details(html).values():
        for rack, frag in racks.items():
            svgs = _svgs(frag)
            assert len(svgs) == 1, rack
            out[rack] = etree.fromstring(svgs[0].encode())
    return out


def group_of(c: dict) -> str:
    return "fabric" if c["kind"] == "fabric" else c["group"]


def plan_bundles(plan: dict) -> Counter:
    """(rack, rack, group) -> cables, straight from plan["cables"]."""
    n = Counter()
    for c in plan["cables"]:
        a, b = sorted((c["a"]["rack"], c["b"]["rack"]))
        n[(a, b, group_of(c))] += 1
    return n


def drawn_bundles(floor) -> Counter:
    n = Counter()
    for el in floor.iter():
        if el.get("class", "").split()[:1] == ["bundle"]:
            key = (el.get("data-a"), el.get("data-b"), el.get("data-group"))
            assert key not in n, f"bundle {key} drawn twice"
            n[key] = int(el.get("data-cable-count"))
    return n


@pytest.fixture(scope="module")
def glm(glm1k_build):
    plan = json.loads((glm1k_build / "plan.json").read_text())
    return glm1k_build, plan


# ------------------------------------------------------------------ the drawings
def test_build_writes_the_page_and_it_is_self_contained(glm):
    d, _ = glm
    html = (d / "hall" / "index.html").read_text()
    assert html.startswith("<!DOCTYPE html>")
    # no server, no network: nothing is loaded from anywhere
    assert not re.search(r'\b(src|href)="(https?:)?//', html)
    assert "<link" not in html and "@import" not in html and "url(http" not in html


def test_every_rack_switch_and_server_appears_exactly_once(glm):
    d, plan = glm
    html = (d / "hall" / "index.html").read_text()
    floor = floor_of(html)
    racks = Counter(el.get("data-rack") for el in floor.iter(f"{SVG}g") if "rack" in el.get("class", "").split())
    assert racks == Counter(r["name"] for r in plan["layout"]["racks"])
    elev = elevations(html)
    assert set(elev) == {r["name"] for r in plan["layout"]["racks"]}
    devices = Counter()
    where = {}
    for rack, svg in elev.items():
        for el in svg.iter(f"{SVG}g"):
            if el.get("data-device"):
                devices[el.get("data-device")] += 1
                where[el.get("data-device")] = (rack, int(el.get("data-u")))
    expected = [s["name"] for s in plan["switches"]] + [s["name"] for s in plan["servers"]]
    assert devices == Counter(expected)
    for s in plan["switches"] + plan["servers"]:
        assert where[s["name"]] == (s["rack"], s["u"])


def test_floor_bundles_count_the_plans_cables_between_racks(glm):
    d, plan = glm
    floor = floor_of((d / "hall" / "index.html").read_text())
    assert floor.get("data-bundle-level") == "rack"
    assert drawn_bundles(floor) == plan_bundles(plan)


def test_bundles_use_the_workbooks_colours(glm):
    import yaml

    d, _ = glm
    cat = yaml.safe_load((ROOT / "cabling" / "cabling.yaml").read_text())
    floor = floor_of((d / "hall" / "index.html").read_text())
    for el in floor.iter(f"{SVG}path"):
        if el.get("data-group"):
            assert el.get("stroke") == cat["colours"][el.get("data-group")]["label"]
    html = (d / "hall" / "index.html").read_text()
    for g in ("odd", "even", "fabric"):
        assert f'#{cat["colours"][g]["fill"].upper()}' in html


def test_switch_port_use_matches_the_plan(glm):
    d, plan = glm
    elev = elevations((d / "hall" / "index.html").read_text())
    R = plan["sizing"]["logical_ports"]
    by_name = {s["name"]: s for s in plan["switches"]}
    seen = 0
    for svg in elev.values():
        for el in svg.iter(f"{SVG}g"):
            name = el.get("data-device")
            if name in by_name:
                kinds = Counter(i["kind"] for i in by_name[name]["interfaces"])
                assert int(el.get("data-ports-host")) == kinds["host"]
                assert int(el.get("data-ports-fabric")) == kinds["fabric"]
                assert sum(int(el.get(f"data-ports-{k}")) for k in ("host", "fabric", "reserved", "unused")) == R
                seen += 1
    assert seen == len(plan["switches"])


def test_row_level_bundles_when_a_hall_has_too_many_rack_pairs(glm, monkeypatch):
    from zcube_deploy.cabling.sheets import bill_of_materials
    from zcube_deploy.catalog.cabling import load_cabling_catalog
    from zcube_deploy.hall import model as hall_model
    from zcube_deploy.hall.draw import floor_svg

    _, plan = glm
    monkeypatch.setattr(hall_model, "MAX_RACK_BUNDLES", 10)
    cat = load_cabling_catalog()
    m = hall_model.build_hall_model(plan, {g: c.model_dump() for g, c in cat.colours.items()}, bill_of_materials(plan, cat))
    floor = etree.fromstring(floor_svg(m).encode())
    assert floor.get("data-bundle-level") == "row"
    row = {r["name"]: r["row"] for r in plan["layout"]["racks"]}
    expected = Counter()
    for c in plan["cables"]:
        a, b = sorted((row[c["a"]["rack"]], row[c["b"]["rack"]]))
        expected[(a, b, group_of(c))] += 1
    assert drawn_bundles(floor) == expected


def test_empty_u_are_drawn(glm):
    d, plan = glm
    elev = elevations((d / "hall" / "index.html").read_text())
    used = {r["name"]: set() for r in plan["layout"]["racks"]}
    h_srv = plan["models"]["server"]["u_height"]
    h_sw = plan["models"]["switch"]["u_height"]
    for s in plan["servers"]:
        used[s["rack"]] |= set(range(s["u"], s["u"] + h_srv))
    for s in plan["switches"]:
        used[s["rack"]] |= set(range(s["u"], s["u"] + h_sw))
    for r in plan["layout"]["racks"]:
        free = set(range(1, r["u_height"] + 1)) - used[r["name"]]
        paths = [p for p in elev[r["name"]].iter(f"{SVG}path") if p.get("class") == "empty-u"]
        drawn = set()
        for p in paths:
            for part in p.get("data-empty-u").split(","):
                lo, _, hi = part.partition("-")
                drawn |= set(range(int(lo), int(hi or lo) + 1))
        assert drawn == free, r["name"]
        if free:
            assert paths[0].get("d").count("z") == len(free)


# ------------------------------------------------------------------ overlays
def _finding(fid, kind, cables, plan):
    by_id = {c["id"]: c for c in plan["cables"]}
    ends = []
    for cid in cables:
        c = by_id[cid]
        ends += [dict(c["a"]), dict(c["b"])]
    return {"id": fid, "kind": kind, "cables": cables, "ends": ends, "expected": "", "observed": "", "fix": [],
            "what": f"{kind} on {', '.join(cables)}", "instruction": f"INSTRUCTION-{fid}: reseat {', '.join(cables)}"}


def test_a_verify_finding_colours_exactly_its_racks_and_cables(glm, tmp_path):
    d, plan = glm
    host = next(c for c in plan["cables"] if c["kind"] == "host" and c["a"]["rack"] == "B03")
    fabric = next(c for c in plan["cables"] if c["kind"] == "fabric" and c["a"]["rack"] != c["b"]["rack"])
    doc = {"cluster": plan["cluster"]["name"], "mode": "replay", "scope": [], "unreachable": {},
           "summary": {"findings": 2}, "findings": [_finding("V1", "down", [host["id"]], plan), _finding("V2", "swapped", [fabric["id"]], plan)]}
    vj = tmp_path / "verify.json"
    vj.write_text(json.dumps(doc))
    r = run_zcube("hall", str(d / "plan.json"), "-o", str(tmp_path), "--verify", str(vj))
    assert r.returncode == 0, r.stderr
    assert "2 verify findings in" in r.stdout
    html = (tmp_path / "hall" / "index.html").read_text()
    floor = floor_of(html)
    red_racks = {el.get("data-rack") for el in floor.iter(f"{SVG}g") if "finding" in el.get("class", "").split()
                 and "rack" in el.get("class", "").split()}
    assert red_racks == {host["a"]["rack"], host["b"]["rack"], fabric["a"]["rack"], fabric["b"]["rack"]}
    red = {(el.get("data-a"), el.get("data-b"), el.get("data-group")): el.get("data-finding-cables")
           for el in floor.iter() if el.get("class") == "bundle finding"}
    expected = {}
    for c in (host, fabric):
        a, b = sorted((c["a"]["rack"], c["b"]["rack"]))
        expected[(a, b, group_of(c))] = c["id"]
    assert red == expected
    for el in floor.iter():
        if el.get("class") == "bundle finding":
            assert el.get("stroke") == "#d40000"
    # the instruction on hover (SVG title of the rack) and in the list
    for f, c in (("V1", host), ("V2", fabric)):
        for rack in (c["a"]["rack"], c["b"]["rack"]):
            title = floor.find(f'.//{SVG}g[@data-rack="{rack}"]/{SVG}title').text
            assert f"INSTRUCTION-{f}" in title
        assert re.search(rf'<li data-finding="{f}".*?INSTRUCTION-{f}', html, re.S)
    # in the elevations, exactly the devices at the finding's ends
    bad = {el.get("data-device") for svg in elevations(html).values() for el in svg.iter(f"{SVG}g")
           if "finding" in el.get("class", "").split()}
    assert bad == {host["a"]["device"], host["b"]["device"], fabric["a"]["device"], fabric["b"]["device"]}


def test_without_findings_nothing_is_red(glm):
    d, _ = glm
    html = (d / "hall" / "index.html").read_text()
    floor = floor_of(html)
    assert not [el for el in floor.iter() if "finding" in el.get("class", "").split()]


def test_the_page_is_the_same_bytes_every_time(glm, tmp_path):
    d, _ = glm
    for sub in ("a", "b"):
        r = run_zcube("hall", str(d / "plan.json"), "-o", str(tmp_path / sub))
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "a" / "hall" / "index.html").read_bytes() == (tmp_path / "b" / "hall" / "index.html").read_bytes()
    assert (tmp_path / "a" / "hall" / "index.html").read_bytes() == (d / "hall" / "index.html").read_bytes()


@pytest.mark.slow
def test_cabling_progress_per_rack(glm, tmp_path):
    from openpyxl import load_workbook

    d, _ = glm
    wb = load_workbook(d / "cabling.xlsx")
    ws = wb["Rack A02"]
    header = [c.value for c in ws[1]]
    ii, ki = header.index("Installed") + 1, header.index("Checked") + 1
    rows = ws.max_row - 1
    for r in range(2, 2 + 10):
        ws.cell(r, ii, "yes")
    for r in range(2, 2 + 4):
        ws.cell(r, ki, "yes")
    wb.save(tmp_path / "progress.xlsx")
    r = run_zcube("hall", str(d / "plan.json"), "-o", str(tmp_path), "--cabling", str(tmp_path / "progress.xlsx"))
    assert r.returncode == 0, r.stderr
    floor = floor_of((tmp_path / "hall" / "index.html").read_text())
    g = floor.find(f'.//{SVG}g[@data-rack="A02"]')
    assert (g.get("data-checked"), g.get("data-cables")) == ("4", str(rows))
    assert "10/%d installed" % rows in g.find(f"{SVG}title").text
    g = floor.find(f'.//{SVG}g[@data-rack="A01"]')
    assert g.get("data-checked") == "0"


def test_analysis_plot_is_embedded(glm, tmp_path):
    d, _ = glm
    png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
    (tmp_path / "an").mkdir()
    (tmp_path / "an" / "unreachability.png").write_bytes(png)
    (tmp_path / "an" / "analyze.json").write_text(json.dumps({"random_link_failures": [
        {"p": 0.01, "zcube": {"mean": 2e-4}, "dual_plane_clos": {"mean": 4e-4}}]}))
    r = run_zcube("hall", str(d / "plan.json"), "-o", str(tmp_path), "--analyze", str(tmp_path / "an" / "analyze.json"))
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "hall" / "index.html").read_text()
    assert f'src="data:image/png;base64,{base64.b64encode(png).decode()}"' in html
    assert "2.00e-04" in html and "4.00e-04" in html


def test_bad_overlays_are_input_errors(glm, tmp_path):
    d, _ = glm
    (tmp_path / "bad.json").write_text('{"findings": [{"id": "x"}]}')
    (tmp_path / "other.json").write_text('{"cluster": "elsewhere", "findings": []}')
    for args, text in ((["--verify", str(tmp_path / "missing.json")], "no such file"),
                       (["--verify", str(tmp_path / "bad.json")], "findings[0].kind: missing"),
                       (["--verify", str(tmp_path / "other.json")], "is for cluster 'elsewhere'"),
                       (["--analyze", str(tmp_path / "bad.json")], "not an analyze.json"),
                       (["--cabling", str(tmp_path / "bad.json")], "not a readable .xlsx")):
        r = run_zcube("hall", str(d / "plan.json"), "-o", str(tmp_path), *args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert text in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------ in a real browser
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--enable-logging=stderr", "--v=0"]


def _chromium(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    return subprocess.run([CHROMIUM, *BROWSER_FLAGS, f"--user-data-dir={profile}", *args, url],
                          capture_output=True, text=True, timeout=120)


def console_lines(stderr: str) -> list[str]:
    """Messages the page wrote to the console (errors, uncaught exceptions, failed loads)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install chromium); "
                                              "the page is checked in a real browser only where it is")
def test_the_page_renders_in_chromium_without_console_errors(glm, tmp_path):
    d, plan = glm
    page = d / "hall" / "index.html"
    # the rack panel is filled by the page's script from the row's JSON when a rack is opened (#rack=NAME)
    rack = next(r["name"] for r in plan["layout"]["racks"] if r["role"] == "network")
    r = _chromium(tmp_path, f"{page.as_uri()}#rack={rack}", "--dump-dom")
    assert r.returncode == 0, r.stderr[-2000:]
    assert console_lines(r.stderr) == []
    dom = r.stdout
    panel = dom[dom.index('id="rack-panel"'):]
    assert f'class="rack-detail" data-rack="{rack}"' in panel[:400]
    assert panel.count('data-kind="switch"') == sum(s["rack"] == rack for s in plan["switches"])
    # a device link opens its rack and picks the device out
    server = plan["servers"][9]
    r = _chromium(tmp_path, f"{page.as_uri()}#device={server['name']}", "--dump-dom")
    assert r.returncode == 0 and console_lines(r.stderr) == []
    panel = r.stdout[r.stdout.index('id="rack-panel"'):]
    assert f'class="rack-detail" data-rack="{server["rack"]}"' in panel[:400]
    assert re.search(rf'class="device server picked" data-device="{server["name"]}"', panel)
    shot = tmp_path / "hall.png"
    r = _chromium(tmp_path, f"{page.as_uri()}#rack={rack}", f"--screenshot={shot}", "--window-size=1600,1000")
    assert r.returncode == 0, r.stderr[-2000:]
    assert console_lines(r.stderr) == []
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install chromium)")
def test_console_errors_are_seen(tmp_path):
    """The check above would see a broken script."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><script>nope();</script></body></html>")
    r = _chromium(tmp_path, bad.as_uri(), "--dump-dom")
    assert any("nope is not defined" in line for line in console_lines(r.stderr))


def test_a_partly_filled_hall_shows_reserved_ports_and_empty_racks():
    """Capacity for 128 servers, 40 installed: host ports kept for growth are 'reserved', and the page still
    has every rack (some of them empty) and every installed device once."""
    import copy

    import yaml

    from zcube_deploy.cabling.sheets import bill_of_materials
    from zcube_deploy.catalog.cabling import load_cabling_catalog
    from zcube_deploy.hall.page import render_page
    from zcube_deploy.hall.model import build_hall_model
    from zcube_deploy.inventory import resolve_inventory
    from zcube_deploy.plan import build_plan

    data = yaml.safe_load((ROOT / "inventories" / "glm-1k.yaml").read_text())
    data["topology"]["capacity_servers"] = 128
    data["servers"]["generate"]["count"] = 40
    plan = build_plan(resolve_inventory(copy.deepcopy(data), base=ROOT / "inventories"))
    cat = load_cabling_catalog()
    model = build_hall_model(plan, {g: c.model_dump() for g, c in cat.colours.items()}, bill_of_materials(plan, cat))
    html = render_page(model)
    K, R = plan["sizing"]["K"], plan["sizing"]["logical_ports"]
    host = Counter(c["b"]["device"] for c in plan["cables"] if c["kind"] == "host")
    ports = {}
    for svg in elevations(html).values():
        for el in svg.iter(f"{SVG}g"):
            if el.get("data-kind") == "switch":
                ports[el.get("data-device")] = {k: int(el.get(f"data-ports-{k}")) for k in ("host", "fabric", "reserved", "unused")}
    assert set(ports) == {s["name"] for s in plan["switches"]}
    reserved = 0
    for name, p in ports.items():
        assert p["host"] == host[name]
        assert p["reserved"] == K - host[name]  # the fabric is complete from day one: no fabric port reserved
        assert sum(p.values()) == R
        reserved += p["reserved"]
    assert reserved == len(plan["switches"]) * K - plan["counts"]["host_cables"] > 0
    floor = floor_of(html)
    assert drawn_bundles(floor) == plan_bundles(plan)
    empty = [el for el in floor.iter(f"{SVG}g") if "rack" in el.get("class", "").split() and el.get("data-servers") == "0"
             and el.get("data-odd") == "0" and el.get("data-even") == "0"]
    assert empty, "a partly filled hall has empty racks"


# ------------------------------------------------------------------ overlay files checked whole
def _verify_doc(plan: dict) -> dict:
    host = next(c for c in plan["cables"] if c["kind"] == "host")
    fabric = next(c for c in plan["cables"] if c["kind"] == "fabric" and c["a"]["rack"] != c["b"]["rack"])
    return {"cluster": plan["cluster"]["name"], "mode": "replay", "scope": [], "summary": {"findings": 2},
            "unreachable": {plan["switches"][0]["name"]: "timed out"},
            "findings": [_finding("V1", "down", [host["id"]], plan), _finding("V2", "swapped", [fabric["id"]], plan)]}


def test_a_findings_file_of_the_wrong_shape_names_the_file_and_every_place(glm, tmp_path):
    """Issue 23 item 6: `unreachable` as a string ended in an AttributeError in the hall model."""
    d, plan = glm
    doc = _verify_doc(plan)
    doc["unreachable"] = "ZC-O001 timed out"
    doc["findings"][0]["ends"][0]["rack"] = 7
    doc["findings"][1]["cables"] = "C-1"
    vj = tmp_path / "verify.json"
    vj.write_text(json.dumps(doc))
    r = run_zcube("hall", str(d / "plan.json"), "-o", str(tmp_path / "out"), "--verify", str(vj))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert f"{vj} is not a verify.json" in r.stderr
    for place in ("unreachable:", "findings[0].ends[0].rack:", "findings[1].cables:"):
        assert place in r.stderr, (place, r.stderr)
    assert not (tmp_path / "out" / "hall").exists(), "a refused overlay leaves no page behind"


def test_an_analyze_file_of_the_wrong_shape_names_the_place(glm, tmp_path):
    d, _ = glm
    aj = tmp_path / "analyze.json"
    aj.write_text(json.dumps({"random_link_failures": [{"p": 0.01, "zcube": {"mean": "low"}, "dual_plane_clos": {}}]}))
    r = run_zcube("hall", str(d / "plan.json"), "-o", str(tmp_path / "out"), "--analyze", str(aj))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert "random_link_failures[0].zcube.mean:" in r.stderr and "random_link_failures[0].dual_plane_clos.mean: missing" in r.stderr


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)


def _all_places(doc, at=()):
    yield at
    if isinstance(doc, (dict, list)):
        for k in (doc if isinstance(doc, dict) else range(len(doc))):
            yield from _all_places(doc[k], at + (k,))


@st.composite
def _place(draw, doc) -> tuple:
    """A place in a JSON document: half the time any place alike (every leaf as likely), half the time a
    top-level key, then deeper with even odds at each level (the top-level fields hit as often as the
    findings' innards)."""
    if draw(st.booleans()):
        return draw(st.sampled_from(list(_all_places(doc))[1:] or [()]))
    at, node = (), doc
    while isinstance(node, (dict, list)) and node and (not at or draw(st.booleans())):
        k = draw(st.sampled_from(list(node) if isinstance(node, dict) else range(len(node))))
        at, node = at + (k,), node[k]
    return at


@st.composite
def mutated(draw, doc):
    """``doc`` with one to three places replaced by any JSON value, deleted, or given an extra key."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(_place(doc))
        if not at:
            return draw(JSON_VALUES)
        parent = doc
        for k in at[:-1]:
            parent = parent[k]
        how = draw(st.sampled_from(["replace", "delete", "extra"]))
        if how == "replace":
            parent[at[-1]] = draw(JSON_VALUES)
        elif how == "delete":
            del parent[at[-1]]
        elif isinstance(parent[at[-1]], dict):
            parent[at[-1]][draw(st.text(max_size=8))] = draw(JSON_VALUES)
    return doc


@pytest.fixture(scope="module")
def lab64_hall_plan(lab64_plan):
    return lab64_plan


def _drawn_or_refused(plan: dict, tmp_path_factory, overlay: str, base: dict, examples: int) -> None:
    """``base`` mutated anywhere (any JSON value at any place, keys deleted or added) as the overlay
    file ``overlay`` (write_hall's keyword: verify, analyze) either gives a page or an input error
    naming the file and a place, nothing else; both outcomes are seen."""
    from zcube_deploy.errors import InputErrors
    from zcube_deploy.hall import write_hall

    seen = Counter()

    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(mutated(base))
    def check(doc):
        d = tmp_path_factory.mktemp(f"fuzz-{overlay}")
        f = d / f"{overlay}.json"
        f.write_text(json.dumps(doc))
        try:
            r = write_hall(plan, d / "out", **{overlay: f})
        except InputErrors as exc:
            seen["refused"] += 1
            assert str(f) in exc.title or any(str(f) in p.message for p in exc.problems), exc
            assert all(p.path for p in exc.problems), exc.problems
            assert not (d / "out").exists()
            return
        seen["drawn"] += 1
        assert Path(r["path"]).read_text().endswith("</html>\n")

    check()
    assert seen["refused"] and seen["drawn"], seen


def test_mutated_findings_files_are_drawn_or_refused_never_a_crash(lab64_hall_plan, tmp_path_factory):
    """Issue 23 item 6: a findings file (verify.json) mutated anywhere."""
    _drawn_or_refused(lab64_hall_plan, tmp_path_factory, "verify", _verify_doc(lab64_hall_plan), 120)


def test_mutated_analyze_files_are_drawn_or_refused_never_a_crash(lab64_hall_plan, tmp_path_factory):
    """The other JSON overlay, analyze.json, mutated the same way."""
    base = {"random_link_failures": [{"p": 0.01, "zcube": {"mean": 2e-4, "ci95": [1e-4, 3e-4]}, "dual_plane_clos": {"mean": 4e-4}},
                                     {"p": 0.05, "zcube": {"mean": 5e-3}, "dual_plane_clos": {"mean": 1e-2}}],
            "plan": {"cluster": "lab64"}}
    _drawn_or_refused(lab64_hall_plan, tmp_path_factory, "analyze", base, 100)


# ------------------------------------------------------------------ known-bad cases (issue 23 item 5)
def test_findings_are_drawn_on_a_big_halls_row_level_floor_plan(glm, monkeypatch):
    """Above MAX_RACK_BUNDLES the floor plan draws row-to-row bundles; a finding's cable must still
    make its row bundle red (and its racks), as it does at rack level."""
    from zcube_deploy.cabling.sheets import bill_of_materials
    from zcube_deploy.catalog.cabling import load_cabling_catalog
    from zcube_deploy.hall import model as hall_model
    from zcube_deploy.hall.draw import floor_svg

    _, plan = glm
    row = {r["name"]: r["row"] for r in plan["layout"]["racks"]}
    across = next(c for c in plan["cables"] if row[c["a"]["rack"]] != row[c["b"]["rack"]])
    inside = next(c for c in plan["cables"] if row[c["a"]["rack"]] == row[c["b"]["rack"]] and c["a"]["rack"] != c["b"]["rack"])
    verify = {"findings": [_finding("V1", "down", [across["id"]], plan), _finding("V2", "swapped", [inside["id"]], plan)]}
    monkeypatch.setattr(hall_model, "MAX_RACK_BUNDLES", 10)
    cat = load_cabling_catalog()
    m = hall_model.build_hall_model(plan, {g: c.model_dump() for g, c in cat.colours.items()}, bill_of_materials(plan, cat), verify=verify)
    floor = etree.fromstring(floor_svg(m).encode())
    assert floor.get("data-bundle-level") == "row"
    red = {(el.get("data-a"), el.get("data-b"), el.get("data-group")): el.get("data-finding-cables")
           for el in floor.iter() if el.get("class") == "bundle finding"}
    expected = {}
    for c in (across, inside):
        a, b = sorted((row[c["a"]["rack"]], row[c["b"]["rack"]]))
        expected.setdefault((a, b, group_of(c)), []).append(c["id"])
    assert red == {k: " ".join(sorted(v)) for k, v in expected.items()}
    for el in floor.iter():
        if el.get("class") == "bundle finding":  # a path between rows, a loop badge (circle) inside one row
            mark = el if el.tag == f"{SVG}path" else el.find(f"{SVG}circle")
            assert mark.get("stroke") == "#d40000"
    red_racks = {el.get("data-rack") for el in floor.iter(f"{SVG}g") if {"rack", "finding"} <= set(el.get("class", "").split())}
    assert red_racks == {across["a"]["rack"], across["b"]["rack"], inside["a"]["rack"], inside["b"]["rack"]}


def test_the_page_escapes_what_a_findings_file_says(glm, tmp_path):
    """The page's template escapes every value (autoescape on): a finding's text is shown, never run."""
    d, plan = glm
    doc = _verify_doc(plan)
    doc["findings"][0]["instruction"] = '<script>alert("i")</script> & reseat'
    doc["findings"][0]["kind"] = "<b>down</b>"
    doc["findings"][0]["what"] = "<img src=x onerror=alert(1)>"
    vj = tmp_path / "verify.json"
    vj.write_text(json.dumps(doc))
    r = run_zcube("hall", str(d / "plan.json"), "-o", str(tmp_path), "--verify", str(vj))
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "hall" / "index.html").read_text()
    assert "<script>alert" not in html and "<b>down</b>" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&quot;i&quot;)&lt;/script&gt; &amp; reseat" in html
    assert '<span class="kind">&lt;b&gt;down&lt;/b&gt;</span>' in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
