"""`zcube lab up|fix|wiring|replace|console`: simulated switches over SSH (the protocol is in zcube_deploy/lab/control.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.table import Table

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, handle_errors, out, print_json, print_wide


@cli.group("lab")
def lab_group() -> None:
    """A lab of simulated Ruijie switches over SSH on 127.0.0.1, with fault injection."""


def print_lab_ready(plan: dict, out_dir: str, lab, doc: dict) -> None:
    from zcube_deploy.lab.control import endpoint_rows
    from zcube_deploy.access import lab_credentials

    t = Table(title=f"lab: {len(doc['switches'])} simulated switches (Ctrl-C to stop)", title_justify="left")
    t.add_column("switch")
    t.add_column("address")
    t.add_column("mgmt in plan")
    for row in endpoint_rows(plan, lab.endpoints):
        t.add_row(*row)
    out.print(t)
    out.print(f"lab.json: [bold]{Path(out_dir) / 'lab.json'}[/]; known_hosts: {Path(out_dir) / 'known_hosts'}; "
              f"faults: {len(lab.expected)} cabling fault(s) in {Path(out_dir) / 'faults.json'}")
    first = next(iter(doc["switches"].values()))
    out.print(f"try: ssh -o UserKnownHostsFile={Path(out_dir) / 'known_hosts'} -p {first['port']} {lab_credentials()[0]}@{first['host']} "
              "(password: $ZCUBE_PASSWORD, or the documented default)")


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
    from zcube_deploy.lab import control
    from zcube_deploy.lab.server import PLAN_FIELDS

    plan = workflow.open_plan(plan_path, PLAN_FIELDS, short_lived=True)
    control.serve(plan, out_dir, faults=faults, seed=seed, port_base=port_base, baseline=control.read_baseline(baseline),
                  on_ready=lambda lab, doc: print_lab_ready(plan, out_dir, lab, doc),
                  baseline_name=baseline if baseline and baseline != "none" else "baseline",
                  on_cleared=lambda names: out.print(f"{out_dir}: an earlier lab's state removed ({', '.join(names)}): "
                                                     "this lab starts from PLAN as cabled", markup=False))
    out.print("lab stopped")


@lab_group.command("fix")
@click.argument("lab_dir", type=click.Path(file_okay=False))
@click.option("--findings", "verify_json", default=None, type=click.Path(dir_okay=False), help="verify.json from `zcube verify`")
@click.option("--stage", "stage_dir", default=None, type=click.Path(file_okay=False),
              help="a migration stage folder (DIR/stage-NN from `zcube migrate`): do its moves")
@click.option("--wait", type=float, default=10, show_default=True,
              help="seconds to wait for the running lab to take them (then as long as it works on them)")
@handle_errors
def lab_fix_cmd(lab_dir: str, verify_json: str | None, stage_dir: str | None, wait: float) -> None:
    """Do what the technicians would: apply a verify.json's physical fixes, or a migration stage's moves, to a running lab."""
    from zcube_deploy.lab.control import apply_verify_fixes
    from zcube_deploy.lab.stage import apply_stage

    if (verify_json is None) == (stage_dir is None):
        raise click.UsageError("give --findings VERIFY_JSON or --stage DIR/stage-NN (one of them)")
    if stage_dir is not None:
        r = apply_stage(lab_dir, stage_dir, wait)
        for rr in r["rerole"]:
            out.print(f"{rr['switch']} -> {rr['role']}: cages broken out anew ({rr['added']} ports added, {rr['removed']} gone), "
                      f"console file pasted ({len(rr['rejected'])} line(s) rejected)", markup=False)
            for number, line, why in rr["rejected"]:
                out.print(f"  console/{rr['role']}.txt:{number}: {line!r}: {why}", markup=False)
        out.print(f"{r['operations']} wiring operations of {stage_dir} applied to the lab; {r['roles']} role(s) named in lab.json; "
                  f"push and verify {stage_dir}/plan.json next", markup=False)
        sys.exit(1 if r["rejected"] else 0)
    ops, physical, other = apply_verify_fixes(lab_dir, verify_json, wait)
    out.print(f"{ops} physical fixes from {physical} findings applied to the lab; {other} findings have no physical fix "
              "(a port shut in its config, a route, ...: see their instruction, e.g. push); run `zcube verify` again")


@lab_group.command("grow")
@click.argument("lab_dir", type=click.Path(file_okay=False))
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.option("--wait", type=float, default=10, show_default=True, help="seconds to wait for the running lab to take them")
@handle_errors
def lab_grow_cmd(lab_dir: str, plan_path: str, wait: float) -> None:
    """Rack and cable a grown PLAN's new servers in a running lab (docs/expand.md): every planned cable it lacks."""
    from zcube_deploy.lab.control import grow_lab

    cables, servers = grow_lab(lab_dir, workflow.open_plan(plan_path), plan_path, wait)
    out.print(f"{cables} cables connected and {servers} servers racked in the lab; push the changes (zcube expand --push)")


def print_wiring(w: dict) -> None:
    from zcube_deploy.lab.control import wiring_rows

    t = Table(title=f"lab wiring ({len(w['cables'])} cables)", title_justify="left")
    for col in ("cable", "A device", "A port", "B device", "B port", "note"):
        t.add_column(col)
    for row in wiring_rows(w):
        t.add_row(*row)
    out.print(t)
    if w["lldp_off"]:
        out.print("servers without LLDP: " + ", ".join(w["lldp_off"]))


@lab_group.command("wiring")
@click.argument("lab_dir", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True)
@handle_errors
def lab_wiring_cmd(lab_dir: str, as_json: bool) -> None:
    """Print the effective wiring of a lab (LAB_DIR/wiring.json, kept current while the lab runs)."""
    from zcube_deploy.lab.control import read_wiring

    w = read_wiring(lab_dir)
    if as_json:
        print_json(w)
    else:
        print_wiring(w)


@lab_group.command("replace")
@click.argument("lab_dir", type=click.Path(file_okay=False))
@click.argument("switch")
@click.option("--wait", type=float, default=10, show_default=True, help="seconds to wait for the running lab to do it")
@handle_errors
def lab_replace_cmd(lab_dir: str, switch: str, wait: float) -> None:
    """A dead SWITCH swapped for a factory-fresh unit: same cables, new serial and MAC, empty config, no SSH yet."""
    from zcube_deploy.lab.control import replace_switch

    r = replace_switch(lab_dir, switch, wait)
    out.print(f"{r['switch']}: unit {r['unit']} in place, serial {r['serial']}, chassis id {r['chassis_id']}; empty configuration, "
              f"unreachable over SSH until its console bootstrap is pasted (zcube lab console {lab_dir} {switch} --file FILE)",
              markup=False)


@lab_group.command("console")
@click.argument("lab_dir", type=click.Path(file_okay=False))
@click.argument("switch")
@click.option("--file", "path", required=True, type=click.Path(dir_okay=False), help="the lines to paste (e.g. a bootstrap)")
@click.option("--wait", type=float, default=10, show_default=True, help="seconds to wait for the running lab to take them")
@handle_errors
def lab_console_cmd(lab_dir: str, switch: str, path: str, wait: float) -> None:
    """Paste FILE at SWITCH's serial console, as a technician would; list the lines the CLI rejected (exit 1 if any)."""
    from zcube_deploy.lab.control import console_paste

    r = console_paste(lab_dir, switch, path, wait)
    for number, line, why in r["rejected"]:
        out.print(f"  {path}:{number}: {line!r}: {why}", markup=False)
    out.print(f"{switch}: {r['lines']} lines pasted, {len(r['rejected'])} rejected; SSH: {r['ssh']}", markup=False)
    sys.exit(1 if r["rejected"] else 0)


def print_drifts(doc: dict, lab_path: str) -> None:
    t = Table(title=f"{len(doc['drifts'])} hand edit(s){' (dry run: not typed)' if doc['dry_run'] else ''}", title_justify="left")
    for col in ("switch", "kind", "section", "typed"):
        t.add_column(col)
    for d in doc["drifts"]:
        t.add_row(d["switch"], d["kind"], d["section"], "yes" if d["applied"] else "no")
    print_wide(t)
    for sw, why in doc["unreachable"].items():
        out.print(f"  {sw}: not drifted: {why}", markup=False)
    if not doc["dry_run"]:
        out.print(f"written: {Path(lab_path).parent / 'drifts.json'}; now `zcube audit PLAN --lab {lab_path} -o DIR` "
                  "should report each typed edit with its kind and section", markup=False)


@lab_group.command("drift")
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.option("--lab", "lab_path", required=True, type=click.Path(dir_okay=False), help="the running lab's lab.json")
@click.option("--configs", "configs_dir", default=None, type=click.Path(file_okay=False),
              help="the render output folder (holds configs/); default: the plan's folder")
@click.option("--count", type=click.IntRange(1, 100_000), default=6, show_default=True, help="how many hand edits")
@click.option("--kind", "kinds", default="all", show_default=True,
              help="port_shut, stray_route, missing_route, config_changed, config_stray, config_missing: a list or all")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--dry-run", is_flag=True, help="print the edits, type nothing")
@handle_errors
def lab_drift_cmd(plan_path: str, lab_path: str, configs_dir: str | None, count: int, kinds: str, seed: int, dry_run: bool) -> None:
    """Type COUNT hand edits (drift of audit's kinds) on the running lab's switches over SSH, as an operator would;
    write drifts.json beside lab.json (what `zcube audit` must find). Exit 1 if a switch could not be drifted."""
    from zcube_deploy.audit.run import PLAN_FIELDS, configs_folder  # start-up time: audit loads verify and the platform readers
    from zcube_deploy.audit.seed import seed_drifts

    plan = workflow.open_plan(plan_path, PLAN_FIELDS)
    _, configs = configs_folder(plan_path, configs_dir)
    doc = seed_drifts(plan, lab_path, configs, count, kinds, seed, dry_run)
    print_drifts(doc, lab_path)
    sys.exit(1 if doc["unreachable"] else 0)
