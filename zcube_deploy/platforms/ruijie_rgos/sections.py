"""An RGOS config file as numbered sections: what push's candidate check reads (pure).

Push refuses, before any session opens, a config file with a line outside the managed scope; to
name the file's line it needs the line numbers that hier_config's tree does not keep. A section is
a top-level line (no leading white space) and the indented lines after it; blank lines, comments
(``!``), ``end`` and the lines RGOS adds to a shown config (``Building configuration``, ``version``)
are no part of any section. Nothing here judges a line: that is push's (push/candidate.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NEGATION = "no "  # how a line undoes another on RGOS: `no <line>`
_SKIP = re.compile(r"^(?:!|end$|Building configuration|Current configuration|version )")


@dataclass(frozen=True)
class Section:
    """One top-level line (``number``: 1-based line number in the file) and its indented lines."""

    number: int
    text: str
    children: tuple[tuple[int, str], ...]

    def lines(self) -> list[str]:
        """The section as text lines, sub-lines stripped of their indentation (how two sections are compared)."""
        return [self.text] + [c.strip() for _, c in self.children]


def section_interface(line: str) -> str | None:
    """The interface a top-level line opens (spacing normalised: 'Mgmt  0' is 'Mgmt 0'), else None.

    >>> section_interface("interface  Mgmt   0"), section_interface("hostname A")
    ('Mgmt 0', None)
    """
    words = line.split()
    return " ".join(words[1:]) if len(words) > 1 and words[0] == "interface" else None


def numbered_sections(text: str) -> list[Section]:
    """The sections of RGOS config ``text`` in file order.

    >>> [(s.number, s.text, s.children) for s in numbered_sections("! c\\nhostname A\\n!\\ninterface X 0/1\\n ip address 1.1.1.1 255.255.255.255\\n !\\nend\\n")]
    [(2, 'hostname A', ()), (4, 'interface X 0/1', ((5, ' ip address 1.1.1.1 255.255.255.255'),))]
    """
    out: list[Section] = []
    head: tuple[int, str] | None = None
    children: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if not line.strip() or _SKIP.match(line.lstrip()):
            continue
        if line[0] in " \t":
            if head is not None:
                children.append((number, line))
                continue
            # an indented line before any section: a section of its own, so that it is judged, not lost
        if head is not None:
            out.append(Section(head[0], head[1], tuple(children)))
        head, children = (number, line.strip()) if line[0] in " \t" else (number, line.rstrip()), []
    if head is not None:
        out.append(Section(head[0], head[1], tuple(children)))
    return out
