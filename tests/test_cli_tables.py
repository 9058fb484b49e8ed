"""Every table the CLI prints is readable in an 80-column terminal (issue 24 item 6).

Each command's tables are caught as they are printed (rich ``Console.print``), rendered again at
80 columns, and their header rows read back: no header may be cut ("…"), every word of every
header must be there whole. The commands run in-process on lab-64 where that is cheap; push, lab,
verify, twin and replace's dry-run summary print from records built here (they need a lab, a fabric or root to run).
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


def headers_in(lines: list[str]) -> list[list[str]]:
    """The column headers of every table with a header in printed ``lines``, in order (wrapped lines joined)."""
    tables = []
    for start, line in enumerate(lines):
        if not line.startswith(("┏", "┌", "+")):
            continue
        # the header rows: between the top border and the rule under the header (none: a table without one)
        end = next((i for i, l in enumerate(lines) if i > start and l.startswith(("┡", "├", "+", "└", "┗"))), None)
        if end is None or lines[end].startswith(("└", "┗")):
            continue
        cols: list[list[str]] = []
        for row in lines[start + 1:end]:
            cells = HEADER_SPLIT.split(row)[1:-1]
            cols += [[] for _ in range(len(cells) - len(cols))]
            for k, cell in enumerate(cells):
                if cell.strip():
                    cols[k].append(cell.strip())
        tables.append([" ".join(c) for c in cols])
    return tables


def headers_at(table: Table, width: int = 80) -> list[str]:
    """The table's column headers as an ``width``-column terminal shows them (wrapped lines joined)."""
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None, highlight=False)
    RICH_PRINT(console, table)
    if not table.show_header:
        return []
    return headers_in(console.export_text().splitlines())[0]


def unreadable(table: Table, width: int = 80, shown: list[str] | None = None) -> list[str]:
    """Headers cut or broken mid-word at ``width`` columns (empty: every header readable); ``shown``: the
    headers as printed, where they were printed already."""
    shown = headers_at(table, width) if shown is None else shown
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


def print_records() -> list[Table]:
    """Print verify's, push's and the lab's tables from records built here; return the twin test's tables
    (the twin command prints them as they are)."""
    from zcube_deploy.cli.lab import print_wiring
    from zcube_deploy.cli.printers import print_section_changes, print_verify
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
    print_section_changes([{"section": "interface FourHundredGigabitEthernet", "sections": 56, "add": 112, "remove": 0},
                           {"section": "ip route", "sections": 12_345, "add": 12_345, "remove": 99_999}])
    print_section_changes([{"section": "interface FourHundredGigabitEthernet", "switches": 512, "sections": 28_672,
                            "add": 57_344, "remove": 0}], 512)  # push --dry-run's, over a fleet
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
    return twin_test_tables(twin_test.TwinReport("/tmp/t", "zcube-64k", "bgp", "silent", 1, None, base, [m, m], (d,)))


def test_verify_push_lab_and_twin_tables_are_readable_at_80_columns(printed):
    printed.extend(print_records())
    assert len(printed) >= 9
    for t in printed:
        assert not unreadable(t), (t.title, unreadable(t))


# ---------------------------------------------------------------- piped: `zcube analyze ... | less` with COLUMNS=80
# Not a terminal: the tables are printed at COLUMNS when it is set (the usual convention), else at 150. The
# tests below read the text as printed: every table line fits, every header is there whole.
BOX = tuple("┏┃┡│└┌├╇┣┗━─")


def table_lines_wider_than(text: str, width: int) -> list[str]:
    from rich.cells import cell_len

    return [line for line in text.splitlines() if line.startswith(BOX) and cell_len(line) > width]


def check_printed(text: str, tables: list[Table], width: int) -> None:
    """The tables as printed in ``text``: none wider than ``width``, every header whole."""
    assert tables, "no table printed"
    assert not table_lines_wider_than(text, width), table_lines_wider_than(text, width)[:3]
    with_header = [t for t in tables if t.show_header]
    shown = headers_in(text.splitlines())
    assert len(shown) == len(with_header), (len(shown), len(with_header), text[:2000])
    for t, headers in zip(with_header, shown):
        assert not unreadable(t, width, headers), (t.title, unreadable(t, width, headers))


@pytest.fixture
def recorded(monkeypatch):
    """Tables printed while the test runs, printed for real as well (the text is the test's)."""
    caught: list[Table] = []

    def record_print(self, *objects, **kwargs):
        caught.extend(o for o in objects if isinstance(o, Table))
        return RICH_PRINT(self, *objects, **kwargs)

    monkeypatch.setattr(Console, "print", record_print)
    return caught


PIPED_COMMANDS = {**COMMANDS, "traffic": lambda d: ["traffic", str(d / "plan.json"), "-o", str(d / "tr")]}


@pytest.mark.parametrize("command", sorted(PIPED_COMMANDS))
def test_command_tables_piped_with_columns_80_fit_80_columns(command, lab64, recorded):
    from zcube_deploy.cli import cli

    r = CliRunner().invoke(cli, PIPED_COMMANDS[command](lab64), env={"COLUMNS": "80"}, catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    check_printed(r.output, recorded, 80)


def test_printers_piped_with_columns_80_fit_80_columns(monkeypatch, capsys, recorded):
    """verify, push, lab and the twin print from records (as in the test above), here piped with COLUMNS=80."""
    from zcube_deploy.cli.common import out

    monkeypatch.setenv("COLUMNS", "80")
    for t in print_records():
        out.print(t)
    assert len(recorded) >= 8
    check_printed(capsys.readouterr().out, recorded, 80)


@pytest.mark.parametrize("columns", ["80", None])
def test_analyze_piped_as_a_user_runs_it(columns, lab64, tmp_path):
    """`zcube analyze PLAN | cat`, a real pipe: with COLUMNS=80 no table line is wider than 80 (it was 150);
    without COLUMNS the wide tables keep the 150 columns a file or a CI log gets."""
    import os
    import subprocess

    from conftest import zcube_exe

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")} | ({"COLUMNS": columns} if columns else {})
    r = subprocess.run([*zcube_exe(), "analyze", str(lab64 / "plan.json"), "-o", str(tmp_path), "--samples", "2"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    if columns:
        assert not table_lines_wider_than(r.stdout, 80), table_lines_wider_than(r.stdout, 80)[:2]
    else:
        assert table_lines_wider_than(r.stdout, 80) and not table_lines_wider_than(r.stdout, 150)
