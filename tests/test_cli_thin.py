"""The command line stays thin (issue 13, item 5): zcube_deploy/cli/ modules hold argument parsing and
printing, nothing else. Checked on the syntax tree of every module, so logic that creeps back in
(loops over plan data, file I/O, polling, orchestration) fails here with its file and line.

What a cli/ module may contain:
- imports of click, rich, the standard library's sys/json/pathlib/functools/contextlib/traceback,
  and zcube_deploy's own modules (the library does the work); of shutil only get_terminal_size (the
  width tables print at: COLUMNS, else the terminal's);
- click commands and groups (parse arguments, make one or a few library calls, print);
- small printing helpers (at most MAX_HELPER_LINES lines); module-level tables of printers,
  formats and colours; the consoles;
- ``for`` loops whose bodies only print (print, add_row, add_column, echo, rule, a printer from a
  table) after plain look-ups; generator expressions only inside ``str.join`` (formatting).
Never: while loops, try blocks (outside common.handle_errors), with blocks (outside the progress
bar), async code, open(), file methods (read_text, write_text, exists, mkdir, unlink, ...),
json.load/dump, list/set/dict comprehensions, other standard-library modules (os, time, asyncio,
signal, tempfile, subprocess, threading, ...).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parents[1] / "zcube_deploy" / "cli"

ALLOWED_IMPORTS = {"__future__", "click", "rich", "sys", "json", "pathlib", "functools", "contextlib", "traceback", "zcube_deploy"}
ALLOWED_NAMES = {("shutil", "get_terminal_size")}  # (module, name) a cli/ module may import by name, that alone
FILE_METHODS = {"read_text", "write_text", "read_bytes", "write_bytes", "open", "mkdir", "unlink", "exists", "is_file", "is_dir",
                "iterdir", "glob", "rglob", "touch", "rename", "rmdir", "stat", "load", "dump", "sleep", "system", "popen"}
PRINT_CALLS = {"print", "add_row", "add_column", "echo", "rule"}
CLICK_DECORATORS = {"command", "group", "argument", "option", "version_option", "pass_context"}
MAX_HELPER_LINES = 45
MAX_COMMAND_STATEMENTS = 12
# the only places allowed a try / with block: the error handler and the progress bar
EXEMPT = {("common.py", "handle_errors", ast.Try), ("common.py", "wrapper", ast.Try), ("common.py", "progress_bar", ast.With)}


def _is_click_decorated(fn: ast.FunctionDef) -> bool:
    for d in fn.decorator_list:
        d = d.func if isinstance(d, ast.Call) else d
        if isinstance(d, ast.Attribute) and d.attr in CLICK_DECORATORS:
            return True
    return False


def _call_name(call: ast.Call) -> str:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Subscript) and isinstance(f.value, ast.Name):
        return f.value.id  # a printer from a table: PRINTERS[event](...)
    return ""


def _prints(stmt: ast.stmt) -> bool:
    """A statement of a loop body that only prints, or looks something up for printing."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        name = _call_name(stmt.value)
        return name in PRINT_CALLS or name.startswith("print") or name.lower().endswith("printers")
    if isinstance(stmt, (ast.If, ast.For)):
        return all(_prints(s) for s in stmt.body + stmt.orelse)
    if isinstance(stmt, ast.Assign):
        return isinstance(stmt.value, (ast.Subscript, ast.Name, ast.Attribute))
    return isinstance(stmt, ast.Continue)


class _Checker(ast.NodeVisitor):
    def __init__(self, filename: str):
        self.filename = filename
        self.problems: list[str] = []
        self.function: list[str] = []

    def bad(self, node: ast.AST, why: str) -> None:
        self.problems.append(f"cli/{self.filename}:{node.lineno}: {why}")

    def exempt(self, node: ast.AST) -> bool:
        return any((self.filename, f, type(node)) in EXEMPT for f in self.function)

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.name.split(".")[0] not in ALLOWED_IMPORTS:
                self.bad(node, f"imports {a.name} (do that work in the library)")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if (node.module or "").split(".")[0] not in ALLOWED_IMPORTS and not all((node.module, a.name) in ALLOWED_NAMES for a in node.names):
            self.bad(node, f"imports from {node.module} (do that work in the library)")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if _is_click_decorated(node):
            body = [s for s in node.body if not isinstance(s, (ast.Import, ast.ImportFrom))
                    and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(body) > MAX_COMMAND_STATEMENTS:
                self.bad(node, f"command {node.name} has {len(body)} statements (> {MAX_COMMAND_STATEMENTS}): move the steps to the library")
        elif node.end_lineno - node.lineno + 1 > MAX_HELPER_LINES:
            self.bad(node, f"helper {node.name} is {node.end_lineno - node.lineno + 1} lines (> {MAX_HELPER_LINES})")
        self.function.append(node.name)
        self.generic_visit(node)
        self.function.pop()

    def visit_AsyncFunctionDef(self, node) -> None:
        self.bad(node, "async code (serve loops belong in the library)")

    def visit_While(self, node: ast.While) -> None:
        self.bad(node, "a while loop (polling and retries belong in the library)")
        self.generic_visit(node)

    def visit_Try(self, node: ast.Try) -> None:
        if not self.exempt(node):
            self.bad(node, "a try block (errors are the library's InputErrors/ZCubeError, printed by handle_errors)")
        self.generic_visit(node)

    def visit_With(self, node: ast.With) -> None:
        if not self.exempt(node):
            self.bad(node, "a with block (resources belong in the library)")
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        if not all(_prints(s) for s in node.body + node.orelse):
            self.bad(node, "a for loop that does more than print (a loop over plan data belongs in the library)")
        self.generic_visit(node)

    def visit_ListComp(self, node) -> None:
        self.bad(node, "a list comprehension (data shaping belongs in the library)")
        self.generic_visit(node)

    visit_SetComp = visit_DictComp = visit_ListComp

    def visit_Call(self, node: ast.Call) -> None:
        name = _call_name(node)
        if isinstance(node.func, ast.Name) and name in {"open", "eval", "exec", "__import__"}:
            self.bad(node, f"calls {name}()")
        elif isinstance(node.func, ast.Attribute) and name in FILE_METHODS:
            self.bad(node, f"calls .{name}() (file I/O and processes go through the library)")
        for arg in node.args:
            if isinstance(arg, ast.GeneratorExp) and name != "join":
                self.bad(arg, "a generator outside str.join (data shaping belongs in the library)")
        self.generic_visit(node)

    def visit_Global(self, node) -> None:
        self.bad(node, "global state")

    visit_Nonlocal = visit_Global


def check_source(source: str, filename: str = "x.py") -> list[str]:
    tree = ast.parse(source)
    checker = _Checker(filename)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and not any(isinstance(b, ast.Attribute) and b.attr == "Group" for b in node.bases):
            checker.bad(node, f"class {node.name} (only click.Group subclasses)")
        elif isinstance(node, (ast.For, ast.While, ast.If, ast.With, ast.Try)) and not (
                isinstance(node, ast.If) and "__name__" in ast.unparse(node.test)):
            checker.bad(node, "module-level code")
    checker.visit(tree)
    return checker.problems


def cli_modules() -> list[Path]:
    return sorted(CLI.glob("*.py"))


def test_there_is_one_module_per_command():
    import click

    from zcube_deploy.cli import cli

    assert not (CLI.parent / "cli.py").exists()
    modules = {p.stem for p in cli_modules()}
    for name in cli.commands:
        assert name.replace("-", "_") in modules, f"`zcube {name}` has no cli/{name.replace('-', '_')}.py"
    assert isinstance(cli, click.Group) and len(cli.commands) >= 15


@pytest.mark.parametrize("path", cli_modules(), ids=lambda p: p.name)
def test_cli_module_holds_only_parsing_and_printing(path: Path):
    problems = check_source(path.read_text(encoding="utf-8"), path.name)
    assert not problems, "\n".join(problems)


# What the checker must catch: logic as it used to live in cli.py (the lab's control-file polling,
# the verify pipeline's targets, reading a verify.json, a module-level loop).
LOGIC = {
    "polling": '''
import time
from pathlib import Path
def lab_fix_cmd(lab_dir, wait):
    control = Path(lab_dir) / "control.json"
    control.write_text("[]")
    while control.exists():
        time.sleep(0.2)
''',
    "plan data": '''
def run_verify(plan, names, endpoints):
    mg = {s["name"]: s["mgmt_address"] for s in plan["switches"]}
    return [(n, *(endpoints[n] if endpoints else (mg[n], 22))) for n in names]
''',
    "loop that computes": '''
def print_wiring(w, t):
    for c in w["cables"]:
        note = []
        if not c["planned"]:
            note.append("extra")
        t.add_row(c["id"], ", ".join(note))
''',
    "file read": '''
import json
def fixes(path):
    try:
        return json.load(open(path))["findings"]
    except ValueError:
        return []
''',
    "fat command": "import click\n@click.command()\ndef cmd(a):\n" + "".join(f"    x{i} = a + {i}\n" for i in range(13)),
    "os": "import os\nprint(os.environ)\n",
    "shutil": "from shutil import get_terminal_size, rmtree\n",
    "shutil module": "import shutil\n",
}


@pytest.mark.parametrize("name", LOGIC)
def test_the_checker_catches_logic(name: str):
    assert check_source(LOGIC[name]), f"the checker let {name!r} through"


def test_the_checker_accepts_printing():
    ok = '''
import click
from shutil import get_terminal_size
from zcube_deploy.cli.common import out
def print_rows(rows, t):
    for r in rows:
        if r:
            t.add_row(*r)
    out.print(", ".join(f"{a}" for a in rows))
@click.command()
def cmd():
    """doc"""
    from zcube_deploy import workflow
    print_rows(workflow.rows(), None)
'''
    assert check_source(ok) == []


# ---------------------------------------------------------------- start-up: a command loads only what it runs
# What `import zcube_deploy.cli` (every command's start, `zcube --help` included) must not load: a command's
# library modules are imported inside its function (cli/__init__.py's docstring). numpy alone is ~0.3 s,
# the plan model's schemas ~0.2 s: `zcube plan` paid both for `zcube analyze`'s and `zcube traffic`'s tables.
HEAVY_AT_START = ("numpy", "pydantic", "yaml", "jinja2", "openpyxl", "napalm", "netmiko", "asyncssh",
                  "zcube_deploy.plan.model", "zcube_deploy.analysis.report", "zcube_deploy.traffic.report")


def heavy_modules_loaded(code: str) -> list[str]:
    """The HEAVY_AT_START modules a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY_AT_START!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_the_cli_loads_no_command_library_at_start_up():
    assert heavy_modules_loaded("import zcube_deploy.cli") == []


def test_reading_drain_records_loads_no_device_library(tmp_path):
    """`zcube verify` (offline too) and push read the drain records beside the plan: drain/records.py, not
    drain/run.py, whose push imports napalm (~0.7 s CPU every offline verify paid for nothing)."""
    (tmp_path / "drains").mkdir()
    loaded = heavy_modules_loaded(f"from zcube_deploy import workflow\nworkflow.drain_state({str(tmp_path / 'plan.json')!r}, None)")
    assert not {"napalm", "netmiko"} & set(loaded), loaded


def test_the_start_up_check_sees_a_heavy_import():
    """Known-bad: a top-level import like the one cli/analyze.py had (the analysis report, with numpy)."""
    assert {"numpy", "zcube_deploy.analysis.report"} <= set(heavy_modules_loaded(
        "import zcube_deploy.cli\nimport zcube_deploy.analysis.report"))
