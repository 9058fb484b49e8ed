"""What a switch reports, parsed into one plain, platform-neutral structure (pure: text in, dict out).

The commands and their parsing are the platform's (``platforms/<name>/observations.py``:
``VERIFY_COMMANDS`` and ``observe``); this module only dispatches, so verify's comparison never
sees a platform's output format.
"""

from __future__ import annotations

from zcube_deploy.platforms import DEFAULT_PLATFORM, platform_module


def commands(platform: str = DEFAULT_PLATFORM) -> tuple[str, ...]:
    """The commands verify runs on a switch of ``platform`` (and the files --record / --from use)."""
    return tuple(platform_module(platform).VERIFY_COMMANDS)


def record_name(command: str) -> str:
    return command.replace(" ", "_") + ".txt"


def observe(outputs: dict[str, str], platform: str = DEFAULT_PLATFORM) -> dict:
    """{command: raw text} -> {"hostname", "interfaces": {name: {"up", "vlan"}}, "lldp": {port: [..]},
    "static_routes": [[net/len, next hop]], "addresses": {name: [a/len]}, "bgp": {...} | None, "bgp_routes": {...}}"""
    return platform_module(platform).observe(outputs)
