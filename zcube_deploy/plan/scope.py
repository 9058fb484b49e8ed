"""``--only``, one reading for every command that takes it (render, push, verify, audit): a comma list of
globs on names, or ``rack:GLOB`` on racks, each pattern checked to match something of the plan, so a typo
in a list is refused rather than silently shrinking the scope (pure)."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from zcube_deploy.errors import InputErrors, Problem, names_hint

EXAMPLES = "e.g. 'ZC-E0*' or 'rack:A0*'"


def only_patterns(only: str | None, names: Iterable[str], racks: Iterable[str], what: str = "switch",
                  noun: str = "switch", rack_noun: str = "rack") -> list[str]:
    """The patterns of ``only`` ([] when it is None, not given: everything); raises InputErrors, before anything else is
    done, naming each pattern that matches none of ``names`` (a glob) or, ``rack:GLOB``, none of ``racks``,
    with the plan's closest names (errors.names_hint; ``noun`` names them there). ``what``: what a name
    pattern must match, in the message ('switch', 'switch or server'); ``rack_noun``: what ``racks`` are
    ('rack'; push's 'switch rack': a rack pattern of push takes the switches in those racks only).

    >>> only_patterns("ZC-O*, rack:A01", ["ZC-O001", "ZC-E001"], ["A01"])
    ['ZC-O*', 'rack:A01']
    >>> try:
    ...     only_patterns("ZC-O001,ZC-O01", ["ZC-O001", "ZC-E001"], ["A01"])
    ... except InputErrors as e:
    ...     print(*e.problems, sep="\\n")
    --only: 'ZC-O01' matches no switch (hint: did you mean 'ZC-O001'? the plan's 2 switches: ZC-E001, ZC-O001 (globs: ...))
    """
    if only is None:
        return []
    # given but empty ('--only ""', e.g. an unset shell variable): refused below, never read as everything
    pats = [p.strip() for p in only.split(",") if p.strip()]
    if not pats:
        raise InputErrors(Problem("--only", f"{only!r} holds no pattern", EXAMPLES))
    names, racks = list(names), sorted(set(racks))
    problems = []
    for p in pats:
        if p.startswith("rack:"):
            if not any(fnmatch.fnmatchcase(r, p[5:]) for r in racks):
                problems.append(Problem("--only", f"{p!r} matches no {rack_noun}", names_hint(p[5:], racks, rack_noun)))
        elif not any(fnmatch.fnmatchcase(n, p) for n in names):
            problems.append(Problem("--only", f"{p!r} matches no {what}",
                                    names_hint(p, names, noun) + " (globs: 'ZC-E0*'; racks: 'rack:A0*')"))
    if problems:
        raise InputErrors(problems)
    return pats


def matches(name: str, rack: str, pats: list[str]) -> bool:
    """Whether one of ``pats`` (from :func:`only_patterns`) takes a device named ``name`` in ``rack``."""
    return any(fnmatch.fnmatchcase(rack, p[5:]) if p.startswith("rack:") else fnmatch.fnmatchcase(name, p) for p in pats)
