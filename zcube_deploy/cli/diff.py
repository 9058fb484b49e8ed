"""`zcube diff OLD NEW`: what changed between two plans."""

from __future__ import annotations

import sys

import click
from rich.table import Table

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, handle_errors, out, print_json


def _cable(c: dict) -> str:
    return f"{c['id']}: {c['a']['device']} {c['a']['port']} <-> {c['b']['device']} {c['b']['port']}"


def _moved(r: dict) -> str:
    f, t = r["from"], r["to"]
    return (f"{r['id']}: {f['a']['device']} {f['a']['port']} <-> {f['b']['device']} {f['b']['port']}  =>  "
            f"{t['a']['device']} {t['a']['port']} <-> {t['b']['device']} {t['b']['port']}")


ROW_FORMATS = (
    ("moved cables", "cables_moved", _moved),
    ("removed cables", "cables_removed", _cable),
    ("added cables", "cables_added", _cable),
    ("changed addresses", "addresses", lambda r: f"{r['device']} {r['interface']}: {r['old']} -> {r['new']}"),
    ("changed routes", "routes", lambda r: f"{r['switch']}: {r['change']} {r['prefix']} via {r['next_hop']}"),
    ("switch placement", "switches", lambda r: f"{r['switch']}: {r['change']} {r.get('from', '')} {('-> ' + r['to']) if 'to' in r else ''}"),
)


def print_diff(d: dict, limit: int) -> None:
    t = Table(title="plan difference", title_justify="left")
    t.add_column("what")
    t.add_column("count", justify="right")
    for k, v in d["summary"].items():
        t.add_row(k.replace("_", " "), str(v))
    for k, (a, b) in d["sizing_changed"].items():
        t.add_row(f"sizing {k}", f"{a} -> {b}")
    out.print(t)
    for title, key, fmt in ROW_FORMATS:
        rows = d[key]
        if rows:
            out.print(f"[bold]{title}[/] ({len(rows)})")
            for r in rows[:limit]:
                out.print("  " + fmt(r))
            if len(rows) > limit:
                out.print(f"  ... {len(rows) - limit} more (use --json)")


@cli.command("diff")
@click.argument("old_plan", type=click.Path())
@click.argument("new_plan", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="print the full difference as JSON")
@click.option("--fail-on", type=click.Choice(["any", "moved", "none"]), default="any", show_default=True,
              help="exit 1 on any change, only when an existing cable moved (or was removed), or never")
@click.option("--limit", default=20, show_default=True, help="rows per table")
@handle_errors
def diff_cmd(old_plan: str, new_plan: str, as_json: bool, fail_on: str, limit: int) -> None:
    """Show what changed between two plans (cables, addresses, routes, placement)."""
    from zcube_deploy.plan.diff import diff_plans

    d = diff_plans(workflow.open_plan(old_plan), workflow.open_plan(new_plan))
    if as_json:
        print_json(d)
    else:
        print_diff(d, limit)
    if workflow.diff_fails(d, fail_on):
        sys.exit(1)
