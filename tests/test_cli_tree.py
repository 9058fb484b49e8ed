"""The CLI tests run the working tree, never an older installed copy (issue 24, item 4).

scripts/setup installs the tree editable, so ``.venv/bin/zcube`` imports zcube_deploy from the tree;
``conftest.zcube_exe()`` uses that script only when the environment holds an editable install of
this very tree and otherwise runs this interpreter with the tree first on the path. Proved here
from the outside: the modules the CLI process loads are this tree's files, an edit to a copy of the
tree is what that copy's CLI tests run, and the data folders are found both in the editable install
and in a wheel installed into a throwaway environment.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import ROOT, run_zcube

# `python -v` names the file each module is compiled from, or the cached bytecode and its source.
_LOADED = re.compile(r"^# (?:code object from '?(?P<code>\S+?)'?|(?P<pyc>\S+\.pyc) matches (?P<src>\S+))$")


def loaded_files(verbose_stderr: str) -> set[Path]:
    """The zcube_deploy source files (or sourceless bytecode) a ``PYTHONVERBOSE=1`` process loaded."""
    files = set()
    for line in verbose_stderr.splitlines():
        m = _LOADED.match(line)
        path = m and (m["src"] or m["code"])
        if path and path.endswith(".pyc") and "__pycache__" in Path(path).parts:
            continue  # cached bytecode: the "matches" line before it names its source
        if path and "zcube_deploy" in Path(path).parts:
            files.add(Path(path))
    return files


def test_the_cli_loads_its_modules_from_this_tree(tmp_path):
    r = run_zcube("plan", "--help", cwd=tmp_path, env={"PYTHONVERBOSE": "1"})
    assert r.returncode == 0, r.stderr[-2000:]
    files = loaded_files(r.stderr)
    assert ROOT / "zcube_deploy" / "cli" / "plan.py" in files, f"the CLI did not load this tree's cli/plan.py: {sorted(files)[:5]}"
    elsewhere = sorted(str(f) for f in files if not f.is_relative_to(ROOT / "zcube_deploy") or f.suffix != ".py")
    assert not elsewhere, ("the CLI tests run a copy of zcube_deploy other than this tree's sources (re-run scripts/setup, "
                           f"which installs editable): {elsewhere[:5]}")


def test_the_loaded_files_parser():
    stderr = ("# code object from '/r/zcube_deploy/__init__.py'\n"
              "# /r/zcube_deploy/cli/__pycache__/plan.cpython-311.pyc matches /r/zcube_deploy/cli/plan.py\n"
              "# code object from '/r/zcube_deploy/cli/__pycache__/plan.cpython-311.pyc'\n"
              "# code object from /v/site-packages/zcube_deploy/x.py\n"
              "# possible namespace for /v/site-packages/zcube_deploy\n"
              "# code object from '/v/site-packages/click/core.py'\n")
    assert loaded_files(stderr) == {Path("/r/zcube_deploy/__init__.py"), Path("/r/zcube_deploy/cli/plan.py"),
                                    Path("/v/site-packages/zcube_deploy/x.py")}
    assert loaded_files("# code object from '/v/site-packages/zcube_deploy/x.pyc'\n") == {Path("/v/site-packages/zcube_deploy/x.pyc")}


# What a copy needs to run the CLI and conftest: the package, its data folders and the pytest set-up.
_TREE = ("zcube_deploy", "napalm_ruijie_rgos", "templates", "inventories", "cabling", "pyproject.toml", "tests/conftest.py")


def _copy_tree(dest: Path) -> Path:
    for name in _TREE:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def test_an_edit_to_a_copy_of_the_tree_is_what_its_cli_tests_run(tmp_path):
    """The environment holds this tree (editable) or an older copy; the copy is neither, so its
    conftest must run the copy's own code: an edited version string and an edited command."""
    copy = _copy_tree(tmp_path / "tree")
    init = copy / "zcube_deploy" / "version.py"
    text = init.read_text(encoding="utf-8")
    assert re.search(r'^__version__ = "[^"]+"$', text, re.M)
    init.write_text(re.sub(r'^__version__ = "[^"]+"$', '__version__ = "9.9.9+edited"', text, flags=re.M), encoding="utf-8")
    plan = copy / "zcube_deploy" / "cli" / "plan.py"
    source = plan.read_text(encoding="utf-8")
    edited = re.sub(r'(\ndef plan_cmd\([^)]*\)[^:\n]*:\n    """)', r"\1EDITED IN THE COPY. ", source, count=1)
    assert edited != source, "cli/plan.py's command docstring moved: update this test's edit"
    plan.write_text(edited, encoding="utf-8")
    (copy / "tests" / "test_edited.py").write_text(
        "from conftest import run_zcube\n\n"
        "def test_edited():\n"
        "    r = run_zcube('--version')\n"
        "    assert r.returncode == 0 and '9.9.9+edited' in r.stdout, r.stdout + r.stderr\n"
        "    r = run_zcube('plan', '--help')\n"
        "    assert r.returncode == 0 and 'EDITED IN THE COPY' in r.stdout, r.stdout + r.stderr\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CI")}
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/test_edited.py"], cwd=copy, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "1 passed" in r.stdout


def test_the_tree_finds_its_data_folders():
    from zcube_deploy import resources

    for name in ("templates", "inventories", "cabling"):
        assert resources.data_dir(name) == ROOT / name, f"{name}: {resources.data_dir(name)} is not this tree's folder"


@pytest.mark.slow
def test_a_wheel_installed_elsewhere_finds_its_data_and_plans(tmp_path):
    """``pip wheel`` the tree, install it (no dependencies: those of this environment are borrowed through a
    .pth) into a throwaway venv, and plan a bundled example from outside the tree: the templates,
    inventories and cabling catalog come from the wheel's zcube_deploy/_data."""
    wheels = tmp_path / "wheels"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    (wheel,) = wheels.glob("zcube_deploy-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run([python, "-c", "import zcube_deploy.resources as r; print(*map(r.data_dir, ('templates', 'inventories', 'cabling')))"],
                           cwd=work, env=env, capture_output=True, text=True)
    assert where.returncode == 0, f"the installed wheel lacks a data folder: {where.stderr[-1500:]}"
    assert [Path(p) for p in where.stdout.split()] == [site / "zcube_deploy" / "_data" / n for n in ("templates", "inventories", "cabling")]
    example = site / "zcube_deploy" / "_data" / "inventories" / "lab-64.yaml"
    r = subprocess.run([venv / "bin" / "zcube", "build", str(example), "-o", "out"], cwd=work, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    out = work / "out"
    assert (out / "plan.json").is_file() and (out / "cabling.xlsx").is_file() and (out / "hall" / "index.html").is_file()
    assert len(list((out / "configs").glob("*.cfg"))) == 16
