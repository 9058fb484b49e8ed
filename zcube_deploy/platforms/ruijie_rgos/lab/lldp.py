"""LLDP neighbour tables in the RGOS layouts of ruijie.md (brief and detail)."""

from __future__ import annotations

from dataclasses import dataclass

DASH = "-" * 76


@dataclass(frozen=True)
class Neighbor:
    local_port: str
    local_short: str
    system_name: str
    port_id: str
    port_id_type: str  # "Interface name" | "MAC address"
    port_description: str
    chassis_id: str
    chassis_id_type: str  # "MAC address" | "Locally assigned"
    system_description: str  # may hold a newline: RGOS wraps it onto an unindented line
    capabilities: str  # e.g. "Repeater, Bridge, Router" or "Station"
    capability_codes: str  # brief form, e.g. "P, B, R"
    management_address: str = ""


def brief(neighbors: list[Neighbor]) -> str:
    lines = [
        "Capability codes:",
        "    (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device",
        "    (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other",
        f"{'System Name':<28}{'Local Intf':<20}{'Port ID':<33}{'Capability':<13}Aging-time",
    ]
    for n in neighbors:
        lines.append(f"{n.system_name:<27} {n.local_short:<19} {n.port_id:<32} {n.capability_codes:<12} 1minutes 40seconds")
    lines += ["", f"Total entries displayed: {len(neighbors)}"]
    return "\n".join(lines)


def _kv(k: str, v: str) -> str:
    return f"  {k:<34}: {v}".rstrip() if v == "" else f"  {k:<34}: {v}"


# the lines of a block that are the same for every neighbour, made once (a 512-port switch's detail has ~25,000 of them)
_HEAD = [_kv("Device type", "LLDP Device"), _kv("Update time", "0days 0hours 1minutes 2seconds"), _kv("Aging time", "1minutes 58seconds"), ""]
_MGMT = [_kv("Interface numbering subtype", "ifIndex"), _kv("Interface number", "0"), _kv("Object identifier", ""), "", ""]
_TAIL = "\n".join(["",
    "  802.1 organizationally information",
    _kv("Port VLAN ID", ""),
    _kv("Port and protocol VLAN ID(PPVID)", "0"),
    _kv("    PPVID Supported", "YES"),
    _kv("    PPVID Enabled", "NO"),
    _kv("VLAN name of VLAN 0", ""),
    _kv("Protocol Identity", ""),
    "",
    "",
    "  802.3 organizationally information",
    _kv("Auto-negotiation supported", ""),
    _kv("Auto-negotiation enabled", ""),
    _kv("PMD auto-negotiation advertised", ""),
    _kv("Operational MAU type", ""),
    _kv("PoE support", "NO"),
    _kv("Link aggregation supported", ""),
    _kv("Link aggregation enabled", ""),
    _kv("Aggregation port ID", ""),
    _kv("Maximum frame Size", ""),
])


def _block(n: Neighbor, index: int) -> list[str]:
    desc = n.system_description.split("\n")
    return [
        _kv("Neighbor index", str(index)),
        *_HEAD,
        _kv("Chassis ID type", n.chassis_id_type),
        _kv("Chassis ID", n.chassis_id),
        _kv("System name", n.system_name),
        _kv("System description", desc[0]),
        *desc[1:],
        _kv("System capabilities supported", n.capabilities),
        _kv("System capabilities enabled", n.capabilities),
        "",
        _kv("Management address subtype", "ipv4" if n.management_address else ""),
        _kv("Management address", n.management_address),
        *_MGMT,
        _kv("Port ID type", n.port_id_type),
        _kv("Port ID", n.port_id),
        _kv("Port description", n.port_description),
        _TAIL,
    ]


def detail(neighbors: list[Neighbor], header_word: str = "LLDP") -> str:
    """One block per port; a second neighbour on the same port follows a dashed line, no port header."""
    return "".join(detail_chunks(neighbors, header_word)).removesuffix("\n")


def detail_chunks(neighbors, header_word: str = "LLDP"):
    """The same text, one neighbour at a time (a 512-port switch answers with ~1 MB: stream it)."""
    current = None
    index = 0
    for n in neighbors:
        lines: list[str] = []
        if n.local_port != current:
            current, index = n.local_port, 1
            lines += [DASH, f"{header_word} neighbor-information of port [{n.local_port}]", DASH]
        else:
            index += 1
            lines.append(DASH)
        lines += _block(n, index)
        lines.append("")
        yield "\n".join(lines) + "\n"
