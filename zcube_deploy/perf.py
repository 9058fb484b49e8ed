"""Garbage-collector control for bulk work, and the CLI process's own output and exit.

Building or loading a plan allocates millions of small containers and no reference cycles;
CPython's cyclic collector would rescan all of them again and again (it tripled the time of a
64k-GPU render). ``bulk_allocation`` pauses it for such a block; ``keep_forever`` (CLI only, once
the plan is loaded) moves the live objects out of the collector's sight for the rest of the run.
``run_then_exit_fast`` ends a CLI run without freeing objects one by one; ``PipeSafe`` keeps a run going
to its own exit code when its reader stops reading (`zcube ... | head`).
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from contextlib import contextmanager


@contextmanager
def bulk_allocation():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def keep_forever() -> None:
    """For a short-lived CLI process: the objects alive now (the plan) are never scanned again."""
    gc.freeze()


def run_then_exit_fast(run: Callable[[], object], fast: Callable[[], bool]) -> None:
    """Run ``run()`` (a click entry point); when it ends with an exit code and ``fast()`` holds, flush stdout
    and stderr and end the process with ``os._exit``: no object is freed one by one (``zcube plan``: 0.5-0.8 s
    at 16k GPUs, seconds at 64k). Only for a run that holds nothing else: files written and closed, no worker,
    temporary file or finaliser pending."""
    try:
        run()
    except SystemExit as exc:
        if not fast() or not isinstance(exc.code, (int, type(None))):
            raise
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(exc.code or 0)


class PipeSafe:
    """A text stream (sys.stdout, sys.stderr) that outlives a reader which stopped reading (`zcube ... | head`):
    the first write or flush that meets a closed pipe points the stream's file descriptor at the null device,
    and the run goes on to its own end and exit code. Left to click, the broken pipe ended the run with exit 1:
    an exit 2 (bad input) read as 1, and the run's own files cut short."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._to_null()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._to_null()

    def _to_null(self) -> None:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, self._stream.fileno())  # what is still buffered goes there too (Python flushes at exit)
        os.close(null)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def keep_going_on_a_closed_pipe() -> None:
    """Wrap sys.stdout and sys.stderr in :class:`PipeSafe` (once: the CLI entry point, before the run)."""
    if not isinstance(sys.stdout, PipeSafe) and sys.stdout is not None:
        sys.stdout = PipeSafe(sys.stdout)
    if not isinstance(sys.stderr, PipeSafe) and sys.stderr is not None:
        sys.stderr = PipeSafe(sys.stderr)
