"""`zcube schema plan|inventory`: print a JSON Schema."""

from __future__ import annotations

import click

from zcube_deploy.cli.common import cli, print_json


@cli.command("schema")
@click.argument("what", type=click.Choice(["plan", "inventory"]))
def schema_cmd(what: str) -> None:
    """Print the JSON Schema of the plan (its documented minimum) or of the inventory."""
    from zcube_deploy.plan.schema import inventory_schema, plan_schema

    print_json(plan_schema() if what == "plan" else inventory_schema())
