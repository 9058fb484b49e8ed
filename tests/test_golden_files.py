"""Golden files hold no volatile values, and the comparison masks only those."""
from __future__ import annotations

import re

from conftest import GOLDEN, normalise_volatile

HEADER = "! zcube-deploy 0.1.0 | cluster lab64 | inventory sha256 4e8eb4f2ba8cae77\nhostname ZC-E002\n"


def test_header_version_and_hash_are_masked():
    bumped = HEADER.replace("0.1.0", "0.2.0").replace("4e8eb4f2ba8cae77", "0123456789abcdef")
    assert normalise_volatile(HEADER) == normalise_volatile(bumped)
    assert "<version>" in normalise_volatile(HEADER) and "<sha256>" in normalise_volatile(HEADER)


def test_plan_json_hashes_and_version_are_masked():
    a = '"inputs":{"catalog_sha256":"f206d2ee","inventory_sha256":"4e8eb4f2"},\n"tool_version":"0.1.0"\n'
    b = '"inputs":{"catalog_sha256":"aaaaaaaa","inventory_sha256":"bbbbbbbb"},\n"tool_version":"9.9.9"\n'
    assert normalise_volatile(a) == normalise_volatile(b)


def test_everything_else_still_counts():
    # a real output change next to the masked values is not hidden
    assert normalise_volatile(HEADER) != normalise_volatile(HEADER.replace("lab64", "lab65"))
    assert normalise_volatile(HEADER) != normalise_volatile(HEADER.replace("ZC-E002", "ZC-E004"))
    # addresses that look like a version (10.0.1.0) are not touched
    route = "ip route 10.0.1.0 255.255.255.240 10.200.1.0\n"
    assert normalise_volatile(route) == route
    a = '"inputs":{"inventory":"inventories/lab-64.yaml"}'
    assert normalise_volatile(a) != normalise_volatile(a.replace("lab-64", "lab-65"))


def test_no_golden_file_holds_a_volatile_value():
    volatile = re.compile(r"inventory sha256 [0-9a-f]|_sha256\":\s*\"[0-9a-f]|\"tool_version\":\s*\"\d|zcube-deploy \d|tool \d")
    found = []
    for path in sorted(GOLDEN.rglob("*")):
        if path.is_file():
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if volatile.search(line):
                    found.append(f"{path.relative_to(GOLDEN)}:{n}: {line[:100]}")
    assert not found, "golden files must hold placeholders (conftest.normalise_volatile):\n" + "\n".join(found[:20])
