"""A reader that stops reading (`zcube ... | head`) does not change a command's exit code (perf.PipeSafe):
click ended such a run with exit 1 at the first write to the closed pipe, so bad input (2) read as 1
and a clean run (0) as 1."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT, zcube_exe


def _closed_reader(args: list[str], which: str = "stdout") -> subprocess.CompletedProcess:
    """Run ``args`` with ``which`` a pipe whose reader is gone before anything is written."""
    pipe = {which: subprocess.PIPE}
    other = {"stderr" if which == "stdout" else "stdout": subprocess.DEVNULL}
    p = subprocess.Popen(args, **pipe, **other, env={**os.environ, "COLUMNS": "200"})
    getattr(p, which).close()
    return subprocess.CompletedProcess(args, p.wait(timeout=300))


@pytest.mark.parametrize(("args", "code"), [(["schema", "plan"], 0), (["--help"], 0)])
def test_a_closed_stdout_keeps_the_exit_code(args, code):
    assert _closed_reader(zcube_exe() + args).returncode == code


def test_a_closed_stderr_keeps_a_usage_error_exit_2():
    assert _closed_reader(zcube_exe() + ["schema"], "stderr").returncode == 2  # the usage message goes to stderr


def test_output_then_bad_input_is_exit_2_with_the_reader_gone():
    """Much output, then a failure's own exit code: kept (without PipeSafe: a BrokenPipeError, exit 1)."""
    code = ("import sys; sys.path.insert(0, %r); from zcube_deploy.perf import keep_going_on_a_closed_pipe; "
            "keep_going_on_a_closed_pipe(); [print('x' * 100) for _ in range(5000)]; sys.exit(2)") % str(ROOT)
    assert _closed_reader([sys.executable, "-c", code]).returncode == 2
