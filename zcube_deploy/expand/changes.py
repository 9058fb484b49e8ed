"""Change sets that only add: what push would send to each switch to take it from the old plan's
config to the grown plan's, and a check of it that does not trust the code that computed it.

The change set of a switch is the platform's remediation (the lines `zcube push --dry-run` writes to
DIR/push/<switch>.diff) from the old plan's rendered config, taken as what the switch runs, to the
grown plan's, inside the managed scope. It is then checked against the two config texts alone,
read into sections by the platform's section reader:

1. every line the old config holds inside the scope is still in the new config, in its section,
   except in the sections of the reserved ports the expansion takes into service (their
   placeholder lines: a port reserved for growth is shut, with a "reserved" description);
2. every line the change set sends into a section is a line of that section in the new config (a
   line that only removes is not), and no top-level line is a negation;
3. a negation (the platform's ``NEGATION``, e.g. ``no shutdown``) that undoes a line of the old
   config undoes a placeholder, never a line of a port or section in service: those would be
   existing lines negated, and the expansion is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ChangeSet:
    """One switch's change set and what the check found."""

    switch: str
    lines: list[str]  # what push would send, in order
    into_service: list[str]  # reserved ports the expansion takes into service
    placeholders_replaced: list[str] = field(default_factory=list)  # "section: line" of old placeholder lines it replaces
    existing_negated: list[str] = field(default_factory=list)  # "section: line" of old in-service lines it negates (must be none)
    problems: list[str] = field(default_factory=list)

    @property
    def lines_sent(self) -> int:
        return len(self.lines)

    def as_dict(self, section_end: str) -> dict:
        return {"switch": self.switch, "lines": sum(1 for ln in self.lines if ln != section_end), "ports_into_service": len(self.into_service),
                "placeholders_replaced": len(self.placeholders_replaced), "existing_lines_negated": len(self.existing_negated)}


def _sections(pm, text: str, owns=None) -> dict[str, list[str]]:
    """Top-level line -> its lines (the top-level line first), inside ``owns`` when given."""
    return {s.text: s.lines() for s in pm.numbered_sections(text) if owns is None or owns(s.text)}


def check_change_set(cs: ChangeSet, old_text: str, new_text: str, owns, pm) -> ChangeSet:
    """Fill ``cs``'s findings (see the module's docstring); ``pm`` is the platform module."""
    neg = pm.NEGATION
    old, new = _sections(pm, old_text, owns), _sections(pm, new_text, owns)
    reserved = set(cs.into_service)

    def placeholder(head: str) -> bool:
        return pm.section_interface(head) in reserved

    for head, lines in old.items():
        if placeholder(head):
            cs.placeholders_replaced += [f"{head}: {ln}" for ln in lines[1:] if ln not in new.get(head, ())]
            continue
        if head not in new:
            cs.problems.append(f"{cs.switch}: '{head}' would go from the config")
            continue
        keep = set(new[head])
        cs.problems += [f"{cs.switch}: '{head}': the existing line '{ln}' would go or change" for ln in lines[1:] if ln not in keep]
    for sec in pm.numbered_sections("\n".join(cs.lines)):
        head = sec.text
        if head == pm.SECTION_END:
            continue
        if head.startswith(neg):
            cs.problems.append(f"{cs.switch}: sends the top-level negation '{head}'")
            continue
        if head not in new:
            cs.problems.append(f"{cs.switch}: sends '{head}', which the new config does not hold")
            continue
        was = set(old.get(head, ()))
        for line in sec.lines()[1:]:
            if line not in new[head]:
                cs.problems.append(f"{cs.switch}: '{head}': sends '{line}', which the new config does not hold (a removal)")
            if line.startswith(neg) and line[len(neg):] in was and not placeholder(head):
                cs.existing_negated.append(f"{head}: {line[len(neg):]}")
    cs.problems += [f"{cs.switch}: '{x}': an existing line negated" for x in cs.existing_negated]
    return cs


def change_sets(old_configs: dict[str, str], new_configs: dict[str, str], into_service: dict[str, list[str]], scopes: dict, pm,
                predicted: list[str]) -> tuple[dict[str, ChangeSet], list[str]]:
    """Every switch's checked change set (``scopes``: switch -> ``owns``), and the problems: each change set's,
    plus a switch that changes though the expansion adds nothing to it, or gains a port and does not change."""
    sets: dict[str, ChangeSet] = {}
    problems: list[str] = []
    for name in sorted(new_configs):
        if name not in old_configs:
            problems.append(f"{name}: not in the old plan (a new switch is no expansion within the capacity)")
            continue
        lines = pm.remediation(old_configs[name], new_configs[name], scopes[name])
        cs = check_change_set(ChangeSet(name, lines, into_service.get(name, [])), old_configs[name], new_configs[name], scopes[name], pm)
        problems += cs.problems
        if lines:
            sets[name] = cs
    changed, expected = set(sets), set(predicted)
    problems += [f"{n}: changes, though the expansion adds no cable to it" for n in sorted(changed - expected)]
    problems += [f"{n}: gains ports, but its config does not change" for n in sorted(expected - changed)]
    return sets, problems
