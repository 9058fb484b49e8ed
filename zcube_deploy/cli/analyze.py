"""`zcube analyze PLAN`: what failures cost (failure analysis, not fault injection)."""

from __future__ import annotations

import sys

import click
from rich.table import Table

from zcube_deploy import workflow
from zcube_deploy.cli.common import cli, handle_errors, out, print_wide
from zcube_deploy.cli.printers import print_fitting


def _ci(x: dict) -> str:
    return f"{x['mean']:.2e} [{x['ci95'][0]:.1e}, {x['ci95'][1]:.1e}]"


def _ratio(ratio: dict) -> str:
    return "-" if ratio["ratio"] is None else f"{ratio['ratio']:.2f} [{ratio['ci95'][0]:.2f}, {ratio['ci95'][1]:.2f}]"


SINGLE_FAILURES_TITLE = "single failures (worst case over every element)"


def _single_failures_wide(columns: list[str], rows: list[tuple[str, list[str]]]) -> Table:
    t = Table(title=SINGLE_FAILURES_TITLE, title_justify="left")
    t.add_column("failed element")
    for c in columns:
        t.add_column(c, justify="right")
    for label, cells in rows:
        t.add_row(label, *cells)
    return t


def _single_failures_narrow(columns: list[str], rows: list[tuple[str, list[str]]]) -> Table:
    """The same figures with one column per kind of failed element (a narrow terminal)."""
    t = Table(title=SINGLE_FAILURES_TITLE, title_justify="left")
    t.add_column("failed element")
    for label, _ in rows:
        t.add_column(label, justify="right")
    for i, c in enumerate(columns):
        t.add_row(c, *(cells[i] for _, cells in rows))  # the figures transposed: one row per figure
    return t


def print_roft_analysis(doc: dict, samples: int, seed: int) -> None:
    p = doc["plan"]
    out.print(f"[bold]{p['cluster']}[/] (ROFT): {p['gpus']:,} GPUs, {p['switches']} switches ({p['leaves_per_plane']} leaves + "
              f"{p['spines_per_plane']} spines per plane), {p['fabric_links']:,} leaf-spine links; routed: {doc['routing']['routed_means']}")
    from zcube_deploy.analysis.roft import ROFT_SINGLE_COLUMNS, single_failure_rows  # start-up time (numpy)

    rows = single_failure_rows(doc)
    print_fitting(_single_failures_wide(ROFT_SINGLE_COLUMNS, rows), lambda: [_single_failures_narrow(ROFT_SINGLE_COLUMNS, rows)])
    t = Table(title=f"random link failures: fraction of GPU pairs unreachable ({samples} trials per p, seed {seed}, 95% CI)",
              title_justify="left")
    for c in ("p", "ROFT (any path)", "ROFT (eBGP routing)"):
        t.add_column(c, justify="right")
    for r in doc["random_link_failures"]:
        t.add_row(f"{r['p']:g}", _ci(r["roft"]), _ci(r["roft_routed"]))
    print_wide(t)
    for what, why in doc["not_applicable"].items():
        out.print(f"not applicable: {what}: {why}")


def print_stage_analysis(doc: dict, samples: int, seed: int) -> None:
    """A migration stage: each island's reachability with nothing failed, then its analysis; the pairs across islands
    not checked (out of scope)."""
    p = doc["plan"]
    out.print(f"[bold]{p['cluster']}[/] (migration stage): {p['gpus']:,} GPUs in service on {p['islands']} islands, {p['switches']} switches")
    for isl in doc["islands"].values():
        r = isl["reachability"]
        out.rule(f"{isl['name']} island")
        out.print(f"{isl['name']} island: {r['gpus']:,} GPUs, {r['gpu_pairs']:,} GPU pairs; with nothing failed "
                  f"{r['unreachable_routed']} without a routed path, {r['unreachable_any_path']:,} without any path")
        if isl["analysis"]:
            ISLAND_PRINTERS[isl["analysis"].get("design", "zcube")](isl["analysis"], samples, seed)
        if isl["not_analysed"]:
            out.print(f"[red]not analysed[/]: {isl['not_analysed']}")
    c = doc["cross_island"]
    out.rule("across the islands")
    out.print(f"{c['gpu_pairs']:,} GPU pairs across the islands: {c['status']} ({c['why']})")


def print_zcube_analysis(doc: dict, samples: int, seed: int) -> None:
    from zcube_deploy.analysis.report import SINGLE_FAILURE_COLUMNS, single_failure_rows  # start-up time (numpy)

    ps = doc["path_statistics"]
    cg = ps["cross_group"]
    out.print(f"[bold]{doc['plan']['cluster']}[/]: {doc['plan']['gpus']:,} GPUs, {doc['plan']['switches']} switches, "
              f"{doc['plan']['fabric_links']:,} fabric links")
    out.print(f"paths: across groups {cg['path_switches']['max']} switches, shortest switch paths per port pair "
              f"{cg['shortest_switch_paths']['min']}..{cg['shortest_switch_paths']['max']} (parallel links "
              f"{cg['shortest_link_paths']['min']}..{cg['shortest_link_paths']['max']}), routed paths {cg['routed_paths_per_port_pair']}; "
              f"mean shortest GPU-pair path {ps['gpu_pairs']['mean_shortest_path_switches']:.3f} switches")
    single = single_failure_rows(doc)
    print_fitting(_single_failures_wide(SINGLE_FAILURE_COLUMNS, single), lambda: [_single_failures_narrow(SINGLE_FAILURE_COLUMNS, single)])
    t = Table(title=f"random link failures: fraction of GPU pairs unreachable ({samples} trials per p, seed {seed}, 95% CI)",
              title_justify="left")
    for c in ("p", "ZCube (any path)", f"ZCube ({doc['routing']['mode']} routing)", "dual-plane Clos", "ZCube / Clos", "model 2p^2 / 4p^2"):
        t.add_column(c, justify="right")
    for r in doc["random_link_failures"]:
        t.add_row(f"{r['p']:g}", _ci(r["zcube"]), _ci(r["zcube_routed"]), _ci(r["dual_plane_clos"]), _ratio(r["ratio_zcube_to_clos"]),
                  f"{r['model']['zcube_2p2']:.1e} / {r['model']['clos_4p2']:.1e}")
    print_wide(t)
    if not doc["routing"].get("routed_exact", True):
        out.print(f"note: ZCube ({doc['routing']['mode']} routing) counts {doc['routing']['routed_means']}")


ISLAND_PRINTERS = {"roft": print_roft_analysis, "zcube": print_zcube_analysis}
PRINTERS = {**ISLAND_PRINTERS, "stage": print_stage_analysis}


def print_analysis(doc: dict, samples: int, seed: int, js, png) -> None:
    PRINTERS[doc.get("design", "zcube")](doc, samples, seed)
    out.print(f"written: [bold]{js}[/] (per-element tables), [bold]{png}[/]")


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
    probs = workflow.failure_probabilities(probabilities)
    doc, js, png = workflow.analyze(plan_path, out_dir, probs, samples, seed)
    print_analysis(doc, samples, seed, js, png)
    if doc.get("problems"):  # a migration stage whose islands do not reach themselves
        sys.exit(1)
