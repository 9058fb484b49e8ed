"""Every bad inventory in the corpus: exit 2, no traceback, and exactly the expected messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, check_golden, run_zcube

CORPUS = Path(__file__).resolve().parent / "bad_inventories"
CASES = sorted(p.stem for p in CORPUS.glob("*.yaml"))


@pytest.mark.parametrize("case", CASES)
def test_bad_inventory(case, tmp_path, update_golden):
    rel = (CORPUS / f"{case}.yaml").relative_to(ROOT)
    r = run_zcube("plan", str(rel), "-o", str(tmp_path), cwd=ROOT)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert not (tmp_path / "plan.json").exists()
    check_golden(CORPUS / f"{case}.expected", r.stderr, update_golden)


def test_corpus_covers_the_issue_list():
    wanted = {"missing_fields", "unknown_models", "duplicate_names", "overlapping_pools", "too_small_pools",
              "unsafe_strings", "impossible_size", "unknown_racks"}
    assert wanted <= set(CASES)


def test_many_problems_reported_in_one_run(tmp_path):
    r = run_zcube("plan", str(CORPUS / "many_problems.yaml"), "-o", str(tmp_path))
    assert r.returncode == 2
    for text in ("topology.mtu", "unknown switch model", "already used", "does not exist", "overlaps"):
        assert text in r.stderr
