"""topology/forwarding.py is the one interface to a plan's forwarding state: consumers ask it
(switch_tables, pinned_tables, host_tables, reconverges) instead of reading the static routes
(``switches[].routes``, ``nics[].routes``) themselves; only the code that renders, parses or counts
route CONFIG lines reads a ``routes`` field, and each such file is listed below with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from zcube_deploy.topology.forwarding import (SOURCE_FALLBACK, SOURCE_STATIC, host_tables, pinned_tables,
                                              reconverges, switch_tables)

PACKAGE = Path(__file__).resolve().parents[1] / "zcube_deploy"

# file -> why it may read a "routes" field (config lines, or something that is not the plan's forwarding state)
ALLOWED = {
    "topology/forwarding.py": "the interface itself",
    "plan/consistency.py": "checks a plan file's integrity on read (each host route names a port of its server), not forwarding",
    "plan/build.py": "the summary's count of configured static route lines (a config count)",
    "render/views.py": "renders the static-route config lines and netplan routes",
    "render/selfcheck.py": "checks the rendered route lines against the plan's (config)",
    "render/routing_proof.py": "reads the rendered configs' and netplan files' routes, not the plan",
    "platforms/frr/__init__.py": "renders FRR's static-route config lines",
    "push/guard.py": "a device's routing table before and after a push (management routes)",
    "twin/hostfiles.py": "validates rendered netplan files",
    "expand/growth.py": "compares the old and grown plans' route rows (every existing route kept), not forwarding",
    "migrate/stageplan.py": "copies a stage's static route rows (those through its links) and counts them, not forwarding",
    "drain/twin.py": "the prefixes a twin switch's BGP learned from a neighbour (FRR's JSON `routes`), not the plan",
}


def routes_reads(tree: ast.AST) -> list[int]:
    """Lines that read a "routes" field: x["routes"] (not as an assignment target) or x.get("routes")."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            key = node.slice
            if isinstance(key, ast.Constant) and key.value == "routes":
                lines.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "routes"):
            lines.append(node.lineno)
    return lines


def scan(root: Path) -> dict[str, list[int]]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        lines = routes_reads(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            out[path.relative_to(root).as_posix()] = lines
    return out


def test_the_scan_finds_reads():
    src = 'a = sw["routes"]\nb = nic.get("routes", ())\nc = {"routes": []}\nd["routes"] = []\n'
    assert routes_reads(ast.parse(src)) == [1, 2]


def test_consumers_ask_the_forwarding_interface():
    found = scan(PACKAGE)
    offenders = {f: lines for f, lines in found.items() if f not in ALLOWED}
    assert not offenders, f"read the forwarding state through topology/forwarding.py instead: {offenders}"
    stale = sorted(set(ALLOWED) - set(found))
    assert not stale, f"allowed files that no longer read routes (drop them from ALLOWED): {stale}"


def test_consumers_of_forwarding_state_are_not_allowed():
    """The analysis and the twin must never join the allowlist."""
    for f in ALLOWED:
        assert not f.startswith(("analysis/", "twin/build")), f


# ---------------------------------------------------------------- the interface's behaviour
def test_static_tables(lab64_plan):
    routing = lab64_plan["routing"]
    assert routing["mode"] == "static" and not reconverges(routing)
    tables = switch_tables(routing, lab64_plan["switches"])
    assert pinned_tables(routing, lab64_plan["switches"]) == tables
    for sw in lab64_plan["switches"]:
        want = [(r["prefix"], r["next_hop"], bool(r.get("fallback"))) for r in sw["routes"]]
        got = [(e.prefix, ".".join(str(e.next_hops[0] >> s & 255) for s in (24, 16, 8, 0)), e.source == SOURCE_FALLBACK)
               for e in tables[sw["name"]]]
        assert got == want
        assert {e.source for e in tables[sw["name"]]} <= {SOURCE_STATIC, SOURCE_FALLBACK}
    assert any(e.source == SOURCE_FALLBACK for rows in tables.values() for e in rows)  # same_group_fallback is on


def test_bgp_reconverges_and_pins_nothing(lab64_plan):
    switches = lab64_plan["switches"]
    routing = {"mode": "bgp"}
    assert reconverges(routing)
    assert pinned_tables(routing, switches) == {s["name"]: [] for s in switches}


def test_unknown_kind():
    with pytest.raises(ValueError, match="ospf"):
        reconverges({"mode": "ospf"})


def test_host_tables_carry_the_device(lab64_plan):
    srv = lab64_plan["servers"][0]
    tables = host_tables({srv["name"]: srv["nics"]})
    for nic in srv["nics"]:
        rows = tables[(srv["name"], nic["port"])]
        assert [r[4] for r in rows] == [r.get("dev", nic["port"]) for r in nic["routes"]]
        assert [r[3] for r in rows] == [r["metric"] for r in nic["routes"]]
    assert any(r[4] != port for (_, port), rows in tables.items() for r in rows)  # the other-port fallback


def test_analysis_has_no_routing_mode_branches():
    """The analysis asks reconverges() (the failure behaviour) and entries' sources, never compares
    a routing mode name itself."""
    kinds = {"static", "bgp"}
    found = []
    for path in sorted((PACKAGE / "analysis").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                consts = [c for c in [node.left, *node.comparators] if isinstance(c, ast.Constant)]
                consts += [e for c in node.comparators if isinstance(c, (ast.Tuple, ast.Set, ast.List)) for e in c.elts
                           if isinstance(e, ast.Constant)]
                if any(c.value in kinds for c in consts):
                    found.append(f"{path.name}:{node.lineno}")
    assert not found
