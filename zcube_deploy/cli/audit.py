"""`zcube audit PLAN -o DIR`: drift of the running fabric from its plan, once (cron) or every N seconds."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, handle_errors, out, print_stale, prompt


def _print(result, cycle: int | None, metrics_path: str | None = None) -> None:
    s = result.summary
    head = f"[{result.finished} UTC] run {cycle}: " if cycle is not None else ""
    state = "[green]clean[/]" if s["clean"] else f"[red]{s['findings']} finding{'s' if s['findings'] != 1 else ''}[/]"
    out.print(f"{head}audit of {s['switches']} switches ({s['switches_unreachable']} unreachable): {state} "
              f"({s['drift']} config drift, {s['not_checked']} not checked) in {result.duration_s:.1f} s")
    if s["by_kind"]:
        out.print("  " + ", ".join(f"{k} {n}" for k, n in s["by_kind"].items()))
    for f in result.findings[:10]:
        out.print(f"  {f['id']} {f['kind']}: {f['what']}", markup=False)
    if len(result.findings) > 10:
        out.print(f"  ... {len(result.findings) - 10} more in {result.paths.get('audit')}")
    out.print(f"  written: {result.paths.get('audit')}" + (f", {metrics_path}" if metrics_path else ""), markup=False)


@cli.command("audit")
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False), help="write audit.json (and recordings) here")
@click.option("--configs", "configs_dir", default=None, type=click.Path(file_okay=False),
              help="the render output folder (holds configs/); default: the plan's folder")
@click.option("--lab", "lab_path", default=None, type=click.Path(dir_okay=False), help="lab.json: management-address override")
@click.option("--from", "replay_dir", default=None, type=click.Path(file_okay=False), help="audit offline from recorded outputs")
@click.option("--only", default=None, help="switch name globs, or rack:GLOB (comma-separated)")
@click.option("--metrics", "metrics_path", default=None, type=click.Path(dir_okay=False),
              help="also write the figures in the Prometheus text format (node_exporter textfile)")
@click.option("--every", type=click.FloatRange(min=1), default=None, help="audit again every SECONDS until interrupted")
@click.option("--count", type=click.IntRange(min=1), default=None, help="with --every: stop after N runs")
@click.option("--runner", type=click.Choice(["threads", "nornir"]), default="threads", show_default=True,
              help="collect with a thread pool or through Nornir (the ZCubeInventory plugin)")
@click.option("--known-hosts", default=None, type=click.Path(dir_okay=False))
@click.option("--concurrency", type=int, default=32, show_default=True)
@click.option("--timeout", type=float, default=30, show_default=True)
@handle_errors
def audit_cmd(plan_path, out_dir, configs_dir, lab_path, replay_dir, only, metrics_path, every, count, runner, known_hosts,
              concurrency, timeout) -> None:
    """Audit the fabric against PLAN: config drift inside the managed scope, LLDP, links, routes, BGP/BFD.

    Exit 0 when clean, 1 when anything drifted or could not be checked (each finding with a stable ID
    and its fix), 2 for bad input. With --every the exit code is the last run's.
    """
    from zcube_deploy.audit.run import AuditOptions, check_options, configs_folder, run_audits
    from zcube_deploy.access import credentials
    from zcube_deploy.audit.run import PLAN_FIELDS

    check_options(every, count, replay_dir, runner)
    plan = workflow.open_plan(plan_path, PLAN_FIELDS)
    print_stale(workflow.stale_warning(plan))
    plan_file, configs = configs_folder(plan_path, configs_dir)
    opts = AuditOptions(configs, lab_path, known_hosts, replay_dir, only, concurrency, timeout, runner)
    creds = credentials(bool(lab_path), prompt) if not replay_dir and runner == "threads" else None
    opts.drained, opts.graceful = workflow.drain_state(plan_file, plan)
    result = run_audits(plan, plan_file, Path(out_dir), opts, creds, metrics_path, every, count,
                        report=lambda r, cycle: _print(r, cycle, metrics_path))
    sys.exit(0 if result.clean else 1)
