"""`zcube compare`: a design comparison (ZCube against HPN, ROFT, Rail-only), not a check of a built network."""

from __future__ import annotations

import functools

import click
from rich.table import Table

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, handle_errors, out, print_json
from zcube_deploy.cli.printers import print_fitting


def _designs_table(title: str, header: list[str], rows: list[list[str]], columns) -> Table:
    t = Table(title=title, title_justify="left")
    for i in columns:
        t.add_column(header[i], justify="left" if i == 0 else "right", style="dim" if header[i] == "ratio" else None)
    for r in rows:
        t.add_row(*(r[i] for i in columns))
    return t


def print_designs(designs: list, params, prices, label: str) -> None:
    from zcube_deploy.analysis.designs import narrow_columns, table_rows

    header, rows = table_rows(designs)
    title = f"designs compared: {label}, NIC ports {params.nic_port_gbps}G"
    # a narrow terminal: ZCube and one other design (and its ratio) per table
    print_fitting(_designs_table(title, header, rows, range(len(header))),
                  lambda: map(functools.partial(_designs_table, title, header, rows), narrow_columns(header)))
    for d in designs:
        out.print(f"[bold]{d.design}[/]: {d.rule}" + (f"; {d.note}" if d.note else ""))
    if prices is None:
        out.print("no switch price in the catalog for this model: CapEx left out")


@cli.command("compare")
@click.argument("source", required=False, type=click.Path(dir_okay=False))
@click.option("--gpus", type=int, help="GPU count (without SOURCE)")
@click.option("--switch-capacity", default="51.2T", show_default=True, help="switch capacity, e.g. 51.2T, 102.4T")
@click.option("--nic-port-speed", default="200G", show_default=True, help="NIC port speed b (ZCube, HPN); ROFT and Rail-only get one 2b port")
@click.option("--gpus-per-server", default=8, show_default=True, type=int, help="GPUs per server (= rails)")
@click.option("--oversubscription", default=1.0, show_default=True, type=float, help="ZCube oversubscription s")
@click.option("--switch-model", help="catalog switch model (default: the catalog's model of that capacity)")
@click.option("--catalog", "catalog_path", type=click.Path(dir_okay=False), help="extra hardware catalog YAML")
@click.option("--json", "as_json", is_flag=True, help="print the comparison as JSON")
@handle_errors
def compare_designs_cmd(source: str | None, gpus: int | None, switch_capacity: str, nic_port_speed: str, gpus_per_server: int,
                        oversubscription: float, switch_model: str | None, catalog_path: str | None, as_json: bool) -> None:
    """ZCube against HPN dual-plane Clos, ROFT and Rail-only for SOURCE (plan.json or inventory) or --gpus N."""
    from zcube_deploy.analysis.designs import as_json as designs_json

    designs, params, prices, label = workflow.design_comparison(source, gpus, switch_capacity, nic_port_speed, gpus_per_server,
                                                                oversubscription, switch_model, catalog_path)
    if as_json:
        print_json(designs_json(designs))
    else:
        print_designs(designs, params, prices, label)
