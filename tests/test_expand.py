"""`zcube expand` offline: the grown plan, add-only change sets, the new cables' sheets, and refusals.

The change sets are checked here apart from expand/changes.py: the old and new rendered configs are
read into sections with a few lines of text handling, and the written diffs are judged against them.
"""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_zcube
from zcube_deploy.expand.changes import ChangeSet, change_sets, check_change_set
from zcube_deploy.platforms import platform_module

INVENTORIES = ROOT / "inventories"
PM = platform_module("ruijie_rgos")


def _sections(text: str) -> dict[str, list[str]]:
    """Top-level line -> its indented lines (stripped); comments and blank lines left out."""
    out: dict[str, list[str]] = {}
    head = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("!"):
            continue
        if line[0] == " ":
            out[head].append(line.strip())
        else:
            head = line.rstrip()
            out.setdefault(head, [])
    return out


def _quoted(first: str) -> list[str]:
    """The lines of docs/expand.md's code block that starts with ``first``."""
    text = (ROOT / "docs" / "expand.md").read_text()
    block = text[text.index(first):]
    return block[: block.index("```")].strip().splitlines()


def _inventory(tmp: Path, name: str, count: int, capacity: int = 128) -> Path:
    data = yaml.safe_load((INVENTORIES / "glm-1k.yaml").read_text())
    data["topology"]["capacity_servers"] = capacity
    data["servers"]["generate"]["count"] = count
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(scope="module")
def glm_grown(tmp_path_factory):
    """glm-1k planned and rendered with 64 of 128 servers, then `zcube expand` to all 128."""
    tmp = tmp_path_factory.mktemp("expand")
    old = _inventory(tmp, "half", 64)
    assert run_zcube("plan", str(old), "-o", str(tmp / "old")).returncode == 0
    assert run_zcube("render", str(tmp / "old" / "plan.json"), "-o", str(tmp / "old")).returncode == 0
    r = run_zcube("expand", str(tmp / "old" / "plan.json"), str(INVENTORIES / "glm-1k.yaml"), "-o", str(tmp / "new"))
    return tmp, r


def test_expand_glm_half_to_full(glm_grown):
    tmp, r = glm_grown
    assert r.returncode == 0, r.stdout + r.stderr
    for line in _quoted("expand: 64 -> 128"):  # docs/expand.md quotes this output
        assert line in r.stdout, line
    rep = json.loads((tmp / "new" / "expand.json").read_text())
    odd = [f"ZC-O{n:03d}" for n in range(1, 16, 2)]
    assert rep["changed_switches"] == rep["predicted_switches"] == sorted(odd + ["ZC-E010", "ZC-E012", "ZC-E014", "ZC-E016"])
    assert rep["untouched_switches"] == ["ZC-E002", "ZC-E004", "ZC-E006", "ZC-E008"]
    assert len(rep["added"]["servers"]) == 64 and rep["added"]["cables"] == 1024 and rep["existing_lines_negated"] == 0
    # the grown plan is the one `zcube plan` makes of the new inventory
    assert run_zcube("plan", str(INVENTORIES / "glm-1k.yaml"), "-o", str(tmp / "full")).returncode == 0
    assert (tmp / "new" / "plan.json").read_bytes() == (tmp / "full" / "plan.json").read_bytes()


def test_change_sets_only_add(glm_grown):
    """Independently of expand/changes.py: a diff file exists for exactly the changed switches; its sections
    are only the interfaces of ports the old config held as reserved; every line it sends is a line of the
    new config; and every line of the old config outside those ports is still in the new config."""
    tmp, _ = glm_grown
    rep = json.loads((tmp / "new" / "expand.json").read_text())
    diffs = sorted(p.stem for p in (tmp / "new" / "changes").glob("*.diff"))
    assert diffs == rep["changed_switches"]
    new_ports = {}
    for c in json.loads((tmp / "new" / "plan.json").read_text())["cables"]:
        new_ports.setdefault(c["b"]["device"], set()).add(c["b"]["port"])
    for c in json.loads((tmp / "old" / "plan.json").read_text())["cables"]:
        new_ports[c["b"]["device"]].discard(c["b"]["port"])
    sent_total = 0
    for name in rep["untouched_switches"] + diffs:
        old = _sections((tmp / "old" / "configs" / f"{name}.cfg").read_text())
        new = _sections((tmp / "new" / "configs" / f"{name}.cfg").read_text())
        taken = {f"interface {p}" for p in new_ports.get(name, ())}
        for head, lines in old.items():
            if head in taken:
                assert "shutdown" in lines and any(ln.startswith("description reserved") for ln in lines)
                continue
            assert head in new and set(lines) <= set(new[head]), (name, head)
        if name not in diffs:
            assert not taken and old == {k: v for k, v in new.items()}
            continue
        diff = _sections((tmp / "new" / "changes" / f"{name}.diff").read_text())
        diff.pop("exit", None)
        assert set(diff) == taken
        for head, lines in diff.items():
            assert set(lines) <= set(new[head])
            assert [ln for ln in lines if ln.startswith("no ")] == ["no switchport", "no shutdown"]
            sent_total += len(lines) + 1
    assert sent_total == rep["lines_sent"]


def test_new_servers_and_new_cables_only(glm_grown):
    tmp, _ = glm_grown
    rep = json.loads((tmp / "new" / "expand.json").read_text())
    hosts = sorted({p.name.split(".")[0] for p in (tmp / "new" / "changes" / "hosts").iterdir()})
    assert hosts == rep["added"]["servers"] == [f"gpu{n:04d}" for n in range(65, 129)]
    with open(tmp / "new" / "new-cables" / "cables.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    ids = {c["id"] for c in json.loads((tmp / "old" / "plan.json").read_text())["cables"]}
    cable_col = next(k for k in rows[0] if k.lower() in ("cable", "cable_id", "id"))
    assert len(rows) == 1024 and not {r[cable_col] for r in rows} & ids
    with open(tmp / "new" / "new-cables" / "labels.csv", newline="") as f:
        assert len(list(csv.DictReader(f))) == 2 * 1024
    bom = _bom_rows(tmp / "new" / "new-cables" / "cabling.xlsx")  # docs/expand.md: cables and optics, no switch
    assert {r[0] for r in bom} == {"cable", "optic"} and all(r[5] > 0 for r in bom), bom
    assert sum(r[5] for r in bom if r[0] == "cable") == 1024


def _bom_rows(path) -> list[tuple]:
    """The item rows of a cabling workbook's BOM sheet (Item, Model / where, ..., Quantity, ...)."""
    from openpyxl import load_workbook

    ws = load_workbook(path, read_only=True)["BOM"]
    return [r for r in ws.iter_rows(min_row=2, values_only=True) if r and r[0] in ("switch", "cable", "optic")]


def test_a_bom_without_switches_has_no_switch_row():
    """A plan of cables only (expand's new cables) has no 'switch' row of quantity 0; a full plan keeps its one."""
    from zcube_deploy.cabling.sheets import bill_of_materials
    from zcube_deploy.catalog.cabling import plan_catalog

    plan = json.loads((Path(__file__).parent / "golden" / "lab-64" / "plan.json").read_text())
    cat, _ = plan_catalog(plan, None, accept_changed=True)  # the golden plan carries placeholder hashes
    full = bill_of_materials(plan, cat)
    assert [(r["item"], r["quantity"]) for r in full["switches"]] == [("switch", len(plan["switches"]))]
    cut = bill_of_materials({**plan, "switches": []}, cat)
    assert cut["switches"] == [] and cut["totals"]["switches"] == 0 and cut["cables"] == full["cables"]


def test_expand_refuses_what_moves(tmp_path):
    """Known-bad: renamed servers and another host pool: exit 2, every moved row listed, nothing written."""
    old = _inventory(tmp_path, "old", 16, capacity=32)
    assert run_zcube("plan", str(old), "-o", str(tmp_path / "old")).returncode == 0
    data = yaml.safe_load(old.read_text())
    data["servers"]["generate"].update(count=32, name="node{n:04d}")
    data["addressing"]["host_pool"] = "10.16.0.0/20"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(data))
    r = run_zcube("expand", str(tmp_path / "old" / "plan.json"), str(tmp_path / "bad.yaml"), "-o", str(tmp_path / "out"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "servers[gpu0001]: server gpu0001 would go" in r.stderr and "servers[gpu0016]" in r.stderr
    assert "addressing: the plan's addressing would change" in r.stderr
    assert "error: cannot expand: 1121 existing rows would move or go" in r.stderr  # docs/expand.md quotes it
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()



# ---- the change-set check on its own (known-bad cases)
OLD = """hostname A
interface P1
 description gpu1 H1
 ip address 10.0.0.0 255.255.255.254
 no shutdown
interface P2
 description reserved host port 1 for growth
 shutdown
ip route 10.1.0.0 255.255.255.0 10.2.0.1
"""
NEW = OLD.replace(" description reserved host port 1 for growth\n shutdown\n", " description gpu2 H2\n ip address 10.0.0.2 255.255.255.254\n no shutdown\n")


def _check(lines: list[str], new: str = NEW, into=("P2",)) -> ChangeSet:
    return check_change_set(ChangeSet("A", lines, list(into)), OLD, new, None, PM)


def test_check_change_set_accepts_a_port_taken_into_service():
    cs = _check(PM.remediation(OLD, NEW))
    assert cs.problems == [] and cs.existing_negated == []
    assert sorted(cs.placeholders_replaced) == ["interface P2: description reserved host port 1 for growth", "interface P2: shutdown"]


@pytest.mark.parametrize("lines,new,expect", [
    (["interface P1", " shutdown", "exit"], NEW.replace(" no shutdown\ninterface P2", " shutdown\ninterface P2"), "existing line 'no shutdown' would go"),
    (["interface P1", " no ip address 10.0.0.0 255.255.255.254", "exit"], NEW, "a removal"),
    (["no ip route 10.1.0.0 255.255.255.0 10.2.0.1"], NEW, "top-level negation"),
    (["interface P1", " no description gpu1 H1", "exit"], NEW.replace(" description gpu1 H1\n", " no description gpu1 H1\n", 1), "an existing line negated"),
    (["interface P2", " no shutdown", "exit"], NEW, None),
])
def test_check_change_set_known_bad(lines, new, expect):
    cs = _check(lines, new)
    if expect is None:
        assert cs.problems == []
    else:
        assert any(expect in p for p in cs.problems), cs.problems


def test_change_sets_compare_with_the_prediction():
    """A switch that changes without a new cable, or gains a port without changing, is a problem."""
    same = {"A": OLD, "B": OLD}
    grown = {"A": NEW, "B": OLD}
    _, problems = change_sets(same, grown, {"A": ["P2"]}, {"A": None, "B": None}, PM, ["A"])
    assert problems == []
    _, problems = change_sets(same, grown, {"B": ["P2"]}, {"A": None, "B": None}, PM, ["B"])
    assert problems[-2:] == ["A: changes, though the expansion adds no cable to it", "B: gains ports, but its config does not change"]
    assert "A: 'interface P2: shutdown': an existing line negated" in problems  # P2 is no reserved port of A here
    _, problems = change_sets({"A": OLD}, copy.deepcopy(grown), {"A": ["P2"]}, {"A": None, "B": None}, PM, ["A"])
    assert problems == ["B: not in the old plan (a new switch is no expansion within the capacity)"]


def test_lab_grow_connects_only_missing_cables_and_refuses_new_switches(tmp_path):
    """grow_operations connects every planned cable the lab lacks (by ID) and nothing else; a grown plan with a
    switch the lab does not serve is refused (exit 2) before anything is sent."""
    from zcube_deploy.lab.control import grow_operations

    plan = {"cables": [{"id": "H1", "a": {"device": "s1", "port": "p1"}, "b": {"device": "A", "port": "x1"}},
                       {"id": "H2", "a": {"device": "s2", "port": "p1"}, "b": {"device": "A", "port": "x2"}}],
            "servers": [{"name": "s1", "nics": [{"port": "p1", "mac": "b8:3f:d2:00:00:01"}]}, {"name": "s2", "nics": [{"port": "p1"}]}]}
    wiring = {"cables": [{"id": "H1", "a": {"device": "s1", "port": "p1"}, "b": {"device": "A", "port": "x9"}}]}
    grow = grow_operations(plan, wiring)
    assert grow["operations"] == [{"op": "connect", "cable": "H2", "a": {"device": "s2", "port": "p1"}, "b": {"device": "A", "port": "x2"}}]
    assert grow["servers"] == [{"name": "s1", "macs": {"p1": "b8:3f:d2:00:00:01"}}, {"name": "s2", "macs": {}}]
    lab = tmp_path / "lab"
    lab.mkdir()
    (lab / "lab.json").write_text(json.dumps({"switches": {"ZC-O001": {"host": "127.0.0.1", "port": 1}}}))
    r = run_zcube("lab", "grow", str(lab), str(INVENTORIES.parent / "tests" / "golden" / "lab-64" / "plan.json"), "--wait", "1")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "switches[ZC-E002]: the lab does not serve this switch" in r.stderr and not (lab / "control.json").exists()


@pytest.mark.parametrize("where", ["plan.json", "."])
def test_expand_refuses_to_write_over_the_plan_it_grows(tmp_path, where):
    """`-o` the deployed plan's own folder (the plan named as a file or as its folder): exit 2, the deployed plan.json
    byte for byte as it was (it was replaced by the grown plan, and the fabric's record with it)."""
    old = _inventory(tmp_path, "old", 16, capacity=32)
    big = _inventory(tmp_path, "big", 32, capacity=32)
    assert run_zcube("plan", str(old), "-o", str(tmp_path / "old")).returncode == 0
    before = (tmp_path / "old" / "plan.json").read_bytes()
    r = run_zcube("expand", str(tmp_path / "old" / where), str(big), "-o", str(tmp_path / "old"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "holds the plan being grown" in r.stderr and "-o grown" in r.stderr and "Traceback" not in r.stderr
    assert (tmp_path / "old" / "plan.json").read_bytes() == before


def test_expand_into_a_folder_keeps_what_no_render_wrote(tmp_path):
    """DIR's configs/ and hosts/ are published as `zcube render` would leave them (render/owned.py): a file an earlier
    manifest listed and the grown plan lacks is removed, a file no manifest lists is kept and named on stderr (expand
    once replaced both folders whole, deleting an operator's files with them)."""
    old = _inventory(tmp_path, "old", 16, capacity=32)
    big = _inventory(tmp_path, "big", 32, capacity=32)
    assert run_zcube("plan", str(old), "-o", str(tmp_path / "old")).returncode == 0
    d = tmp_path / "grown"
    (d / "configs").mkdir(parents=True)
    (d / "hosts").mkdir()
    (d / "configs" / "ZC-X999.cfg").write_text("! an earlier render's\n")
    (d / "configs" / "NOTES.txt").write_text("an operator's notes\n")
    (d / "hosts" / "keep-me.yaml").write_text("network: {}\n")
    (d / "manifest.json").write_text(json.dumps({"files": {"configs/ZC-X999.cfg": "0" * 64}}))
    r = run_zcube("expand", str(tmp_path / "old" / "plan.json"), str(big), "-o", str(d))
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (d / "configs" / "ZC-X999.cfg").exists()
    assert (d / "configs" / "NOTES.txt").read_text() == "an operator's notes\n"
    assert (d / "hosts" / "keep-me.yaml").read_text() == "network: {}\n"
    assert "removed 1 file of the previous render" in r.stdout, r.stdout
    assert "2 files in" in r.stderr and "configs/NOTES.txt" in r.stderr and "hosts/keep-me.yaml" in r.stderr, r.stderr
    manifest = json.loads((d / "manifest.json").read_text())["files"]
    assert "configs/NOTES.txt" not in manifest and len([f for f in manifest if f.startswith("configs/")]) > 0
    assert not [p for p in d.iterdir() if p.name.startswith(".expand-")]  # the stage is gone
