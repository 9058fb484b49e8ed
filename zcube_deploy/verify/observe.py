"""What a switch reports, parsed into one plain structure (pure: text in, dict out)."""

from __future__ import annotations

import re

from zcube_deploy.devices.names import long_name
from zcube_deploy.devices.parsers import parse
from zcube_deploy.platforms.ruijie_rgos import l3_facts

# the commands verify runs on every switch, and the file names --record / --from use
COMMANDS = ("show version", "show running-config", "show interface status", "show lldp neighbors detail", "show ip route")


def record_name(command: str) -> str:
    return command.replace(" ", "_") + ".txt"


# LLDP detail lines verify never reads (about 60% of the output): dropped before TextFSM sees them
_IRRELEVANT = re.compile(
    r"^\s+(Device type|Update time|Aging time|Interface numbering subtype|Interface number|Object identifier|"
    r"Management address subtype|802\.[13] organizationally|Port VLAN ID|Port and protocol VLAN|PPVID|VLAN name|"
    r"Protocol Identity|Auto-negotiation|PMD auto-negotiation|Operational MAU|PoE support|Link aggregation|"
    r"Aggregation port ID|Maximum frame Size)\b.*$\n?|^\s*$\n?", re.M)


def slim_lldp(text: str) -> str:
    return _IRRELEVANT.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def observe(outputs: dict[str, str]) -> dict:
    """{command: raw text} -> {"hostname", "interfaces": {name: {"up"}}, "lldp": {port: [..]}, "static_routes": [...]}"""
    run = outputs.get("show running-config", "")
    m = re.search(r"^hostname (\S+)", run.replace("\r", ""), re.M)
    hostname = m.group(1) if m else None
    interfaces = {long_name(r["interface"]): {"up": r["status"].lower() == "up", "vlan": r["vlan"]}
                  for r in parse("show interface status", outputs.get("show interface status", ""))}
    lldp: dict[str, list[dict]] = {}
    for r in parse("show lldp neighbors detail", slim_lldp(outputs.get("show lldp neighbors detail", ""))):
        lldp.setdefault(long_name(r["local_interface"]), []).append({
            "system_name": r["system_name"], "port_id": r["port_id"], "port_id_type": r["port_id_type"],
            "chassis_id": r["chassis_id"], "management_address": r["management_address"]})
    routes = sorted({(f"{r['network']}/{r['prefix_length']}", r["nexthop_ip"])
                     for r in parse("show ip route", outputs.get("show ip route", "")) if r["protocol"].startswith("S")})
    addresses = l3_facts(run)["interfaces"] if run else {}
    return {"hostname": hostname, "interfaces": interfaces, "lldp": lldp, "static_routes": [list(r) for r in routes],
            "addresses": addresses}
