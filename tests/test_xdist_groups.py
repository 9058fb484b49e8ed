"""The suite runs on parallel workers (`-n auto`, pyproject's `--dist loadgroup`, docs/tests.md): every test that
brings a twin up must be in the xdist group "twin", so no two twins run at once (they share the machine's ARP
limits and FRR, and tests/test_twin.py compares the machine's namespaces, links and FRR processes before and
after). Read from the test files' syntax trees: a test that brings a twin up itself, through a helper or through
a fixture, and carries no ``@pytest.mark.xdist_group("twin")`` is named."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GROUP = "twin"
TWIN_UP = re.compile(r"""run_zcube\(\s*["']twin["'],\s*["']up["']|\bbuild\.up\(|\btwin_up\(""")


def _is_group_mark(node: ast.expr) -> bool:
    """``pytest.mark.xdist_group("twin")`` (or ``name="twin"``)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "xdist_group"):
        return False
    args = [a.value for a in node.args if isinstance(a, ast.Constant)] + [k.value.value for k in node.keywords
                                                                          if k.arg == "name" and isinstance(k.value, ast.Constant)]
    return args == [GROUP]


def _is_fixture(fn: ast.FunctionDef) -> bool:
    return any("fixture" in ast.unparse(d) for d in fn.decorator_list)


def ungrouped(sources: dict[str, str]) -> list[str]:
    """``file::test`` of every test in ``sources`` (file name -> text) that brings a twin up (itself, through a module
    function it calls or a fixture it takes, conftest.py's included) without the group mark (its own or the module's
    ``pytestmark``)."""
    trees = {name: ast.parse(text) for name, text in sources.items()}
    fns = {name: {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)} for name, tree in trees.items()}
    shared = {n for n, f in fns.get("conftest.py", {}).items() if _is_fixture(f) and TWIN_UP.search(ast.unparse(f))}
    out = []
    for name, tree in trees.items():
        own = fns[name]
        up = {n for n, f in own.items() if TWIN_UP.search(ast.unparse(f))} | shared
        while True:  # what calls (or takes as a fixture) a function that brings a twin up, brings one up
            more = {n for n, f in own.items() if n not in up and (
                {c.func.id for c in ast.walk(f) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)} & up
                or {a.arg for a in f.args.args} & up)}
            if not more:
                break
            up |= more
        module_marked = any(isinstance(s, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in s.targets)
                            and any(_is_group_mark(n) for n in ast.walk(s.value)) for s in tree.body)
        out += [f"{name}::{n}" for n, f in own.items() if n.startswith("test_") and n in up and not module_marked
                and not any(_is_group_mark(d) for d in f.decorator_list)]
    return sorted(out)


def test_every_test_that_brings_a_twin_up_is_in_the_twin_group():
    sources = {p.name: p.read_text(encoding="utf-8") for p in sorted(HERE.glob("*.py"))
               if (p.name.startswith("test_") or p.name == "conftest.py") and p.name != Path(__file__).name}  # not the samples here
    found = {n for n, text in sources.items() if TWIN_UP.search(text)}
    assert len(found) >= 6, found  # the pattern still finds the twin tests (test_twin*.py, roft, design paths, expand)
    assert ungrouped(sources) == []


def test_known_bad_twin_tests_without_the_group_are_named():
    bad = '''
import pytest

def _up(d):
    run_zcube("twin", "up", "plan.json", "-o", str(d))

@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    build.up(plan, "p", tmp_path_factory.mktemp("t"))

def test_direct(tmp_path):
    run_zcube("twin", "up", "plan.json", "-o", str(tmp_path))

def test_through_a_helper(tmp_path):
    _up(tmp_path)

@pytest.mark.slow
def test_through_a_fixture(twin):
    pass

@pytest.mark.xdist_group("other")
def test_in_another_group(twin):
    pass

@pytest.mark.xdist_group("twin")
def test_grouped(twin):
    pass

def test_pure():
    pass
'''
    assert ungrouped({"test_bad.py": bad}) == ["test_bad.py::test_direct", "test_bad.py::test_in_another_group",
                                               "test_bad.py::test_through_a_fixture", "test_bad.py::test_through_a_helper"]
    marked = bad.replace("import pytest\n", 'import pytest\n\npytestmark = [pytest.mark.xdist_group("twin")]\n')
    assert ungrouped({"test_bad.py": marked}) == []
    # a fixture in conftest.py that brings a twin up counts in every file
    shared = {"conftest.py": "@pytest.fixture\ndef lab_twin():\n    workflow.twin_up('p', 'd')\n",
              "test_x.py": "def test_uses(lab_twin):\n    pass\n"}
    assert ungrouped(shared) == ["test_x.py::test_uses"]


SCHEDULED = '''
import pytest

@pytest.mark.xdist_group("twin")
@pytest.mark.parametrize("k", range(8))
def test_grouped(k):
    pass

@pytest.mark.parametrize("k", range(8))
def test_free(k):
    pass
'''


def test_a_group_runs_on_one_worker(tmp_path):
    """conftest.py's scheduler keeps a group on one worker (xdist 3.8's own loadgroup spreads this sample's group over
    both workers under pytest 9.2: the known-bad, seen with the hook returning None)."""
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_sample.py").write_text(SCHEDULED)

    def workers() -> dict[str, set[str]]:
        r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup", "-v",
                            "test_sample.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        out: dict[str, set[str]] = {}
        for w, name in re.findall(r"^\[(gw\d)\].*PASSED test_sample\.py::(test_\w+)\[", r.stdout, flags=re.M):
            out.setdefault(name, set()).add(w)
        return out

    got = workers()
    assert len(got["test_grouped"]) == 1 and got["test_free"], got


def test_the_scheduler_reads_every_twin_group_mark():
    from conftest import xdist_groups

    groups = xdist_groups(HERE, HERE.parent)
    assert {k for k, g in groups.items() if g == GROUP} >= {"tests/test_twin.py::test_twin_lab64_end_to_end",
                                                         "tests/test_twin_drain.py::test_an_undrain_that_leaves_a_port_shut_fails_the_fib_check",
                                                         "tests/test_roft.py::test_roft_twin_end_to_end"}
    assert sum(g == GROUP for g in groups.values()) >= 10, groups
