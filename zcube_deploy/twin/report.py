"""Terminal tables for the twin's results (rich), each readable in an 80-column terminal.

The failures are two tables (convergence; reachability measured against predicted) rather than
one of thirteen columns, which an 80-column terminal cut to one letter per header.
"""

from __future__ import annotations

from rich.table import Table

from zcube_deploy.twin.test import FailureMeasurement, TwinReport


def _ms(v) -> str:
    return "-" if v is None else f"{v:.0f}"


def _ok(f: FailureMeasurement) -> str:
    return "[green]ok[/]" if f.ok else "[red]FAIL[/]"


def baseline_table(report: TwinReport) -> Table:
    b = report.baseline
    t = Table(title=f"twin {report.cluster} ({report.routing}): baseline", title_justify="left")
    expected = b.expected.replace(" or ", "/")  # "2", or a ROFT's "1/3"
    islands = len(b.islands) > 1  # a migration stage: a row per island (its design's paths), then all
    if islands:
        t.add_column("island")
        expected = "design"
    for col in ("GPU pairs tested" if b.unit == "GPU pairs" else "pairs tested", "of", "unreachable", f"< {expected} switches" if expected == "2" else "< predicted",
                f"pred !=\n{expected}" if islands else f"pred != {expected}", "s"):
        t.add_column(col, justify="right")
    if islands:
        for name, isl in b.islands.items():
            t.add_row(f"{name} {isl['switches_per_path'].replace(' or ', '/')}", str(isl["pairs_tested"]), "",
                      str(isl["unreachable"]), "", "", "")
    t.add_row(*(["all"] if islands else []), str(b.pairs_tested), str(b.pairs_total), str(b.unreachable), str(b.fewer_than_2_switches),
              str(b.predicted_not_2_switches), f"{b.seconds:.1f}")
    if b.out_of_service.get("gpus"):
        t.caption = f"{b.out_of_service['gpus']} GPU(s) out of service (no NIC port in the plan): not probed"
    return t


def _failure_table(title: str, columns: tuple[str, ...], cells, report: TwinReport) -> Table:
    """One row per failure: its label (folded when long), ``cells(f)`` under ``columns`` (right-justified), ok."""
    t = Table(title=title, title_justify="left")
    t.add_column("failure", overflow="fold")
    for col in columns:
        t.add_column(col, justify="right")
    t.add_column("ok")
    for f in report.failures:
        t.add_row(f.failure.label, *cells(f), _ok(f))
    return t


def convergence_table(report: TwinReport) -> Table:
    """Per failure: the probe flows across it, their longest outage, the FIBs' convergence, packets lost."""
    def cells(f: FailureMeasurement) -> list[str]:
        conv = "n/a" if not f.flows else (_ms(f.converge_ms) if f.converged else "never")
        watched = f.fib.switches_watched
        fib = _ms(f.fib.converge_ms) if watched else "n/a"
        pfx = _ms(f.fib.dead_prefixes_ms) if watched and f.fib.dead_prefixes_ms_per_switch else "n/a"
        return [str(len(f.flows)), conv, fib, pfx, str(f.packets_lost)]

    return _failure_table(f"failures ({report.failure_mode}): convergence (ms after the failure)",
                          ("flows", "outage", "FIB", "prefixes", "lost"), cells, report)


def reachability_table(report: TwinReport) -> Table:
    """Per failure: GPU and port pairs unreachable, measured / predicted by the analysis, and how many differ."""
    def cells(f: FailureMeasurement) -> list[str]:
        c = f.comparison
        return [str(c.gpu_pairs), f"{c.gpu_unreachable} / {c.gpu_unreachable_predicted}", str(c.port_pairs),
                f"{c.port_unreachable} / {c.port_unreachable_predicted}", str(len(c.disagreements))]

    # headers on two lines: a header's width is its longest line, so the table stays within 80 columns
    return _failure_table(f"failures ({report.failure_mode}): unreachable, measured / predicted by the analysis",
                          ("GPU\npairs", "GPU pairs\nunreachable", "port\npairs", "port pairs\nunreachable", "differ"), cells, report)


def twin_test_tables(report: TwinReport) -> list[Table]:
    """The tables `zcube twin test` prints."""
    return [baseline_table(report)] + ([convergence_table(report), reachability_table(report)] if report.failures else []) \
        + [t for m in report.extra for t in m.tables()]
