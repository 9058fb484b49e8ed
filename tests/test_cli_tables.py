"""Every table the CLI prints is readable in an 80-column terminal (issue 24 item 6).

Each command's tables are caught as they are printed (rich ``Console.print``), rendered again at
80 columns, and their header rows read back: no header may be cut ("…"), every word of every
header must be there whole. The commands run in-process on lab-64 where that is cheap; push, lab,
verify and twin print from records built here (they need a lab, a fabric or root to run).
"""

from __future__ import annotations

import io
import re

import pytest
from click.testing import CliRunner
from rich.console import Console
from rich.table import Table

from conftest import INVENTORIES

HEADER_SPLIT = re.compile(r"[┃│|]")
RICH_PRINT = Console.print  # the tests below catch Console.print; rendering uses the real one


def headers_at(table: Table, width: int = 80) -> list[str]:
    """The table's column headers as an ``width``-column terminal shows them (wrapped lines joined)."""
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None, highlight=False)
    RICH_PRINT(console, table)
    lines = console.export_text().splitlines()
    if not table.show_header:
        return []
    # the header rows: between the top border and the rule under the header
    start = next(i for i, l in enumerate(lines) if l.startswith(("┏", "┌", "+")))
    end = next(i for i, l in enumerate(lines) if i > start and l.startswith(("┡", "├", "+")))
    cols: list[list[str]] = []
    for line in lines[start + 1:end]:
        cells = HEADER_SPLIT.split(line)[1:-1]
        cols += [[] for _ in range(len(cells) - len(cols))]
        for k, cell in enumerate(cells):
            if cell.strip():
                cols[k].append(cell.strip())
    return [" ".join(c) for c in cols]


def unreadable(table: Table, width: int = 80) -> list[str]:
    """Headers cut or broken mid-word at ``width`` columns (empty: every header readable)."""
    shown = headers_at(table, width)
    bad = []
    for col, text in zip(table.columns, shown):
        want = " ".join(str(col.header).split())
        if "…" in text or text != want:
            bad.append(f"{want!r} shown as {text!r}")
    return bad


@pytest.fixture
def printed(monkeypatch):
    """Tables printed while the test runs, the CLI's console taken for an 80-column terminal (nothing
    reaches the real one)."""
    from zcube_deploy.cli.common import out

    caught: list[Table] = []

    def fake_print(self, *objects, **kwargs):
        caught.extend(o for o in objects if isinstance(o, Table))

    monkeypatch.setattr(Console, "print", fake_print)
    monkeypatch.setattr(out, "_force_terminal", True)
    monkeypatch.setattr(out, "_width", 80)
    return caught


def _invoke(*args: str) -> None:
    from zcube_deploy.cli import cli

    r = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert r.exit_code in (0, 1), (args, r.output)


def test_the_check_sees_a_cut_header():
    t = Table()
    for col in ("failure", "flows", "conv ms", "FIB ms", "pfx ms", "lost", "GPU prs", "GPU bad", "pred", "port bad", "pred",
                "diff", "ok"):
        t.add_column(col)
    t.add_row("switch:ZC-O003", *["12345678"] * 12)
    assert unreadable(t)
    assert not unreadable(t, width=200)


@pytest.fixture(scope="module")
def lab64(tmp_path_factory):
    from zcube_deploy.cli import cli

    d = tmp_path_factory.mktemp("tables")
    for args in (["plan", str(INVENTORIES / "lab-64.yaml"), "-o", str(d)], ["cabling", str(d / "plan.json"), "-o", str(d)]):
        r = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert r.exit_code == 0, r.output
    return d


COMMANDS = {
    "plan": lambda d: ["plan", str(INVENTORIES / "lab-64.yaml"), "-o", str(d / "again")],
    "analyze": lambda d: ["analyze", str(d / "plan.json"), "-o", str(d / "an"), "--samples", "20"],
    "compare": lambda d: ["compare", str(d / "plan.json")],
    "diff": lambda d: ["diff", str(d / "plan.json"), str(d / "plan.json")],
    "cabling status": lambda d: ["cabling", "status", str(d / "cabling.xlsx")],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_tables_are_readable_at_80_columns(command, lab64, printed):
    _invoke(*COMMANDS[command](lab64))
    assert printed, f"{command} printed no table"
    for t in printed:
        assert not unreadable(t), (command, t.title, unreadable(t))


def test_verify_push_lab_and_twin_tables_are_readable_at_80_columns(printed):
    from zcube_deploy.cli.lab import print_wiring
    from zcube_deploy.cli.printers import print_verify
    from zcube_deploy.cli.push import print_push
    from zcube_deploy.twin import failures
    from zcube_deploy.twin import test as twin_test
    from zcube_deploy.twin.report import twin_test_tables
    from zcube_deploy.verify.classify import summarize

    finding = {"id": "F1", "kind": "swapped", "cables": ["F00001"], "ends": [{"rack": "A01", "device": "ZC-O001", "port": "x"}],
               "instruction": "swap the two cables at ZC-O001", "what": "", "fix": []}
    print_verify({"findings": [finding], "summary": {**summarize([finding]), "switches_verified": 16}, "errors": {}, "paths": None})
    print_push({"devices": [{"name": "ZC-O001", "status": "rollback_incomplete", "lines_changed": 12, "duration_s": 3.2,
                             "error": "the device rejected 'bfd interval 300'", "action": "compare the running config"}]}, 16, False)
    print_wiring({"cables": [{"id": "F00001", "planned": True, "a": {"device": "ZC-O001", "port": "HundredGigabitEthernet 0/1"},
                              "b": {"device": "ZC-E001", "port": "HundredGigabitEthernet 0/33"}}],
                  "down": [], "announced_name": {}, "lldp_off": []})
    groups = [((("gpu001", 0), ("gpu002", 0)), [("10.0.0.1", "10.0.1.1"), ("10.0.1.1", "10.0.0.1")])]
    same = {("10.0.0.1", "10.0.1.1"): True, ("10.0.1.1", "10.0.0.1"): False}
    m = twin_test.FailureMeasurement(failures.Failure("switch:ZC-O1024", switches=["ZC-O1024"]), "silent", "bgp",
                                     [], twin_test.FibConvergence(3, 123.4, 456.7, 789.0, {}, {}),
                                     twin_test.compare(groups * 1000, same, same), True)
    base = twin_test.Baseline(7_340_032, 9_999_999_999, 0, 0, 0, [], 1234.5)
    from zcube_deploy.drain import twin as drain_twin

    steps = [drain_twin.StepTime(n, 1000.0 + k, 1001.5 + k, 3 * 1024) for k, n in
             enumerate(["steer", "hosts", "host ports", "fabric ports", "undrain fabric ports", "undrain host ports", "undrain hosts",
                        "undrain steer"])]
    d = drain_twin.DrainMeasurement(
        element="switch:ZC-O1024", order="ports-first", undrain_order="staged", routing="bgp", steps=steps, ports_down=False,
        probe_period_ms=100.0, probe_kept_rate=False, probe_max_lag_ms=12345.6, probe_max_lag_later_ms=9876.5, probe_late=[],
        gpu_pairs_in_service=523_776, gpu_pairs_probed=10_000, gpu_pairs_probed_touching=7_500, port_pairs_probed=40_000,
        through_pairs=30_000, through_lost=1_234_567, drained_through_lost=12_345, crossing_pairs=12_345, crossing_lost=99_999,
        crossing_outage_ms=12_345.6, through_lossy=[], ending_pairs=10_000, ending_lost_before_ports=1_234_567,
        gpu_pairs_moved=7_500, move_ms=12_345.6, comparison=twin_test.compare(groups * 1000, same, same),
        predicted_gpu_pairs_without_path=123, undrain_through_lost=123_456, fib_namespaces=144,
        fib_diffs=[drain_twin.FibDiff("ZC-O1024", "x", True)], fib_settled=False, drained_s=99.9, hosts_moved=True, steer_ms=12_345.6,
        steered=False)
    printed.extend(twin_test_tables(twin_test.TwinReport("/tmp/t", "zcube-64k", "bgp", "silent", 1, None, base, [m, m], (d,))))
    assert len(printed) >= 8
    for t in printed:
        assert not unreadable(t), (t.title, unreadable(t))
