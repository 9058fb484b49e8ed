"""Terminal tables for the twin's results (rich)."""

from __future__ import annotations

from rich.table import Table


def _ms(v) -> str:
    return "-" if v is None else f"{v:.0f}"


def test_tables(report: dict) -> list:
    b = report["baseline"]
    base = Table(title=f"twin {report['cluster']} ({report['routing']}): baseline", title_justify="left")
    for col in ("pairs tested", "of", "unreachable", "< 2 switches", "pred != 2", "s"):
        base.add_column(col, justify="right")
    base.add_row(str(b["pairs_tested"]), str(b["pairs_total"]), str(b["unreachable"]), str(b["fewer_than_2_switches"]),
                 str(b["predicted_not_2_switches"]), f"{b['seconds']:.1f}")
    tables = [base]
    if report.get("failures"):
        t = Table(title=f"failures ({report['failure_mode']}); GPU/port pairs measured vs predicted by the analysis", title_justify="left")
        for col in ("failure", "flows", "conv ms", "FIB ms", "pfx ms", "lost", "GPU prs", "GPU bad", "pred", "port bad", "pred", "diff", "ok"):
            t.add_column(col, justify="right" if col not in ("failure", "ok") else "left", no_wrap=col == "failure")
        checks = {c["name"].split(" (")[0]: c["ok"] for c in report["checks"][1:]}
        for r in report["failures"]:
            conv = _ms(r["converge_ms"]) if r["converged"] else "never"
            if not r["probe_flows"]:
                conv = "n/a"
            ok = checks.get(r["failure"], False)
            fib = _ms(r.get("fib_converge_ms")) if r.get("fib_switches_watched") else "n/a"
            pfx = _ms(r.get("fib_dead_prefixes_ms")) if r.get("fib_switches_watched") and r.get("fib_dead_prefixes_ms_per_switch") else "n/a"
            t.add_row(r["failure"], str(len(r["probe_flows"])), conv, fib, pfx, str(r["packets_lost"]), str(r["gpu_pairs_measured"]),
                      str(r["gpu_pairs_unreachable"]), str(r["gpu_pairs_unreachable_predicted"]),
                      str(r["port_pairs_unreachable"]), str(r["port_pairs_unreachable_predicted"]), str(r["disagreements"]),
                      "[green]ok[/]" if ok else "[red]FAIL[/]")
        tables.append(t)
    return tables
