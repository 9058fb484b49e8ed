"""Issue 23 item 3: `cabling` and `hall` use the cabling catalog the plan was made with.

The plan records the catalog's sha256 (inputs.cabling_catalog_sha256). Another catalog is refused
(exit 2, saying what differs) unless --accept-catalog-change, which prints what differs; a medium the
plan's cables use and the catalog lacks is an input error naming the cables' data path, never a
KeyError.
"""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from conftest import ROOT, run_zcube
from zcube_deploy.catalog.cabling import catalog_differences, load_cabling_catalog

BUNDLED = ROOT / "cabling" / "cabling.yaml"


def edited_catalog(tmp_path, edit, name="cat.yaml"):
    data = yaml.safe_load(BUNDLED.read_text())
    edit(data)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def plan_medium(lab64_build) -> str:
    return json.loads((lab64_build / "plan.json").read_text())["cables"][0]["medium"]


def test_a_copy_of_the_plans_catalog_is_the_plans_catalog(tmp_path, lab64_build):
    shutil.copy(BUNDLED, tmp_path / "same.yaml")
    r = run_zcube("cabling", str(lab64_build / "plan.json"), "-o", str(tmp_path / "o"), "--catalog", str(tmp_path / "same.yaml"))
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr


@pytest.mark.parametrize("command", ["cabling", "hall"])
def test_a_changed_price_is_refused_then_accepted_with_what_differs(tmp_path, lab64_build, command):
    medium = plan_medium(lab64_build)
    old = load_cabling_catalog().media[medium].unit_price_usd

    def edit(d):
        d["media"][medium]["unit_price_usd"] = old * 10

    cat = edited_catalog(tmp_path, edit)
    args = [command, str(lab64_build / "plan.json"), "-o", str(tmp_path / "o"), "--catalog", str(cat)]
    r = run_zcube(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "inputs.cabling_catalog_sha256" in r.stderr and f"media.{medium}.unit_price_usd: {old!r} -> {old * 10!r}" in r.stderr
    assert "--accept-catalog-change" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()  # nothing written
    r = run_zcube(*args, "--accept-catalog-change")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "the cabling catalog is not the plan's (1 difference)" in r.stderr
    assert f"media.{medium}.unit_price_usd: {old!r} -> {old * 10!r}" in r.stderr


def test_the_accepted_catalog_is_the_one_used(tmp_path, lab64_build):
    medium = plan_medium(lab64_build)
    price = load_cabling_catalog().media[medium].unit_price_usd
    base = run_zcube("cabling", str(lab64_build / "plan.json"), "-o", str(tmp_path / "a"), "--json")
    cat = edited_catalog(tmp_path, lambda d: d["media"][medium].__setitem__("unit_price_usd", price * 10))
    r = run_zcube("cabling", str(lab64_build / "plan.json"), "-o", str(tmp_path / "b"), "--json", "--catalog", str(cat),
                  "--accept-catalog-change")
    assert base.returncode == r.returncode == 0, r.stderr
    a, b = json.loads(base.stdout), json.loads(r.stdout)  # the warning is on stderr: --json stays JSON
    assert b["totals"] != a["totals"]


@pytest.mark.parametrize("command", ["cabling", "hall"])
def test_a_medium_the_plan_uses_missing_from_the_catalog_is_an_input_error(tmp_path, lab64_build, command):
    """Was: internal error KeyError, exit 3."""
    medium = plan_medium(lab64_build)

    def edit(d):
        del d["media"][medium]
        d["media_preference"] = [m for m in d["media_preference"] if m != medium]

    cat = edited_catalog(tmp_path, edit)
    r = run_zcube(command, str(lab64_build / "plan.json"), "-o", str(tmp_path / "o"), "--catalog", str(cat), "--accept-catalog-change")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "cables[0].medium" in r.stderr and f"medium {medium!r} is not in {cat}" in r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr


def test_catalog_differences_name_each_data_path():
    old = load_cabling_catalog()
    data = yaml.safe_load(BUNDLED.read_text())
    first = next(iter(data["media"]))
    data["media"][first]["lengths_m"] = data["media"][first]["lengths_m"][:-1]
    gone = data["media_preference"][-1]
    del data["media"][gone]
    data["media_preference"].remove(gone)
    data["sheets"]["paper"] = "letter" if data["sheets"].get("paper", "A4") == "A4" else "A4"
    from zcube_deploy.catalog.cabling import CablingCatalog

    new = CablingCatalog.model_validate(data)
    diff = catalog_differences(old, new)
    assert f"media.{gone}: removed" in diff
    assert any(d.startswith(f"media.{first}.lengths_m: ") for d in diff)
    assert any(d.startswith("sheets.paper: ") for d in diff) and any(d.startswith("media_preference: ") for d in diff)
    assert not any(d.startswith(f"media.{gone}.") for d in diff)  # a removed medium is one line
    assert catalog_differences(old, old) == []


@pytest.mark.parametrize("key", ["catalog", "cabling_catalog"])
def test_a_catalog_that_is_not_utf8_is_an_input_error_with_its_place(tmp_path, key):
    """Both catalogs an inventory can name: bytes that are not UTF-8 were an internal error (exit 3)."""
    (tmp_path / "extra.yaml").write_bytes(b"switches:\n  X: {name: \"\xff\"}\n")
    inv = tmp_path / "inv.yaml"
    inv.write_text((ROOT / "inventories" / "lab-64.yaml").read_text() + f"\n{key}: extra.yaml\n")
    r = run_zcube("plan", str(inv), "-o", str(tmp_path / "out"))
    assert r.returncode == 2 and "internal error" not in r.stderr, r.stderr
    assert "extra.yaml:2:14: not UTF-8 text (byte 0xff)" in r.stderr


def test_a_cabling_catalog_given_to_cabling_that_is_not_utf8_is_an_input_error(tmp_path, lab64_build):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"media:\n  \xfe: 1\n")
    r = run_zcube("cabling", str(lab64_build / "plan.json"), "--catalog", str(bad), "-o", str(tmp_path / "c"))
    assert r.returncode == 2 and "internal error" not in r.stderr, r.stderr
    assert f"{bad}:2:3: not UTF-8 text (byte 0xfe)" in r.stderr
