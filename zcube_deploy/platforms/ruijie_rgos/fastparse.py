"""Single-pass readers of the two RGOS outputs verify parses on every switch, for speed.

At zcube-16k, `zcube verify --from` parses 256 recordings; the TextFSM template of
`show lldp neighbors detail` (about 490 kB a switch) and the hier_config tree built only to read the
interface addresses of the running config were about two thirds of the per-switch cost. These
readers give the same result as those (``parse("show lldp neighbors detail", ...)`` restricted to
the fields verify reads, and ``l3_facts(text)["interfaces"]``): tests/test_compare_findings.py checks
both on the mocked outputs and on a lab's recordings.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Interface

# ---------------------------------------------------------------- show lldp neighbors detail
# the template's states: Start (port header, neighbour index), Neighbor (fields), Description
# (a multi-line system description, until "System capabilities supported"). Lines are told apart by
# their key (the text before the first colon, whitespace collapsed), as the template's rules do.
_HEADER = re.compile(r"^\s*[Ll][Ll][Dd][Pp]\s+neighbor-information\s+of\s+port\s+\[([^\]]+)\]\s*$")
_SEP = re.compile(r"^\s*-{10,}\s*$")
_FIELDS = {"Neighbor index": "neighbor_index", "Chassis ID type": "chassis_id_type", "Chassis ID": "chassis_id",
           "System name": "system_name", "System description": "", "System capabilities supported": "",
           "System capabilities enabled": "", "Management address": "management_address", "Port ID type": "port_id_type",
           "Port ID": "port_id", "Port description": "port_description"}
_KEYS = ("local_interface", "neighbor_index", "chassis_id_type", "chassis_id", "system_name", "management_address",
         "port_id_type", "port_id", "port_description")


def _field(line: str) -> tuple[str, str] | None:
    """(key, value) of an indented `Key   : value` line whose key is one of ``_FIELDS``, else None."""
    i = line.find(":")
    if i < 2 or not line[0].isspace() or not line[i - 1].isspace():
        return None
    key = " ".join(line[:i].split())
    if key not in _FIELDS:
        return None
    return key, line[i + 1:].strip()


def lldp_detail(text: str) -> list[dict[str, str]]:
    """Rows of `show lldp neighbors detail` as the TextFSM template gives them (the fields in ``_KEYS``;
    '' where absent). CRLF and CR are accepted."""
    rows: list[dict[str, str]] = []
    local = ""
    rec: dict[str, str] = {}
    state = 0  # 0 Start, 1 Neighbor, 2 Description

    def emit() -> None:
        if local or rec:
            rows.append({k: rec.get(k, "") for k in _KEYS} | {"local_interface": local})

    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if state == 2:
            f = _field(line)
            if f is not None and f[0] == "System capabilities supported":
                state = 1
        elif state == 0:
            if "neighbor-information" in line:
                m = _HEADER.match(line)
                if m:
                    local = m.group(1)
                    continue
            f = _field(line)
            if f is not None and f[0] == "Neighbor index" and f[1].isdigit():
                rec["neighbor_index"] = f[1]
                state = 1
        else:
            f = _field(line)
            if f is not None and f[0] != "Neighbor index":
                if f[0] == "System description":
                    state = 2
                elif _FIELDS[f[0]]:
                    rec[_FIELDS[f[0]]] = f[1]
            elif line[:1] in " \t-" and "-" * 10 in line and _SEP.match(line):
                emit()
                rec = {}
                state = 0
    emit()
    return rows


# ---------------------------------------------------------------- running config: interface addresses
_ADDR = re.compile(r"^ip address (\d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+)(?:\s+secondary)?$")


def interface_addresses(config_text: str) -> dict[str, list[str]]:
    """{interface: ["a.b.c.d/len", ...]} of every `interface` block of an RGOS config (l3_facts' "interfaces")."""
    out: dict[str, list[str]] = {}
    cur: str | None = None
    for raw in config_text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.rstrip()
        if not line or line.lstrip().startswith("!"):
            continue
        if not line[0].isspace():
            cur = line[len("interface "):].strip() if line.startswith("interface ") else None
            if cur is not None:
                out.setdefault(cur, [])
            continue
        if cur is not None:
            m = _ADDR.match(line.strip())
            if m:
                out[cur].append(str(IPv4Interface(f"{m.group(1)}/{m.group(2)}")))
    return out
