"""`zcube twin up|test|down`: the plan on Linux namespaces with FRR (logic in zcube_deploy/twin)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, err, handle_errors, out


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
    state = workflow.twin_up(plan_path, out_dir, slow_bfd)
    t = state["timings"]
    out.print(f"twin {state['cluster']} ({state['mode']}) up in {t['total_ms'] / 1000:.1f} s: {len(state['namespaces'])} namespaces "
              f"(prefix {state['prefix']}), {len(state['links'])} veth pairs; FRR started in {t['frr_start_ms'] / 1000:.1f} s, "
              f"routes converged +{t['converge_ms'] / 1000:.1f} s; {Path(out_dir) / 'twin.json'}")
    if state.get("bfd"):
        out.print(f"BFD: {state['bfd']['note']}")


@twin_group.command("test")
@click.argument("twin_dir", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--pairs", type=int, default=None, help="a seeded sample of N cross-group port pairs (default: all)")
@click.option("--every-gpu-pair", is_flag=True, help="the baseline on every GPU pair of each island, one port pair each")
@click.option("--fib-walk", is_flag=True, help="also walk every in-service port pair of each island on the kernels' FIBs")
@click.option("--fail", "fail", multiple=True, help="link:CABLE, switch:NAME or random:N (each injected and repaired in turn)")
@click.option("--mode", type=click.Choice(["carrier", "silent"]), default="carrier", show_default=True,
              help="carrier loss (link down) or silent drop (nftables, link stays up)")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--gpu-pairs", type=int, default=2000, show_default=True, help="GPU pairs (of different servers) measured after each failure")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None, help="JSON report (default DIR/test-report.json)")
@click.option("--drain", "drain", default=None, metavar="ELEMENT",
              help="switch:NAME or link:CABLE: drain it under continuous probes, undrain, compare every FIB (docs/drain.md)")
@click.option("--drain-order", type=click.Choice(["drain", "no-hosts", "no-settle", "ports-first"]), default="drain", show_default=True,
              help="zcube drain's order, or a known-bad one")
@click.option("--settle", type=float, default=None, help="seconds after graceful shutdown (default: zcube drain's, 5)")
@click.option("--undrain-order", type=click.Choice(["staged", "one-push"]), default="staged", show_default=True,
              help="zcube undrain's stages (fabric ports first), or everything in one push")
@click.option("--probe-period", type=float, default=100.0, show_default=True, help="ms between a probed pair's echoes")
@click.option("--probe-rate", type=int, default=3000, show_default=True,
              help="echoes per second in all: the probed port pairs are rate x period")
@handle_errors
def twin_test_cmd(twin_dir: str, pairs: int | None, every_gpu_pair: bool, fib_walk: bool, fail: tuple, mode: str, seed: int, gpu_pairs: int, report_path: str | None,
                  drain: str | None, drain_order: str, settle: float | None, undrain_order: str, probe_period: float,
                  probe_rate: int) -> None:
    """Real packets through the twin in DIR; failures compared with `zcube analyze`'s prediction. Exit 1 when a check fails."""
    from zcube_deploy.twin import report as twin_report

    rep, path, bad = workflow.twin_test(twin_dir, pairs, seed, list(fail), mode, gpu_pairs, report_path,
                                        log=lambda m: err.print(f"[dim]{m}[/]"), drain=drain, drain_order=drain_order,
                                        settle=settle, probe_period_ms=probe_period, probe_rate=probe_rate,
                                        undrain_order=undrain_order, every_gpu_pair=every_gpu_pair, fib_walk=fib_walk)
    for t in twin_report.twin_test_tables(rep):
        out.print(t)
    if rep.bfd_note:
        out.print(f"BFD: {rep.bfd_note}")
    out.print(("[green]all checks passed[/]" if not bad else f"[red]{len(bad)} check(s) failed:[/] " + "; ".join(bad[:5])) + f"; report {path}")
    if bad:
        sys.exit(1)


@twin_group.command("down")
@click.argument("twin_dir", metavar="DIR", type=click.Path(file_okay=False))
@handle_errors
def twin_down_cmd(twin_dir: str) -> None:
    """Remove the twin in DIR: stop its daemons by PID, delete its namespaces, restore the host's sysctls."""
    r = workflow.twin_down(twin_dir)
    out.print(f"twin down in {r['down_ms'] / 1000:.2f} s: {r['namespaces_deleted']} namespaces deleted, "
              f"{r['daemons_stopped']} daemons stopped, {len(r['sysctls_restored'])} sysctls restored")
