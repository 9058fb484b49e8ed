"""`zcube demo`: the whole tool on the bundled glm-1k, no hardware (the steps are in zcube_deploy/demo.py)."""

from __future__ import annotations

import json
import sys

import click

from zcube_deploy.cli.common import cli, handle_errors, out, print_events
from zcube_deploy.cli.printers import (
    print_cabling,
    print_plan_summary,
    print_render,
    print_verify,
)


def print_lab(endpoints: int, expected: list[dict]) -> None:
    out.print(f"lab on 127.0.0.1, {endpoints} SSH servers; injected faults (what verify should find):")
    for e in expected:
        out.print(f"  - {json.dumps(e['fault'])} -> expect [bold]{e['kind']}[/] {', '.join(e['cables'])}")


def print_done(out_dir, switches, servers, injected, first, missed, second, elapsed, ok) -> None:
    d = out_dir
    out.print(f"plan:            {d / 'plan.json'}")
    out.print(f"configs:         {d / 'configs'} ({switches}), {d / 'hosts'} ({servers})")
    out.print(f"cabling:         {d / 'cabling.xlsx'}, {d / 'cables.csv'}, {d / 'netbox-cables.csv'}, {d / 'topology.dot'}")
    out.print(f"lab:             {d / 'lab'} (known_hosts, faults.json, wiring.json; its lab.json went when the lab stopped)")
    out.print(f"push:            {d / 'push-report.json'}, diffs in {d / 'push'}, backups in {d / 'backups'}")
    out.print(f"verify (faulty): {d / 'verify-1' / 'verify.json'}, {d / 'verify-1' / 'verify.xlsx'}")
    out.print(f"verify (fixed):  {d / 'verify-2' / 'verify.json'}")
    out.print(f"injected {injected} faults; verify found {first} findings; "
              f"{'all injected faults found' if not missed else f'{missed} injected faults NOT found'}; "
              f"after the fixes: {second} findings; {elapsed:.0f} s in all")


DEMO_PRINTERS = {
    "step": lambda n, text, elapsed: out.rule(f"[bold]{n}. {text}[/]  ({elapsed:.0f} s)"),
    "plan": print_plan_summary,
    "render": lambda result, out_dir: print_render(result, str(out_dir)),
    "cabling": lambda result, out_dir: print_cabling(result, str(out_dir)),
    "lab": print_lab,
    "dry_run": lambda report, lines, diff_dir: out.print(f"dry run: {report['summary']}; {lines:,} lines would change; diffs in {diff_dir}"),
    "push": lambda report, report_path: out.print(f"push: {report['summary']}; report {report_path}"),
    "verify": print_verify,
    "fixes": lambda operations, findings: out.print(f"{operations} physical fixes applied from {findings} findings"),
    "done": print_done,
}


@cli.command("demo")
@click.option("-o", "--output", "out_dir", default=None, type=click.Path(file_okay=False), help="folder (default: a new temporary one)")
@click.option("--inventory", default=None, type=click.Path(dir_okay=False), help="default: the bundled glm-1k")
@click.option("--faults", default="random:6", show_default=True, help="cabling faults injected into the lab")
@click.option("--seed", type=int, default=7, show_default=True)
@click.option("--concurrency", type=int, default=16, show_default=True)
@handle_errors
def demo_cmd(out_dir, inventory, faults, seed, concurrency) -> None:
    """The whole tool on the bundled glm-1k, no hardware: plan, render, cabling, a faulty lab, push, verify, fix, verify."""
    from zcube_deploy import demo

    if not print_events(demo.run(out_dir, inventory, faults, seed, concurrency), DEMO_PRINTERS)["ok"]:
        sys.exit(1)
