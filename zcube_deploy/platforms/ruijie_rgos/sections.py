"""An RGOS config file as numbered sections: what push's candidate check reads (pure).

Push refuses, before any session opens, a config file with a line outside the managed scope; to
name the file's line it needs the line numbers that hier_config's tree does not keep. The sections
are the general reader's (reader.py :func:`read_sections`: a top-level line and the indented lines
after it; blank lines, comments, ``end`` and the lines RGOS adds to a shown config are no part of
any section). Nothing here judges a line: that is push's (push/candidate.py).
"""

from __future__ import annotations

from zcube_deploy.platforms.ruijie_rgos.reader import Section, read_sections

NEGATION = "no "  # how a line undoes another on RGOS: `no <line>`

__all__ = ["NEGATION", "Section", "numbered_sections", "section_interface"]


def section_interface(line: str) -> str | None:
    """The interface a top-level line opens (spacing normalised: 'Mgmt  0' is 'Mgmt 0'), else None.

    >>> section_interface("interface  Mgmt   0"), section_interface("hostname A")
    ('Mgmt 0', None)
    """
    words = line.split()
    return " ".join(words[1:]) if len(words) > 1 and words[0] == "interface" else None


def numbered_sections(text: str) -> list[Section]:
    """The sections of RGOS config ``text`` in file order (the general reader's, reader.py).

    >>> [(s.number, s.text, s.children) for s in numbered_sections("! c\\nhostname A\\n!\\ninterface X 0/1\\n ip address 1.1.1.1 255.255.255.255\\n !\\nend\\n")]
    [(2, 'hostname A', ()), (4, 'interface X 0/1', ((5, ' ip address 1.1.1.1 255.255.255.255'),))]
    """
    return read_sections(text)
