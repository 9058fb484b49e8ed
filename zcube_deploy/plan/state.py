"""The state documents beside a plan (a lab.json, a twin's twin.json, drain records, replace.json, a migration's
stage folders): JSON read with its shape checked.

A file of another shape given where one is expected (a plan.json where a twin folder's twin.json belongs, a drain
record edited by hand, a truncated file) is an input error (exit 2) naming the file and every misplaced field
(plan.model's ``validation_problems``), never a KeyError or a TypeError further on. Each reader declares the shape
of the fields it reads (a pydantic TypedDict) and reads through :func:`read_state`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.plan.model import validation_problems


def read_state(path: str | Path, adapter: TypeAdapter, what: str, hint: str, limit: int = 5) -> Any:
    """The JSON document at ``path``, its shape checked by ``adapter`` (strictly: JSON's own types, no coercion) and
    returned as read (fields the shape does not name kept); ``what`` names the document ("a lab.json") and ``hint``
    says where the right file comes from. Unreadable, not JSON, or of another shape: InputErrors with the file and
    the place of each problem (up to ``limit``)."""
    problems, doc = state_problems(path, adapter, what, hint, limit)
    if problems:
        raise InputErrors(problems)
    return doc


def state_problems(path: str | Path, adapter: TypeAdapter, what: str, hint: str, limit: int = 5) -> tuple[list[Problem], Any]:
    """(the problems of the JSON document at ``path``, the document): :func:`read_state` without raising, for a
    reader of several files that reports every problem at once."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        return [Problem(str(path), f"cannot read it: {exc.strerror or exc}", hint)], None
    except (ValueError, RecursionError) as exc:  # JSON syntax, undecodable bytes, nesting beyond the parser
        return [Problem(str(path), f"not {what}: {exc}", hint)], None
    try:
        adapter.validate_python(doc, strict=True)
    except ValidationError as exc:
        return [Problem(f"{path}: {p.path}" if p.path not in ("", "plan.json") else str(path), f"not {what}: {p.message}", hint)
                if p.path else Problem(str(path), p.message)  # "... and N more"
                for p in validation_problems(exc, limit=limit)], None
    return [], doc
