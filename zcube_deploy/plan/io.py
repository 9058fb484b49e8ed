"""plan.json: canonical, deterministic serialisation (same plan, same bytes) and safe reading.

Layout: a JSON object with sorted keys; each top-level list has one element per line (compact,
sorted keys), so the file is valid JSON, diffs line by line, and writes fast at 64k GPUs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

from zcube_deploy.errors import PlanFileError
from zcube_deploy.perf import bulk_allocation
from zcube_deploy.plan.build import SCHEMA_VERSION

SECTIONS = {"switches", "servers", "cables", "port_map", "models", "settings", "sizing", "cluster", "inputs", "layout"}
_enc = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def iter_canonical(doc: dict) -> Iterator[str]:
    """The canonical layout in chunks. A value may be an iterator of rows (written one per line as
    they come), so a large document can be streamed to disk without building it in memory."""
    yield "{\n"
    keys = sorted(doc)
    for n, key in enumerate(keys):
        value = doc[key]
        yield _enc.encode(key) + ":"
        if isinstance(value, list) and value:
            yield "[\n" + ",\n".join(_enc.encode(v) for v in value) + "\n]"
        elif isinstance(value, Iterator):
            batch: list[str] = []
            first = True
            for row in value:
                batch.append(_enc.encode(row))
                if len(batch) == 2000:
                    yield ("[\n" if first else ",\n") + ",\n".join(batch)
                    first, batch = False, []
            if batch:
                yield ("[\n" if first else ",\n") + ",\n".join(batch)
                first = False
            yield "[]" if first else "\n]"
        else:
            yield _enc.encode(value)
        yield ",\n" if n < len(keys) - 1 else "\n"
    yield "}\n"


def dumps_plan(plan: dict) -> str:
    return "".join(iter_canonical(plan))


def write_canonical(doc: dict, path: str | Path) -> Path:
    """Stream ``doc`` in the canonical layout to ``path`` (via a temporary file, then renamed)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.writelines(iter_canonical(doc))
    tmp.replace(path)
    return path


def write_plan(plan: dict, out_dir: str | Path) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return write_canonical(plan, out / "plan.json")


def _project(obj: dict, proj) -> dict:
    """Keep the fields named in ``proj`` (a set, or a dict of field -> sub-projection for lists of dicts)."""
    if isinstance(proj, dict):
        out = {}
        for k, sub in proj.items():
            if k in obj:
                v = obj[k]
                out[k] = [_project(x, sub) for x in v] if sub is not None and isinstance(v, list) else v
        return out
    return {k: obj[k] for k in proj if k in obj}


def _read_selected(p: Path, fields: dict[str, set[str] | None]) -> dict | None:
    """Read only some top-level keys of a canonical plan.json, and of list elements only some fields.

    Returns None when the file is not in the canonical layout (then the caller parses it whole).
    """
    out: dict = {}
    loads = json.loads
    with open(p, encoding="utf-8") as fh:
        if fh.readline() != "{\n":
            return None
        for line in fh:
            if line == "}\n":
                return out
            key, sep, rest = line.partition(":")
            if not sep or not key.startswith('"'):
                return None
            key = loads(key)
            if rest == "[\n":
                keep = key in fields
                proj = fields.get(key)
                items = []
                for item in fh:
                    if item.startswith("]"):
                        break
                    if keep:
                        obj = loads(item.rstrip(",\n"))
                        items.append(_project(obj, proj) if proj is not None else obj)
                if keep:
                    out[key] = items
            elif key in fields or key == "schema_version":
                out[key] = loads(rest.rstrip(",\n"))
    return None


def read_plan(path: str | Path, fields: dict[str, set[str] | None] | None = None) -> dict:
    """Read plan.json (a file, or a folder holding one). Refuses unknown schema versions.

    ``fields`` limits what is kept (memory at 64k GPUs): top-level key -> None for the whole
    value, or a set of field names to keep of each list element.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "plan.json"
    try:
        with bulk_allocation():
            data = _read_selected(p, fields) if fields else None
            if data is None:
                data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanFileError(f"{p}: no such plan file (run `zcube plan INVENTORY -o DIR` first)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanFileError(f"{p}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise PlanFileError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict) or "schema_version" not in data:
        raise PlanFileError(f"{p}: not a zcube plan (no schema_version)")
    if data["schema_version"] != SCHEMA_VERSION:
        raise PlanFileError(f"{p}: plan schema version {data['schema_version']!r} is not supported by this zcube "
                            f"(it reads version {SCHEMA_VERSION}); re-run `zcube plan` with this version")
    needed = set(fields) if fields else SECTIONS
    missing = sorted((needed & SECTIONS) - set(data))
    if missing:
        raise PlanFileError(f"{p}: the plan lacks {', '.join(missing)}; re-run `zcube plan` with this version")
    return data


def inventory_changed(plan: dict) -> str | None:
    """A warning when the inventory the plan was made from has changed since (None when unchanged or unknown)."""
    from zcube_deploy.inventory import load_inventory
    from zcube_deploy.errors import ZCubeError

    src = plan.get("inputs", {}).get("inventory")
    if not src or not Path(src).is_file():
        return None
    try:
        inv = load_inventory(src)
    except ZCubeError:
        return f"the inventory {src} changed since this plan was made and no longer validates; re-run `zcube plan`"
    if inv.sha256 != plan["inputs"].get("inventory_sha256"):
        return f"the inventory {src} changed since this plan was made; re-run `zcube plan` to pick the changes up"
    return None


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
