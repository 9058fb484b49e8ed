"""A full CI run (CI=1, --run-slow) fails on a test skipped for a missing prerequisite; every full run
lists its skips in the summary (tests/conftest.py). Run in a scratch folder with a copy of conftest.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

SAMPLE = '''
import pytest

def test_missing_tool():
    pytest.skip("frobnicate is not installed (apt-get install frob)")

@pytest.mark.skipif(True, reason="needs root")
def test_needs_root():
    pass

def test_by_design():
    pytest.skip("static plans only")

@pytest.mark.xfail(reason="known")
def test_expected_failure():
    assert False

def test_fine():
    pass
'''


@pytest.fixture
def scratch(tmp_path):
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    return tmp_path


def run(folder: Path, *args: str, ci: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args, "test_sample.py"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120)


def test_ci_full_run_fails_on_a_prerequisite_skip(scratch):
    r = run(scratch, "--run-slow", ci="1")
    assert r.returncode == 1, r.stdout
    assert "FAILED test_sample.py::test_missing_tool - skipped in CI: frobnicate is not installed" in r.stdout
    assert "ERROR test_sample.py::test_needs_root - skipped in CI: needs root" in r.stdout  # a skipif mark: at set-up
    assert "SKIPPED [1] test_sample.py:12: static plans only" in r.stdout  # a skip by design stays a skip
    assert "1 failed, 1 passed, 1 skipped, 1 xfailed, 1 error" in r.stdout


WORKER_SAMPLE = """
import os

from hypothesis import settings

def test_in_a_worker_with_the_ci_profile():
    assert os.environ.get("PYTEST_XDIST_WORKER", "").startswith("gw")
    assert settings.default.derandomize  # the `ci` profile (tests/conftest.py) holds in the worker too
"""


def test_ci_full_run_on_workers_fails_on_a_prerequisite_skip_too(scratch):
    """The README's command runs on xdist workers (-n): the skip turned failure (made in the worker), the skips in
    the controller's summary and the hypothesis `ci` profile hold there as in one process."""
    (scratch / "test_worker.py").write_text(WORKER_SAMPLE)
    r = run(scratch, "--run-slow", "-n", "2", "test_worker.py", ci="1")
    assert r.returncode == 1, r.stdout
    assert "FAILED test_sample.py::test_missing_tool - skipped in CI: frobnicate is not installed" in r.stdout
    assert "ERROR test_sample.py::test_needs_root - skipped in CI: needs root" in r.stdout
    assert "SKIPPED [1] test_sample.py:12: static plans only" in r.stdout
    assert "1 failed, 2 passed, 1 skipped, 1 xfailed, 1 error" in r.stdout, r.stdout  # test_worker.py passed: in a worker
    # known-bad: the same run outside CI explores (no `ci` profile): the worker's check of it fails
    r = run(scratch, "--run-slow", "-n", "2", "test_worker.py", ci=None)
    assert "FAILED test_worker.py::test_in_a_worker_with_the_ci_profile" in r.stdout, r.stdout


@pytest.mark.parametrize("ci", [None, "", "0"])
def test_outside_ci_a_full_run_shows_every_skip_and_passes(scratch, ci):
    r = run(scratch, "--run-slow", ci=ci)
    assert r.returncode == 0, r.stdout
    for reason in ("frobnicate is not installed", "needs root", "static plans only"):
        assert reason in r.stdout.split("short test summary info")[1], r.stdout


def test_the_quick_run_is_unchanged_in_ci(scratch):
    r = run(scratch, ci="1")
    assert r.returncode == 0 and "short test summary info" not in r.stdout, r.stdout


def test_ci_run_exports_ci_before_the_readmes_test_command():
    lines = (HERE.parent / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    test_cmd = lines.index(".venv/bin/python -m pytest --run-slow -n auto")
    assert any(ln.startswith("export CI=1") for ln in lines[:test_cmd])
