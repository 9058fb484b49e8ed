"""Locate the data folders (templates/, inventories/, cabling/) shipped with the package.

In a wheel they live in ``zcube_deploy/_data/<name>``; in a source checkout (editable install)
they are the top-level folders of the repository.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """Return the folder ``name`` (``templates``, ``inventories`` or ``cabling``)."""
    for candidate in (_PKG / "_data" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"data folder {name!r} is not installed with zcube_deploy")
