"""`zcube build INVENTORY`: plan, render, cabling and the hall page in one go."""

from __future__ import annotations

import click

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, handle_errors
from zcube_deploy.cli.printers import (
    print_cabling,
    print_hall,
    print_plan_summary,
    print_render,
)

# what each stage of workflow.build prints: printer(result, out_dir)
STAGE_PRINTERS = {
    "plan": lambda r, out_dir: print_plan_summary(r["summary"], r["path"]),
    "render": print_render,
    "cabling": print_cabling,
    "hall": lambda r, out_dir: print_hall(r),
}


@cli.command("build")
@click.argument("inventory", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False))
@click.option("--jobs", type=int, default=None, help="worker processes for rendering")
@handle_errors
def build_cmd(inventory: str, out_dir: str, jobs: int | None) -> None:
    """Plan, render and write cabling sheets for INVENTORY in one go."""
    for stage, result in workflow.build(inventory, out_dir, jobs, short_lived=True):
        STAGE_PRINTERS[stage](result, out_dir)
