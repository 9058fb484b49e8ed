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


def _block(n: Neighbor, index: int) -> list[str]:
    def kv(k: str, v: str) -> str:
        return f"  {k:<34}: {v}".rstrip() if v == "" else f"  {k:<34}: {v}"

    desc = n.system_description.split("\n")
    return [
        kv("Neighbor index", str(index)),
        kv("Device type", "LLDP Device"),
        kv("Update time", "0days 0hours 1minutes 2seconds"),
        kv("Aging time", "1minutes 58seconds"),
        "",
        kv("Chassis ID type", n.chassis_id_type),
        kv("Chassis ID", n.chassis_id),
        kv("System name", n.system_name),
        kv("System description", desc[0]),
        *desc[1:],
        kv("System capabilities supported", n.capabilities),
        kv("System capabilities enabled", n.capabilities),
        "",
        kv("Management address subtype", "ipv4" if n.management_address else ""),
        kv("Management address", n.management_address),
        kv("Interface numbering subtype", "ifIndex"),
        kv("Interface number", "0"),
        kv("Object identifier", ""),
        "",
        "",
        kv("Port ID type", n.port_id_type),
        kv("Port ID", n.port_id),
        kv("Port description", n.port_description),
        "",
        "  802.1 organizationally information",
        kv("Port VLAN ID", ""),
        kv("Port and protocol VLAN ID(PPVID)", "0"),
        kv("    PPVID Supported", "YES"),
        kv("    PPVID Enabled", "NO"),
        kv("VLAN name of VLAN 0", ""),
        kv("Protocol Identity", ""),
        "",
        "",
        "  802.3 organizationally information",
        kv("Auto-negotiation supported", ""),
        kv("Auto-negotiation enabled", ""),
        kv("PMD auto-negotiation advertised", ""),
        kv("Operational MAU type", ""),
        kv("PoE support", "NO"),
        kv("Link aggregation supported", ""),
        kv("Link aggregation enabled", ""),
        kv("Aggregation port ID", ""),
        kv("Maximum frame Size", ""),
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
