"""`zcube hall PLAN`: one self-contained page of the data hall."""

from __future__ import annotations

import click

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, handle_errors, print_stale
from zcube_deploy.cli.printers import print_catalog_changes, print_hall


@cli.command("hall")
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.option("-o", "--output", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False), help="writes DIR/hall/index.html")
@click.option("--cabling", "cabling_xlsx", default=None, type=click.Path(dir_okay=False), help="cabling.xlsx with the technicians' progress")
@click.option("--verify", "verify_json", default=None, type=click.Path(dir_okay=False), help="verify.json: racks and cables with findings in red")
@click.option("--analyze", "analyze_json", default=None, type=click.Path(dir_okay=False), help="analyze.json (and unreachability.png beside it)")
@click.option("--traffic", "traffic_json", default=None, type=click.Path(dir_okay=False),
              help="traffic.json of `zcube traffic`: fabric bundles coloured by utilisation")
@click.option("--catalog", default=None, type=click.Path(dir_okay=False), help="cabling catalog (default: the plan's, else the bundled one)")
@click.option("--accept-catalog-change", is_flag=True, help="use a cabling catalog other than the plan's (prints what differs)")
@handle_errors
def hall_cmd(plan_path: str, out_dir: str, cabling_xlsx: str | None, verify_json: str | None, analyze_json: str | None,
             traffic_json: str | None, catalog: str | None, accept_catalog_change: bool) -> None:
    """One self-contained page of the data hall: floor plan, rack elevations, summary, status overlays."""
    from zcube_deploy.hall import PLAN_FIELDS

    plan = workflow.open_plan(plan_path, PLAN_FIELDS, short_lived=True)
    print_stale(workflow.stale_warning(plan))
    r = workflow.hall(plan, out_dir, catalog, accept_catalog_change, cabling=cabling_xlsx, verify=verify_json, analyze=analyze_json,
                      traffic=traffic_json)
    print_catalog_changes(r["catalog_changes"])
    print_hall(r, with_verify=bool(verify_json))
