"""An output folder written whole or not at all: the files go into a hidden sibling folder (same filesystem), which
replaces the folder in one rename once every file is written.

An interrupted run (an error, Ctrl-C, the process killed) leaves the folder as it was, an earlier run's output whole,
never a mix of old and new files; the sibling it was writing is removed on an error or Ctrl-C, and one left by a killed
process (its pid in its name, no longer running) by the next run. On Linux the swap is one ``renameat2(RENAME_EXCHANGE)``
(atomic: the folder is at every instant the old one or the new one); elsewhere, or on a filesystem without it, two
renames with Ctrl-C held off between them (then a crash between them leaves the old folder as a ``.NAME.old-*`` sibling
and no folder NAME). ctypes reaches renameat2: Python has no binding, and the one PyPI wrapper is a 2022 single-syscall
package, not worth a dependency for eight lines.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import secrets
import shutil
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

RENAME_EXCHANGE = 2  # linux/fs.h
AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` in one step (Linux renameat2 RENAME_EXCHANGE); False where the system cannot."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        call = libc.renameat2
    except (OSError, AttributeError):  # not Linux / a libc without renameat2 (glibc < 2.28)
        return False
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if call(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: this filesystem or kernel cannot exchange
        return False
    raise OSError(err, os.strerror(err), str(b))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _sibling(out: Path, kind: str) -> Path:
    """A new, empty hidden sibling of ``out`` (``.NAME.KIND-PID-RANDOM``; made as any folder is, the umask applies)."""
    path = out.parent / f".{out.name}.{kind}-{os.getpid()}-{secrets.token_hex(4)}"
    path.mkdir()
    return path


def _stale(out: Path) -> None:
    """Remove the siblings of ``out`` an earlier run left when it was killed (its pid, in the name, no longer runs);
    an old output moved aside by the fallback swap, with no ``out`` in its place, is put back first."""
    head = f".{out.name}."
    for name in os.listdir(out.parent):
        kind, _, rest = name[len(head):].partition("-")
        pid = rest.partition("-")[0]
        if not (name.startswith(head) and kind in ("partial", "old") and pid.isdigit()) or _alive(int(pid)):
            continue
        if kind == "old" and not out.exists() and (out.parent / name / out.name).is_dir():
            os.replace(out.parent / name / out.name, out)  # killed between the fallback's two renames: the old one back
        shutil.rmtree(out.parent / name, ignore_errors=True)


def _swap(new: Path, out: Path) -> None:
    """``new`` becomes ``out``; the old ``out`` (if any) is removed after."""
    if not out.exists():
        os.replace(new, out)  # onto a missing name: one rename
        return
    if _exchange(new, out):
        shutil.rmtree(new)  # it holds the old output now
        return
    old = _sibling(out, "old")
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        os.replace(out, old / out.name)
        os.replace(new, out)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    shutil.rmtree(old)


@contextmanager
def whole_folder(out: str | Path) -> Iterator[Path]:
    """A fresh, empty folder to write ``out``'s files into; when the block ends without an exception it replaces
    ``out`` (the old one, and whatever else was in it, removed; ``out`` a symbolic link: the folder it names); on an
    exception it is removed and ``out`` is untouched."""
    out = Path(out).absolute()
    if out.is_symlink():  # the folder it names is replaced, the link kept
        out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(str(out))
    _stale(out)
    work = _sibling(out, "partial")
    try:
        yield work
        _swap(work, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)


__all__ = ["whole_folder"]
