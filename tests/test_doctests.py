"""Every example in a docstring of the package is a test: each module whose source holds a ``>>>`` example
has its doctests run (found by reading the source, so a module that gains an example is covered without
a list to keep). ipv4 and inventory/servers have their own tests as well (test_ipv4.py, test_growth_property.py)."""

from __future__ import annotations

import doctest
import importlib

import pytest

from conftest import ROOT

PACKAGE = ROOT / "zcube_deploy"
MODULES = sorted(
    ".".join(p.relative_to(ROOT).with_suffix("").parts)
    for p in PACKAGE.rglob("*.py")
    if ">>> " in p.read_text(encoding="utf-8")
)


def test_modules_with_examples_are_found():
    """The discovery is not empty and finds the modules known to hold examples (a broken glob would pass every test below)."""
    assert {"zcube_deploy.ipv4", "zcube_deploy.errors", "zcube_deploy.safety"} <= set(MODULES), MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run_and_pass(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, f"{name}: {result}"
