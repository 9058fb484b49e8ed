"""What every `zcube` command shares: the root group, the consoles, error handling, small printing helpers."""

from __future__ import annotations

import functools
import json
import sys
import traceback
from contextlib import contextmanager
from shutil import get_terminal_size

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from zcube_deploy import __version__
from zcube_deploy.errors import Problem, ProblemsError, ZCubeError, debug_requested

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def problem_line(p: Problem) -> str:
    # escaped: a data path such as servers[gpu0001] or a message quoting a config line is text, not rich markup
    line = f"  - [bold]{escape(p.path)}[/]: {escape(p.message)}" if p.path else f"  - {escape(p.message)}"
    return line + (f"\n    [dim]hint: {escape(p.hint)}[/]" if p.hint else "")


def handle_errors(fn):
    """Print ZCubeErrors as a list of problems (never a traceback) and exit with their code."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ProblemsError as exc:
            err.print(f"[bold red]error:[/] {exc.title} ({len(exc.problems)} problem{'s' if len(exc.problems) != 1 else ''})")
            for p in exc.problems:
                err.print(problem_line(p), markup=True)
            sys.exit(exc.exit_code)
        except ZCubeError as exc:
            err.print(f"[bold red]error:[/] {exc}")
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            err.print("interrupted")
            sys.exit(130)
        except (click.exceptions.Exit, click.ClickException):  # click's own: a usage error is its message, exit 2
            raise
        except Exception as exc:  # noqa: BLE001  (a bug: say so briefly, keep the traceback out of the user's face)
            if debug_requested():
                traceback.print_exc()
            from zcube_deploy.access import given_secrets  # (here: only a failing command pays for it)
            from zcube_deploy.safety import mask_credentials

            said = mask_credentials(f"{type(exc).__name__}: {exc}", *given_secrets())
            err.print(f"[bold red]internal error:[/] {escape(said)}\n"
                      "this is a bug in zcube; set ZCUBE_DEBUG=1 to see the traceback and please report it")
            sys.exit(3)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="zcube")
def cli() -> None:
    """zcube: plan, render, cable, push and verify ZCube GPU-cluster fabrics."""


class DefaultGroup(click.Group):
    """A group whose first argument, when it is not a subcommand, goes to a default command."""

    default_command = "make"

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


def print_stale(warning: str | None) -> None:
    """The stale-plan warning (the inventory changed since the plan was made), when there is one."""
    if warning:
        err.print(f"[yellow]warning:[/] {warning}")


def print_json(doc) -> None:
    click.echo(json.dumps(doc, indent=2, sort_keys=True))


WIDE = 150  # the width of tables piped to a file or a CI log when COLUMNS does not say one


def table_width() -> int:
    """The width tables are printed at: the terminal's on a terminal; piped (a file, a CI log, ``| less``):
    COLUMNS when it is set, the usual convention (``shutil.get_terminal_size`` reads it first), else WIDE."""
    return out.width if out.is_terminal else get_terminal_size((WIDE, 24)).columns


def print_wide(table: Table) -> None:
    """A table that may be wide, at ``table_width()`` (on a terminal, piped with COLUMNS set, piped without)."""
    if out.is_terminal:
        out.print(table)
    else:
        Console(highlight=False, width=table_width(), file=out.file).print(table)


def prompt(label: str, hide: bool) -> str:
    """Ask on the terminal (stderr), for the credential policy of access.py."""
    return click.prompt(label, hide_input=hide, err=True)


@contextmanager
def progress_bar(description: str, total: int):
    """A progress bar on stderr; yields ``advance()``."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=False) as progress:
        task = progress.add_task(description, total=total)
        yield lambda: progress.advance(task)


def print_events(events, printers: dict) -> dict:
    """Print each ``(event, data)`` a library run yields with ``printers[event](**data)``; returns the last data."""
    data: dict = {}
    for event, data in events:
        printers[event](**data)
    return data
