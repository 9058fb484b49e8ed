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


def observe(outputs: dict[str, str], platform: str = DEFAULT_PLATFORM, absent: dict[str, str] | None = None) -> dict:
    """{command: raw text} -> {"hostname", "interfaces": {name: {"up", "vlan", "shut"}}, "lldp": {port: [..]},
    "static_routes": [[net/len, next hop]], "addresses": {name: [a/len]}, "bgp": {...} | None, "bgp_routes": {...},
    "unavailable": {fact: why}}.

    ``unavailable`` names each part of the observation (vocabulary.Fact) whose command is not in
    ``outputs`` (``absent``: command -> why, e.g. a recording without its file) or was answered with
    a CLI error (the platform's ``command_error``): the checks reading it are not_checked, never passed."""
    mod = platform_module(platform)
    gone = {c: (absent or {}).get(c) or f"`{c}` was not collected" for c in mod.VERIFY_COMMANDS if c not in outputs}
    for c, text in outputs.items():
        err = mod.command_error(text)
        if err is not None:
            gone[c] = f"the switch answered `{c}` with {err!r}"
    d = mod.observe({c: t for c, t in outputs.items() if c not in gone})
    d["unavailable"] = {fact: gone[c] for fact, c in mod.FACT_COMMANDS.items() if c in gone}
    return d
