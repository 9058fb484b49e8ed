"""Platforms: everything one network OS knows, in one place per platform.

``zcube_deploy/platforms/<name>/platform.yaml`` holds a platform's data (the managed scope that
push owns, the loopback, the secret-bearing keywords masked in files and reports), read by
``zcube_deploy/platform_data.py`` (a base module, so that safety, the catalogs and the inventory
know the platforms without importing this registry; its names are part of the registry's API);
``zcube_deploy/platforms/<name>/__init__.py`` its code: the syntax facts, the neutral parse of its
configuration text (:func:`config_facts`), the NAPALM driver name, what verify runs and how it
reads it, the simulated switch of the lab. Nothing outside ``platforms/`` names a platform's
keywords, commands or interface types (tests/test_platform_seam.py); docs/platforms.md says how
to add one.

``switch_renderer`` is the seam render uses: a platform that renders its switch configuration
itself (``frr``) returns ``(file suffix, render(plan, switch) -> text)``; ``None`` keeps render's
own template path (RGOS, with its hier_config self-check).
"""

from __future__ import annotations

import importlib
from typing import Callable

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.platform_data import DEFAULT_PLATFORM, PLATFORMS_DIR, catalog_defaults, known_platforms, platform_data
from zcube_deploy.platforms.facts import ConfigFacts

__all__ = ["DEFAULT_PLATFORM", "catalog_defaults", "config_facts", "config_readers", "known_platforms", "napalm_driver",
           "platform_data", "platform_module", "require_device_access", "simulator", "switch_renderer"]


def platform_module(name: str, part: str = ""):
    """The code of platform ``name`` (its parsers into neutral facts); ``part="lab"``: its simulated switch.

    The one dynamic import of the package (tests/test_layers.py): the registry reaches the platforms'
    code by name, so nothing below it imports a platform package, and no platform package imports
    its simulator (which sits a layer above it, docs/layout.md).
    """
    platform_data(name)  # a clear KeyError for an unknown platform
    return importlib.import_module(f"zcube_deploy.platforms.{name}" + (f".{part}" if part else ""))


def _simulates(name: str) -> bool:
    return (PLATFORMS_DIR / name / "lab" / "__init__.py").is_file()


def switch_renderer(platform: str) -> tuple[str, Callable[[dict, dict], str]] | None:
    """(file suffix, render function) of a platform that renders its configs itself (``render_switch``),
    None for a platform rendered by render/ from its template and the neutral views."""
    module = platform_module(platform)
    render_switch = getattr(module, "render_switch", None)
    if render_switch is None:
        return None
    return getattr(module, "CONFIG_SUFFIX", ".conf"), lambda plan, sw: render_switch(plan, sw)


def require_device_access(name: str) -> None:
    """Refuse (exit 2) a push or verify on a platform without a NAPALM driver and verify commands."""
    module = platform_module(name)
    if not (hasattr(module, "NAPALM_DRIVER") and hasattr(module, "VERIFY_COMMANDS")):
        able = [p for p in known_platforms() if hasattr(platform_module(p), "NAPALM_DRIVER")]
        raise InputErrors(Problem("cluster.platform", f"platform {name!r} has no device driver: push and verify cannot reach its switches",
                                  f"push and verify support: {', '.join(able)}; an frr plan runs in the twin (zcube twin up)"))


def napalm_driver(name: str):
    """The NAPALM driver class of platform ``name`` (``napalm.get_network_driver`` on its driver name)."""
    import napalm  # start-up time: napalm (and netmiko) load only when a device is reached

    require_device_access(name)
    return napalm.get_network_driver(platform_module(name).NAPALM_DRIVER)


def simulator(name: str):
    """The simulated switch of platform ``name`` that the lab runs (the package ``platforms/<name>/lab``,
    imported on demand: it is large)."""
    if name not in known_platforms() or not _simulates(name):
        raise InputErrors(Problem("cluster.platform", f"the lab has no simulated switch for platform {name!r}",
                                  f"the lab simulates: {', '.join(p for p in known_platforms() if _simulates(p))}"))
    return platform_module(name, "lab")


def config_facts(name: str, text: str) -> ConfigFacts:
    """Platform ``name``'s config text -> its neutral facts (see platforms/<name>/__init__.py ``config_facts``)."""
    return platform_module(name).config_facts(text)


def config_readers() -> dict[str, Callable[[str], ConfigFacts]]:
    """{rendered config file suffix: config text -> neutral facts} for every platform that can read its configs back."""
    out = {}
    for name in known_platforms():
        module = platform_module(name)
        if hasattr(module, "config_facts"):
            out[module.CONFIG_SUFFIX] = module.config_facts
    return out
