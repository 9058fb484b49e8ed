"""The platform seam: no module outside zcube_deploy/platforms/ names a platform's keywords,
commands or interface types (issue 13, "Done when").

Every Python module of the package is read as tokens: code, string literals and docstrings count
(a docstring's example is documentation a reader takes as the tool's vocabulary: it uses neutral
names, or names read from the platform); comments do not. A hit is reported as file:line.
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "zcube_deploy"

# RGOS interface types, syntax, commands and driver names (case-sensitive where RGOS is)
KEYWORDS = re.compile(
    r"GigabitEthernet|TFGigabit|FortyGigabit|HundredGigabit|AggregatePort|FastEthernet|Loopback|\bMgmt\b|"
    r"\bip route\b(?! get\b)|\bip address\b|\bno switchport\b|\brouter bgp\b|\bfall-over bfd\b|\bNull 0\b|"
    r"\bshow (ip|lldp|interface|running-config|startup-config|version|bfd)\b|\bRuijieRGOS|\bRuijieOS|\bruijie_os\b|"
    r"\b255\.255\.")
IMPORT_RE = re.compile(r"rgos|ruijie", re.I)

# Files other engineers own that still name RGOS; the lead empties this list after merging
# everyone (each entry says why it is still here).
ALLOWED: dict[str, str] = {}
# Files whose docstrings (only) still name RGOS, owned by other branches; emptied the same way.
ALLOWED_DOCSTRINGS: dict[str, str] = {}


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def platform_hits(path: Path, text: str | None = None, docstrings: bool = True) -> list[str]:
    """'file:line: what' for every platform keyword in ``path``'s code, string literals and (with
    ``docstrings``) docstrings, and every import of a platform's own module."""
    text = path.read_text(encoding="utf-8") if text is None else text
    rel = path.relative_to(ROOT).as_posix() if path.is_absolute() else str(path)
    tree = ast.parse(text)
    hits = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] + [a.name for a in node.names]
        for n in names:
            if IMPORT_RE.search(n):
                hits.append(f"{rel}:{node.lineno}: imports {n}")
    docs = _docstring_lines(tree)
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            continue
        if tok.type == tokenize.STRING and tok.start[0] in docs and not docstrings:
            continue
        for offset, line in enumerate(tok.string.splitlines()):  # a multi-line string: the hit's own line
            m = KEYWORDS.search(line)
            if m:
                hits.append(f"{rel}:{tok.start[0] + offset}: {m.group(0)!r} in {line.strip()[:60]!r}")
    return hits


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "platforms" not in p.relative_to(PACKAGE).parts[:1])


def test_no_platform_knowledge_outside_platforms():
    hits = []
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        if rel in ALLOWED:
            continue
        hits += platform_hits(path, docstrings=rel not in ALLOWED_DOCSTRINGS)
    assert not hits, "platform knowledge outside zcube_deploy/platforms/:\n" + "\n".join(hits)


def test_the_allowlist_is_still_needed():
    """An allowed file that no longer names RGOS comes off the list (so the list only shrinks)."""
    clean = [rel for rel in ALLOWED if (ROOT / rel).exists() and not platform_hits(ROOT / rel)]
    assert not clean, f"no longer needed in ALLOWED: {clean}"
    clean = [rel for rel in ALLOWED_DOCSTRINGS if (ROOT / rel).exists()
             and platform_hits(ROOT / rel) == platform_hits(ROOT / rel, docstrings=False)]
    assert not clean, f"no longer needed in ALLOWED_DOCSTRINGS: {clean}"


@pytest.mark.parametrize("line, found", [
    ('LOOPBACK = "Loopback 0"\n', "Loopback"),
    ('x = f"ip route {net} {mask} {hop}"\n', "ip route"),
    ('cmds = ("show ip bgp summary",)\n', "show ip"),
    ('from zcube_deploy.platforms.ruijie_rgos.driver import RuijieRGOSDriver\n', "imports"),
    ('import napalm_ruijie_rgos\n', "imports"),
    ('name = "TwoHundredGigabitEthernet 0/1:1"\n', "GigabitEthernet"),
    ('if name.startswith("Mgmt"):\n    pass\n', "Mgmt"),
])
def test_the_grep_finds_what_it_looks_for(line, found):
    hits = platform_hits(Path("example.py"), line)
    assert hits and all(h.startswith("example.py:1:") for h in hits) and any(found in h for h in hits), hits


def test_comments_may_quote_examples_docstrings_may_not():
    text = '"""Reads lines."""\n\n\ndef f():\n    """e.g. port 0/1"""\n    return 1  # the Mgmt port, an `ip route` line\n'
    assert platform_hits(Path("example.py"), text) == []
    text = '"""Linux names for ports.\n\n>>> linux_name("TwoHundredGigabitEthernet 0/1:2", "TH0/1:2")\n"""\n'
    assert platform_hits(Path("example.py"), text) == ["example.py:3: 'HundredGigabit' in "
                                                        "'>>> linux_name(\"TwoHundredGigabitEthernet 0/1:2\", \"TH0/1:2\")'"]
    assert platform_hits(Path("example.py"), text, docstrings=False) == []


def test_an_rgos_port_put_back_in_a_docstring_is_found():
    """The twin's docstring example once named an RGOS port: put back, the seam test reports it."""
    path = PACKAGE / "twin" / "names.py"
    text = path.read_text(encoding="utf-8")
    assert platform_hits(path, text) == []
    broken = text.replace('linux_name("port 0/1:2", "p0/1:2")', 'linux_name("TwoHundredGigabitEthernet 0/1:2", "TH0/1:2")')
    assert broken != text
    hits = platform_hits(path, broken)
    assert len(hits) == 1 and hits[0].startswith("zcube_deploy/twin/names.py:") and "HundredGigabit" in hits[0], hits


def test_linux_ip_route_get_is_not_rgos():
    assert platform_hits(Path("example.py"), 'c = "ip route get 10.0.0.1"\n') == []
    assert platform_hits(Path("example.py"), 'c = "ip route 10.0.0.0 255.255.255.0 10.0.0.1"\n') != []


def test_the_platform_answers_what_the_seam_asks():
    """The platform module provides what render, the routing proof, push and verify ask of it."""
    import napalm

    from zcube_deploy.platforms import DEFAULT_PLATFORM, config_readers, napalm_driver, platform_module

    plat = platform_module(DEFAULT_PLATFORM)
    for attr in ("NAPALM_DRIVER", "CONFIG_SUFFIX", "LOOPBACK", "VERIFY_COMMANDS", "config_facts", "l3_facts", "observe",
                 "top_level_lines", "parse_config"):
        assert hasattr(plat, attr), attr
    assert napalm_driver(DEFAULT_PLATFORM) is napalm.get_network_driver(plat.NAPALM_DRIVER)
    assert config_readers()[plat.CONFIG_SUFFIX] is plat.config_facts


def test_every_config_reader_takes_an_expectation():
    """Render's self-check calls ``config_facts(text, expect=...)``: every platform's reader accepts the
    keyword (it may ignore it and read) and returns the neutral ConfigFacts."""
    import inspect

    from zcube_deploy.platforms import config_readers
    from zcube_deploy.platforms.facts import ConfigFacts

    assert config_readers()
    for suffix, reader in config_readers().items():
        params = inspect.signature(reader).parameters
        assert "expect" in params and params["expect"].default is None, (suffix, reader)
        assert isinstance(reader("hostname S1\n", expect=None), ConfigFacts)


def test_push_and_verify_refuse_a_platform_without_a_device_driver(tmp_path):
    """An frr plan renders (the twin runs it) but has no NAPALM driver: push and verify say so, exit 2."""
    from conftest import INVENTORIES, run_zcube

    inv = (INVENTORIES / "lab-64.yaml").read_text()
    inv = re.sub(r"^platform: \S+$", "platform: frr", inv, flags=re.M)
    inv = re.sub(r"^switch_model: \S+$", "switch_model: FRR-64x400G", inv, flags=re.M)
    (tmp_path / "inv.yaml").write_text(inv)
    out = tmp_path / "out"
    assert run_zcube("build", str(tmp_path / "inv.yaml"), "-o", str(out)).returncode == 0
    for args in (("push", str(out / "plan.json"), "--configs", str(out), "--dry-run"), ("verify", str(out / "plan.json"))):
        r = run_zcube(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert "platform 'frr' has no device driver" in r.stderr and "Traceback" not in r.stderr


def test_napalm_drivers_are_found_by_package_not_by_entry_points():
    """napalm.get_network_driver(name) imports the package ``napalm_<name>`` (docs/platforms.md); it reads no
    entry points, so pyproject declares none (a ``napalm.drivers`` group was dead metadata that nothing read)."""
    import importlib

    from zcube_deploy.platforms import known_platforms, platform_module

    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    groups = re.findall(r"^\[project\.entry-points\.([^\]]+)\]", text, re.M)
    # entry-point group -> the installed code that reads it (tests/test_nornir.py builds its Nornir through it)
    read_by: dict[str, str] = {'"nornir.plugins.inventory"': "nornir.core.plugins.inventory.InventoryPluginRegister"}
    assert set(groups) <= set(read_by), f"entry-point groups nothing reads: {sorted(set(groups) - set(read_by))}"
    import napalm

    for name in known_platforms():
        driver = getattr(platform_module(name), "NAPALM_DRIVER", None)
        if driver:
            package = importlib.import_module(f"napalm_{driver}")
            assert napalm.get_network_driver(driver).__name__ in package.__all__
            assert f'"napalm_{driver}"' in text, f"napalm_{driver} is not in the wheel's packages"



def private_driver_imports(paths) -> list[str]:
    """'file:line: name' for every private name (a leading underscore) imported from a platform's driver module."""
    hits = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and re.fullmatch(r"zcube_deploy\.platforms\.\w+\.driver", node.module or ""):
                hits += [f"{path.relative_to(ROOT).as_posix()}:{node.lineno}: {a.name}" for a in node.names if a.name.startswith("_")]
    return hits


def test_what_the_drivers_lend_is_public():
    """The driver's session class is what the lab's drift typing and the tests' lab sessions open: public by name
    (it was ``_RuijieSSH``, imported by lab/drift.py and conftest.py), like everything else the package and the
    shared fixtures take from a driver module."""
    paths = [p for p in PACKAGE.rglob("*.py") if p.name != "driver.py"] + [ROOT / "tests" / "conftest.py"]
    assert not private_driver_imports(paths), private_driver_imports(paths)


def test_a_private_driver_import_is_found(tmp_path, monkeypatch):
    f = tmp_path / "drift.py"
    f.write_text("def f():\n    from zcube_deploy.platforms.ruijie_rgos.driver import RuijieSSH, _RuijieSSH\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert private_driver_imports([f]) == ["drift.py:2: _RuijieSSH"]
