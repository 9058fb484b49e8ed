"""`zcube undrain PLAN ELEMENT`: reverse a drain exactly, check the switches are back as planned (cli/drain.py drains)."""

from __future__ import annotations

import sys

import click

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, err, handle_errors, out, print_json, prompt
from zcube_deploy.cli.drain import drain_options


@cli.command("undrain")
@drain_options
@click.option("--force", is_flag=True, help="push the rendered config even when the switch holds more than the drain's changes")
@click.option("--settle", "settle_s", type=click.FloatRange(min=0), default=5.0, show_default=True, help="seconds between the fabric ports and the GPU ports")
@handle_errors
def undrain_cmd(plan_path, element, configs_dir, lab_path, known_hosts, dry_run, as_json, timeout, host_command, force, settle_s) -> None:
    """Reverse the drain of ELEMENT exactly, check the switches are back as planned, remove the record."""
    from zcube_deploy.drain.run import undrain

    plan, plan_dir, opts, creds = workflow.drain_setup(plan_path, configs_dir, lab_path, known_hosts, dry_run, timeout, prompt, element,
                                                       force=force, settle_s=settle_s, host_command=host_command)
    res = undrain(plan, plan_dir, element, opts, creds, say=lambda s: (err if as_json else out).print(s, markup=False))  # --json: stdout is JSON only
    if as_json:
        print_json(res)
    else:  # a dry run too: "would undrain", or the step that would fail (it printed nothing, exit 1)
        out.print(res["status"], markup=False)
        if res.get("still_drained") and not dry_run:
            out.print(f"still drained: {', '.join(res['still_drained'])} (their ports stay down; `zcube undrain` each to bring them back)",
                      markup=False)
    sys.exit(0 if res["ok"] and (dry_run or res.get("back_as_planned")) else 1)
