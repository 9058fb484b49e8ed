"""`zcube migrate -o DIR` into a folder holding an older migration: DIR is written whole or not at all (outdir.py).

An interrupted run (a write failing, a real Ctrl-C, the process killed) leaves the older migration in DIR byte for
byte, never a mix of both; a finished run leaves the new one only (no file of the old). Known-bad: the files written
straight into DIR (whole_folder replaced by a context that yields DIR itself) fails each interruption test.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, run_zcube, zcube_exe
from zcube_deploy.errors import InputErrors
from zcube_deploy.migrate import run as migrate_run
from zcube_deploy.migrate.planner import Options
from zcube_deploy.outdir import whole_folder

SMALL = ROOT / "tests" / "inventories"
ARGS = ("--unit", "4-gpu", "--capacity-floor", "0.5")


def tree(d: Path) -> dict[str, str]:
    """Every file under ``d`` (relative path -> sha256)."""
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.rglob("*")) if p.is_file()}


def siblings(d: Path) -> list[str]:
    return sorted(p.name for p in d.parent.iterdir() if p.name.startswith(f".{d.name}."))


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """roft-small's plan, two targets (zcube-small, zcube-small-inplace) and DIR/old: roft-small -> zcube-small migrated
    (the older migration); its files as they are."""
    d = tmp_path_factory.mktemp("out")
    for name in ("roft-small", "zcube-small", "zcube-small-inplace"):
        r = run_zcube("plan", str(SMALL / f"{name}.yaml"), "-o", str(d / name))
        assert r.returncode == 0, r.stderr
    r = run_zcube("migrate", str(d / "roft-small"), str(d / "zcube-small"), "-o", str(d / "old"), *ARGS)
    assert r.returncode == 0, r.stderr
    return d, tree(d / "old")


def fresh_copy(pair, name: str) -> Path:
    """A copy of the older migration at ``name`` (each test interrupts its own)."""
    d, _ = pair
    subprocess.run(["cp", "-a", str(d / "old"), str(d / name)], check=True)
    return d / name


def test_a_failing_write_leaves_the_old_migration_whole(pair, monkeypatch):
    """The workbook of stage 2 fails to write (after stage 1's folder, plans and configs are written): DIR is the older
    migration, byte for byte, and nothing of the new run is left beside it."""
    d, old = pair
    mig = fresh_copy(pair, "failing")
    real, calls = migrate_run.write_move_workbook, []

    def failing(rows, cat, cluster, stage, path):
        calls.append(stage)
        if stage == 2:
            raise OSError(28, "No space left on device", str(path))
        real(rows, cat, cluster, stage, path)

    monkeypatch.setattr(migrate_run, "write_move_workbook", failing)
    with pytest.raises(OSError, match="No space left"):
        migrate_run.write_migration(str(d / "roft-small"), str(d / "zcube-small-inplace"), mig, Options(0.5, "4-gpu", 0, 30.0))
    assert calls == [1, 2]  # it failed mid-write, stage 1 written
    assert tree(mig) == old
    assert siblings(mig) == []


def _interrupt(pair, name: str, sig: int) -> tuple[Path, subprocess.Popen]:
    """`zcube migrate` of the new pair into a copy of the older migration, given ``sig`` once it has written stage 1's
    move sheet (the run is mid-write: stage 2, the suggestion and migrate.json to come)."""
    d, _ = pair
    mig = fresh_copy(pair, name)
    proc = subprocess.Popen([*zcube_exe(), "migrate", str(d / "roft-small"), str(d / "zcube-small-inplace"), "-o", str(mig), *ARGS],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # a pytest-xdist worker ignores SIGINT and a child inherits that: give the run a shell's Ctrl-C
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline, start = time.monotonic() + 120, time.time()
    while not [p for p in (*d.glob(f".{name}.partial-*/stage-01/moves.xlsx"), mig / "stage-01" / "moves.xlsx")
               if p.exists() and p.stat().st_mtime >= start]:  # stage 1 written anew (the copy keeps the old times)
        assert proc.poll() is None, f"migrate ended before it was interrupted: {proc.communicate()}"
        assert time.monotonic() < deadline, "migrate did not start writing within 120 s"
        time.sleep(0.02)
    proc.send_signal(sig)
    proc.communicate(timeout=120)
    return mig, proc


def test_ctrl_c_mid_write_leaves_the_old_migration_whole(pair):
    """A real SIGINT while the new migration's stage 1 is being written: exit non-zero, DIR the older migration byte
    for byte, the half-written sibling removed."""
    _, old = pair
    mig, proc = _interrupt(pair, "ctrl-c", signal.SIGINT)
    assert proc.returncode != 0
    assert tree(mig) == old
    assert siblings(mig) == []


def test_killed_mid_write_leaves_the_old_migration_whole_and_the_next_run_clears_up(pair):
    """SIGKILL mid-write (no clean-up runs): DIR is the older migration byte for byte; the half-written sibling stays
    hidden beside it, and the next run removes it and writes the new migration, with nothing of the old left."""
    d, old = pair
    mig, proc = _interrupt(pair, "killed", signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    assert tree(mig) == old
    assert [s.split("-")[0] for s in siblings(mig)] == [".killed.partial"]
    r = run_zcube("migrate", str(d / "roft-small"), str(d / "zcube-small-inplace"), "-o", str(mig), *ARGS)
    assert r.returncode == 0, r.stderr
    assert siblings(mig) == []
    r = run_zcube("migrate", str(d / "roft-small"), str(d / "zcube-small-inplace"), "-o", str(d / "clean"), *ARGS)
    assert r.returncode == 0, r.stderr
    want = tree(d / "clean")
    assert tree(mig).keys() == want.keys()  # the new migration's files only
    assert {k for k, v in tree(mig).items() if v != want[k]} <= {"migrate.json"}  # (it names its folder)


def test_a_folder_that_is_not_a_migration_is_refused(pair):
    """DIR is replaced whole, so a folder holding anything else (a plan's folder given as DIR) is refused before any
    planning (exit 2), untouched."""
    d, _ = pair
    before = tree(d / "zcube-small")
    r = run_zcube("migrate", str(d / "roft-small"), str(d / "zcube-small-inplace"), "-o", str(d / "zcube-small"), *ARGS)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "holds files a migration does not write (plan.json)" in r.stdout + r.stderr
    assert tree(d / "zcube-small") == before
    with pytest.raises(InputErrors):
        migrate_run.check_output(d / "zcube-small" / "plan.json")  # a file


def test_whole_folder_swaps_only_at_the_end(tmp_path):
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    (out / "sub" / "old.txt").write_text("old")
    with whole_folder(out) as work:
        assert work != out and work.parent == out.parent and not any(work.iterdir())
        (work / "new.txt").write_text("new")
        assert tree(out) == {"sub/old.txt": hashlib.sha256(b"old").hexdigest()}  # DIR untouched until the block ends
    assert tree(out) == {"new.txt": hashlib.sha256(b"new").hexdigest()}
    assert siblings(out) == []
    assert oct(out.stat().st_mode & 0o777) == oct(0o777 & ~_umask())  # made as any folder is, not 0700
    with whole_folder(tmp_path / "fresh") as work:  # DIR not there yet
        (work / "a").write_text("a")
    assert tree(tmp_path / "fresh") == {"a": hashlib.sha256(b"a").hexdigest()}
    (tmp_path / "link").symlink_to(tmp_path / "fresh")  # DIR a link: the folder it names is replaced, the link kept
    with whole_folder(tmp_path / "link") as work:
        (work / "b").write_text("b")
    assert (tmp_path / "link").is_symlink() and tree(tmp_path / "fresh") == {"b": hashlib.sha256(b"b").hexdigest()}
    assert siblings(tmp_path / "fresh") == []


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
