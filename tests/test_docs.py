"""The README stays a short entry point, the docs stay connected and what they quote stays true
(issue 13, item 9; issue 24, item 5).

Fails when README.md is over 220 lines, when a relative link in README.md or docs/*.md points to a
missing file, when the two set-up commands CI depends on are not in README.md byte for byte, when
a `zcube <command>` in the README's command table has no docs/<command>.md, when a quoted shell
command does not parse (bashlex) or does not parse as the `zcube` command it names (click), when
a quoted command output or a figure quoted in prose differs from what the command prints today
(tests/test_docs_figures.py), or when a page names a git branch other than main.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
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
    ".venv/bin/python -m pytest --run-slow -n auto",
)

# Pages written on other branches and linked before they reach main. A link to one of these is
# accepted only while the file is absent; once merged it is checked like any other.
PENDING_PAGES: dict[str, str] = {}

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


# Git branches other than main do not exist in a clone: a page that names one is out of date.
_BRANCH = re.compile(r"\bbranch(?:es)? `([^`]+)`")


def test_no_page_names_a_branch_other_than_main():
    found = [f"{p.relative_to(ROOT)}:{n}: branch `{m}`" for p in doc_files()
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) for m in _BRANCH.findall(line) if m != "main"]
    assert not found, "pages naming branches (merged or gone: say where the thing is now):\n" + "\n".join(found)


# Quoted shell commands (issue 24, item 5): every ```sh block, every untagged block of commands and
# every `$ ` line of a quoted transcript is parsed by bashlex, a real bash grammar, and each command of
# `zcube` is parsed by the CLI's own click parser (subcommand, options and their values, argument count)
# without running it. A comment after a line-continuation backslash, an unknown option or a stray
# argument fails with the page and line.

@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the block's first content line
    lang: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def code_blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file (indented fences too, as in list items)."""
    lines, blocks, i = path.read_text(encoding="utf-8").splitlines(), [], 0
    while i < len(lines):
        m = re.match(r"^(\s*)(```|~~~)(\w*)\s*$", lines[i])
        if m:
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(m.group(2)):
                j += 1
            indent = len(m.group(1))
            blocks.append(Block(path, i + 2, m.group(3), "\n".join(x[indent:] for x in lines[i + 1:j])))
            i = j
        i += 1
    return blocks


# What a quoted command may run: the tool and the set-up and test commands of the README.
PROGRAMS = {"zcube", ".venv/bin/zcube", ".venv/bin/python", "scripts/setup", "sudo", "install", "netplan", "sysctl"}
ZCUBE = {"zcube", ".venv/bin/zcube"}


def _first_word(line: str) -> str:
    return line.split()[0] if line.split() else ""


def shell_text(block: Block) -> str | None:
    """The shell commands a block quotes: a ```sh block whole, an untagged block whose lines are commands,
    or the `$ ` lines of a transcript; None for a block of output, code or data."""
    if block.lang == "sh":
        return block.text
    if block.lang not in ("", "text"):
        return None
    lines = [x for x in block.text.splitlines() if x.strip() and not x.lstrip().startswith("#")]
    if is_synopsis(block):
        return None
    if lines and lines[0].startswith("$ "):
        return "\n".join(x[2:] for x in lines if x.startswith("$ "))
    if lines and _first_word(lines[0]) in PROGRAMS:
        return block.text
    return None


def is_synopsis(block: Block) -> bool:
    """An untagged usage synopsis (``zcube X PLAN [--a x|y] ...``): alternatives in brackets, not a command line."""
    return block.lang in ("", "text") and _first_word(block.text) in ZCUBE and bool(re.search(r"\[[^\]]*\|[^\]]*\]", block.text))


def synopsis_problems(text: str) -> list[str]:
    """The options a synopsis shows that its command does not have."""
    import click

    from zcube_deploy.cli import cli

    cmd, words = cli, text.split()[1:]
    while isinstance(cmd, click.Group) and words and words[0] in cmd.commands:
        cmd, words = cmd.commands[words[0]], words[1:]
    known = {o for p in cmd.params for o in p.opts + p.secondary_opts}
    return [f"`{o}` is not an option of `{cmd.name}`" for o in dict.fromkeys(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text)) if o not in known]


def simple_commands(text: str) -> list[list[str]]:
    """The words of every simple command in ``text`` (lists, pipelines and ``&`` included), via bashlex."""
    import bashlex

    found: list[list[str]] = []

    class Visitor(bashlex.ast.nodevisitor):
        def visitcommand(self, node, parts):
            found.append([p.word for p in parts if p.kind == "word"])

    for tree in bashlex.parse(text):
        Visitor().visit(tree)
    return found


def parse_zcube(args: list[str]) -> None:
    """Parse ``zcube ARGS`` with the CLI's click commands without running anything (raises click's
    UsageError). ``[--opt VALUE]`` in a synopsis is read as the option it shows."""
    import click

    from zcube_deploy.cli import cli

    cmd, i, path = cli, 0, ["zcube"]
    while isinstance(cmd, click.Group) and "--help" not in args[i:i + 1]:
        if i < len(args) and args[i] in cmd.commands:
            name, i = args[i], i + 1
        elif getattr(cmd, "default_command", None):
            name = cmd.default_command  # `zcube cabling PLAN` is `zcube cabling make PLAN`
        else:
            raise click.UsageError(f"{' '.join(path)} has no command {args[i] if i < len(args) else '(none given)'!r}")
        cmd, path = cmd.commands[name], [*path, name]
    if not isinstance(cmd, click.Group):
        cmd.make_context(" ".join(path), [a.strip("[]") for a in args[i:]])


def command_problems(text: str) -> list[str]:
    """What is wrong with the commands of one quoted block (empty when all parse)."""
    import bashlex
    import click

    try:
        commands = simple_commands(text)
    except (bashlex.errors.ParsingError, NotImplementedError) as exc:
        return [f"not valid shell: {exc}"]
    problems = []
    for words in commands:
        shown = " ".join(words)
        if any(not w.strip() for w in words):
            problems.append(f"`{shown}`: a backslash escapes a space, not the line end (a comment after a line-continuation backslash?)")
        while words and words[0] == "sudo":
            words = words[1:]
        if not words or words[0] not in PROGRAMS:
            problems.append(f"`{shown}`: {words[0] if words else 'nothing'!r} is not a command the docs run (a broken continuation?)")
        elif words[0] in ZCUBE:
            try:
                parse_zcube(words[1:])
            except click.ClickException as exc:
                problems.append(f"`{shown}`: {exc.format_message()}")
    return problems


def quoted_shell_blocks() -> list[Block]:
    return [b for p in doc_files() for b in code_blocks(p) if shell_text(b) is not None]


@pytest.mark.parametrize("block", quoted_shell_blocks(), ids=lambda b: b.where)
def test_quoted_commands_parse(block):
    problems = command_problems(shell_text(block))
    assert not problems, f"{block.where}: " + "\n".join(problems)


@pytest.mark.parametrize("block", [b for p in doc_files() for b in code_blocks(p) if is_synopsis(b)], ids=lambda b: b.where)
def test_synopsis_options_exist(block):
    problems = synopsis_problems(block.text)
    assert not problems, f"{block.where}: " + "\n".join(problems)


def test_the_synopsis_checker():
    b = Block(README, 1, "", "zcube analyze PLAN -o DIR [--samples N|M] [--seeed S]\n")
    assert is_synopsis(b) and synopsis_problems(b.text) == ["`--seeed` is not an option of `analyze`"]
    assert not is_synopsis(Block(README, 1, "sh", b.text)) and not is_synopsis(Block(README, 1, "", "zcube plan x.yaml\n"))


def test_there_are_quoted_commands_to_parse():
    blocks = quoted_shell_blocks()
    assert len(blocks) >= 20 and sum(len(simple_commands(shell_text(b))) for b in blocks) >= 60


# The checker on what it must catch: docs/hall.md's block before its fix, an option that does not
# exist, a stray argument, an unknown subcommand, a value of the wrong type; and what it must accept.
BROKEN_COMMANDS = {
    "comment after backslash": "zcube hall out/plan.json -o out \\\n    --verify v.json \\             # findings in red\n"
                               "    --cabling out/cabling.xlsx\n",
    "unknown option": "zcube verify out/plan.json --labb out/lab/lab.json\n",
    "stray argument": "zcube plan inventories/glm-1k.yaml out\n",
    "unknown subcommand": "zcube lab upp out/plan.json\n",
    "wrong value type": "zcube analyze out/plan.json --samples many\n",
    "unclosed quote": "zcube render out/plan.json --only 'ZC-O*\n",
}


@pytest.mark.parametrize("name", BROKEN_COMMANDS)
def test_the_command_checker_catches(name):
    assert command_problems(BROKEN_COMMANDS[name]), f"the command checker let {name!r} through"


def test_the_command_checker_accepts_good_commands():
    good = ("zcube hall out/plan.json -o out \\\n    --verify v.json \\\n    --cabling out/cabling.xlsx   # ok\n"
            "zcube lab up out/plan.json -o out/lab --faults random:5 --seed 9 &   # background\n"
            "scripts/setup && .venv/bin/zcube demo -o demo\nzcube cabling out/plan.json -o out\nzcube cabling status out/cabling.xlsx\n"
            "sudo zcube twin test twin --fail switch:ZC-O001 --mode silent\nzcube analyze out/plan.json [--samples 400]\n")
    assert command_problems(good) == []
    assert shell_text(Block(README, 1, "", "$ zcube plan x.yaml\nerror: ...\n$ zcube lab up p &\n")) == "zcube plan x.yaml\nzcube lab up p &"
    assert shell_text(Block(README, 1, "", "rendered 16 switch configs\n")) is None
