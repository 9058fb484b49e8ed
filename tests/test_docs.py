"""The README stays a short entry point and the docs stay connected (issue 13, item 9).

Fails when README.md is over 220 lines, when a relative link in README.md or docs/*.md points to a
missing file, when the two set-up commands CI depends on are not in README.md byte for byte, or
when a `zcube <command>` in the README's command table has no docs/<command>.md.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

MAX_README_LINES = 220

# The Quick start's two commands, exactly as .ci/run and users run them.
SETUP_COMMANDS = (
    "scripts/setup && .venv/bin/zcube demo -o demo",
    ".venv/bin/python -m pytest --run-slow",
)

# Pages written on other branches and linked before they reach main. A link to one of these is
# accepted only while the file is absent; once merged it is checked like any other.
PENDING_PAGES = {
    "docs/twin.md": "branch twin",
    "docs/verify-bgp.md": "branch bgplab",
}

# [text](target) and ![alt](target); reference-style links are not used in this repository.
_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^(```|~~~)")


def _prose(text: str) -> str:
    """The text outside fenced code blocks and inline code spans (links there are not links)."""
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def relative_links(path: Path) -> list[str]:
    links = []
    for target in _LINK.findall(_prose(path.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # http:, mailto:, in-page anchors
        links.append(target)
    return links


def broken_links(path: Path) -> list[str]:
    bad = []
    for target in relative_links(path):
        file_part = unquote(target.split("#", 1)[0])
        resolved = (path.parent / file_part).resolve()
        if resolved.exists():
            continue
        try:
            rel = resolved.relative_to(ROOT).as_posix()
        except ValueError:
            rel = None
        if rel in PENDING_PAGES:
            continue
        bad.append(target)
    return bad


def command_table_commands(text: str) -> list[str]:
    """`zcube X` named in the first cell of the rows of the README's "## Commands" table."""
    m = re.search(r"^## Commands\s*$(.*?)(?=^## )", text, re.M | re.S)
    assert m, "README.md has no '## Commands' section"
    cmds = []
    for line in m.group(1).splitlines():
        cell = re.match(r"^\|\s*`zcube ([a-z][a-z-]*)`", line)
        if cell:
            cmds.append(cell.group(1))
    return cmds


def doc_files() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def test_readme_is_short():
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_README_LINES, f"README.md has {n} lines (at most {MAX_README_LINES}); move details to docs/"


@pytest.mark.parametrize("command", SETUP_COMMANDS)
def test_setup_commands_verbatim(command):
    lines = README.read_text(encoding="utf-8").splitlines()
    assert command in lines, f"README.md lost the set-up command (CI depends on it byte for byte): {command}"


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(path):
    bad = broken_links(path)
    assert not bad, f"{path.relative_to(ROOT)}: links to missing files: {bad}"


def test_every_command_in_the_table_has_a_page():
    text = README.read_text(encoding="utf-8")
    cmds = command_table_commands(text)
    assert len(cmds) >= 10, f"the README's command table lists only {cmds}"
    missing = []
    for c in cmds:
        page = f"docs/{c}.md"
        if not (ROOT / page).is_file() and page not in PENDING_PAGES:
            missing.append(page)
        if f"]({page})" not in text:
            missing.append(f"{page} (not linked from the table)")
    assert not missing, f"commands in the README without a docs page: {missing}"


def test_index_lists_every_page():
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = {t.split("#", 1)[0] for t in relative_links(DOCS / "index.md")}
    unlisted = [p.name for p in sorted(DOCS.glob("*.md")) if p.name != "index.md" and p.name not in linked]
    assert not unlisted, f"docs/index.md does not list: {unlisted}"
    assert index


# The checker itself, on small hand-made cases (so a checker that accepts everything fails here).

def test_link_checker_finds_a_missing_file(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("x")
    md = tmp_path / "README.md"
    md.write_text("[a](docs/a.md) [b](docs/b.md#x) ![i](docs/img/p.png) [w](https://x.org/y) [h](#top)\n"
                  "`[not](a/link.md)`\n```\n[code](no.md)\n```\n")
    assert broken_links(md) == ["docs/b.md#x", "docs/img/p.png"]


def test_command_table_parser():
    text = "## Commands\n\n| command | what |\n|---|---|\n| `zcube plan` | x |\n| `zcube check-routing` | y |\n\n## Next\n| `zcube z` |\n"
    assert command_table_commands(text) == ["plan", "check-routing"]


def test_ci_runs_the_readmes_test_command_and_ruff():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert SETUP_COMMANDS[1] in ci, ".ci/run must run the README's test command, byte for byte"
    assert "scripts/setup" in ci, ".ci/run must set up as the README does (scripts/setup)"
    setup = (ROOT / "scripts" / "setup").read_text(encoding="utf-8")
    assert "python3 -m venv .venv" in setup and ".venv/bin/pip install -q -e '.[test]'" in setup and "apt-get install" in setup
    assert ".venv/bin/ruff check ." in ci
