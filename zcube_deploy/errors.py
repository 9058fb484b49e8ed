"""One exception hierarchy for the whole tool.

Input problems are collected into :class:`InputErrors` (a list of :class:`Problem`), so the user
sees every problem of a run at once; the CLI prints them without a traceback and exits 2.
"""

from __future__ import annotations

import os
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
    """ZCUBE_DEBUG is set: an internal error (a bug) shows its traceback."""
    return "ZCUBE_DEBUG" in os.environ


def not_utf8(path, exc: UnicodeDecodeError) -> Problem:
    """Where in the file ``path`` the bytes stop being UTF-8: file:line:column and the byte."""
    raw = exc.object
    line = raw.count(b"\n", 0, exc.start) + 1
    column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
    return Problem(f"{path}:{line}:{column}", f"not UTF-8 text (byte {raw[exc.start]:#04x})", "save the file as UTF-8")
