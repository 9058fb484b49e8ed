"""An inventory's structural problems: pydantic's validation errors as :class:`~zcube_deploy.errors.Problem`
(data path, message, hint), and a structural retry so the semantic checks still run on the rest."""

from __future__ import annotations

import copy
import difflib
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from zcube_deploy.errors import Problem
from zcube_deploy.inventory import models as m


_PLAIN = re.compile(r"[A-Za-z0-9_.-]+|\[key\]")  # a name, or pydantic's mark for a mapping's key


def path_of(loc: tuple[Any, ...]) -> str:
    """A data path: ``servers.list[12].rack``; a key that is not a plain name (a newline, a space, empty) as its repr
    in brackets, so the path stays one printable line.

    >>> path_of(("topology", "\\n"))
    "topology['\\\\n']"
    >>> path_of(("servers", "list", 12, "rack"))
    'servers.list[12].rack'
    """
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and _PLAIN.fullmatch(part):
            out += ("." if out else "") + part
        else:
            out += f"[{part!r}]"
    return out


def _fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Allowed field names of the sub-model at ``loc`` (for 'did you mean' hints)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or current is None:
            continue
        info = getattr(current, "model_fields", {}).get(part)
        if info is None:
            return list(getattr(current, "model_fields", {}))
        current = _model_in(info.annotation)
    return list(getattr(current, "model_fields", {})) if current else []


def _model_in(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_in(arg)
        if found:
            return found
    return None


def pydantic_problems(exc: ValidationError, prefix: str = "") -> list[Problem]:
    problems = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        path = prefix + path_of(loc)
        msg = err["msg"].removeprefix("Value error, ")
        hint = ""
        if err["type"] == "extra_forbidden":
            allowed = _fields_at(m.Inventory, loc[:-1])
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            msg = "unknown field"
            hint = f"did you mean {close[0]!r}?" if close else "allowed here: " + ", ".join(allowed)
        elif err["type"] == "missing":
            msg = "required field is missing"
        elif "input" in err and err["type"] not in ("value_error",) and not isinstance(err["input"], (dict, list)):
            msg = f"{msg} (got {err['input']!r})"
        problems.append(Problem(path, msg, hint))
    return problems


def _prune(data: Any, err: dict, n: int) -> bool:
    """Neutralise what failed at the error's location so the rest can still be checked.

    The bad value is replaced by a placeholder of a plausible type (so list indices, and so the
    data paths of later problems, stay the same) or, for an optional key, removed.
    """
    loc = tuple(err["loc"])
    node = data
    for part in loc[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    key = loc[-1] if loc else None
    if not isinstance(node, (dict, list)) or (isinstance(node, list) and not isinstance(key, int)):
        return False
    typ = err["type"]
    numeric = typ.startswith(("int", "greater_than", "less_than", "float", "multiple_of"))
    if typ == "extra_forbidden" or (numeric and isinstance(node, dict) and not isinstance(err.get("input"), str)):
        del node[key]  # optional: the default applies; required: the next round says 'missing'
    elif numeric:
        node[key] = 1
    elif typ == "missing" or isinstance(err.get("input"), str):
        node[key] = f"invalid-value-{n}"
    elif isinstance(node, dict):
        del node[key]
    else:
        return False
    return True


def validate_structure(data: dict) -> tuple[m.Inventory | None, list[Problem]]:
    """Validate; on errors, neutralise the bad parts and retry so the semantic checks can still run."""
    try:
        return m.Inventory.model_validate(data), []
    except ValidationError as exc:
        problems = pydantic_problems(exc)
        errors = exc.errors()
    work = copy.deepcopy(data)
    n = 0
    for _ in range(5):
        for e in errors:
            n += 1
            if not _prune(work, e, n):
                return None, problems
        try:
            return m.Inventory.model_validate(work), problems
        except ValidationError as exc:
            errors = exc.errors()
    return None, problems
