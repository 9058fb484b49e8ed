"""Which platforms exist and their data files (a base module: it reads files, it imports no platform code).

``zcube_deploy/platforms/<name>/platform.yaml`` holds a platform's data: the managed scope that push
owns, the loopback, the secret-bearing keywords masked in files and reports, the catalog defaults.
The inventory, the catalogs and safety.py need only this; the platforms' code is reached through the
registry in ``zcube_deploy/platforms/__init__.py`` (docs/layout.md: the layers).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

PLATFORMS_DIR = Path(__file__).resolve().parent / "platforms"
DEFAULT_PLATFORM = "ruijie_rgos"  # what an inventory gets when it names none (inventory/models.py)


def known_platforms() -> list[str]:
    """Every platform folder (a Python package under platforms/)."""
    return sorted(p.parent.name for p in PLATFORMS_DIR.glob("*/__init__.py"))


@lru_cache(maxsize=None)
def platform_data(name: str) -> dict:
    """The data file of platform ``name`` ({} when it has none; a KeyError names the platforms that exist)."""
    if name not in known_platforms():
        raise KeyError(f"unknown platform {name!r}; known: {', '.join(known_platforms())}")
    path = PLATFORMS_DIR / name / "platform.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}


def catalog_defaults(name: str) -> dict:
    """What a catalog entry of platform ``name`` gets for the fields it leaves out ({} for a platform without data)."""
    if not (PLATFORMS_DIR / name / "platform.yaml").is_file():
        return {}
    return platform_data(name).get("catalog_defaults") or {}
