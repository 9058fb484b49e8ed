"""A command that reads a plan warns when the plan's inventory (its text, servers CSV or catalogs) changed
since it was planned; the check of an unchanged inventory does not resolve its servers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from zcube_deploy.inventory import load_inventory
from zcube_deploy.inventory.load import inventory_digest
from zcube_deploy.plan import build_plan
from zcube_deploy.plan.io import inventory_changed

INVENTORIES = Path(__file__).resolve().parents[1] / "inventories"

GENERATE = """servers:
  generate:
    count: 8
    name: "gpu{n:02d}"
    racks: [A01, A02]
    per_rack: 4
    first_u: 2
    serial: "LAB{n:04d}"
"""


def _csv_inventory(tmp_path: Path) -> Path:
    text = (INVENTORIES / "lab-64.yaml").read_text()
    assert GENERATE in text
    inv = tmp_path / "lab.yaml"
    inv.write_text(text.replace(GENERATE, "servers:\n  csv: servers.csv\n"))
    rows = [f"gpu{n:02d},A0{1 + (n - 1) // 4},{2 + (n - 1) % 4 * 10},LAB{n:04d}" for n in range(1, 9)]
    (tmp_path / "servers.csv").write_text("name,rack,u,serial\n" + "\n".join(rows) + "\n")
    return inv


@pytest.mark.parametrize("name", ["lab-64.yaml", "glm-1k.yaml", "zcube-16k.yaml", "csv"])
def test_digest_is_load_inventorys_fingerprint(tmp_path, name):
    path = _csv_inventory(tmp_path) if name == "csv" else INVENTORIES / name
    assert inventory_digest(path) == load_inventory(path).sha256


def test_warns_on_every_kind_of_change(tmp_path, monkeypatch):
    inv = _csv_inventory(tmp_path)
    plan = build_plan(load_inventory(inv))
    import zcube_deploy.inventory as inventory_pkg

    def no_resolution(*a, **k):
        raise AssertionError("an unchanged inventory was resolved")

    with monkeypatch.context() as m:
        m.setattr(inventory_pkg, "load_inventory", no_resolution)
        assert inventory_changed(plan) is None
    csv = tmp_path / "servers.csv"
    original = csv.read_text()
    csv.write_text(original.replace("LAB0008", "LAB0009"))
    assert "changed since this plan was made; re-run" in inventory_changed(plan)
    csv.write_text(original.replace("gpu08,A02", "gpu08,Z99"))
    assert "no longer validates" in inventory_changed(plan)
    csv.write_text(original)
    assert inventory_changed(plan) is None
    text = inv.read_text()
    inv.write_text(text.replace("mtu: 9000", "mtu: 8000"))
    assert "changed since this plan was made; re-run" in inventory_changed(plan)
    inv.write_text(text + "\ncatalog: extra.yaml\n")
    assert "no longer validates" in inventory_changed(plan)  # the extra catalog does not exist
    inv.write_text(text)
    shutil.copy(inv, tmp_path / "copy.yaml")
    assert inventory_changed(plan) is None


def test_an_inventory_not_found_from_here_is_said_to_be_not_checked(tmp_path, monkeypatch):
    """A plan made from a relative inventory path, read from another folder: the stale check cannot run, and says
    so (it used to pass silently)."""
    inv = _csv_inventory(tmp_path)
    monkeypatch.chdir(tmp_path)
    plan = build_plan(load_inventory(Path(inv.name)))
    assert plan["inputs"]["inventory"] == inv.name
    assert inventory_changed(plan) is None
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    note = inventory_changed(plan)
    assert note and note.startswith("not checked") and inv.name in note
