"""Flat exports of the cabling: cable list CSV, label-printer CSV, NetBox cable bulk-import CSV, Graphviz DOT (PTM style).

Every CSV cell goes through xlsx.neutral: a text a spreadsheet would take for a formula stays text."""

from __future__ import annotations

import csv
from pathlib import Path

from zcube_deploy.cabling.sheets import CableRows
from zcube_deploy.catalog.cabling import CablingCatalog
from zcube_deploy.xlsx import neutral_row

CABLE_COLUMNS = ["cable", "kind", "group", "plane", "a_device", "a_port", "a_rack", "a_u", "b_device", "b_port", "b_rack", "b_u",
                 "medium", "length_m", "part", "label_a", "label_b"]
NETBOX_TYPE = {"copper": "dac-passive", "aoc": "aoc", "fibre": "smf"}


def _cell(value):
    return f"{value:g}" if isinstance(value, float) else value


def write_cable_csv(rows: CableRows, path: Path) -> None:
    """Each cable once, A end to Z (B) end."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(CABLE_COLUMNS)
        for c, r in zip(rows.plan["cables"], rows.rows):
            w.writerow(neutral_row((r.cable, c["kind"], r.group, r.plane, r.a_device, r.a_port, r.a_rack, r.a_u,
                                    r.b_device, r.b_port, r.b_rack, r.b_u, r.medium, _cell(r.length_m), r.part,
                                    " / ".join(r.label_a), " / ".join(r.label_b))))


LABEL_COLUMNS = ["cable", "end", "line1", "line2", "barcode", "colour", "rack", "u", "device", "port"]


def write_labels_csv(rows: CableRows, cat: CablingCatalog, path: Path) -> int:
    """One row per label (= per cable end) for label-printer software's database / CSV import
    (Brother P-touch Editor, ZebraDesigner, DYMO Connect): a header row, RFC 4180 CSV (CRLF), UTF-8;
    in walking order (rack, U from the top, device, port). ``barcode`` (QR / Code 128 payload) is the cable ID."""
    n = 0
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\r\n")
        w.writerow(LABEL_COLUMNS)
        colour = {g: c.label for g, c in cat.colours.items()}
        for cable, end, line1, line2, group, rack, u, device, port in rows.labels():
            w.writerow(neutral_row((cable, end, line1, line2, cable, colour[group], rack, u, device, port)))
            n += 1
    return n


def write_netbox_csv(rows: CableRows, cat: CablingCatalog, path: Path) -> None:
    """NetBox DCIM cable bulk import (Cables > Import): interfaces on both sides, planned, with label, colour and length."""
    cols = ["side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type", "side_b_name",
            "type", "status", "label", "color", "length", "length_unit"]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(cols)
        kind = {m: NETBOX_TYPE[v.kind] for m, v in cat.media.items()}
        colour = {g: v.fill.lower() for g, v in cat.colours.items()}
        w.writerows(neutral_row((r.a_device, "dcim.interface", r.a_port, r.b_device, "dcim.interface", r.b_port,
                                 kind[r.medium], "planned", r.cable, colour[r.group], _cell(r.length_m), "m")) for r in rows.rows)


def _q(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_dot(plan: dict, path: Path) -> None:
    """The cabling as a Graphviz graph in the PTM topology.dot style: "dev":"port" -- "dev":"port"."""
    lines = [f"graph {_q(plan['cluster']['name'])} {{"]
    for sw in plan["switches"]:
        function = "rail" if sw["group"] == "odd" else "tor"
        lines.append(f"  {_q(sw['name'])} [function={_q(function)} group={_q(sw['group'])} plane={_q(sw['plane'])} "
                     f"mgmt_ip={_q(sw['mgmt_address'])} rack={_q(sw['rack'])}];")
    for srv in plan["servers"]:
        lines.append(f"  {_q(srv['name'])} [function=\"host\" rack={_q(srv['rack'])}];")
    quoted: dict[str, str] = {}

    def q(text: str) -> str:  # device and port names repeat: quote each once
        v = quoted.get(text)
        if v is None:
            v = quoted[text] = _q(text)
        return v

    for c in plan["cables"]:
        a, b = c["a"], c["b"]
        lines.append(f"  {q(a['device'])}:{q(a['port'])} -- {q(b['device'])}:{q(b['port'])} [cable={_q(c['id'])} kind={q(c['kind'])}];")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
