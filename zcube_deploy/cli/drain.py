"""`zcube drain PLAN ELEMENT`: take a switch or a cable out of service (`zcube undrain`, cli/undrain.py, puts it back)."""

from __future__ import annotations

import sys

import click

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, err, handle_errors, out, print_json, prompt

def drain_options(fn):
    """The arguments and options drain and undrain share."""
    fn = click.option("--timeout", type=float, default=30, show_default=True)(fn)
    fn = click.option("--host-command", default=None, metavar="CMD",
                      help="run per GPU port of a drained switch, e.g. 'ssh {server} ip link set dev {port} {state}' "
                           "({state}: down before the switch's ports shut, up after they came back)")(fn)
    fn = click.option("--json", "as_json", is_flag=True, help="print the record / result as JSON")(fn)
    fn = click.option("--dry-run", is_flag=True, help="show what would be sent; change nothing, write no record")(fn)
    fn = click.option("--known-hosts", default=None, type=click.Path(dir_okay=False))(fn)
    fn = click.option("--lab", "lab_path", default=None, type=click.Path(dir_okay=False), help="lab.json: management-address override")(fn)
    fn = click.option("--configs", "configs_dir", default=None, type=click.Path(file_okay=False),
                      help="the render output folder (holds configs/); default: the plan's folder")(fn)
    fn = click.argument("element", metavar="ELEMENT")(fn)
    return click.argument("plan_path", metavar="PLAN", type=click.Path())(fn)


@cli.command("drain")
@drain_options
@click.option("--accept-loss", is_flag=True, help="drain even when the analysis predicts GPU pairs without a routed path")
@click.option("--settle", "settle_s", type=click.FloatRange(min=0), default=5.0, show_default=True, help="seconds between graceful shutdown and the ports")
@handle_errors
def drain_cmd(plan_path, element, configs_dir, lab_path, known_hosts, dry_run, as_json, timeout, host_command, accept_loss,
              settle_s) -> None:
    """Drain ELEMENT (switch:NAME or link:CABLE): steer transit away (bgp), move the hosts, shut its GPU ports, then its fabric ports, check."""
    from zcube_deploy.drain.run import closing_line, drain

    plan, plan_dir, opts, creds = workflow.drain_setup(plan_path, configs_dir, lab_path, known_hosts, dry_run, timeout, prompt, element,
                                                       accept_loss=accept_loss, settle_s=settle_s, host_command=host_command)
    doc = drain(plan, plan_dir, element, opts, creds, say=lambda s: (err if as_json else out).print(s, markup=False))  # --json: stdout is JSON only
    if as_json:
        print_json(doc)
    else:
        out.print(closing_line(doc, plan_dir, dry_run), markup=False)
    sys.exit(0 if doc["status"] in ("drained", "would drain") else 1)
