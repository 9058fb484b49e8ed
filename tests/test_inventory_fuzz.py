"""Inventories as people hand-edit them, fuzzed (issue 23, item 6): hypothesis mutates a valid
inventory's YAML data (wrong types, missing and unknown keys, huge numbers, deep nesting, odd
unicode, control characters), its raw bytes (invalid UTF-8, NUL, truncation) and its servers CSV,
then runs `zcube plan` on it. Every run must end with exit 0 (a plan), 1 or 2 (a message naming
the place: a data path, or file:line), never a traceback, an internal error (exit 3) or a hang, and
a refused inventory leaves no plan.json behind.

`zcube plan` runs in-process through click's test runner (the same command function and error
handler as the console script, without a process start per example); an alarm turns a hang into a
failure.
"""

from __future__ import annotations

import copy
import csv
import io
import re
import tempfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import INVENTORIES, deadline

BASE = yaml.safe_load((INVENTORIES / "lab-64.yaml").read_text(encoding="utf-8"))
HANG_SECONDS = 60

# odd text: control characters, NUL, DEL, a line break, RGOS's '!' and '?', right-to-left and
# combining marks, zero-width space, a non-BMP emoji, format characters
ODD_CHARS = "\x00\x01\x07\x08\t\n\r\x1b\x7f!?#:{}[]&*'\"\\ \u00a0\u200b\u202e\u0301\ufeff\U0001f600\u00e9\u4e2d"
odd_text = st.text(alphabet=st.sampled_from(ODD_CHARS) | st.characters(codec="utf-8"), max_size=40)
huge = st.sampled_from([10**30, -(10**30), 2**63, 2**64 + 1, -1, 0, 10**9, 1e308, float("inf"), float("nan"), -0.0])


def nested(depth: int) -> object:
    value: object = "x"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


odd_value = st.one_of(
    st.none(), st.booleans(), st.integers(), huge, st.floats(), odd_text,
    st.lists(st.integers() | odd_text, max_size=3), st.dictionaries(odd_text, st.integers(), max_size=3),
    st.integers(min_value=40, max_value=120).map(nested),
)


def _children(node: object) -> list:
    if isinstance(node, dict):
        return list(node)
    if isinstance(node, list):
        return list(range(len(node)))
    return []


@st.composite
def mutated_inventory(draw, base: dict = BASE) -> dict:
    """``base`` with one to three mutations at places drawn by walking down from the top."""
    data = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        parent, key = None, None
        node: object = data
        while _children(node) and (parent is None or draw(st.booleans())):
            parent, key = node, draw(st.sampled_from(_children(node)))
            node = node[key]
        op = draw(st.sampled_from(["replace", "delete", "unknown key", "wrap in a list"]))
        if parent is None:
            continue
        if op == "delete" and isinstance(parent, dict):
            del parent[key]
        elif op == "unknown key" and isinstance(node, dict):
            node[draw(odd_text)] = draw(odd_value)
        elif op == "wrap in a list":
            parent[key] = [node]
        else:
            parent[key] = draw(odd_value)
    return data


def plan_and_check(inventory: Path) -> None:
    """`zcube plan INVENTORY`: exit 0 with a plan, or 1/2 with every problem at a place; nothing else."""
    from zcube_deploy.cli import cli

    out = inventory.parent / "out"
    with deadline(HANG_SECONDS, "zcube plan"):
        r = CliRunner().invoke(cli, ["plan", str(inventory), "-o", str(out)], env={"COLUMNS": "120", "NO_COLOR": "1", "ZCUBE_DEBUG": ""})
    text = r.stdout + r.stderr
    assert r.exit_code in (0, 1, 2), f"exit {r.exit_code}:\n{text[-3000:]}\n{r.exception!r}"
    assert "Traceback" not in text and "internal error" not in text, text[-3000:]
    if r.exit_code == 0:
        assert (out / "plan.json").is_file()
        return
    assert not (out / "plan.json").exists(), "a refused inventory left a plan.json"
    assert r.stderr.startswith("error: "), r.stderr[-2000:]
    places = re.findall(r"^  - (\S.*?): \S", r.stderr, re.M)  # "  - <data path, file:line or CSV line>: <what>"
    assert places, f"no problem names its place:\n{r.stderr[-2000:]}"
    title = r.stderr.splitlines()[0]
    if "inventory" in title:
        assert inventory.name in r.stderr, f"the message does not name the file:\n{r.stderr[-2000:]}"


def write_yaml(data: object, folder: Path) -> Path:
    path = folder / "inventory.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], max_examples=40)


@FUZZ
@given(mutated_inventory())
def test_mutated_yaml_inventory(data):
    with tempfile.TemporaryDirectory(prefix="zcube-fuzz-") as d:
        plan_and_check(write_yaml(data, Path(d)))


@pytest.mark.slow
@settings(FUZZ, max_examples=150)
@given(mutated_inventory())
def test_mutated_yaml_inventory_many(data):
    with tempfile.TemporaryDirectory(prefix="zcube-fuzz-") as d:
        plan_and_check(write_yaml(data, Path(d)))


RAW = (INVENTORIES / "lab-64.yaml").read_bytes()


@FUZZ
@given(st.integers(0, len(RAW)), st.binary(max_size=12) | st.sampled_from([b"\xff\xfe", b"\x00", b"\t", b"\r", b"\xc3", b"&a [*a]", b"{{{{"]),
       st.booleans())
def test_raw_bytes_inventory(at, insert, truncate):
    raw = RAW[:at] if truncate else RAW[:at] + insert + RAW[at:]
    with tempfile.TemporaryDirectory(prefix="zcube-fuzz-") as d:
        path = Path(d) / "inventory.yaml"
        path.write_bytes(raw)
        plan_and_check(path)


def _csv_inventory() -> tuple[dict, list[list[str]]]:
    """lab-64 with its eight servers in servers.csv (one MAC column) instead of the generator."""
    data = copy.deepcopy(BASE)
    del data["servers"]["generate"]
    data["servers"]["csv"] = "servers.csv"
    from zcube_deploy.catalog import load_catalog

    height = load_catalog().server_models[data["server_model"]].u_height
    rows = [["name", "rack", "u", "serial", "ens1f0np0"]]
    for n in range(8):
        rows.append([f"gpu{n + 1:02d}", ["A01", "A02"][n // 4], str(2 + (n % 4) * height), f"LAB{n + 1:04d}", f"02:00:00:00:00:{n:02x}"])
    return data, rows


CSV_DATA, CSV_ROWS = _csv_inventory()


def test_the_csv_inventory_plans():
    with tempfile.TemporaryDirectory(prefix="zcube-fuzz-") as d:
        write_csv(CSV_ROWS, Path(d))
        plan_and_check(write_yaml(CSV_DATA, Path(d)))
        assert (Path(d) / "out" / "plan.json").is_file(), "the CSV base case must be a valid inventory"


def write_csv(rows: list[list[str]], folder: Path) -> None:
    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    (folder / "servers.csv").write_text(buf.getvalue(), encoding="utf-8")


@FUZZ
@given(st.data())
def test_mutated_servers_csv(data):
    rows = copy.deepcopy(CSV_ROWS)
    for _ in range(data.draw(st.integers(1, 3))):
        op = data.draw(st.sampled_from(["cell", "drop column", "extra column", "drop row", "extra row"]))
        r = data.draw(st.integers(0, len(rows) - 1))
        if op == "cell" and rows[r]:
            rows[r][data.draw(st.integers(0, len(rows[r]) - 1))] = data.draw(odd_text | huge.map(str))
        elif op == "drop column" and rows[r]:
            del rows[r][data.draw(st.integers(0, len(rows[r]) - 1))]
        elif op == "extra column":
            rows[r].append(data.draw(odd_text))
        elif op == "drop row":
            del rows[r]
        else:
            rows.insert(r, data.draw(st.lists(odd_text, max_size=6)))
        if not rows:
            rows.append([])
    with tempfile.TemporaryDirectory(prefix="zcube-fuzz-") as d:
        write_csv(rows, Path(d))
        if data.draw(st.booleans()):  # and, sometimes, bytes that are not UTF-8
            path = Path(d) / "servers.csv"
            raw = path.read_bytes()
            at = data.draw(st.integers(0, len(raw)))
            path.write_bytes(raw[:at] + data.draw(st.sampled_from([b"\xff", b"\x00", b"\xc3("])) + raw[at:])
        plan_and_check(write_yaml(CSV_DATA, Path(d)))


# Known-bad cases found by this fuzzing: each ended in an internal error (exit 3) before the fix.
FOUND = {
    "not UTF-8": b"cluster: \"\xff\xfe\"\n",
    "nested beyond the YAML reader": b"description: " + b"[" * 3000 + b"]" * 3000 + b"\n",
}
# The reader's limits, refused up front with the place (each case fails its message when the guard goes).
GUARDED = {
    "nested beyond the checks": (b"description: " + b"[" * 200 + b"]" * 200 + b"\n", "nested more than 64 levels deep"),
    "an alias inside its own anchor": (b"description: &a [*a]\n", "refers to itself"),
    "a billion laughs": (b"x0: &x0 [a,a,a,a,a,a,a,a,a,a]\n" + b"".join(
        f"x{i}: &x{i} [{','.join([f'*x{i - 1}'] * 10)}]\n".encode() for i in range(1, 10)), "holds more than 2,000,000 values"),
}
RAW_NO_DESCRIPTION = re.sub(rb"^description:.*\n", b"", RAW, flags=re.M)


@pytest.mark.parametrize("case", FOUND)
def test_found_cases(case, tmp_path):
    path = tmp_path / "inventory.yaml"
    path.write_bytes(FOUND[case] + RAW_NO_DESCRIPTION)
    plan_and_check(path)


@pytest.mark.parametrize("case", GUARDED)
def test_the_readers_limits(case, tmp_path):
    path = tmp_path / "inventory.yaml"
    path.write_bytes(GUARDED[case][0] + RAW_NO_DESCRIPTION)
    plan_and_check(path)
    from zcube_deploy.errors import InputErrors
    from zcube_deploy.inventory import load_inventory

    with pytest.raises(InputErrors, match=re.escape(GUARDED[case][1])):
        load_inventory(path)


def test_found_csv_not_utf8(tmp_path):
    write_csv(CSV_ROWS, tmp_path)
    (tmp_path / "servers.csv").write_bytes((tmp_path / "servers.csv").read_bytes() + b"gpu09,A01,30,\xff\n")
    plan_and_check(write_yaml(CSV_DATA, tmp_path))
