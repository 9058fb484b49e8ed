"""`zcube cabling`: all cabling outputs for a plan."""

from __future__ import annotations

from pathlib import Path

from zcube_deploy.cabling.exports import write_cable_csv, write_dot, write_labels_csv, write_netbox_csv
from zcube_deploy.cabling.sheets import CableRows, catalog_for_plan
from zcube_deploy.cabling.workbook import check_printable, write_split_workbooks, write_workbook
from zcube_deploy.catalog.cabling import plan_catalog
from zcube_deploy.plan.model import projection


# what the cabling outputs read of a plan (the rest of a 64k-GPU plan stays on disk)
PLAN_FIELDS = projection(
    cables=None, layout=None, port_map=None, models=None, sizing=None, counts=None,
    cluster=None, inputs=None, tool_version=None,
    switches={"name", "group", "plane", "index", "mgmt_address", "rack", "u"},
    servers={"name", "rack", "u"},
)


SPLIT_DIR = "cabling"  # DIR/cabling/summary.xlsx + DIR/cabling/row-<row>.xlsx above the catalog's split size


def write_cabling(plan: dict, out_dir: str | Path, catalog_path: str | Path | None = None, workers: int | None = None,
                  accept_catalog_change: bool = False) -> dict:
    """Every cabling output of ``plan``; the catalog must be the plan's (catalog/cabling.py's ``plan_catalog``)
    unless ``accept_catalog_change`` (then ``catalog_changes`` says what differs)."""
    cat, changes = plan_catalog(plan, catalog_path, accept_catalog_change)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    check_printable(cat)
    cat = catalog_for_plan(cat, plan)
    rows = CableRows(plan, cat)  # every input error (label lengths) before any file is written
    names = ("cables.csv", "labels.csv", "netbox-cables.csv", "topology.dot")

    exports = [lambda: write_labels_csv(rows, cat, out / "labels.csv"), lambda: write_cable_csv(rows, out / "cables.csv"),
               lambda: write_netbox_csv(rows, cat, out / "netbox-cables.csv"), lambda: write_dot(plan, out / "topology.dot")]

    limit = cat.sheets.split_above_cables
    split = bool(limit) and len(plan["cables"]) > limit
    single, folder = out / "cabling.xlsx", out / SPLIT_DIR
    if split:
        wb = write_split_workbooks(plan, cat, folder, rows, side_work=exports, workers=workers)
        if single.exists():  # stale single workbook of an earlier, smaller run: one source of truth
            single.unlink()
    else:
        wb = write_workbook(plan, cat, single, rows)
        for job in exports:
            job()
        for old in [*folder.glob("row-*.xlsx"), folder / "summary.xlsx"] if folder.is_dir() else []:
            old.unlink()
    return {"files": wb["workbooks"] + [str(out / n) for n in names], "workbooks": wb["workbooks"], "split": split,
            "sheets": wb["sheets"], "bom": wb["bom"], "labels": 2 * len(rows.rows), "catalog_changes": changes}
