"""Platforms: everything one network OS knows, in one place per platform.

``zcube_deploy/platforms/<name>/platform.yaml`` holds a platform's data (today: the managed scope
that push owns and the secret-bearing keywords that are masked in files and reports); a platform's
code (parsers of its configuration text) lives beside it. :func:`platform_data` loads the data.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

_HERE = Path(__file__).resolve().parent


def known_platforms() -> list[str]:
    return sorted(p.parent.name for p in _HERE.glob("*/platform.yaml"))


@lru_cache(maxsize=None)
def platform_data(name: str) -> dict:
    """The data file of platform ``name`` (a KeyError names the platforms that exist)."""
    path = _HERE / name / "platform.yaml"
    if not path.is_file():
        raise KeyError(f"unknown platform {name!r}; known: {', '.join(known_platforms())}")
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def platform_module(name: str):
    """The code of platform ``name`` (its parsers into neutral facts)."""
    import importlib

    platform_data(name)  # a clear KeyError for an unknown platform
    return importlib.import_module(f"zcube_deploy.platforms.{name}")
