"""`zcube cabling`: all cabling outputs for a plan."""

from __future__ import annotations

from pathlib import Path

from zcube_deploy.cabling.exports import write_cable_csv, write_dot, write_netbox_csv
from zcube_deploy.cabling.sheets import CableRows
from zcube_deploy.cabling.workbook import write_workbook
from zcube_deploy.catalog.cabling import load_cabling_catalog


# what the cabling outputs read of a plan (the rest of a 64k-GPU plan stays on disk)
PLAN_FIELDS: dict[str, set[str] | None] = {
    "cables": None, "layout": None, "port_map": None, "models": None, "sizing": None, "counts": None,
    "cluster": None, "inputs": None, "tool_version": None,
    "switches": {"name", "group", "plane", "index", "mgmt_address", "rack", "u"},
    "servers": {"name", "rack", "u"},
}


def write_cabling(plan: dict, out_dir: str | Path, catalog_path: str | Path | None = None) -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cat = load_cabling_catalog(Path(catalog_path) if catalog_path else None)
    rows = CableRows(plan, cat)
    wb = write_workbook(plan, cat, out / "cabling.xlsx", rows)
    write_cable_csv(rows, out / "cables.csv")
    write_netbox_csv(rows, cat, out / "netbox-cables.csv")
    write_dot(plan, out / "topology.dot")
    return {"files": [str(out / n) for n in ("cabling.xlsx", "cables.csv", "netbox-cables.csv", "topology.dot")],
            "sheets": wb["sheets"], "bom": wb["bom"]}
