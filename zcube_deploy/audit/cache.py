"""Audit's file cache of what config drift reads of a rendered config that its text alone decides.

Reading a rendered config for the comparison (its top-level lines for the managed scope, its sections:
the platform's ``intended_reading``) is the same on every run until the config changes: at 512 switches it
was a third of config drift's time. It is kept in ``DIR/.audit-cache/`` beside render's ``configs/``, one
JSON file per distinct config text, named by the SHA-256 of the text and of the platform's code: an edited
or re-rendered config, or another version of the readers, is another name, never a stale reading. A file
that cannot be read or is not of the reading's shape is read anew and rewritten; a folder that cannot be
written to only means no cache (the findings are the same with and without it: tests/test_audit.py). An audit
of the whole fabric prunes the folder to the configs it compared (:func:`prune`), so it holds one file per switch
at most (about 256 kB each at 512 switches) however often the configs are re-rendered.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from contextlib import suppress
from functools import lru_cache
from pathlib import Path

from zcube_deploy.platforms import platform_module
from zcube_deploy.safety import make_private_dir

FOLDER = ".audit-cache"


@lru_cache(maxsize=8)
def code_digest(platform: str) -> str:
    """SHA-256 of the platform package's Python sources (its readers decide a reading)."""
    h = hashlib.sha256()
    root = Path(platform_module(platform).__file__).parent
    for f in sorted(root.rglob("*.py")):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def file_name(platform: str, text: str) -> str:
    """The cache file of a rendered config's reading: SHA-256 of the platform's code and the config's text."""
    return hashlib.sha256(f"{code_digest(platform)}\n{text}".encode()).hexdigest() + ".json"


def prune(store: Path, platform: str, texts, stale_tmp_s: float = 600) -> int:
    """Remove the readings in ``store`` of configs that are none of ``texts`` (every config an audit of the whole
    fabric compares: a re-render or an edit leaves the old texts' files behind, a cron audit would grow the folder
    for years), and temporary files of interrupted writes older than ``stale_tmp_s``. Returns how many went."""
    keep = {file_name(platform, t) for t in texts}
    removed = 0
    now = time.time()
    with suppress(OSError):  # (no folder, or one audit may not list: nothing to prune)
        for f in store.iterdir():
            with suppress(OSError):  # (another audit removed or replaced it meanwhile)
                if (f.suffix == ".json" and f.name not in keep) or (f.suffix == ".tmp" and now - f.stat().st_mtime > stale_tmp_s):
                    f.unlink()
                    removed += 1
    return removed


def intended_reading(store: Path | None, platform: str, text: str) -> dict:
    """The platform's ``intended_reading`` of the rendered config ``text``: from ``store`` (a cache folder) when
    it holds it, else read and written there (``store`` None: read, no cache)."""
    pm = platform_module(platform)
    if store is None:
        return pm.intended_reading(text)
    f = store / file_name(platform, text)
    try:
        data = json.loads(f.read_bytes())
        if pm.is_reading(data):
            return data
    except (OSError, ValueError):  # (absent, unreadable, not JSON: read anew)
        pass
    data = pm.intended_reading(text)
    tmp = f.with_name(f"{f.stem}.{os.getpid()}.tmp")
    try:
        make_private_dir(store)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, separators=(",", ":"))
        tmp.replace(f)  # (whole or not at all: another process may read it meanwhile)
    except OSError:  # a folder audit may not write to: no cache, the same reading
        with suppress(OSError):
            tmp.unlink(missing_ok=True)
    return data
