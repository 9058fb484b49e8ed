"""migrate.json (report.py writes it beside the stage folders) as its readers read it: `zcube lab fix --stage` (a
stage's roles) and `zcube analyze` of a stage's plan (its FROM plan), through plan/state.py's shape check."""

from __future__ import annotations

from pathlib import Path

from pydantic import TypeAdapter
from typing_extensions import NotRequired, TypedDict

from zcube_deploy.errors import Problem
from zcube_deploy.plan.state import read_state, state_problems

HINT = "give a stage folder of a `zcube migrate -o DIR` run (DIR/migrate.json beside DIR/stage-NN)"


class _Role(TypedDict):
    role: str
    switch: str
    first_stage: int


class _From(TypedDict):
    plan: str


class _StageRoles(TypedDict):
    """The fields of migrate.json that a stage's lab work reads (the rest is the report)."""

    roles: list[_Role]
    stages: NotRequired[int]


_ROLES_DOC = TypeAdapter(_StageRoles)
_FROM_DOC = TypeAdapter(TypedDict("_FromDoc", {"from": _From}))  # "from": a Python keyword, so the functional form


def read_roles(path: str | Path) -> dict:
    """migrate.json for a stage's roles ({"roles": [{"role", "switch", "first_stage"}], "stages"}); exit 2 naming the
    file and the field's place otherwise."""
    return read_state(path, _ROLES_DOC, "a migrate.json", HINT)


def from_plan(path: str | Path) -> tuple[str | None, list[Problem]]:
    """(the FROM plan migrate.json at ``path`` names, or None with the problems that say why)."""
    problems, doc = state_problems(path, _FROM_DOC, "a migrate.json", HINT)
    return (None, problems) if problems else (doc["from"]["plan"], [])
