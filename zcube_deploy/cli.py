"""The `zcube` command line: thin wrappers that call the core and print results.

Exit codes: 0 success; 1 the run worked but found problems; 2 bad input or usage.
"""

from __future__ import annotations

import functools
import json
import sys
import traceback
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from zcube_deploy import __version__
from zcube_deploy.errors import InputErrors, Problem, ProblemsError, ZCubeError
from zcube_deploy.perf import keep_forever

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def handle_errors(fn):
    """Print ZCubeErrors as a list of problems (never a traceback) and exit with their code."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ProblemsError as exc:
            err.print(f"[bold red]error:[/] {exc.title} ({len(exc.problems)} problem{'s' if len(exc.problems) != 1 else ''})")
            for p in exc.problems:
                line = f"  - [bold]{p.path}[/]: {p.message}" if p.path else f"  - {p.message}"
                if p.hint:
                    line += f"\n    [dim]hint: {p.hint}[/]"
                err.print(line, markup=True)
            sys.exit(exc.exit_code)
        except ZCubeError as exc:
            err.print(f"[bold red]error:[/] {exc}")
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            err.print("interrupted")
            sys.exit(130)
        except click.exceptions.Exit:
            raise
        except Exception as exc:  # a bug: say so briefly, keep the traceback out of the user's face
            if "ZCUBE_DEBUG" in __import__("os").environ:
                traceback.print_exc()
            err.print(f"[bold red]internal error:[/] {type(exc).__name__}: {exc}\n"
                      "this is a bug in zcube; set ZCUBE_DEBUG=1 to see the traceback and please report it")
            sys.exit(3)

    return wrapper


def warn_if_stale(plan: dict) -> None:
    from zcube_deploy.plan.io import inventory_changed

    msg = inventory_changed(plan)
    if msg:
        err.print(f"[yellow]warning:[/] {msg}")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="zcube")
def cli() -> None:
    """zcube: plan, render, cable, push and verify ZCube GPU-cluster fabrics."""


# ---------------------------------------------------------------- plan
def _print_plan_summary(s: dict, path: Path | None) -> None:
    t = Table(title=f"ZCube plan: {s['cluster']}", show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    t.add_row("GPUs", f"{s['gpus_installed']:,} installed / {s['gpus_capacity']:,} capacity")
    t.add_row("servers", f"{s['servers_installed']:,} installed / {s['servers_capacity']:,} capacity")
    t.add_row("planes", str(s["planes"]))
    t.add_row("S / K / m", f"{s['S']} / {s['K']} / {s['m']}  (R = {s['R']} logical ports per switch)")
    t.add_row("switches", f"{s['switches']} {s['switch_model']} ({s['switches_per_group']} odd + {s['switches_per_group']} even per plane)"
              + ("" if s["rail_switches"] else "  [yellow]odd switches are not rail switches[/]"))
    t.add_row("host cables", f"{s['host_cables']:,}")
    t.add_row("fabric cables", f"{s['fabric_cables']:,}")
    p = s["ports"]
    t.add_row("ports", f"{p['host_used']:,} host + {p['fabric_used']:,} fabric used, {p['host_reserved_for_growth']:,} host reserved for growth, "
              f"{p['free']:,} free of {p['total']:,}")
    t.add_row("cages", f"host {p['host_cages'][0]}-{p['host_cages'][1]}, fabric {p['fabric_cages'][0]}-{p['fabric_cages'][1]}")
    t.add_row("routing", s["routing"])
    t.add_row("pools", ", ".join(f"{k} {v['used']:,}/{v['size']:,}" for k, v in s["pools"].items()))
    inv = s["invariants"]
    t.add_row("invariants", f"{sum(1 for v in inv.values() if v == 'passed')} passed, "
              f"{sum(1 for v in inv.values() if v == 'not_applicable')} not applicable, {sum(1 for v in inv.values() if v == 'failed')} failed")
    out.print(t)
    out.print("[bold]why this shape:[/]")
    for r in s["sizing_reasons"]:
        out.print(f"  - {r}")
    if path:
        out.print(f"plan written to [bold]{path}[/]")


@cli.command("plan")
@click.argument("inventory", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False), help="folder for plan.json")
@click.option("--json", "as_json", is_flag=True, help="print the summary as JSON")
@handle_errors
def plan_cmd(inventory: str, out_dir: str, as_json: bool) -> None:
    """Validate INVENTORY and write the ZCube plan to DIR/plan.json."""
    from zcube_deploy.inventory import load_inventory
    from zcube_deploy.plan import build_plan
    from zcube_deploy.plan.io import write_plan
    from zcube_deploy.plan.summary import plan_summary

    plan = build_plan(load_inventory(inventory))
    keep_forever()
    path = write_plan(plan, out_dir)
    summary = plan_summary(plan)
    if as_json:
        click.echo(json.dumps({**summary, "plan": str(path)}, indent=2, sort_keys=True))
    else:
        _print_plan_summary(summary, path)


# ---------------------------------------------------------------- schema
@cli.command("schema")
@click.argument("what", type=click.Choice(["plan", "inventory"]))
def schema_cmd(what: str) -> None:
    """Print the JSON Schema of the plan (its documented minimum) or of the inventory."""
    from zcube_deploy.plan.schema import inventory_schema, plan_schema

    click.echo(json.dumps(plan_schema() if what == "plan" else inventory_schema(), indent=2, sort_keys=True))


# ---------------------------------------------------------------- diff
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
    from zcube_deploy.plan.io import read_plan

    d = diff_plans(read_plan(old_plan), read_plan(new_plan))
    if as_json:
        click.echo(json.dumps(d, indent=2, sort_keys=True))
    else:
        s = d["summary"]
        t = Table(title="plan difference", title_justify="left")
        t.add_column("what")
        t.add_column("count", justify="right")
        for k, v in s.items():
            t.add_row(k.replace("_", " "), str(v))
        for k, (a, b) in d["sizing_changed"].items():
            t.add_row(f"sizing {k}", f"{a} -> {b}")
        out.print(t)
        for title, rows, fmt in (
            ("moved cables", d["cables_moved"], lambda r: f"{r['id']}: {r['from']['a']['device']} {r['from']['a']['port']} <-> {r['from']['b']['device']} {r['from']['b']['port']}  =>  {r['to']['a']['device']} {r['to']['a']['port']} <-> {r['to']['b']['device']} {r['to']['b']['port']}"),
            ("removed cables", d["cables_removed"], lambda c: f"{c['id']}: {c['a']['device']} {c['a']['port']} <-> {c['b']['device']} {c['b']['port']}"),
            ("added cables", d["cables_added"], lambda c: f"{c['id']}: {c['a']['device']} {c['a']['port']} <-> {c['b']['device']} {c['b']['port']}"),
            ("changed addresses", d["addresses"], lambda r: f"{r['device']} {r['interface']}: {r['old']} -> {r['new']}"),
            ("changed routes", d["routes"], lambda r: f"{r['switch']}: {r['change']} {r['prefix']} via {r['next_hop']}"),
            ("switch placement", d["switches"], lambda r: f"{r['switch']}: {r['change']} {r.get('from', '')} {('-> ' + r['to']) if 'to' in r else ''}"),
        ):
            if rows:
                out.print(f"[bold]{title}[/] ({len(rows)})")
                for r in rows[:limit]:
                    out.print("  " + fmt(r))
                if len(rows) > limit:
                    out.print(f"  ... {len(rows) - limit} more (use --json)")
    s = d["summary"]
    if fail_on == "any" and d["changed"]:
        sys.exit(1)
    if fail_on == "moved" and (s["cables_moved"] or s["cables_removed"]):
        sys.exit(1)


# ---------------------------------------------------------------- render / build / check-routing
def _render(plan: dict, out_dir: str, only: str | None, jobs: int | None) -> dict:
    from zcube_deploy.render import render_all

    result = render_all(plan, out_dir, only=only, jobs=jobs)
    out.print(f"rendered {result['switches']} switch configs to [bold]{Path(out_dir) / 'configs'}[/] and "
              f"{result['servers']} netplan files to [bold]{Path(out_dir) / 'hosts'}[/]; self-check passed; "
              f"manifest {Path(out_dir) / 'manifest.json'}")
    return result


@cli.command("render")
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.option("-o", "--output", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False))
@click.option("--only", default=None, help="glob(s) on switch/server names, comma-separated; 'rack:PATTERN' for racks")
@click.option("--jobs", type=int, default=None, help="worker processes (default: up to 2)")
@handle_errors
def render_cmd(plan_path: str, out_dir: str, only: str | None, jobs: int | None) -> None:
    """Render switch configs (DIR/configs) and server netplan files (DIR/hosts) from PLAN."""
    from zcube_deploy.plan.io import read_plan
    from zcube_deploy.render import PLAN_FIELDS

    plan = read_plan(plan_path, PLAN_FIELDS)
    keep_forever()
    warn_if_stale(plan)
    _render(plan, out_dir, only, jobs)


@cli.command("build")
@click.argument("inventory", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False))
@click.option("--jobs", type=int, default=None, help="worker processes for rendering")
@handle_errors
def build_cmd(inventory: str, out_dir: str, jobs: int | None) -> None:
    """Plan, render and write cabling sheets for INVENTORY in one go."""
    from zcube_deploy.inventory import load_inventory
    from zcube_deploy.plan import build_plan
    from zcube_deploy.plan.io import write_plan
    from zcube_deploy.plan.summary import plan_summary

    plan = build_plan(load_inventory(inventory))
    keep_forever()
    path = write_plan(plan, out_dir)
    _print_plan_summary(plan_summary(plan), path)
    _render(plan, out_dir, None, jobs)
    _build_extras(plan, out_dir)


def _build_extras(plan: dict, out_dir: str) -> None:
    """Later stages of `zcube build`: the cabling outputs, the hall page."""
    _cabling(plan, out_dir, None)
    _hall(plan, out_dir)


# ---------------------------------------------------------------- cabling
def _cabling(plan: dict, out_dir: str, catalog: str | None, quiet: bool = False) -> dict:
    from zcube_deploy.cabling.run import write_cabling

    r = write_cabling(plan, out_dir, catalog or plan["inputs"].get("cabling_catalog"))
    if quiet:
        return r
    t = r["bom"]["totals"]
    where = (f"{Path(out_dir) / 'cabling'}/ (summary.xlsx + {len(r['workbooks']) - 1} row workbooks)" if r["split"]
             else str(Path(out_dir) / "cabling.xlsx"))
    out.print(f"cabling: [bold]{where}[/] ({len(r['sheets']) - 3} cut sheets + Summary, BOM, Fabric); "
              f"{t['cables']:,} cables ({t['copper_cables']:,} copper, {t['aoc_cables']:,} AOC, {t['fibre_cables']:,} fibre), "
              f"{t['optical_modules']:,} optics; cables.csv, labels.csv ({r['labels']:,} labels), netbox-cables.csv, topology.dot")
    return r


class _DefaultGroup(click.Group):
    """A group whose first argument, when it is not a subcommand, goes to a default command."""

    default_command = "make"

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


@cli.group("cabling", cls=_DefaultGroup)
def cabling_group() -> None:
    """Cut sheets, BOM and cable lists: `zcube cabling PLAN -o DIR`; progress: `zcube cabling status WORKBOOK`."""


@cabling_group.command("make", hidden=True)
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.option("-o", "--output", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False))
@click.option("--catalog", default=None, type=click.Path(dir_okay=False), help="cabling catalog (default: the plan's, else the bundled one)")
@click.option("--json", "as_json", is_flag=True, help="print the BOM as JSON")
@handle_errors
def cabling_make_cmd(plan_path: str, out_dir: str, catalog: str | None, as_json: bool) -> None:
    """Write DIR/cabling.xlsx (big halls: DIR/cabling/*.xlsx), DIR/cables.csv, DIR/labels.csv, DIR/netbox-cables.csv and DIR/topology.dot for PLAN."""
    from zcube_deploy.cabling.run import PLAN_FIELDS
    from zcube_deploy.plan.io import read_plan

    plan = read_plan(plan_path, PLAN_FIELDS)
    keep_forever()
    warn_if_stale(plan)
    r = _cabling(plan, out_dir, catalog, quiet=as_json)
    if as_json:
        click.echo(json.dumps(r["bom"], indent=2, sort_keys=True))


@cabling_group.command("status")
@click.argument("workbook", type=click.Path())
@click.option("--json", "as_json", is_flag=True)
@handle_errors
def cabling_status_cmd(workbook: str, as_json: bool) -> None:
    """Read the technicians' Installed/Checked columns back (WORKBOOK: a .xlsx or a folder of them) and print progress per rack."""
    from zcube_deploy.cabling.status import read_status

    st = read_status(workbook)
    if as_json:
        click.echo(json.dumps(st, indent=2, sort_keys=True))
        return
    t = Table(title=f"cabling progress: {workbook}", title_justify="left")
    for col in ("sheet", "cables", "installed", "checked", "issues", "done"):
        t.add_column(col, justify="left" if col == "sheet" else "right")
    for s in st["sheets"]:
        pct = 100 * s["checked"] / s["cables"] if s["cables"] else 100
        t.add_row(s["sheet"], str(s["cables"]), str(s["installed"]), str(s["checked"]), str(s["issues"]), f"{pct:.0f}%")
    o = st["overall"]
    t.add_row("[bold]all cables[/]", str(o["cables"]), str(o["installed"]), str(o["checked"]), str(o["issues"]),
              f"{100 * o['checked'] / o['cables']:.0f}%" if o["cables"] else "-")
    out.print(t)
    for i in st["issues"][:20]:
        out.print(f"  [yellow]issue[/] {i['cable']} ({i['sheet']})")


@cli.command("check-routing")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--samples", type=int, default=None, help="walk this many seeded random pairs (default: all when <= 200,000)")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@handle_errors
def check_routing_cmd(directory: str, samples: int | None, seed: int, as_json: bool) -> None:
    """Prove routing from the rendered files alone: walk packets between GPU ports of different groups."""
    from zcube_deploy.render.routing_proof import prove_routing

    r = prove_routing(directory, samples=samples, seed=seed)
    if as_json:
        click.echo(json.dumps(r, indent=2, sort_keys=True))
    else:
        out.print(f"routing proof from {directory} ({r['mode']}): {r['switches']} switches, {r['ports']} NIC ports")
        out.print(f"  NIC port pairs their tables route: {r['pairs_total']:,}; walked {r['checked']:,}; "
                  f"delivered {r['delivered']:,}; at most {r['max_switches']} switches per path; path lengths {r['path_lengths']}")
        for f in r["failures"]:
            out.print(f"  [red]FAIL[/] {f}")
        out.print("[green]routing proof passed[/]" if r["ok"] else "[red]routing proof FAILED[/]")
    if not r["ok"]:
        sys.exit(1)


# ---------------------------------------------------------------- push
def _credentials(lab: bool):
    """ZCUBE_USERNAME / ZCUBE_PASSWORD / ZCUBE_ENABLE_SECRET, the lab's defaults with --lab, else a prompt."""
    import os

    from zcube_deploy.push import Credentials

    if lab:
        from zcube_deploy.lab.server import lab_credentials

        return Credentials(*lab_credentials())
    values = {}
    for key, label, hide in (("ZCUBE_USERNAME", "username", False), ("ZCUBE_PASSWORD", "password", True),
                             ("ZCUBE_ENABLE_SECRET", "enable secret", True)):
        v = os.environ.get(key)
        if not v:
            if not sys.stdin.isatty():
                raise InputErrors(Problem(key, "not set and no terminal to ask on", f"export {key}=..."))
            v = click.prompt(label, hide_input=hide, err=True)
        values[label] = v
    return Credentials(values["username"], values["password"], values["enable secret"])


def _endpoints(lab_path: str | None, known_hosts: str | None):
    from zcube_deploy.push import load_lab

    if not lab_path:
        return None, known_hosts
    eps, kh = load_lab(lab_path)
    return eps, known_hosts or kh


def _known_hosts_for(known_hosts: str | None, trust_on_first_use: bool) -> str | None:
    """--trust-on-first-use with no known_hosts file records new keys in ~/.ssh/known_hosts (as the docs say)."""
    if known_hosts or not trust_on_first_use:
        return known_hosts
    from zcube_deploy.safety import make_private_dir

    ssh = Path.home() / ".ssh"
    make_private_dir(ssh)
    return str(ssh / "known_hosts")


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
@handle_errors
def push_cmd(plan_path, configs_dir, dry_run, only, concurrency, canary, max_failures, lab_path, known_hosts, trust_on_first_use, timeout):
    """Push rendered configs to the switches of PLAN, safely (see the README)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from zcube_deploy.push import PLAN_FIELDS, PushOptions, push_all, select_targets
    from zcube_deploy.plan.io import read_plan

    plan = read_plan(plan_path, PLAN_FIELDS)
    warn_if_stale(plan)
    endpoints, kh = _endpoints(lab_path, known_hosts)
    targets = select_targets(plan, Path(configs_dir), only, endpoints)
    creds = _credentials(bool(lab_path))
    opts = PushOptions(dry_run=dry_run, concurrency=concurrency, canary=canary, max_failures=max_failures,
                       known_hosts=_known_hosts_for(kh, trust_on_first_use), trust_on_first_use=trust_on_first_use, timeout=timeout)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=False) as progress:
        task = progress.add_task("dry-run" if dry_run else "push", total=len(targets))
        report = push_all(targets, creds, opts, configs_dir, on_result=lambda r: progress.advance(task))
    t = Table(title=f"push{' (dry run)' if dry_run else ''}: {len(targets)} switches", title_justify="left")
    for col in ("switch", "status", "lines", "seconds", "detail"):
        t.add_column(col)
    colour = {"changed": "green", "unchanged": "green", "would_change": "cyan", "rolled_back": "yellow", "refused": "magenta"}
    for d in report["devices"]:
        st = d["status"]
        detail = d.get("error") or (d.get("diff", "") if st == "would_change" else "")
        t.add_row(d["name"], f"[{colour.get(st, 'red')}]{st}[/]", str(d["lines_changed"]), f"{d['duration_s']:.1f}", detail or "")
    out.print(t)
    if dry_run:
        _print_diff_preview(report, Path(configs_dir) / "push")
    out.print(f"summary: {report['summary']}" + (f"; stopped: {report['stopped']}" if report["stopped"] else "")
              + f"; report {Path(configs_dir) / 'push-report.json'}", markup=False)
    if not report["ok"]:
        sys.exit(1)


def _print_diff_preview(report: dict, diff_dir: Path, per_switch: int = 12, switches: int = 3) -> None:
    """A bounded preview of the dry run's diffs; the diff files hold every line that would be sent."""
    changing = [d for d in report["devices"] if d["status"] in ("would_change", "refused") and d.get("diff")]
    for d in changing[:switches]:
        lines = Path(d["diff"]).read_text().splitlines()
        out.print(f"[bold]--- {d['name']}: {d['lines_changed']} lines would change[/] ({d['diff']})")
        for line in lines[:per_switch]:
            out.print("  " + line, markup=False)
        if len(lines) > per_switch:
            out.print(f"  ... {len(lines) - per_switch} more lines in {d['diff']}", markup=False)
    if len(changing) > switches:
        out.print(f"... and {len(changing) - switches} more switches would change: every line that would be sent "
                  f"is in {diff_dir}/<switch>.diff", markup=False)


# ---------------------------------------------------------------- verify
def run_verify(plan: dict, out_dir: str | None, lab_path: str | None = None, known_hosts: str | None = None,
               record: str | None = None, replay_dir: str | None = None, only: str | None = None, concurrency: int = 32,
               timeout: float = 30, creds=None, quiet: bool = False) -> dict:
    from zcube_deploy.verify import scope_of
    from zcube_deploy.verify.collect import collect, replay
    from zcube_deploy.verify.compare import compare, summarize
    from zcube_deploy.verify.report import write_reports

    names = scope_of(plan, only)
    if replay_dir:
        observed, errors = replay(replay_dir, names)
    else:
        endpoints, kh = _endpoints(lab_path, known_hosts)
        mg = {s["name"]: s["mgmt_address"] for s in plan["switches"]}
        targets = [(n, *(endpoints[n] if endpoints else (mg[n], 22))) for n in names]
        creds = creds or _credentials(bool(lab_path))
        observed, errors = collect(targets, creds, kh, concurrency=concurrency, timeout=timeout, record=record)
    findings = compare(plan, observed, set(observed))
    summary = summarize(findings)
    summary["switches_verified"] = len(observed)
    summary["switches_unreachable"] = len(errors)
    if (plan.get("routing") or {}).get("mode") == "bgp":  # issue 14: eBGP sessions (verify/bgp.py)
        from zcube_deploy.verify.bgp import session_counts
        summary["bgp_sessions"] = session_counts(plan, observed, set(observed))
    meta = {"cluster": plan["cluster"]["name"], "scope": names, "mode": "offline" if replay_dir else "live"}
    paths = write_reports(findings, summary, errors, out_dir, meta) if out_dir else None
    if not quiet:
        _print_verify(findings, summary, errors, paths)
    return {"findings": findings, "summary": summary, "errors": errors}


def _print_verify(findings, summary, errors, paths) -> None:
    t = Table(title=f"verify: {summary['switches_verified']} switches, {summary['findings']} findings", title_justify="left")
    t.add_column("kind")
    t.add_column("count", justify="right")
    for k, v in summary["by_kind"].items():
        t.add_row(k, str(v))
    out.print(t)
    if summary["worst_racks"]:
        out.print("worst racks: " + ", ".join(f"{r} ({n})" for r, n in summary["worst_racks"]))
    for f in findings[:30]:
        out.print(f"[bold]{f['kind']}[/] {f['id']} {', '.join(f['cables'])}: {f['instruction']}")
    if len(findings) > 30:
        out.print(f"... {len(findings) - 30} more in verify.json / verify.xlsx")
    for name, e in sorted(errors.items()):
        out.print(f"[red]unreachable[/] {name}: {e}", markup=True)
    if paths:
        out.print(f"reports: {paths[0]}, {paths[1]}")
    if "bgp_sessions" in summary:
        out.print(f"eBGP sessions: {summary['bgp_sessions']['established']} of {summary['bgp_sessions']['planned']} planned are Established")
    if not findings and not errors:
        out.print("[green]clean: every planned port sees its planned neighbour[/]")


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
    from zcube_deploy.plan.io import read_plan
    from zcube_deploy.verify import PLAN_FIELDS

    if record and replay_dir:
        raise InputErrors(Problem("--record/--from", "use one of them, not both"))
    plan = read_plan(plan_path, PLAN_FIELDS)
    warn_if_stale(plan)
    r = run_verify(plan, out_dir, lab_path, known_hosts, record, replay_dir, only, concurrency, timeout)
    if r["findings"] or r["errors"]:
        sys.exit(1)


# ---------------------------------------------------------------- demo
@cli.command("demo")
@click.option("-o", "--output", "out_dir", default=None, type=click.Path(file_okay=False), help="folder (default: a new temporary one)")
@click.option("--inventory", default=None, type=click.Path(dir_okay=False), help="default: the bundled glm-1k")
@click.option("--faults", default="random:6", show_default=True, help="cabling faults injected into the lab")
@click.option("--seed", type=int, default=7, show_default=True)
@click.option("--concurrency", type=int, default=16, show_default=True)
@handle_errors
def demo_cmd(out_dir, inventory, faults, seed, concurrency) -> None:
    """The whole tool on the bundled glm-1k, no hardware: plan, render, cabling, a faulty lab, push, verify, fix, verify."""
    import tempfile
    import time

    from zcube_deploy.inventory import load_inventory
    from zcube_deploy.lab.server import lab_credentials, running_lab
    from zcube_deploy.plan import build_plan
    from zcube_deploy.plan.io import write_plan
    from zcube_deploy.plan.summary import plan_summary
    from zcube_deploy.push import Credentials, PushOptions, push_all, select_targets
    from zcube_deploy.resources import data_dir

    t0 = time.perf_counter()
    d = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="zcube-demo-"))
    d.mkdir(parents=True, exist_ok=True)
    inv_path = Path(inventory) if inventory else data_dir("inventories") / "glm-1k.yaml"

    def step(n: int, text: str) -> None:
        out.rule(f"[bold]{n}. {text}[/]  ({time.perf_counter() - t0:.0f} s)")

    step(1, f"plan {inv_path.name}")
    plan = build_plan(load_inventory(inv_path))
    _print_plan_summary(plan_summary(plan), write_plan(plan, d))
    step(2, "render switch configs and netplan files")
    _render(plan, str(d), None, None)
    step(3, "cabling workbook, BOM, CSVs")
    _cabling(plan, str(d), None)
    step(4, f"start a lab of {len(plan['switches'])} simulated switches with injected cabling faults ({faults}, seed {seed})")
    creds = Credentials(*lab_credentials())
    with running_lab(plan, faults=faults, seed=seed, out_dir=d / "lab") as lab:
        out.print(f"lab on 127.0.0.1, {len(lab.endpoints)} SSH servers; injected faults (what verify should find):")
        for e in lab.expected:
            out.print(f"  - {json.dumps(e['fault'])} -> expect [bold]{e['kind']}[/] {', '.join(e['cables'])}")
        opts = PushOptions(concurrency=concurrency, known_hosts=str(d / "lab" / "known_hosts"))
        targets = select_targets(plan, d, None, lab.endpoints)
        step(5, "push --dry-run: diffs only")
        opts.dry_run = True
        rep = push_all(targets, creds, opts, d)
        out.print(f"dry run: {rep['summary']}; {sum(x['lines_changed'] for x in rep['devices']):,} lines would change; diffs in {d / 'push'}")
        step(6, "push: apply, read back, confirm, write")
        opts.dry_run = False
        rep = push_all(targets, creds, opts, d)
        out.print(f"push: {rep['summary']}; report {d / 'push-report.json'}")
        if not rep["ok"]:
            raise click.ClickException("the push failed; see push-report.json")
        step(7, "verify: LLDP, interface state and routes against the plan")
        first = run_verify(plan, str(d / "verify-1"), creds=creds, **_lab_args(lab, d))
        step(8, "apply the fixes to the lab's wiring (what the technicians do)")
        ops = [op for f in first["findings"] for op in f["fix"]]
        lab.runner.call(lab.apply_operations, ops)
        lab.write_wiring(d / "lab")
        out.print(f"{len(ops)} physical fixes applied from {len(first['findings'])} findings")
        step(9, "verify again")
        second = run_verify(plan, str(d / "verify-2"), creds=creds, **_lab_args(lab, d))
    step(10, "done: the lab is stopped")
    out.print(f"plan:            {d / 'plan.json'}")
    out.print(f"configs:         {d / 'configs'} ({len(plan['switches'])}), {d / 'hosts'} ({len(plan['servers'])})")
    out.print(f"cabling:         {d / 'cabling.xlsx'}, {d / 'cables.csv'}, {d / 'netbox-cables.csv'}, {d / 'topology.dot'}")
    out.print(f"lab:             {d / 'lab'} (lab.json, known_hosts, faults.json, wiring.json)")
    out.print(f"push:            {d / 'push-report.json'}, diffs in {d / 'push'}, backups in {d / 'backups'}")
    out.print(f"verify (faulty): {d / 'verify-1' / 'verify.json'}, {d / 'verify-1' / 'verify.xlsx'}")
    out.print(f"verify (fixed):  {d / 'verify-2' / 'verify.json'}")
    found = {(f['kind'], tuple(f['cables'])) for f in first["findings"]}
    missed = [e for e in lab.expected if (e["kind"], tuple(e["cables"])) not in found]
    out.print(f"injected {len(lab.expected)} faults; verify found {len(first['findings'])} findings; "
              f"{'all injected faults found' if not missed else f'{len(missed)} injected faults NOT found'}; "
              f"after the fixes: {len(second['findings'])} findings; {time.perf_counter() - t0:.0f} s in all")
    if missed or second["findings"] or second["errors"]:
        sys.exit(1)


def _lab_args(lab, d: Path) -> dict:
    return {"lab_path": str(d / "lab" / "lab.json"), "known_hosts": str(d / "lab" / "known_hosts")}


# ---------------------------------------------------------------- lab
# ---------------------------------------------------------------- compare / analyze
def _print_wide(table: Table) -> None:
    """Wide tables: the terminal's width on a terminal, 150 columns when piped to a file or a CI log."""
    if out.is_terminal:
        out.print(table)
    else:
        Console(highlight=False, width=150, file=out.file).print(table)


@cli.command("compare")
@click.argument("source", required=False, type=click.Path(dir_okay=False))
@click.option("--gpus", type=int, help="GPU count (without SOURCE)")
@click.option("--switch-capacity", default="51.2T", show_default=True, help="switch capacity, e.g. 51.2T, 102.4T")
@click.option("--nic-port-speed", default="200G", show_default=True, help="NIC port speed b (ZCube, HPN); ROFT and Rail-only get one 2b port")
@click.option("--gpus-per-server", default=8, show_default=True, type=int, help="GPUs per server (= rails)")
@click.option("--oversubscription", default=1.0, show_default=True, type=float, help="ZCube oversubscription s")
@click.option("--switch-model", help="catalog switch model (default: the catalog's model of that capacity)")
@click.option("--catalog", "catalog_path", type=click.Path(dir_okay=False), help="extra hardware catalog YAML")
@click.option("--json", "as_json", is_flag=True, help="print the comparison as JSON")
@handle_errors
def compare_cmd(source: str | None, gpus: int | None, switch_capacity: str, nic_port_speed: str, gpus_per_server: int,
                oversubscription: float, switch_model: str | None, catalog_path: str | None, as_json: bool) -> None:
    """ZCube against HPN dual-plane Clos, ROFT and Rail-only for SOURCE (plan.json or inventory) or --gpus N."""
    from zcube_deploy.analysis import inputs
    from zcube_deploy.analysis.designs import as_json as designs_json, compare_designs, table_rows

    if source and gpus:
        raise InputErrors(Problem("--gpus", "give a plan/inventory or --gpus, not both"))
    if source:
        if not Path(source).exists():
            raise InputErrors(Problem(source, "no such file"))
        load = inputs.from_plan if source.endswith(".json") else inputs.from_inventory
        params, sizing, prices, label = load(source)
    elif gpus is not None:
        params, sizing, prices, label = inputs.from_parameters(gpus, switch_capacity, nic_port_speed, gpus_per_server,
                                                               oversubscription, switch_model, catalog_path)
    else:
        raise InputErrors(Problem("compare", "nothing to compare", "give a plan.json, an inventory, or --gpus N"))
    designs = compare_designs(params, prices, sizing)
    if as_json:
        click.echo(json.dumps(designs_json(designs), indent=2, sort_keys=True))
        return
    header, rows = table_rows(designs)
    t = Table(title=f"designs compared: {label}, NIC ports {params.nic_port_gbps}G", title_justify="left")
    for i, h in enumerate(header):
        t.add_column(h, justify="left" if i == 0 else "right", style="dim" if h == "ratio" else None)
    for r in rows:
        t.add_row(*r)
    _print_wide(t)
    for d in designs:
        out.print(f"[bold]{d.design}[/]: {d.rule}" + (f"; {d.note}" if d.note else ""))
    if prices is None:
        out.print("no switch price in the catalog for this model: CapEx left out")


@cli.command("analyze")
@click.argument("plan_path", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out_dir", default="out/analyze", show_default=True, type=click.Path(file_okay=False),
              help="folder for analyze.json and unreachability.png")
@click.option("--samples", default=400, show_default=True, type=click.IntRange(2, 1_000_000), help="Monte-Carlo trials per probability")
@click.option("--seed", default=1, show_default=True, type=int, help="random seed (same seed, same results)")
@click.option("--probabilities", default="0.001,0.002,0.005,0.01,0.02,0.05", show_default=True,
              help="comma-separated link failure probabilities")
@handle_errors
def analyze_cmd(plan_path: str, out_dir: str, samples: int, seed: int, probabilities: str) -> None:
    """What failures cost on PLAN: single switch and link failures, random link failures against a
    dual-plane Clos of the same size (Monte-Carlo), path statistics. Writes DIR/analyze.json and a plot."""
    from zcube_deploy.analysis.report import PLAN_FIELDS, analyze_plan, write_analysis
    from zcube_deploy.plan.io import read_plan

    try:
        probs = [float(x) for x in probabilities.split(",") if x.strip()]
    except ValueError:
        probs = []
    if not probs or any(not 0 < x < 1 for x in probs):
        raise InputErrors(Problem("--probabilities", f"{probabilities!r}: give probabilities between 0 and 1, e.g. 0.001,0.01"))
    plan = read_plan(plan_path, PLAN_FIELDS)
    doc = analyze_plan(plan, sorted(set(probs)), samples, seed)
    js, png = write_analysis(doc, out_dir)
    ps = doc["path_statistics"]
    cg = ps["cross_group"]
    out.print(f"[bold]{doc['plan']['cluster']}[/]: {doc['plan']['gpus']:,} GPUs, {doc['plan']['switches']} switches, "
              f"{doc['plan']['fabric_links']:,} fabric links")
    out.print(f"paths: across groups {cg['path_switches']['max']} switches, shortest switch paths per port pair "
              f"{cg['shortest_switch_paths']['min']}..{cg['shortest_switch_paths']['max']} (parallel links "
              f"{cg['shortest_link_paths']['min']}..{cg['shortest_link_paths']['max']}), routed paths {cg['routed_paths_per_port_pair']}; "
              f"mean shortest GPU-pair path {ps['gpu_pairs']['mean_shortest_path_switches']:.3f} switches")
    t = Table(title="single failures (worst case over every element)", title_justify="left")
    for c in ("failed element", "count", "GPU ports cut off", "port pairs lost", "GPU pairs w/o routed path",
              "GPU pairs disconnected", "longest detour (port / GPU)"):
        t.add_column(c, justify="left" if c == "failed element" else "right")
    for kind, label in (("switch", "one switch"), ("fabric_link", "one fabric link")):
        sm = doc["single_failures"][kind]
        if not sm["elements"]:
            continue
        t.add_row(label, str(sm["elements"]), f"{sm['max_gpu_ports_cut_off']['value']:,}", f"{sm['max_port_pairs_lost']['value']:,}",
                  f"{sm['max_gpu_pairs_without_routed_path']['value']:,}", f"{sm['max_gpu_pairs_disconnected']['value']:,}",
                  f"{sm['longest_port_detour_switches']['value']} / {sm['longest_gpu_detour_switches']['value']} switches")
    _print_wide(t)
    t = Table(title=f"random link failures: fraction of GPU pairs unreachable ({samples} trials per p, seed {seed}, 95% CI)",
              title_justify="left")
    for c in ("p", "ZCube (any path)", f"ZCube ({doc['routing']['mode']} routing)", "dual-plane Clos", "ZCube / Clos", "model 2p^2 / 4p^2"):
        t.add_column(c, justify="right")

    def fmt(x: dict) -> str:
        return f"{x['mean']:.2e} [{x['ci95'][0]:.1e}, {x['ci95'][1]:.1e}]"

    for r in doc["random_link_failures"]:
        ratio = r["ratio_zcube_to_clos"]
        rtxt = "-" if ratio["ratio"] is None else f"{ratio['ratio']:.2f} [{ratio['ci95'][0]:.2f}, {ratio['ci95'][1]:.2f}]"
        t.add_row(f"{r['p']:g}", fmt(r["zcube"]), fmt(r["zcube_routed"]), fmt(r["dual_plane_clos"]), rtxt,
                  f"{r['model']['zcube_2p2']:.1e} / {r['model']['clos_4p2']:.1e}")
    _print_wide(t)
    out.print(f"written: [bold]{js}[/] (per-element tables), [bold]{png}[/]")


@cli.group("lab")
def lab_group() -> None:
    """A lab of simulated Ruijie switches over SSH on 127.0.0.1, with fault injection."""


@lab_group.command("up")
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.option("--faults", default=None, help="a faults YAML file, or random:N")
@click.option("--seed", type=int, default=0, show_default=True, help="seed for random faults")
@click.option("--port-base", type=int, default=None, help="listen on PORT_BASE, PORT_BASE+1, ... (default: ephemeral ports)")
@click.option("-o", "--output", "out_dir", default="out/lab", show_default=True, type=click.Path(file_okay=False))
@click.option("--baseline", default=None, type=click.Path(dir_okay=False),
              help="RGOS lines every switch starts from (default: the lab's site baseline; 'none' for a bare config)")
@handle_errors
def lab_up_cmd(plan_path: str, faults: str | None, seed: int, port_base: int | None, out_dir: str, baseline: str | None) -> None:
    """Serve every switch of PLAN over SSH until Ctrl-C; write DIR/lab.json, DIR/known_hosts, DIR/faults.json."""
    import asyncio
    import signal

    from zcube_deploy.lab.server import PLAN_FIELDS, Lab, lab_credentials
    from zcube_deploy.plan.io import read_plan

    plan = read_plan(plan_path, PLAN_FIELDS)
    keep_forever()
    lab = Lab(plan, faults=faults, seed=seed, port_base=port_base, baseline=_read_baseline(baseline))

    async def serve() -> None:
        await lab.start()
        doc = lab.write_files(out_dir)
        t = Table(title=f"lab: {len(doc['switches'])} simulated switches (Ctrl-C to stop)", title_justify="left")
        t.add_column("switch")
        t.add_column("address")
        t.add_column("mgmt in plan")
        mg = {s["name"]: s["mgmt_address"] for s in plan["switches"]}
        for name, ep in doc["switches"].items():
            t.add_row(name, f"{ep['host']}:{ep['port']}", mg[name])
        out.print(t)
        user = lab_credentials()[0]
        out.print(f"lab.json: [bold]{Path(out_dir) / 'lab.json'}[/]; known_hosts: {Path(out_dir) / 'known_hosts'}; "
                  f"faults: {len(lab.expected)} cabling fault(s) in {Path(out_dir) / 'faults.json'}")
        first = next(iter(doc["switches"].values()))
        out.print(f"try: ssh -o UserKnownHostsFile={Path(out_dir) / 'known_hosts'} -p {first['port']} {user}@{first['host']} "
                  "(password: $ZCUBE_PASSWORD, or the documented default)")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), 2)
            except asyncio.TimeoutError:
                lab.poll_control(out_dir)
        await lab.stop()
        out.print("lab stopped")

    asyncio.run(serve())


def _read_baseline(path: str | None) -> str | None:
    if path is None:
        return None
    if path == "none":
        return ""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputErrors(Problem("--baseline", f"cannot read {path}: {exc}", "give a text file of RGOS config lines")) from None


@lab_group.command("fix")
@click.argument("lab_dir", type=click.Path(file_okay=False))
@click.option("--findings", "verify_json", required=True, type=click.Path(dir_okay=False), help="verify.json from `zcube verify`")
@click.option("--wait", type=float, default=10, show_default=True, help="seconds to wait for the running lab to apply them")
@handle_errors
def lab_fix_cmd(lab_dir: str, verify_json: str, wait: float) -> None:
    """Do what the technicians would: apply the physical fixes of a verify.json to a running lab's wiring."""
    import time

    try:
        findings = json.loads(Path(verify_json).read_text())["findings"]
    except (OSError, ValueError, KeyError) as exc:
        raise InputErrors(Problem(verify_json, f"not a verify.json: {exc}")) from None
    ops = [op for f in findings for op in f.get("fix", [])]
    control = Path(lab_dir) / "control.json"
    if not (Path(lab_dir) / "lab.json").exists():
        raise InputErrors(Problem(lab_dir, "no lab.json here", "start a lab with `zcube lab up PLAN -o DIR`"))
    control.write_text(json.dumps(ops))
    deadline = time.monotonic() + wait
    while control.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    if control.exists():
        raise ZCubeError(f"the lab did not pick up {control} within {wait:g} s: is `zcube lab up` running for {lab_dir}?")
    err = Path(lab_dir) / "control.error"
    if err.exists():
        raise ZCubeError(f"the lab refused the fixes: {err.read_text().strip()}")
    out.print(f"{len(ops)} physical fixes from {len(findings)} findings applied to the lab; run `zcube verify` again")


@lab_group.command("wiring")
@click.argument("lab_dir", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True)
@handle_errors
def lab_wiring_cmd(lab_dir: str, as_json: bool) -> None:
    """Print the effective wiring of a lab (LAB_DIR/wiring.json, kept current while the lab runs)."""
    path = Path(lab_dir) / "wiring.json"
    if not path.exists():
        raise InputErrors(Problem(str(path), "no wiring.json here", "start a lab with `zcube lab up PLAN -o DIR`"))
    w = json.loads(path.read_text())
    if as_json:
        click.echo(json.dumps(w, indent=2, sort_keys=True))
        return
    t = Table(title=f"lab wiring ({len(w['cables'])} cables)", title_justify="left")
    for col in ("cable", "A device", "A port", "B device", "B port", "note"):
        t.add_column(col)
    down = {(d["device"], d["port"]) for d in w["down"]}
    for c in w["cables"]:
        note = []
        if not c["planned"]:
            note.append("extra")
        if (c["a"]["device"], c["a"]["port"]) in down or (c["b"]["device"], c["b"]["port"]) in down:
            note.append("port down")
        if c["id"] in w["announced_name"]:
            note.append(f"announces {w['announced_name'][c['id']]}")
        t.add_row(c["id"], c["a"]["device"], c["a"]["port"], c["b"]["device"], c["b"]["port"], ", ".join(note))
    out.print(t)
    if w["lldp_off"]:
        out.print("servers without LLDP: " + ", ".join(w["lldp_off"]))


# ---------------------------------------------------------------- hall
def _hall(plan: dict, out_dir: str, catalog: str | None = None, **overlays) -> dict:
    from zcube_deploy.hall import write_hall

    r = write_hall(plan, out_dir, catalog_path=catalog or plan["inputs"].get("cabling_catalog"), **overlays)
    extra = f"; {r['findings']} verify findings in {r['racks_with_findings']} racks" if overlays.get("verify") else ""
    out.print(f"hall: [bold]{r['path']}[/] ({r['racks']} racks in {r['rows']} rows, {r['bundles']:,} {r['bundle_level']}-to-"
              f"{r['bundle_level']} cable bundles, {r['bytes'] / 2**20:.1f} MiB{extra})")
    return r


@cli.command("hall")
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.option("-o", "--output", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False), help="writes DIR/hall/index.html")
@click.option("--cabling", "cabling_xlsx", default=None, type=click.Path(dir_okay=False), help="cabling.xlsx with the technicians' progress")
@click.option("--verify", "verify_json", default=None, type=click.Path(dir_okay=False), help="verify.json: racks and cables with findings in red")
@click.option("--analyze", "analyze_json", default=None, type=click.Path(dir_okay=False), help="analyze.json (and unreachability.png beside it)")
@click.option("--catalog", default=None, type=click.Path(dir_okay=False), help="cabling catalog (default: the plan's, else the bundled one)")
@handle_errors
def hall_cmd(plan_path: str, out_dir: str, cabling_xlsx: str | None, verify_json: str | None, analyze_json: str | None,
             catalog: str | None) -> None:
    """One self-contained page of the data hall: floor plan, rack elevations, summary, status overlays."""
    from zcube_deploy.hall import PLAN_FIELDS
    from zcube_deploy.plan.io import read_plan

    plan = read_plan(plan_path, PLAN_FIELDS)
    keep_forever()
    warn_if_stale(plan)
    _hall(plan, out_dir, catalog, cabling=cabling_xlsx, verify=verify_json, analyze=analyze_json)


# --- twin (issue 15): the plan on Linux namespaces with FRR; logic in zcube_deploy/twin ---
@cli.group("twin")
def twin_group() -> None:
    """A data-plane twin: the plan on network namespaces, veths and FRR, tested with real packets (root)."""


@twin_group.command("up")
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.option("-o", "--output", "out_dir", default="twin", show_default=True, type=click.Path(file_okay=False))
@click.option("--slow-bfd/--plan-bfd", default=None, help="BFD 1 s on sessions not under test (default: above 256 sessions)")
@handle_errors
def twin_up_cmd(plan_path: str, out_dir: str, slow_bfd: bool | None) -> None:
    """Build the twin of PLAN: namespaces, veths, host files applied, FRR started and converged; writes DIR/twin.json."""
    from zcube_deploy.plan.io import read_plan
    from zcube_deploy.twin import build

    build.require_support()
    state = build.up(read_plan(plan_path), plan_path, out_dir, slow_bfd)
    t = state["timings"]
    out.print(f"twin {state['cluster']} ({state['mode']}) up in {t['total_ms'] / 1000:.1f} s: {len(state['namespaces'])} namespaces "
              f"(prefix {state['prefix']}), {len(state['links'])} veth pairs; FRR started in {t['frr_start_ms'] / 1000:.1f} s, "
              f"routes converged +{t['converge_ms'] / 1000:.1f} s; {Path(out_dir) / 'twin.json'}")
    if state.get("bfd"):
        out.print(f"BFD: {state['bfd']['note']}")


@twin_group.command("test")
@click.argument("twin_dir", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--pairs", type=int, default=None, help="a seeded sample of N cross-group port pairs (default: all)")
@click.option("--fail", "fail", multiple=True, help="link:CABLE, switch:NAME or random:N (each injected and repaired in turn)")
@click.option("--mode", type=click.Choice(["carrier", "silent"]), default="carrier", show_default=True,
              help="carrier loss (link down) or silent drop (nftables, link stays up)")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--gpu-pairs", type=int, default=2000, show_default=True, help="GPU pairs (of different servers) measured after each failure")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None, help="JSON report (default DIR/test-report.json)")
@handle_errors
def twin_test_cmd(twin_dir: str, pairs: int | None, fail: tuple, mode: str, seed: int, gpu_pairs: int, report_path: str | None) -> None:
    """Real packets through the twin in DIR; failures compared with `zcube analyze`'s prediction. Exit 1 when a check fails."""
    from zcube_deploy.twin import build, report as twin_report, test as twin_test

    build.require_support()
    rep = twin_test.run(twin_dir, pairs, seed, list(fail), mode, gpu_pairs, log=lambda m: err.print(f"[dim]{m}[/]"))
    path = Path(report_path or Path(twin_dir) / "test-report.json")
    path.write_text(json.dumps(rep, indent=1, sort_keys=True) + "\n")
    for t in twin_report.test_tables(rep):
        out.print(t)
    if rep.get("bfd_note"):
        out.print(f"BFD: {rep['bfd_note']}")
    bad = [c["name"] for c in rep["checks"] if not c["ok"]]
    out.print(("[green]all checks passed[/]" if not bad else f"[red]{len(bad)} check(s) failed:[/] " + "; ".join(bad[:5])) + f"; report {path}")
    if bad:
        sys.exit(1)


@twin_group.command("down")
@click.argument("twin_dir", metavar="DIR", type=click.Path(file_okay=False))
@handle_errors
def twin_down_cmd(twin_dir: str) -> None:
    """Remove the twin in DIR: stop its daemons by PID, delete its namespaces, restore the host's sysctls."""
    from zcube_deploy.twin import build

    r = build.down(twin_dir)
    out.print(f"twin down in {r['down_ms'] / 1000:.2f} s: {r['namespaces_deleted']} namespaces deleted, "
              f"{r['daemons_stopped']} daemons stopped, {len(r['sysctls_restored'])} sysctls restored")


def main() -> None:
    cli(prog_name="zcube")


if __name__ == "__main__":  # pragma: no cover
    main()
