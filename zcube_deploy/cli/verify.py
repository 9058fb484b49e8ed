"""`zcube verify PLAN`: compare what the switches see (LLDP, interface state, routes) with the plan."""

from __future__ import annotations

import sys

import click

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, handle_errors, print_stale, prompt
from zcube_deploy.cli.printers import print_verify


@cli.command("verify")
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.option("--lab", "lab_path", default=None, type=click.Path(dir_okay=False), help="lab.json: management-address override")
@click.option("-o", "--output", "out_dir", default=None, type=click.Path(file_okay=False), help="write verify.json and verify.xlsx here")
@click.option("--record", default=None, type=click.Path(file_okay=False), help="save raw outputs to DIR/<switch>/<command>.txt")
@click.option("--from", "replay_dir", default=None, type=click.Path(file_okay=False), help="verify offline from recorded outputs")
@click.option("--only", default=None, help="switch name globs, or rack:GLOB (comma-separated)")
@click.option("--known-hosts", default=None, type=click.Path(dir_okay=False))
@click.option("--concurrency", type=int, default=32, show_default=True)
@click.option("--timeout", type=float, default=30, show_default=True)
@handle_errors
def verify_cmd(plan_path, lab_path, out_dir, record, replay_dir, only, known_hosts, concurrency, timeout) -> None:
    """Compare LLDP neighbours, interface state and routes with PLAN; say which cable to move where."""
    from zcube_deploy.verify import PLAN_FIELDS
    from zcube_deploy.verify.pipeline import check_sources, run_verify

    check_sources(record, replay_dir)
    plan = workflow.open_plan(plan_path, PLAN_FIELDS)
    print_stale(workflow.stale_warning(plan))
    r = run_verify(plan, out_dir, lab_path, known_hosts, record, replay_dir, only, concurrency, timeout, prompt=prompt,
                   drained=workflow.drained_ports(plan_path, plan))
    print_verify(r)
    if r["findings"] or r["errors"]:
        sys.exit(1)
