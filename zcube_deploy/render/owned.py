"""The files a render folder's manifest.json owns (docs/render.md#what-a-render-owns).

A render into a folder that holds an earlier render removes the files the earlier manifest listed and the new
one does not (another or a smaller fabric rendered into the same folder: its configs would otherwise stay beside
the new ones, and a script applying ``hosts/*.yaml`` would apply them too). A file that no manifest lists was not
written by the tool and is never removed: the ones in the generated folders are named instead (:func:`foreign`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

GENERATED = ("configs", "hosts")  # the folders a render writes its per-device files into
# a manifest entry render may remove: one plain name directly in a generated folder (no '..', no sub-folder, no
# absolute path): a hand-edited manifest cannot make a render remove anything else
_OWNABLE = re.compile(r"(?:configs|hosts)/(?!\.\.?$)[^/\\\x00]+")


def previous_render(manifest_path: Path) -> dict | None:
    """The manifest.json of the render already in a folder, its ``files`` ({file: sha256}) checked: empty when there is
    none, None when it cannot be read (then nothing is known to be the tool's, and nothing is removed)."""
    try:
        doc = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict):
        return None
    return {**doc, "files": {str(rel): str(h) for rel, h in doc["files"].items()}}


def carried(previous: dict, plan: dict, switch_suffix: str) -> dict[str, str]:
    """What a partial render (``--only``) keeps of the previous manifest: the files of this plan's devices, when the
    previous render is of this plan's inventory; none when it is of another (its files are not this plan's: listed
    under this plan's inventory, push would take them for its own)."""
    if not previous or previous.get("inventory_sha256") != plan["inputs"]["inventory_sha256"]:
        return {}
    planned = planned_files(plan, switch_suffix)
    return {rel: h for rel, h in previous["files"].items() if rel in planned}


def retire(out: Path, previous: Iterable[str], keep: Iterable[str]) -> list[str]:
    """Remove from ``out`` the files ``previous`` (the earlier manifest) lists and ``keep`` (the new one) does not;
    the ones removed, sorted. Entries outside the generated folders, and ones already gone, are left alone."""
    keep = set(keep)
    gone = []
    for rel in sorted(set(previous) - keep):
        path = f"{out}/{rel}"
        if _OWNABLE.fullmatch(rel) and (os.path.isfile(path) or os.path.islink(path)):
            os.unlink(path)
            gone.append(rel)
    return gone


def foreign(out: Path, owned: Iterable[str]) -> list[str]:
    """The entries of the generated folders of ``out`` that ``owned`` (the manifest) does not list, sorted as
    'configs/NAME': files the tool did not write (kept, and named in a warning)."""
    owned = set(owned)
    found = []
    for sub in GENERATED:
        try:
            names = os.listdir(f"{out}/{sub}")
        except (FileNotFoundError, NotADirectoryError):
            continue
        found += [f"{sub}/{n}" for n in names if f"{sub}/{n}" not in owned]
    return sorted(found)


def by_folder(rels: Iterable[str]) -> dict[str, int]:
    """How many of ``rels`` are in each generated folder ({"configs": n, "hosts": n})."""
    rels = list(rels)
    return {sub: sum(1 for r in rels if r.startswith(sub + "/")) for sub in GENERATED}


def move_files(stage: Path | str, out: Path | str) -> None:
    """Move every file of ``stage``'s generated folders into ``out``'s (created when missing), one rename a file:
    what ``out``'s folders hold besides is left alone."""
    for sub in GENERATED:
        os.makedirs(f"{out}/{sub}", exist_ok=True)
        src, dst = f"{stage}/{sub}", f"{out}/{sub}"  # strings: a rename per file, nothing else
        for name in os.listdir(src):
            os.replace(f"{src}/{name}", f"{dst}/{name}")


def publish(rendered: Path, out: Path) -> dict:
    """Move a finished whole render (``rendered``: a folder holding configs/, hosts/ and manifest.json, e.g. expand's
    stage) into ``out`` as a render into ``out`` would leave it: the files the earlier manifest listed and this one
    does not removed (none when it cannot be read), the rest replaced file by file, manifest.json last (its old copy
    removed first); a file no manifest lists is kept and named. Returns what :func:`render_all` adds about it:
    ``removed``, ``removed_by_folder``, ``previous_unreadable``, ``foreign``."""
    files = json.loads((rendered / "manifest.json").read_text(encoding="utf-8"))["files"]
    previous = previous_render(out / "manifest.json")
    removed = retire(out, previous.get("files", {}), files) if previous is not None else None
    (out / "manifest.json").unlink(missing_ok=True)
    move_files(rendered, out)
    (rendered / "manifest.json").replace(out / "manifest.json")
    return {"removed": removed or [], "removed_by_folder": by_folder(removed or []), "previous_unreadable": removed is None,
            "foreign": foreign(out, files)}


def planned_files(plan: dict, switch_suffix: str) -> set[str]:
    """Every file a render of the whole ``plan`` writes into the generated folders."""
    files = {f"configs/{s['name']}{switch_suffix}" for s in plan["switches"]}
    for s in plan["servers"]:
        files |= {f"hosts/{s['name']}.yaml", f"hosts/{s['name']}.sysctl.conf"}
    return files


__all__ = ["GENERATED", "by_folder", "carried", "foreign", "move_files", "planned_files", "previous_render", "publish", "retire"]
