"""`zcube cabling PLAN` (cut sheets, BOM, cable lists) and `zcube cabling status WORKBOOK` (progress)."""

from __future__ import annotations

import sys

import click
from rich.table import Table

from zcube_deploy import workflow
from zcube_deploy.cli.common import (
    DefaultGroup,
    cli,
    handle_errors,
    out,
    print_json,
    print_stale,
)
from zcube_deploy.cli.printers import print_cabling, print_catalog_changes


@cli.group("cabling", cls=DefaultGroup)
def cabling_group() -> None:
    """Cut sheets, BOM and cable lists: `zcube cabling PLAN -o DIR`; progress: `zcube cabling status WORKBOOK`."""


@cabling_group.command("make", hidden=True)
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.option("-o", "--output", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False))
@click.option("--catalog", default=None, type=click.Path(dir_okay=False), help="cabling catalog (default: the plan's, else the bundled one)")
@click.option("--accept-catalog-change", is_flag=True, help="use a cabling catalog other than the plan's (prints what differs)")
@click.option("--json", "as_json", is_flag=True, help="print the BOM as JSON")
@handle_errors
def cabling_make_cmd(plan_path: str, out_dir: str, catalog: str | None, accept_catalog_change: bool, as_json: bool) -> None:
    """Write DIR/cabling.xlsx (big halls: DIR/cabling/*.xlsx), DIR/cables.csv, DIR/labels.csv, DIR/netbox-cables.csv and DIR/topology.dot for PLAN."""
    from zcube_deploy.cabling.run import PLAN_FIELDS

    plan = workflow.open_plan(plan_path, PLAN_FIELDS, short_lived=True)
    print_stale(workflow.stale_warning(plan))
    r = workflow.cabling(plan, out_dir, catalog, accept_catalog_change)
    print_catalog_changes(r["catalog_changes"])
    if as_json:
        print_json(r["bom"])
    else:
        print_cabling(r, out_dir)


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%"


def print_status(workbook: str, st: dict) -> None:
    t = Table(title=f"cabling progress: {workbook}", title_justify="left")
    for col in ("sheet", "cables", "installed", "checked", "issues", "done"):
        t.add_column(col, justify="left" if col == "sheet" else "right")
    for s in st["sheets"]:
        t.add_row(s["sheet"], str(s["cables"]), str(s["installed"]), str(s["checked"]), str(s["issues"]),
                  _percent(s["checked"], s["cables"]) if s["cables"] else "100%")
    o = st["overall"]
    t.add_row("[bold]all cables[/]", str(o["cables"]), str(o["installed"]), str(o["checked"]), str(o["issues"]),
              _percent(o["checked"], o["cables"]) if o["cables"] else "-")
    out.print(t)
    for i in st["issues"][:20]:
        out.print(f"  [yellow]issue[/] {i['cable']} ({i['sheet']})")
    for u in st["unreadable"][:20]:
        out.print(f"  [red]unreadable[/] {u['sheet']} row {u['row']}" + (f" (cable {u['cable']})" if u["cable"] else "") + f": {u['why']}",
                  highlight=False)
    if len(st["unreadable"]) > 20:
        out.print(f"  ... and {len(st['unreadable']) - 20} more unreadable rows (--json lists them all)")
    for m in (st.get("missing") or [])[:20]:
        out.print(f"  [red]missing[/] {m['cable']}: planned, on no cut sheet (racks {', '.join(m['racks'])})", highlight=False)
    if len(st.get("missing") or []) > 20:
        out.print(f"  ... and {len(st['missing']) - 20} more planned cables on no cut sheet (--json lists them all)")


@cabling_group.command("status")
@click.argument("workbook", type=click.Path())
@click.option("--json", "as_json", is_flag=True)
@click.option("--plan", "plan_path", default=None, type=click.Path(),
              help="the plan.json: every planned cable must be on some cut sheet (a row deleted whole is reported)")
@handle_errors
def cabling_status_cmd(workbook: str, as_json: bool, plan_path: str | None) -> None:
    """Read the technicians' Installed/Checked columns back (WORKBOOK: a .xlsx or a folder of them) and print progress per rack."""
    from zcube_deploy.cabling.status import missing_cables, read_status
    from zcube_deploy.plan.model import projection  # start-up time (the plan model's schemas)

    st = read_status(workbook)
    st["missing"] = missing_cables(st, workflow.open_plan(plan_path, projection(cables=None))) if plan_path else None
    if as_json:
        print_json(st)
    else:
        print_status(workbook, st)
    if st["unreadable"] or st["missing"]:  # rows nobody can count, or planned cables on no sheet: said, not clean
        sys.exit(1)
