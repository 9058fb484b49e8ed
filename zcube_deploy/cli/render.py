"""`zcube render PLAN`: switch configs and server netplan files."""

from __future__ import annotations

import click

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, handle_errors, print_stale
from zcube_deploy.cli.printers import print_render


@cli.command("render")
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.option("-o", "--output", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False))
@click.option("--only", default=None, help="glob(s) on switch/server names, comma-separated; 'rack:PATTERN' for racks")
@click.option("--jobs", type=int, default=None, help="worker processes (default: up to 2)")
@handle_errors
def render_cmd(plan_path: str, out_dir: str, only: str | None, jobs: int | None) -> None:
    """Render switch configs (DIR/configs) and server netplan files (DIR/hosts) from PLAN."""
    plan, source = workflow.open_for_render(plan_path, short_lived=True)
    print_stale(workflow.stale_warning(plan))
    print_render(workflow.render(plan, out_dir, only, jobs, source=source), out_dir)
