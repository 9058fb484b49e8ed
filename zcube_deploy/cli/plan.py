"""`zcube plan INVENTORY`: validate an inventory and write plan.json."""

from __future__ import annotations

import click

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, handle_errors, print_json
from zcube_deploy.cli.printers import print_plan_summary


@cli.command("plan")
@click.argument("inventory", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False), help="folder for plan.json")
@click.option("--json", "as_json", is_flag=True, help="print the summary as JSON")
@handle_errors
def plan_cmd(inventory: str, out_dir: str, as_json: bool) -> None:
    """Validate INVENTORY and write the ZCube plan to DIR/plan.json."""
    plan = workflow.plan_inventory(inventory, short_lived=True)
    path, summary = workflow.write_plan(plan, out_dir)
    if as_json:
        print_json({**summary, "plan": str(path)})
    else:
        print_plan_summary(summary, path)
    KEPT.append(plan)  # freed by the process's end, not object by object on return (see main)


KEPT: list = []
"""What a finished `zcube plan` built, kept alive to the end of the process: freeing a 16k-GPU plan's
millions of objects one by one costs 0.5-0.8 s, and :func:`zcube_deploy.cli.main` ends the `zcube`
program without doing so once it has a plan here (the plan file is written and closed by then)."""
