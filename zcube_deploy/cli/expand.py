"""`zcube expand OLD_PLAN NEW_INVENTORY -o DIR`: grow a fabric within its capacity, adding only (docs/expand.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, handle_errors, out, print_json, progress_bar, prompt
from zcube_deploy.cli.printers import print_render_tidy
from zcube_deploy.cli.push import print_push


def print_expansion(r: dict, out_dir: str) -> None:
    a, k = r["added"], r["kept"]
    out.print(f"expand: {r['old_plan']['servers']} -> {r['new_plan']['servers']} servers (capacity {r['capacity_servers']}): "
              f"+{len(a['servers'])} servers, +{a['cables']} cables, +{a['switch_ports']} switch ports")
    out.print(f"kept: {k['cables']} cables, {k['switches']} switches, {k['servers']} servers; {k['moved_or_gone']} moved or gone")
    out.print(f"changes: {len(r['changed_switches'])} switches (as predicted from the new cables), {r['lines_sent']} lines to send, "
              f"{r['existing_lines_negated']} existing lines negated, {r['placeholders_replaced']} placeholder lines of reserved ports replaced; "
              f"untouched: {len(r['untouched_switches'])} switches")
    out.print(f"written: {Path(out_dir) / 'plan.json'}, {Path(out_dir) / 'changes'}/<switch>.diff, "
              f"{Path(out_dir) / 'changes' / 'hosts'} ({len(a['servers'])} new servers), "
              f"{Path(out_dir) / 'new-cables'} ({r['new_cabling']['cables']} cables), {Path(out_dir) / 'expand.json'}", markup=False)


def print_verify_split(v: dict, out_dir: str) -> None:
    n, o = v["new_cables"], v["old_cables"]
    out.print(f"verify: new cables {n['clean']}/{n['cables']} clean, old cables {o['clean']}/{o['cables']} clean, "
              f"{v['other_findings']} other findings, {v['not_checked']} not checked")
    report = Path(out_dir) / "verify" / "verify.json"
    if n["with_findings"]:
        out.print(f"  the new cables' findings, which cable to move where: {report} (not cabled yet? cable them from "
                  f"{Path(out_dir) / 'new-cables' / 'cabling.xlsx'}, then run this again)", markup=False)
    elif o["with_findings"] or v["other_findings"] or v["not_checked"]:
        out.print(f"  the findings: {report}", markup=False)


def print_twin(t: dict) -> None:
    out.print(f"twin: +{t['servers_added']} servers, +{t['cables_added']} cables, {t['switches_pushed']} switches pushed "
              f"({t['lines_pushed']} lines) in {t['push_s']} s; existing GPUs: {t['echoes_lost']} of {t['echoes_sent']} echoes lost "
              f"({t['existing_pairs_probed']} port pairs every {t['period_ms']:.0f} ms, max lag {t['max_lag_ms']:.0f} ms"
              f"{'' if t['kept_rate'] else ': the prober could not keep its rate'}); new port pairs answering: "
              f"{t['new_pairs_reached']}/{t['new_pairs_tried']} after {t['reach_s']} s")


@cli.command("expand")
@click.argument("old_plan", metavar="OLD_PLAN", type=click.Path())
@click.argument("inventory", metavar="NEW_INVENTORY", type=click.Path())
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False), help="folder for the grown plan and its changes")
@click.option("--push", "push_changes", is_flag=True, help="then push the changed switches (canary first) and verify the whole plan")
@click.option("--dry-run", is_flag=True, help="with --push: back up and diff only (DIR/push/<switch>.diff), no verify")
@click.option("--canary", type=int, default=1, show_default=True, help="switches pushed first; the rest only if they all succeed")
@click.option("--concurrency", type=int, default=8, show_default=True)
@click.option("--lab", "lab_path", default=None, type=click.Path(dir_okay=False), help="lab.json: management-address override")
@click.option("--known-hosts", default=None, type=click.Path(dir_okay=False))
@click.option("--trust-on-first-use", is_flag=True, help="accept and record unknown host keys")
@click.option("--timeout", type=float, default=30, show_default=True)
@click.option("--twin", "twin_dir", default=None, type=click.Path(file_okay=False),
              help="a running twin of OLD_PLAN: push the expansion into it under continuous probes (root)")
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
@handle_errors
def expand_cmd(old_plan, inventory, out_dir, push_changes, dry_run, canary, concurrency, lab_path, known_hosts, trust_on_first_use, timeout,
               twin_dir, as_json) -> None:
    """Grow OLD_PLAN to NEW_INVENTORY: refused (exit 2) if anything existing would move; add-only change sets."""
    r = workflow.expand(old_plan, inventory, out_dir, push_changes=push_changes, dry_run=dry_run, canary=canary, concurrency=concurrency,
                        lab_path=lab_path, known_hosts=known_hosts, trust_on_first_use=trust_on_first_use, timeout=timeout,
                        prompt=prompt, progress=None if as_json else progress_bar, twin_dir=twin_dir,
                        log=None if as_json else lambda m: out.print(m, markup=False))
    if as_json:
        print_json(r)
    else:
        print_expansion(r["report"], out_dir)
        print_render_tidy(r["render"], out_dir)
        if r["push"] is not None:
            print_push(r["push"], len(r["report"]["changed_switches"]), dry_run)
        if r["verify"] is not None:
            print_verify_split(r["verify"], out_dir)
        if r["twin"] is not None:
            print_twin(r["twin"])
    sys.exit(0 if workflow.expansion_ok(r) else 1)
