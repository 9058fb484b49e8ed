"""Ruijie RGOS 11: parsers of configuration text into neutral facts (the data is platform.yaml)."""

from __future__ import annotations

import re
from ipaddress import IPv4Interface, IPv4Network

from zcube_deploy.devices.hconfig import parse_config

NAME = "ruijie_rgos"
_ADDR_RE = re.compile(r"^ip address (\d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+)(?:\s+secondary)?$")
_ROUTE_RE = re.compile(r"^ip route (\d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+) (?:(\S+ \S+) )?(\d+\.\d+\.\d+\.\d+)\b")


def l3_facts(config_text: str) -> dict:
    """Neutral layer-3 facts of an RGOS config.

    Returns ``{"interfaces": {name: ["a.b.c.d/len", ...]}, "routes": [("net/len", "next hop"), ...]}``.

    >>> l3_facts("interface Mgmt 0\\n ip address 172.16.0.11 255.255.255.0\\nip route 0.0.0.0 0.0.0.0 172.16.0.1\\n")
    {'interfaces': {'Mgmt 0': ['172.16.0.11/24']}, 'routes': [('0.0.0.0/0', '172.16.0.1')]}
    """
    tree = parse_config(config_text)
    interfaces: dict[str, list[str]] = {}
    routes: list[tuple[str, str]] = []
    for child in tree.children:
        text = child.text
        if text.startswith("interface "):
            addrs = interfaces.setdefault(text[len("interface "):].strip(), [])
            for sub in child.children:
                m = _ADDR_RE.match(sub.text.strip())
                if m:
                    addrs.append(str(IPv4Interface(f"{m.group(1)}/{m.group(2)}")))
        else:
            m = _ROUTE_RE.match(text)
            if m:
                routes.append((str(IPv4Network(f"{m.group(1)}/{m.group(2)}", strict=False)), m.group(4)))
    return {"interfaces": interfaces, "routes": routes}


def top_level_lines(config_text: str) -> list[str]:
    """The top-level lines of an RGOS config (volatile lines and comments dropped)."""
    return [c.text for c in parse_config(config_text).children]
