"""The site's access lines for a console bootstrap: read and checked, every problem at once (pure but for the read).

The operator owns them (users, enable secret, AAA, vty, SSH, SNMP, NTP ...): zcube never writes them
itself and never prints their secrets. Each line goes to the device's CLI at the console, so each is
checked first: no control character or ``?`` (push's rule), configuration only (no exec command:
the bootstrap opens and closes configuration mode itself; the platform's ``access_line_refusal``),
nothing inside the managed scope (push owns those lines and sends them once the unit is reachable),
not the management interface (the bootstrap writes it from the plan), no indented line outside a
section. Blank lines and comments (``!``) are dropped.
"""

from __future__ import annotations

from pathlib import Path

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.platforms import platform_module
from zcube_deploy.push.candidate import control_character
from zcube_deploy.push.scope import ManagedScope
from zcube_deploy.safety import redact_secrets

MAX_ACCESS_BYTES = 256 * 1024  # a site's access lines, not a config dump
MAX_PROBLEMS = 10  # listed at most; the rest are counted (a wrong file, e.g. the plan.json, refuses every line)
QUOTED = 80  # characters of a refused line quoted at most (its secrets masked first)
HINT = "a text file of the site's configuration lines (users, AAA, vty, SSH ...), as the running config shows them"


def read_access_text(path: str) -> str:
    """The text of the access-lines file: a regular UTF-8 file of at most MAX_ACCESS_BYTES."""
    p = Path(path)
    try:
        if not p.is_file():
            raise InputErrors(Problem(path, "not a regular file" if p.exists() else "no such file", HINT))
        if p.stat().st_size > MAX_ACCESS_BYTES:
            raise InputErrors(Problem(path, f"{p.stat().st_size} bytes: more than {MAX_ACCESS_BYTES} for access lines", HINT))
        return p.read_bytes().decode("utf-8")
    except OSError as exc:
        raise InputErrors(Problem(path, f"cannot read it: {exc.strerror}", HINT)) from None
    except UnicodeDecodeError as exc:
        raise InputErrors(Problem(path, f"not UTF-8 text: {exc.reason} at byte {exc.start}", HINT)) from None


def access_problems(path: str, text: str, scope: ManagedScope | None, mgmt_interface: str, platform: str) -> tuple[list[str], list[Problem]]:
    """(the lines to paste, the problems: ``path:line``, the line with its secrets masked, why) of ``text``."""
    pm = platform_module(platform)
    lines: list[str] = []
    problems: list[Problem] = []
    section = None  # the current section: None (none yet), "ok", or "refused" (its indented lines go with it)
    for n, raw in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("!"):
            continue
        top = line[0] not in " \t"
        why = control_character(line)
        if top:
            why = why or _top_refusal(line, scope, mgmt_interface, pm)
            section = "refused" if why else "ok"
        elif section == "refused":
            continue  # refused with its section's line
        elif why is None and section is None:
            why = "an indented line outside any section"
        if why is not None:
            problems.append(Problem(f"{path}:{n}", f"{_quote(redact_secrets(line, platform))}: {why}"))
        else:
            lines.append(line)
    return lines, problems


def _quote(line: str) -> str:
    """``line`` quoted, cut to QUOTED characters with "..." (a 300-character JSON line said nothing more)."""
    return repr(line) if len(line) <= QUOTED else repr(line[:QUOTED]) + "..."


def _top_refusal(line: str, scope: ManagedScope | None, mgmt_interface: str, pm) -> str | None:
    if pm.section_interface(line) == " ".join(mgmt_interface.split()):
        return f"the management interface {mgmt_interface}: the bootstrap writes it from the plan"
    why = pm.access_line_refusal(line)
    if why is not None:
        return why
    if scope is not None and scope.owns(line):
        return "inside the managed scope: zcube owns it (push sends it once the unit is reachable)"
    return None


def read_access_lines(path: str | None, scope: ManagedScope | None, mgmt_interface: str, platform: str) -> list[str]:
    """The checked access lines of ``path`` (None: no file, no lines); every problem at once (exit 2)."""
    if path is None:
        return []
    lines, problems = access_problems(path, read_access_text(path), scope, mgmt_interface, platform)
    if problems:
        more = [Problem(path, f"... and {len(problems) - MAX_PROBLEMS} more lines refused")] if len(problems) > MAX_PROBLEMS else []
        raise InputErrors(problems[:MAX_PROBLEMS] + more, "bad access lines; nothing was written or sent")
    return lines
