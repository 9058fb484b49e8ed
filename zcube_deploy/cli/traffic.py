"""`zcube traffic PLAN`: what the fabric does to a workload, ZCube against ROFT, HPN, Rail-only and a
non-blocking Clos (a flow-level model: docs/traffic.md)."""

from __future__ import annotations

import functools

import click
from rich.markup import escape
from rich.table import Table

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, handle_errors, out
from zcube_deploy.cli.printers import print_fitting


def _design_table(title: str, header: list[str], rows: list[list[str]], columns) -> Table:
    t = Table(title=title, title_justify="left")
    for i in columns:
        t.add_column(header[i], justify="left" if i in (0, 1, 8) else "right", overflow="fold")
    for r in rows:
        t.add_row(*(r[i] for i in columns))
    return t


def print_design(title: str, header: list[str], rows: list[list[str]], narrow_columns) -> None:
    print_fitting(_design_table(title, header, rows, range(len(header))),
                  lambda: map(functools.partial(_design_table, title, header, rows), narrow_columns))


def print_traffic(doc: dict, js, png) -> None:
    from zcube_deploy.traffic.report import NARROW_COLUMNS, design_tables, stage_text  # start-up time (numpy)

    for title, header, rows in design_tables(doc):
        print_design(title, header, rows, NARROW_COLUMNS)
    out.print(f"{escape(stage_text(doc))}written: [bold]{js}[/], [bold]{png}[/]")


def print_row(row: dict) -> None:
    from zcube_deploy.traffic.report import time_text  # start-up time (numpy)

    done = "not modelled" if not row.get("modelled") else time_text(row["completion_time_s"])
    out.print(f"[dim]{row['label']} {row['workload']}{' / ' + row['failure'] if row['failure'] else ''}: {done}[/]")


@cli.command("traffic")
@click.argument("plan_path", type=click.Path())
@click.option("-o", "--output", "out_dir", default="out/traffic", show_default=True, type=click.Path(file_okay=False),
              help="folder for traffic.json and traffic.png")
@click.option("--design", help="zcube, roft, hpn, rail-only, clos: one, a comma-separated list, or all (default: the plan's own design; "
              "a migration stage: its islands)")
@click.option("--workload", default="all-to-all", show_default=True,
              help="all-to-all, all-gather, allreduce, pd, trace (a comma-separated list runs each)")
@click.option("--bytes", "nbytes", type=float, help="per GPU pair (all-to-all, default 1 MiB) or per GPU (collectives, default 1 GiB)")
@click.option("--ring", default="all", show_default=True, type=click.Choice(["all", "rail"]), help="collective rings: one over all GPUs, or one per rail")
@click.option("--ecmp", default="split", show_default=True, type=click.Choice(["split", "hash"]), help="ECMP as an even split or per-flow hashing")
@click.option("--samples", default=1, show_default=True, type=click.IntRange(1, 10_000), help="hashings to average (--ecmp hash)")
@click.option("--seed", default=1, show_default=True, type=int, help="seed for hashing, random failures, pd")
@click.option("--fail", help="link:CABLE or switch:NAME (the plan's own fabric), tor or random:N (every design)")
@click.option("--nvlink-gbps", default=3600.0, show_default=True, type=float, help="NVLink per GPU and direction (Gbit/s)")
@click.option("--trace", type=click.Path(dir_okay=False), help="CSV src,dst,bytes,start for --workload trace")
@click.option("--requests", "pd_requests", type=int, help="pd: requests (default 1000)")
@click.option("--rate", "pd_rate", type=float, help="pd: requests per second (default 90 %% of prefill capacity)")
@click.option("--gpus-per-instance", "pd_gpus_per_instance", type=int, help="pd: GPUs per instance (default 8)")
@click.option("--prefill", "pd_prefill", type=int, help="pd: prefill instances (default half the slots)")
@click.option("--decode", "pd_decode", type=int, help="pd: decode instances (default the other slots)")
@click.option("--placement", "pd_placement", type=click.Choice(["packed", "spread", "random"]), help="pd: instance placement (default packed)")
@click.option("--prompt-tokens", "pd_prompt_tokens", type=int, help="pd: median prompt length (default 4096)")
@click.option("--prompt-sigma", "pd_prompt_sigma", type=float, help="pd: log-normal sigma of prompt lengths (default 0.6; 0 = fixed)")
@click.option("--kv-bytes-per-token", "pd_kv_bytes_per_token", type=int, help="pd: KV-cache bytes per token (default 327680)")
@click.option("--prefill-tokens-per-s", "pd_prefill_tokens_per_s", type=float, help="pd: prompt tokens per second per prefill instance (default 40000)")
@handle_errors
def traffic_cmd(plan_path: str, out_dir: str, design: str, workload: str, **options) -> None:
    """Flow-level model of WORKLOAD on PLAN's fabric as built (a ZCube, a ROFT, or a migration stage
    island by island) and, with --design, the designs `zcube compare` sizes: completion time, link utilisation, hot links, with and without --fail. Writes
    DIR/traffic.json and DIR/traffic.png."""
    doc, js, png = workflow.traffic(plan_path, out_dir, design, workload, print_row, pd_seed=options["seed"], **options)
    print_traffic(doc, js, png)
