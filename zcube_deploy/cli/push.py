"""`zcube push PLAN --configs DIR`: push rendered configs to the switches, safely."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.table import Table

from zcube_deploy import workflow
from zcube_deploy.cli.common import (
    cli,
    handle_errors,
    out,
    print_stale,
    progress_bar,
    prompt,
)
from zcube_deploy.cli.printers import print_section_changes

STATUS_COLOURS = {"changed": "green", "unchanged": "green", "would_change": "cyan", "rolled_back": "yellow", "refused": "magenta"}


def print_push(report: dict, targets: int, dry_run: bool) -> None:
    from zcube_deploy.push.preview import device_rows

    t = Table(title=f"push{' (dry run)' if dry_run else ''}: {targets} switches", title_justify="left")
    for col in ("switch", "status", "lines", "seconds", "detail"):
        t.add_column(col)
    for name, st, lines, seconds, detail in device_rows(report):
        t.add_row(name, f"[{STATUS_COLOURS.get(st, 'red')}]{st}[/]", str(lines), f"{seconds:.1f}", detail)
    out.print(t)


def print_diff_preview(report: dict, diff_dir: Path) -> None:
    """A bounded preview of the dry run's diffs; the diff files hold every line that would be sent."""
    from zcube_deploy.push.preview import diff_preview

    shown, more_switches = diff_preview(report)
    for p in shown:
        out.print(f"[bold]--- {p['name']}: {p['lines_changed']} lines would change[/] ({p['diff']})")
        for line in p["head"]:
            out.print("  " + line, markup=False)
        if p["more"]:
            out.print(f"  ... {p['more']} more lines in {p['diff']}", markup=False)
    if more_switches:
        out.print(f"... and {more_switches} more switches would change: every line that would be sent "
                  f"is in {diff_dir}/<switch>.diff", markup=False)


@cli.command("push")
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.option("--configs", "configs_dir", required=True, type=click.Path(file_okay=False), help="folder with configs/ (from render)")
@click.option("--dry-run", is_flag=True, help="back up and diff only: never enter config mode")
@click.option("--only", default=None, help="glob(s) on switch names, comma-separated; 'rack:PATTERN' for racks")
@click.option("--concurrency", type=int, default=8, show_default=True)
@click.option("--canary", type=int, default=0, show_default=True, help="push N devices first; continue only if all succeed")
@click.option("--max-failures", type=int, default=None, help="stop starting new devices after N failures")
@click.option("--lab", "lab_path", default=None, type=click.Path(dir_okay=False), help="lab.json: management-address override")
@click.option("--known-hosts", default=None, type=click.Path(dir_okay=False), help="known_hosts file (default: the lab's, else ~/.ssh)")
@click.option("--trust-on-first-use", is_flag=True, help="accept and record unknown host keys")
@click.option("--timeout", type=float, default=30, show_default=True, help="connect/login timeout, seconds")
@click.option("--allow-edited", is_flag=True, help="push configs that differ from render's manifest.json (the scope check still applies)")
@click.option("--include-drained", is_flag=True, help="push drained switches too (their drain is then undone; see docs/drain.md)")
@handle_errors
def push_cmd(plan_path, configs_dir, dry_run, only, concurrency, canary, max_failures, lab_path, known_hosts, trust_on_first_use, timeout,
             allow_edited, include_drained):
    """Push rendered configs to the switches of PLAN, safely (see the README)."""
    from zcube_deploy.push import PLAN_FIELDS
    from zcube_deploy.push.preview import dry_run_sections, summary_text

    plan = workflow.open_plan(plan_path, PLAN_FIELDS)
    print_stale(workflow.stale_warning(plan))
    report, targets = workflow.push(plan, configs_dir, dry_run=dry_run, only=only, concurrency=concurrency, canary=canary,
                                    max_failures=max_failures, lab_path=lab_path, known_hosts=known_hosts,
                                    trust_on_first_use=trust_on_first_use, timeout=timeout, prompt=prompt, progress=progress_bar,
                                    allow_edited=allow_edited, drained=None if include_drained else workflow.drain_held(plan_path, plan),
                                    plan_path=plan_path)
    print_push(report, targets, dry_run)
    if dry_run:
        print_diff_preview(report, Path(configs_dir) / "push")
        fleet = dry_run_sections(report, configs_dir, plan["cluster"]["platform"])
        if fleet["rows"]:
            print_section_changes(fleet["rows"], fleet["switches"])
        if fleet["unread"]:
            out.print(f"[yellow]not summed up[/] (the diff or rendered config could not be read again): {', '.join(fleet['unread'])}",
                      highlight=False)
    for name, reasons in report["not_checked"].items():
        out.print(f"[yellow]not checked on {name}:[/] " + "; ".join(reasons), highlight=False)
    out.print(f"summary: {summary_text(report['summary'])}" + (f"; stopped: {report['stopped']}" if report["stopped"] else "")
              + f"; report {Path(configs_dir) / 'push-report.json'}", markup=False)
    if not report["ok"]:
        sys.exit(1)
