"""`zcube replace PLAN SWITCH`: a dead switch swapped for a factory-fresh unit: its console bootstrap, then a push and a
verify of that switch alone (zcube_deploy/replace/, docs/replace.md)."""

from __future__ import annotations

import sys

import click

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, handle_errors, out, print_json, prompt
from zcube_deploy.cli.printers import print_section_changes


def _print_bootstrap(r: dict, plan_path: str) -> None:
    b = r["bootstrap"]
    if "text" in b:
        out.print(f"{r['switch']}: console bootstrap ({b['lines']} lines, {b['access_lines']} access lines; secrets masked):", markup=False)
        out.print(b["text"].rstrip("\n"), markup=False)
    else:
        out.print(f"{r['switch']}: console bootstrap written to {b['path']} ({b['lines']} lines, {b['access_lines']} access lines)",
                  markup=False)
    for w in b["warnings"]:
        out.print(f"warning: {w}", markup=False)
    d = r["drained"]
    if d["records"]:
        out.print(f"{r['switch']} is drained ({', '.join(d['records'])}): the new unit comes back drained ({len(d['ports'])} ports shut"
                  f"{', graceful shutdown on' if d['graceful_shutdown'] else ''}); `zcube undrain {plan_path} ELEMENT` when ready",
                  markup=False)


def _print_rest(r: dict) -> None:
    u = r["unit"]
    if u.get("hint"):
        out.print(f"{r['switch']}: {u['error']}", markup=False)
        out.print(f"  {u['hint']}", markup=False)
    elif not u["reachable"]:
        out.print(f"{r['switch']}: the new unit does not answer at {r['endpoint']} ({u['error']})", markup=False)
        out.print(f"  paste the bootstrap at its console ({r['console']}), then run this again (or give --wait SECONDS)", markup=False)
    else:
        out.print(f"{r['switch']}: the new unit answers at {r['endpoint']}: serial {u['serial']}, hostname {u['hostname']}", markup=False)
    if "host_key" in r:
        n = r["host_key"]["forgotten"]
        out.print(f"host key: {n} old line{'' if n == 1 else 's'} forgotten in {r['host_key']['known_hosts']}; the new unit's pinned",
                  markup=False)
    for c in r.get("identity", {}).get("checked", []):
        out.print(f"identity: {c['what']} {c['seen']}: {'the same as' if c['same'] else 'not'} {c['recorded']}"
                  f"{' (--same-unit)' if c['same'] else ''}", markup=False)
    for why in r.get("identity", {}).get("not_checked", []):
        out.print(f"identity: not checked: {why}", markup=False)
    if "push" in r:
        p = r["push"]
        out.print(f"push: {p['status']} ({p['lines_changed'] or 0} lines){'; diff ' + p['diff'] if p.get('diff') else ''}"
                  f"{'; ' + p['error'] if p.get('error') else ''}", markup=False)
        if p.get("sections"):
            print_section_changes(p["sections"])
    if "verify" in r:
        v = r["verify"]
        out.print(f"verify: {v['findings']} findings{' (' + ', '.join(v['kinds']) + ')' if v['kinds'] else ''}"
                  f"{', ' + str(v['set_aside']) + ' set aside as drained' if v['set_aside'] else ''}; {v['path']}", markup=False)
    out.print(f"contacted: {', '.join(r['contacted'])} (no other switch)", markup=False)
    out.print(r["status"], markup=False)


@cli.command("replace")
@click.argument("plan_path", metavar="PLAN", type=click.Path())
@click.argument("switch", metavar="SWITCH")
@click.option("--configs", "configs_dir", required=True, type=click.Path(file_okay=False), help="the render output folder (holds configs/)")
@click.option("--access-lines", "access_lines", default=None, type=click.Path(dir_okay=False),
              help="the site's access lines (users, enable secret, AAA, vty, SSH) for the bootstrap")
@click.option("--lab", "lab_path", default=None, type=click.Path(dir_okay=False), help="lab.json: management-address override")
@click.option("--known-hosts", default=None, type=click.Path(dir_okay=False))
@click.option("--new-host-key", is_flag=True, help="forget SWITCH's pinned SSH host key; pin the one the new unit presents")
@click.option("--same-unit", is_flag=True, help="the unit that answers is the one that was there (re-seated, wiped in place): go on")
@click.option("--dry-run", is_flag=True, help="print the bootstrap and a summary of the push diff (the full diff: DIR/replace/SWITCH/push/); change nothing")
@click.option("--wait", "wait_s", type=float, default=0, show_default=True, help="seconds to wait for the unit to answer")
@click.option("--settle", "settle_s", type=float, default=None,
              help="seconds between the push and verify (default 30; 0 with --lab)")
@click.option("--timeout", type=float, default=30, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
@handle_errors
def replace_cmd(plan_path, switch, configs_dir, access_lines, lab_path, known_hosts, new_host_key, same_unit, dry_run, wait_s, settle_s, timeout, as_json) -> None:
    """SWITCH died and a factory-fresh unit took its place: write its console bootstrap, then push and verify it alone."""
    from zcube_deploy.replace.run import replace_switch

    plan, plan_dir, opts, creds = workflow.replace_setup(plan_path, configs_dir, lab_path, known_hosts, prompt, switch, dry_run=dry_run,
                                                         access_lines=access_lines, timeout=timeout, wait_s=wait_s, new_host_key=new_host_key, same_unit=same_unit,
                                                         settle_s=workflow.settle_default(settle_s, lab_path))
    r = replace_switch(plan, plan_dir, switch, opts, creds, say=lambda s: out.print(s, markup=False))
    if as_json:
        print_json(r)
    else:
        _print_bootstrap(r, plan_path)
        _print_rest(r)
    sys.exit(0 if r["ok"] else 1)
