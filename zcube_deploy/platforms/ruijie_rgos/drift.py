"""How RGOS config drift reads: the remediation (hier_config, the lines push would send) block by block.

:func:`drift_rows` turns the remediation from a running config to the rendered one (both cut to
the managed scope) into neutral rows ``(kind, section, line, have, want, fix)``, the kinds of
``zcube_deploy/audit/drift.py``'s vocabulary. What is RGOS here: ``no X`` negates X, ``shutdown``
and ``no shutdown`` on a port, ``ip route PREFIX MASK HOP`` routes that several next hops share, and
which lines the switch replaces in place (``hostname``, ``description``, ``ip address``, ...).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

from zcube_deploy.platforms.ruijie_rgos.driver import remediation_from_trees, scoped_tree
from zcube_deploy.platforms.ruijie_rgos.fastparse import config_sections, running_sections
from zcube_deploy.platforms.ruijie_rgos.reader import sections_by_head


class DriftRow(NamedTuple):
    kind: str
    section: str  # the top-level line (the port, the route, hostname ...)
    line: str  # the line that differs
    have: str | None  # what the switch has
    want: str | None  # what the plan has
    fix: tuple[str, ...]  # the remediation lines of the block


@dataclass(frozen=True)
class Block:
    """One top-level remediation line with its sub-lines (indentation removed, ``exit`` dropped)."""
    head: str
    children: tuple[str, ...]

    def lines(self) -> tuple[str, ...]:
        return (self.head,) + tuple(" " + c for c in self.children) + (("exit",) if self.children else ())


def blocks(remediation: list[str]) -> list[Block]:
    """The remediation lines (as ``remediation_lines`` writes them) grouped by top-level line."""
    out: list[Block] = []
    head, children = None, []
    for line in remediation:
        if line == "exit":
            continue
        if line.startswith(" "):
            children.append(line.strip())
            continue
        if head is not None:
            out.append(Block(head, tuple(children)))
        head, children = line, []
    if head is not None:
        out.append(Block(head, tuple(children)))
    return out


def _key(line: str) -> str:
    """The key a replacing line shares with the line it replaces: ``ip route P M`` for routes, else
    the words before the value (``hostname``, ``description``, ``ip address``, ``mtu``, ...)."""
    words = line.split()
    if line.startswith("ip route "):
        return " ".join(words[:4])
    if line.startswith(("ip address ", "ipv6 address ", "bfd interval ", "mtu forwarding ", "neighbor ")):
        return " ".join(words[:2])
    return words[0] if words else ""


class Intended:
    """The intended side of a comparison, read once: the rendered config's scoped sections (the text fast path)
    and, when a switch has drifted, its scoped hier_config tree (built on first use, kept). Audit keeps one per
    rendered config across its runs; hier_config's comparison only reads the intended tree, never changes it.
    Pickled without the tree (a process pool returns these). ``sections``: ``Counter(config_sections(text))``
    when the caller has it (audit's file cache)."""

    def __init__(self, text: str, owns=None, sections: Counter | None = None):
        self.text, self.owns = text, owns
        self._owned: dict[str, bool] = {}  # top-level line -> inside the scope (a running config repeats the rendered lines)
        self.sections = Counter(config_sections(text)) if sections is None else sections  # every section, inside the scope or not
        self._tree = None

    def owns_line(self, line: str) -> bool:
        """``owns(line)``, each distinct line asked once."""
        v = self._owned.get(line)
        if v is None:
            v = self._owned[line] = self.owns is None or self.owns(line)
        return v

    def tree(self):
        if self._tree is None:
            self._tree = scoped_tree(self.text, self.owns)
        return self._tree

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_tree": None}


def drift_rows(running: str, intended: str | Intended, owns=None) -> list[DriftRow]:
    """Every difference of ``running`` from ``intended`` inside ``owns``, as neutral rows (``intended``: the
    rendered config's text, or an :class:`Intended` read once, whose scope is its own).

    The common case first: when both configs hold the same sections, text for text, inside the scope,
    there is no difference (the same sections make the same trees) and hier_config is not needed. That is
    the case exactly when every section the two hold a different number of times lies outside the scope
    (:func:`differing_sections`): only those few (the site's own lines, mostly) are asked to the scope."""
    if not isinstance(intended, Intended):
        intended = Intended(intended, owns)
    if not any(intended.owns_line(sec.split("\n", 1)[0]) for sec in differing_sections(running, intended.sections)):
        return []
    remediation = remediation_from_trees(scoped_tree(running, intended.owns), intended.tree())
    return classify(remediation, sections_by_head(running))


def differing_sections(running: str, intended: Counter) -> list[str]:
    """The sections (fastparse.config_sections) that ``running`` holds another number of times than ``intended``
    (a multiset of sections): the two configs' sections inside a scope are the same, text for text, exactly
    when none of these is inside it. (``running``'s sections as verify's observation of it has just read them, when it has.)"""
    have = Counter(running_sections(running))
    odd = have.items() ^ intended.items()  # (section, count) pairs of one side only, compared in C: few on a clean switch
    if not odd:
        return []
    keys = {s for s, _ in odd}  # what Counter's (have - intended) + (intended - have) lists, in its order
    return [s for s in have if s in keys and have[s] > intended[s]] + [s for s in intended if s in keys and intended[s] > have[s]]


def classify(remediation: list[str], running: dict[str, list[str]]) -> list[DriftRow]:
    """The rows of a remediation (``remediation_lines``'s output) against ``running`` (reader.sections_by_head)."""
    bl = blocks(remediation)
    top_have: dict[str, list[str]] = {}
    for line in running:
        top_have.setdefault(_key(line), []).append(line)
    negated: dict[str, list[str]] = {}
    for b in bl:
        if not b.children and b.head.startswith("no "):
            negated.setdefault(_key(b.head[3:]), []).append(b.head[3:])
    replaced = {_key(b.head) for b in bl if not b.children and not b.head.startswith("no ")}
    out: list[DriftRow] = []
    for b in bl:
        line = b.head
        if b.children:
            out.extend(_section_rows(b, running.get(line, [])))
        elif line.startswith("no "):
            if _key(line[3:]) not in replaced:  # else reported with the line that replaces it
                kind = "stray_route" if line.startswith("no ip route ") else "config_stray"
                out.append(DriftRow(kind, line[3:], line[3:], line[3:], None, b.lines()))
        else:
            gone = negated.get(_key(line), [])
            # routes are not replaced in place (several next hops share a prefix): only a negated one was changed
            have = gone or ([] if line.startswith("ip route ") else [h for h in top_have.get(_key(line), ()) if h != line])
            if have:
                out.append(DriftRow("config_changed", line, line, have[0], line, tuple(f"no {h}" for h in gone) + b.lines()))
            else:
                kind = "missing_route" if line.startswith("ip route ") else "config_missing"
                out.append(DriftRow(kind, line, line, None, line, b.lines()))
    return out


def _section_rows(block: Block, have: list[str]) -> list[DriftRow]:
    """The rows of one section's remediation (``interface X`` with its sub-lines)."""
    fix = block.lines()
    negated = {_key(c[3:]): c[3:] for c in block.children if c.startswith("no ") and c != "no shutdown"}
    positive = {_key(c) for c in block.children if not c.startswith("no ")}
    have_keys = {_key(c): c for c in have}
    out = []
    for child in block.children:
        if child == "no shutdown":
            out.append(DriftRow("port_shut", block.head, "shutdown", "shutdown", None, fix))
        elif child.startswith("no "):
            if _key(child[3:]) not in positive:  # else reported with the line that replaces it
                out.append(DriftRow("config_stray", block.head, child[3:], child[3:], None, fix))
        else:
            old = negated.get(_key(child)) or have_keys.get(_key(child))
            if old is not None and old != child:
                out.append(DriftRow("config_changed", block.head, child, old, child, fix))
            else:
                out.append(DriftRow("config_missing", block.head, child, None, child, fix))
    return out
