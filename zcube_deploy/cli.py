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
from zcube_deploy.errors import InputErrors, PlanError, Problem, ZCubeError
from zcube_deploy.perf import keep_forever

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def handle_errors(fn):
    """Print ZCubeErrors as a list of problems (never a traceback) and exit with their code."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (InputErrors, PlanError) as exc:
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
    t.add_row("static routes", f"{s['static_routes']:,}")
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

    plan = read_plan(plan_path)
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
    """Later stages of `zcube build`: the cabling outputs."""
    _cabling(plan, out_dir, None)


# ---------------------------------------------------------------- cabling
def _cabling(plan: dict, out_dir: str, catalog: str | None, quiet: bool = False) -> dict:
    from zcube_deploy.cabling.run import write_cabling

    r = write_cabling(plan, out_dir, catalog or plan["inputs"].get("cabling_catalog"))
    if quiet:
        return r
    t = r["bom"]["totals"]
    out.print(f"cabling: [bold]{Path(out_dir) / 'cabling.xlsx'}[/] ({len(r['sheets']) - 3} cut sheets + Summary, BOM, Fabric); "
              f"{t['cables']:,} cables ({t['copper_cables']:,} copper, {t['aoc_cables']:,} AOC, {t['fibre_cables']:,} fibre), "
              f"{t['optical_modules']:,} optics; cables.csv, netbox-cables.csv, topology.dot")
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
    """Write DIR/cabling.xlsx, DIR/cables.csv, DIR/netbox-cables.csv and DIR/topology.dot for PLAN."""
    from zcube_deploy.cabling.run import PLAN_FIELDS
    from zcube_deploy.plan.io import read_plan

    plan = read_plan(plan_path, PLAN_FIELDS)
    keep_forever()
    warn_if_stale(plan)
    r = _cabling(plan, out_dir, catalog, quiet=as_json)
    if as_json:
        click.echo(json.dumps(r["bom"], indent=2, sort_keys=True))


@cabling_group.command("status")
@click.argument("workbook", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True)
@handle_errors
def cabling_status_cmd(workbook: str, as_json: bool) -> None:
    """Read the technicians' Installed/Checked columns back and print progress per rack."""
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
        out.print(f"  pairs of NIC ports in different groups: {r['pairs_total']:,}; walked {r['checked']:,}; "
                  f"delivered {r['delivered']:,}; at most {r['max_switches']} switches per path; path lengths {r['path_lengths']}")
        for f in r["failures"]:
            out.print(f"  [red]FAIL[/] {f}")
        out.print("[green]routing proof passed[/]" if r["ok"] else "[red]routing proof FAILED[/]")
    if not r["ok"]:
        sys.exit(1)


# ---------------------------------------------------------------- lab
@cli.group("lab")
def lab_group() -> None:
    """A lab of simulated Ruijie switches over SSH on 127.0.0.1, with fault injection."""


@lab_group.command("up")
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.option("--faults", default=None, help="a faults YAML file, or random:N")
@click.option("--seed", type=int, default=0, show_default=True, help="seed for random faults")
@click.option("--port-base", type=int, default=None, help="listen on PORT_BASE, PORT_BASE+1, ... (default: ephemeral ports)")
@click.option("-o", "--output", "out_dir", default="out/lab", show_default=True, type=click.Path(file_okay=False))
@handle_errors
def lab_up_cmd(plan_path: str, faults: str | None, seed: int, port_base: int | None, out_dir: str) -> None:
    """Serve every switch of PLAN over SSH until Ctrl-C; write DIR/lab.json, DIR/known_hosts, DIR/faults.json."""
    import asyncio
    import signal

    from zcube_deploy.lab.server import PLAN_FIELDS, Lab, lab_credentials
    from zcube_deploy.plan.io import read_plan

    plan = read_plan(plan_path, PLAN_FIELDS)
    keep_forever()
    lab = Lab(plan, faults=faults, seed=seed, port_base=port_base)

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


def main() -> None:
    cli(prog_name="zcube")


if __name__ == "__main__":  # pragma: no cover
    main()
