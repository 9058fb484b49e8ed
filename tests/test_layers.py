"""The layers of docs/layout.md, enforced: every import of the package, at the top of a module or
inside a function, runs down the layers or stays inside its own unit (issue 24, item 1).

A unit is one top-level module or subpackage of zcube_deploy (``plan``, ``safety.py``), one platform
package (``platforms.<name>``) or one platform's simulated switch (``platforms.<name>.lab``). A unit
may import itself and any unit of a LOWER layer; an import of a unit of a higher layer (up) or of
another unit of the same layer (sideways) fails, wherever it is written. Imports are read with
``ast`` (``import a.b``, ``from a import b`` with ``b`` a module or a name, relative imports,
imports under ``if TYPE_CHECKING:`` and in functions alike). The one dynamic import is the platform
registry's (``platforms.platform_module``): a test below keeps it the only one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from zcube_deploy.platform_data import known_platforms

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("zcube_deploy", "napalm_ruijie_rgos")

# Bottom up (docs/layout.md draws it). Names are relative to zcube_deploy; "" is its __init__ (the
# Python API); "platforms.*" is one unit per platform (a folder named by platform_data.known_platforms),
# "platforms.*.lab" its simulated switch; "platforms" is the registry with facts.py and contract.py.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("errors", "vocabulary", "ipv4", "perf", "resources", "version", "platform_data", "outdir")),
    ("base", ("safety", "xlsx", "templating")),
    ("models", ("catalog", "topology")),
    ("platform registry", ("platforms",)),
    ("platform packages", ("platforms.*",)),
    ("platform simulators", ("platforms.*.lab",)),
    ("inventory", ("inventory",)),
    ("plan", ("plan",)),
    ("designs", ("designs",)),
    ("outputs", ("render", "cabling", "analysis")),
    ("studies", ("hall", "traffic", "migrate")),
    ("device access", ("access", "napalm_ruijie_rgos")),
    ("devices", ("lab", "push", "verify", "twin")),
    ("operations", ("drain", "expand")),
    ("replacement", ("replace",)),
    ("workflow", ("workflow", "nornir", "audit")),
    ("api", ("", "demo")),
    ("cli", ("cli",)),
    ("entry", ("__main__",)),
)

# (importer module, imported module) -> why it may still run against the layers. Empty: every import
# follows them (test_the_allowlist_is_empty); an entry would be a debt with a reason.
ALLOWED: dict[tuple[str, str], str] = {}


def unit_of(module: str, platforms: frozenset[str] = frozenset(known_platforms())) -> tuple[str, int] | None:
    """(unit, layer index) of a module name such as ``zcube_deploy.plan.io``; None outside the layers."""
    parts = module.split(".")
    if parts[0] == "napalm_ruijie_rgos":
        return _placed("napalm_ruijie_rgos")
    if parts[0] != "zcube_deploy":
        return None
    rest = parts[1:]
    if rest[:1] == ["platforms"] and len(rest) >= 2 and rest[1] in platforms:
        if len(rest) >= 3 and rest[2] == "lab":
            return f"platforms.{rest[1]}.lab", _layer_of("platforms.*.lab")
        return f"platforms.{rest[1]}", _layer_of("platforms.*")
    return _placed(rest[0] if rest else "")


def _layer_of(pattern: str) -> int:
    for i, (_, units) in enumerate(LAYERS):
        if pattern in units:
            return i
    raise KeyError(pattern)


def _placed(unit: str) -> tuple[str, int] | None:
    try:
        return unit, _layer_of(unit)
    except KeyError:
        return None


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str, root: Path) -> bool:
    base = root.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or base.is_dir()  # a package, or a folder without __init__.py (lab/)


def imports_of(module: str, source: str, is_package: bool, root: Path = ROOT) -> list[tuple[str, int]]:
    """(imported module, line) of every import in ``source``, wherever it is written; ``from a import b``
    counts as a.b when that is a module (file under ``root``), else as a."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = [f"{target}.{a.name}" for a in node.names if _is_module(f"{target}.{a.name}", root)]
            out += [(s, node.lineno) for s in subs] or [(target, node.lineno)]
    return out


def violations(sources: dict[str, tuple[str, bool]], root: Path = ROOT, allowed=None) -> list[str]:
    """Every import of ``sources`` ({module: (text, is a package)}) that runs up or sideways."""
    allowed = ALLOWED if allowed is None else allowed
    bad = []
    for module, (text, is_package) in sorted(sources.items()):
        me = unit_of(module)
        if me is None:
            bad.append(f"{module}: in no layer (place its unit in LAYERS and docs/layout.md)")
            continue
        for target, line in imports_of(module, text, is_package, root):
            it = unit_of(target)
            if it is None or it[0] == me[0] or (module, target) in allowed:
                continue
            if it[1] >= me[1]:
                way = "up" if it[1] > me[1] else "sideways"
                bad.append(f"{module}:{line} imports {target}: {way}, from {me[0]} ({LAYERS[me[1]][0]}) "
                           f"to {it[0]} ({LAYERS[it[1]][0]})")
    return bad


def tree_sources(root: Path = ROOT) -> dict[str, tuple[str, bool]]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            out[module_name(path, root)] = (path.read_text(encoding="utf-8"), path.name == "__init__.py")
    return out


def test_every_import_follows_the_layers():
    bad = violations(tree_sources())
    assert not bad, "imports against the layers of docs/layout.md:\n" + "\n".join(bad)


def test_the_allowlist_holds_only_imports_that_exist():
    """An allowed import that is gone (or no longer runs against the layers) comes off the list."""
    sources = tree_sources()
    for (module, target), why in ALLOWED.items():
        found = module in sources and any(t == target for t, _ in imports_of(module, *sources[module]))
        assert found and violations({module: sources[module]}, allowed={}), f"no longer needed: {module} -> {target} ({why})"


def test_the_allowlist_is_empty():
    assert ALLOWED == {}, "every import follows the layers: no allowance left"


def test_every_unit_is_placed_once_and_exists():
    seen = [u for _, units in LAYERS for u in units]
    assert len(seen) == len(set(seen))
    for unit in seen:
        if unit in ("", "platforms.*", "platforms.*.lab", "napalm_ruijie_rgos"):
            continue
        assert _is_module(f"zcube_deploy.{unit}", ROOT), f"LAYERS names {unit}, which is no module of zcube_deploy"


def test_the_registry_is_the_only_dynamic_import():
    """importlib.import_module / __import__ of a zcube_deploy module happens only in the platform registry,
    so the ast reading above sees every other dependency."""
    hits = []
    for module, (text, _) in tree_sources().items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if name in ("import_module", "__import__"):
                    arg = node.args[0] if node.args else None
                    literal = isinstance(arg, ast.Constant) and isinstance(arg.value, str) and not arg.value.startswith("zcube_deploy")
                    if not literal:
                        hits.append(f"{module}:{node.lineno}")
    assert hits == ["zcube_deploy.platforms:" + str(_registry_line())], hits


def _registry_line() -> int:
    text = (ROOT / "zcube_deploy" / "platforms" / "__init__.py").read_text(encoding="utf-8")
    return next(i for i, line in enumerate(text.splitlines(), 1) if "import_module(" in line)


# ---------------------------------------------------------------- the checker itself (known-bad cases)
@pytest.mark.parametrize("module, text, is_package, found", [
    # the issue's own case: forwarding reaching up into the planner inside a function
    ("zcube_deploy.topology.forwarding", "def f():\n    from zcube_deploy.plan.ipam import next_pow2\n", False,
     "zcube_deploy.topology.forwarding:2 imports zcube_deploy.plan.ipam: up"),
    ("zcube_deploy.safety", "import zcube_deploy.platforms\n", False, "imports zcube_deploy.platforms: up"),
    ("zcube_deploy.verify.bgp", "from zcube_deploy.push import Credentials\n", False, "imports zcube_deploy.push: sideways"),
    ("zcube_deploy.render.views", "from zcube_deploy import hall\n", False, "imports zcube_deploy.hall: up"),
    ("zcube_deploy.platforms.ruijie_rgos.fastparse", "from zcube_deploy.platforms.ruijie_rgos.lab.bgp import parse_config\n",
     False, "imports zcube_deploy.platforms.ruijie_rgos.lab.bgp: up"),
    ("zcube_deploy.platforms.frr", "from ..ruijie_rgos import names\n", True, "imports zcube_deploy.platforms.ruijie_rgos.names: sideways"),
    ("zcube_deploy.catalog", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from zcube_deploy.inventory import Inventory\n",
     True, "imports zcube_deploy.inventory: up"),
    ("zcube_deploy.newthing", "import json\n", False, "in no layer"),
])
def test_the_checker_finds_an_import_against_the_layers(module, text, is_package, found):
    bad = violations({module: (text, is_package)}, allowed={})
    assert any(found in b for b in bad), bad


@pytest.mark.parametrize("module, text, is_package", [
    ("zcube_deploy.plan.io", "from zcube_deploy.errors import Problem\nfrom . import model\n", False),
    ("zcube_deploy.cli.plan", "def f():\n    from zcube_deploy.workflow import plan_inventory\n", False),
    ("zcube_deploy.platforms.ruijie_rgos.lab.shell", "from zcube_deploy.platforms.ruijie_rgos.names import short_name\n", False),
    ("zcube_deploy.platforms.frr", "from zcube_deploy.platforms.facts import ConfigFacts\nimport yaml\n", True),
])
def test_the_checker_passes_imports_down_or_within_a_unit(module, text, is_package):
    assert violations({module: (text, is_package)}, allowed={}) == []


def test_an_upward_import_added_to_a_copy_of_a_module_fails(tmp_path):
    """The whole path (files on disk, module names, relative imports): a copy of the tree's topology
    package with one lazy upward import added is caught, the untouched copy is not."""
    pkg = tmp_path / "zcube_deploy"
    (pkg / "topology").mkdir(parents=True)
    (pkg / "plan").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "plan" / "__init__.py").write_text("")
    (pkg / "plan" / "ipam.py").write_text("def next_pow2(n):\n    return n\n")
    (pkg / "topology" / "__init__.py").write_text("")
    src = (ROOT / "zcube_deploy" / "topology" / "sizing.py").read_text(encoding="utf-8")
    (pkg / "topology" / "sizing.py").write_text(src)
    assert violations(_sources(tmp_path), root=tmp_path, allowed={}) == []
    (pkg / "topology" / "sizing.py").write_text(src + "\n\ndef _later():\n    from ..plan import ipam\n    return ipam\n")
    bad = violations(_sources(tmp_path), root=tmp_path, allowed={})
    assert len(bad) == 1 and "zcube_deploy.topology.sizing" in bad[0] and "zcube_deploy.plan.ipam: up" in bad[0], bad


def _sources(root: Path) -> dict[str, tuple[str, bool]]:
    return {module_name(p, root): (p.read_text(), p.name == "__init__.py") for p in (root / "zcube_deploy").rglob("*.py")}


# ---------------------------------------------------------------- the parent-package trap
def package_init_violations(text: str) -> list[str]:
    """zcube_deploy/__init__.py runs before every module of the package (a parent package is imported
    first), which the per-import reading above does not count: at module level it may import the
    core layer only (docs/layout.md)."""
    top = "\n".join(ast.unparse(n) for n in ast.parse(text).body if isinstance(n, (ast.Import, ast.ImportFrom)))
    out = []
    for target, _ in imports_of("zcube_deploy", top, True):
        it = unit_of(target)
        if it is not None and it[1] > 0:
            out.append(f"zcube_deploy/__init__.py imports {target} ({LAYERS[it[1]][0]}) at module level")
    return out


def test_the_package_init_imports_only_the_core_at_module_level():
    assert package_init_violations((ROOT / "zcube_deploy" / "__init__.py").read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("text", ["from zcube_deploy.plan import build_plan\n", "import zcube_deploy.workflow\n",
                                  "from zcube_deploy import safety\n"])
def test_the_package_init_check_finds_a_heavy_import(text):
    assert package_init_violations("from zcube_deploy.version import __version__\n" + text)
