from __future__ import annotations

import ast
import functools
import importlib.metadata
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import settings
from xdist.scheduler import LoadGroupScheduling

ROOT = Path(__file__).resolve().parents[1]
INVENTORIES = ROOT / "inventories"
GOLDEN = Path(__file__).resolve().parent / "golden"


def _ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")


# CI runs hypothesis derandomized: a commit's verdict is the same on every run, so a red CI always
# means the commit, never a new random example. Runs on a desk (no CI) keep exploring new examples;
# what they find becomes a test (hypothesis' database and @example).
settings.register_profile("ci", derandomize=True, print_blob=True)
if _ci():
    settings.load_profile("ci")


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files from the current output")
    parser.addoption("--run-slow", action="store_true",
                     help="also run the tests marked slow (larger shapes, LibreOffice, twin); CI and the README run them")


# Skips that are part of a test's design, not a missing prerequisite: CI lets only these through (by reason).
INTENDED_SKIPS = (
    "static plans only",  # test_predict.py: a static-routes check, parametrised over plans of both routing modes
)


def pytest_configure(config):
    if config.getoption("--run-slow") and "s" not in config.option.reportchars:
        config.option.reportchars += "s"  # a full run lists every skip and its reason in the summary


def strict_skips(config) -> bool:
    """A CI run (``CI`` set, as .ci/run does) of the full suite: a test skipped for a missing prerequisite fails."""
    return bool(config.getoption("--run-slow")) and _ci()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not (rep.skipped and not hasattr(rep, "wasxfail") and strict_skips(item.config)):
        return
    reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
    reason = reason.removeprefix("Skipped: ")
    if reason in INTENDED_SKIPS:
        return
    rep.outcome = "failed"
    rep.longrepr = (f"skipped in CI: {reason}\nCI=1 with --run-slow runs every test: install what is missing in .ci/run "
                    f"(or, for a skip by design, add its reason to INTENDED_SKIPS in tests/conftest.py)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow (the README's test command and CI do)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def _group_names(node: ast.AST) -> list[str]:
    """The names of the ``pytest.mark.xdist_group(NAME)`` (or ``name=NAME``) calls in ``node``."""
    out = []
    for c in ast.walk(node):
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "xdist_group":
            out += [a.value for a in c.args[:1] if isinstance(a, ast.Constant)]
            out += [k.value.value for k in c.keywords if k.arg == "name" and isinstance(k.value, ast.Constant)]
    return out


def xdist_groups(folder: Path, root: Path) -> dict[str, str]:
    """``tests/test_x.py::test_name`` (node ID relative to ``root``, without parameters) -> its xdist group, read
    from the syntax trees of ``folder``'s test files: ``@pytest.mark.xdist_group(NAME)`` on a module-level test or
    in the module's ``pytestmark`` (tests/test_xdist_groups.py checks every twin test has one)."""
    out = {}
    for path in sorted(folder.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = [g for s in tree.body if isinstance(s, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in s.targets)
                  for g in _group_names(s.value)]
        for f in tree.body:
            names = sorted(set(module + [g for d in getattr(f, "decorator_list", []) for g in _group_names(d)]))
            if isinstance(f, ast.FunctionDef) and f.name.startswith("test_") and names:
                out[f"{path.relative_to(root).as_posix()}::{f.name}"] = "_".join(names)
    return out


class ReadGroupScheduling(LoadGroupScheduling):
    """xdist's ``--dist loadgroup`` with each test's group read from the test files (``xdist_groups``). xdist 3.8
    tells its scheduler a test's group by rewriting the test's node ID in the worker, which pytest 9.2 no longer
    lets it do (pytest-xdist issue #1386): its own loadgroup then silently spreads a group over the workers."""

    def __init__(self, config, log=None):
        super().__init__(config, log)
        self.groups = xdist_groups(Path(__file__).resolve().parent, config.rootpath)

    def _split_scope(self, nodeid: str) -> str:
        return self.groups.get(nodeid.split("@")[0].split("[")[0]) or super()._split_scope(nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``-n`` with pyproject's ``--dist loadgroup``: the tests of one group run on one worker (ReadGroupScheduling)."""
    return ReadGroupScheduling(config, log) if config.getvalue("dist") == "loadgroup" else None


# Values that change without the behaviour changing: the tool version and the input hashes. Golden files
# hold placeholders instead, and both sides are normalised before comparison, so a version bump or a
# catalog edit does not rewrite every golden file (a real output change still fails the comparison).
_VOLATILE = [
    (re.compile(r"(zcube-deploy )\S+( \| cluster \S+ \| inventory sha256 )[0-9a-f]+"), r"\1<version>\2<sha256>"),
    (re.compile(r"(\btool )\S+(, inventory sha256 )[0-9a-f]+"), r"\1<version>\2<sha256>"),
    (re.compile(r'("tool_version":\s*)"[^"]*"'), r'\1"<version>"'),
    (re.compile(r'("[a-z_]*sha256":\s*)"[0-9a-f]+"'), r'\1"<sha256>"'),
]


@contextmanager
def deadline(seconds: int, what: str = "a command"):
    """The block fails with TimeoutError once it has run ``seconds`` (SIGALRM, main thread): a fuzz case
    that hangs is a failure naming ``what``, not a stuck suite."""
    def expired(*_):
        raise TimeoutError(f"{what} ran longer than {seconds} s (a hang)")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def normalise_volatile(text: str) -> str:
    """``text`` with the tool version and input hashes replaced by placeholders."""
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return text


@pytest.fixture
def update_golden(request) -> bool:
    return request.config.getoption("--update-golden")


def check_golden(path: Path, text: str, update: bool) -> None:
    """Compare ``text`` with the golden file ``path`` (or rewrite it with --update-golden)."""
    text = normalise_volatile(text)
    if update or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if not update:
            pytest.fail(f"golden file {path} did not exist and was created; review it and re-run")
        return
    expected = normalise_volatile(path.read_text(encoding="utf-8"))
    if expected != text:
        import difflib

        diff = "".join(list(difflib.unified_diff(expected.splitlines(True), text.splitlines(True), str(path), "actual"))[:80])
        pytest.fail(f"output differs from golden {path} (re-run with --update-golden after review):\n{diff}")


def _installed_from_this_tree() -> bool:
    """zcube-deploy in this interpreter's environment is an editable install of ROOT (scripts/setup's
    ``pip install -e``), so its ``zcube`` script imports the package from this working tree."""
    try:
        direct = json.loads(importlib.metadata.distribution("zcube-deploy").read_text("direct_url.json") or "{}")
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return False
    url = urllib.parse.urlparse(direct.get("url", ""))
    return (direct.get("dir_info", {}).get("editable") is True and url.scheme == "file"
            and Path(urllib.request.url2pathname(url.path)).resolve() == ROOT)


# The CLI of THIS tree whatever is installed: the package folder first on the path, then the entry point.
_TREE_CLI = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from zcube_deploy.cli import main; main()"


def zcube_exe() -> list[str]:
    """The command the CLI tests run: always this working tree's code, never an older installed copy.

    The venv's ``zcube`` script when scripts/setup installed this tree editable (what a user runs);
    otherwise (a non-editable install, another tree's venv, no install) this interpreter with ROOT
    first on the path. tests/test_cli_thin.py proves both: the CLI's modules come from ROOT, and an
    edit to a copy of the tree is what that copy's tests run.
    """
    return list(_zcube_command())


@functools.cache
def _zcube_command() -> tuple[str, ...]:
    exe = shutil.which("zcube", path=str(Path(sys.executable).parent))
    if exe and _installed_from_this_tree():
        return (exe,)
    return (sys.executable, "-c", _TREE_CLI)


def run_zcube(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 600, input: str | None = None):
    """Run the CLI as a user would: a real subprocess."""
    full_env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", **(env or {})}
    return subprocess.run(zcube_exe() + list(args), cwd=cwd, env=full_env, capture_output=True, text=True,
                          timeout=timeout, input=input)


def interrupt_zcube(args: list[str], folder: Path, entries: int = 1, seconds: float = 30) -> tuple[int, str, str]:
    """Run zcube with ``args`` as a real subprocess and send it a real SIGINT (a shell's Ctrl-C) once ``folder`` holds
    ``entries`` entries (e.g. a push's backups folder: a switch's push is in flight), or after ``seconds``; returns
    (exit code, stdout, stderr). A run that ends before the folder fills is not signalled: its own exit is returned."""
    proc = subprocess.Popen(zcube_exe() + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # a pytest-xdist worker ignores SIGINT and a child inherits that: give it a shell's Ctrl-C
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for _ in range(int(seconds / 0.02)):
            if proc.poll() is not None or (folder.is_dir() and len(list(folder.iterdir())) >= entries):
                break
            time.sleep(0.02)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
    return proc.returncode, stdout, stderr


def build_example(tmp_path_factory, inventory: str) -> Path:
    """`zcube build inventories/<inventory> -o <tmp>` as a user runs it; returns the output folder."""
    return build_example_run(tmp_path_factory, inventory)[0]


def build_example_run(tmp_path_factory, inventory: str) -> tuple[Path, str]:
    """`zcube build inventories/<inventory> -o <tmp>` as a user runs it; returns the output folder and what it printed."""
    out = tmp_path_factory.mktemp(inventory.split(".")[0])
    r = run_zcube("build", f"inventories/{inventory}", "-o", str(out), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return out, r.stdout


@pytest.fixture(scope="session")
def lab64_build_run(tmp_path_factory):
    """lab-64 built once per run (plan, configs, cabling, hall) and the build's output; tests only read them."""
    return build_example_run(tmp_path_factory, "lab-64.yaml")


@pytest.fixture(scope="session")
def glm1k_build_run(tmp_path_factory):
    """glm-1k built once per run (plan, configs, cabling, hall) and the build's output; tests only read them."""
    return build_example_run(tmp_path_factory, "glm-1k.yaml")


@pytest.fixture(scope="session")
def lab64_build(lab64_build_run):
    """lab-64 built once per run: the output folder."""
    return lab64_build_run[0]


@pytest.fixture(scope="session")
def glm1k_build(glm1k_build_run):
    """glm-1k built once per run: the output folder."""
    return glm1k_build_run[0]


@pytest.fixture(scope="session")
def lab64_inventory():
    from zcube_deploy.inventory import load_inventory

    return load_inventory(INVENTORIES / "lab-64.yaml")


@pytest.fixture(scope="session")
def lab64_plan(lab64_inventory):
    from zcube_deploy.plan import build_plan

    return build_plan(lab64_inventory)


@pytest.fixture(scope="session")
def glm1k_plan():
    from zcube_deploy.inventory import load_inventory
    from zcube_deploy.plan import build_plan

    return build_plan(load_inventory(INVENTORIES / "glm-1k.yaml"))


def lab_session(lab, name: str):
    """A netmiko ``ruijie_os`` session to the lab switch ``name`` (``with lab_session(lab, n) as c: c.enable()``), for a
    test that reads or hand-edits a switch. The driver's class: it reads the prompt to check the config mode where stock
    netmiko waits 2 s of silence (four times a session that enters config mode, once at every disconnect).
    tests/test_lab.py keeps stock netmiko: that the lab answers it is what it tests."""
    from zcube_deploy.access import lab_credentials
    from zcube_deploy.platforms.ruijie_rgos.driver import RuijieSSH

    host, port = lab.endpoints[name]
    user, password, secret = lab_credentials()
    return RuijieSSH(host=host, port=port, username=user, password=password, secret=secret,
                      allow_agent=False, use_keys=False, ssh_config_file=None, conn_timeout=10)
