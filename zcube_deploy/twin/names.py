"""Linux names for plan ports: the kernel allows 15 characters without '/', ':' or spaces.

A port name that is already valid is kept. Otherwise the port's catalog abbreviation (e.g.
``p0/1:2`` for a port named ``port 0/1:2``) is made valid (``p0-1_2``); if that is
still too long or collides with another port of the same device, the name is cut and given a
short stable hash. The mapping is recorded in twin.json.
"""

from __future__ import annotations

import hashlib
import re

from zcube_deploy.platforms.frr import LINUX_IFNAME_MAX, check_linux_ifname


def _clean(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "", name.replace("/", "-").replace(":", "_").replace(" ", ""))


def linux_name(port: str, abbreviation: str | None = None, taken: set[str] | None = None) -> str:
    """A valid, per-device unique Linux interface name for ``port``.

    >>> linux_name("ens1f0np0")
    'ens1f0np0'
    >>> linux_name("port 0/1:2", "p0/1:2")
    'p0-1_2'
    """
    taken = taken if taken is not None else set()
    candidates = [port] if check_linux_ifname(port) is None else []
    if abbreviation:
        candidates.append(_clean(abbreviation))
    candidates.append(_clean(port))
    for c in candidates:
        if c and check_linux_ifname(c) is None and c not in taken and c != "lo":
            return c
    digest = hashlib.sha1(port.encode()).hexdigest()
    base = _clean(abbreviation or port)[: LINUX_IFNAME_MAX - 5] or "p"
    for k in range(0, len(digest) - 3):
        c = f"{base}x{digest[k:k + 4]}"
        if c not in taken:
            return c
    raise ValueError(f"no unique Linux name for {port!r}")


def device_names(ports: list[str], abbreviations: dict[str, str] | None = None) -> dict[str, str]:
    """Plan port name -> Linux name for one device's ports (deterministic, unique, valid)."""
    abbreviations = abbreviations or {}
    taken: set[str] = set()
    out = {}
    for p in sorted(ports):
        n = linux_name(p, abbreviations.get(p), taken)
        taken.add(n)
        out[p] = n
    return out
