"""One exception hierarchy for the whole tool.

Input problems are collected into :class:`InputErrors` (a list of :class:`Problem`), so the user
sees every problem of a run at once; the CLI prints them without a traceback and exits 2.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One problem in the user's input: where (a data path), what is wrong, and a hint."""

    path: str
    message: str
    hint: str = ""

    def __str__(self) -> str:
        text = f"{self.path}: {self.message}" if self.path else self.message
        if self.hint:
            text += f" (hint: {self.hint})"
        return text

    def as_dict(self) -> dict:
        return {"path": self.path, "message": self.message, "hint": self.hint}


def _name_key(name: str) -> str:
    """``name`` without case, separators and leading zeros: 'zc-o-01' and 'ZC-O001' have one key."""
    return re.sub(r"\d+", lambda m: str(int(m.group())), re.sub(r"[^0-9a-z]", "", name.lower()))


def names_hint(name: str, names: list[str], what: str, shown: int = 8) -> str:
    """A hint for a name that is not one of ``names``: the close ones first ("did you mean"; the same name
    up to case, separators and leading zeros, else difflib's closest), then how the names look and how many
    there are, so a typo in a 16,000-GPU plan is one glance to fix.

    >>> names_hint("zc-o-01", ["ZC-O001", "ZC-O011", "ZC-E002"], "switch")
    "did you mean 'ZC-O001'? the plan's 3 switches: ZC-E002, ZC-O001, ZC-O011"
    >>> names_hint("F0001", ["F00001", "F00002"], "cable", shown=1)
    "did you mean 'F00001'? the plan's 2 cables: F00001, ..."
    >>> names_hint("B01", ["A02"], "rack")
    "the plan's 1 rack: A02"
    >>> names_hint("x", [], "cable")
    'the plan has no cable'
    """
    if not names:
        return f"the plan has no {what}"
    key = _name_key(name)
    close = [n for n in names if _name_key(n) == key][:3] or difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    ordered = sorted(names)
    listed = ", ".join(ordered[:shown]) + (", ..." if len(ordered) > shown else "")
    plural = what if len(names) == 1 else what + ("es" if what.endswith(("s", "sh", "ch", "x")) else "s")
    head = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    return f"{head}the plan's {len(names):,} {plural}: {listed}"


class ZCubeError(Exception):
    """Base of every error this tool raises on purpose."""

    exit_code = 1


class ProblemsError(ZCubeError):
    """An error that carries a list of problems (all of them, not just the first)."""

    exit_code = 2
    default_title = "error"

    def __init__(self, problems: list[Problem] | Problem, title: str | None = None):
        if isinstance(problems, Problem):
            problems = [problems]
        if title is not None and not isinstance(title, str):  # InputErrors(*problems) would lose all but one
            raise TypeError(f"{type(self).__name__}: pass the problems as one list, the title as a string")
        self.problems = list(problems)
        self.title = title or self.default_title
        super().__init__(f"{self.title}: " + "; ".join(str(p) for p in self.problems))

    def __reduce__(self):  # pickled whole (a render worker's error reaches the parent as it was raised)
        return type(self), (self.problems, self.title)


class InputErrors(ProblemsError):
    """Bad input or usage: carries every problem found, not just the first."""

    default_title = "invalid input"


class PlanError(ProblemsError):
    """The planner could not build a plan that satisfies the ZCube invariants."""

    default_title = "cannot plan"


class InvariantViolation(PlanError):
    """A ZCube invariant (zcube.md section 4) does not hold for a built plan: a bug, never input."""

    exit_code = 1


class PlanFileError(ZCubeError):
    """plan.json is missing, unreadable, or of a schema this version does not know."""

    exit_code = 2


class InvalidPlanFile(ProblemsError, PlanFileError):
    """plan.json does not match the plan model (hand-edited, truncated, or of another version)."""

    exit_code = 2
    default_title = "invalid plan file"


class RenderError(ZCubeError):
    """A rendered config does not carry exactly what the plan says."""

    exit_code = 1


class DeviceError(ZCubeError):
    """A device could not be reached or did not do what was asked."""

    exit_code = 1


def debug_requested() -> bool:
    """ZCUBE_DEBUG is set to a true value: an internal error (a bug) shows its traceback.

    >>> import os; os.environ["ZCUBE_DEBUG"] = "0"; debug_requested()
    False
    >>> os.environ["ZCUBE_DEBUG"] = "1"; debug_requested()
    True
    >>> del os.environ["ZCUBE_DEBUG"]; debug_requested()
    False
    """
    return os.environ.get("ZCUBE_DEBUG", "").strip().lower() not in ("", "0", "false", "no", "off")


def not_utf8(path, exc: UnicodeDecodeError) -> Problem:
    """Where in the file ``path`` the bytes stop being UTF-8: file:line:column and the byte."""
    raw = exc.object
    line = raw.count(b"\n", 0, exc.start) + 1
    column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
    return Problem(f"{path}:{line}:{column}", f"not UTF-8 text (byte {raw[exc.start]:#04x})", "save the file as UTF-8")
