"""Hand-edited plan.json and rendered configs, fuzzed: every command that reads them ends 0, 1 or 2.

Each example mutates lab-64's plan.json (deletes a value, duplicates a row, gives a value the wrong
type, a huge number or a deep nesting, points a reference at another device, port or id, flips
the routing mode) and runs the commands that read a plan, in process through the CLI's own entry
point: render, check-routing (of what render wrote), cabling, hall, analyze, diff, verify
(offline) and push --dry-run. Expected: exit 0, 1 or 2 (an input error names the file and the
place), never exit 3 (the CLI's "internal error"), an uncaught exception, a hang, or an output
left that looks complete after a failure (render: no manifest, no files; analyze: no
analyze.json). A second property feeds hand-edited rendered configs to check-routing.

The default run keeps to a few dozen examples; the ``slow`` ones run many more (--run-slow).
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import shutil
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conftest import deadline, run_zcube
from zcube_deploy.cli import cli
from zcube_deploy.plan.io import wiring_identity_of, write_canonical

DEEP = "__deep_nesting__"
HUGE = "__huge_number__"
ODD_VALUES = [None, True, False, 0, -1, 1, 2**63, 2**70, -(2**70), 1e308, -0.5, "", "x", "ZC-O001", "10.0.0.1", "999.1.1.1",
              [], {}, [1, 2], {"a": 1}, "é\u2028", DEEP, HUGE, 10**300]
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)  # a failing example is reported as drawn (shrinking a plan takes minutes)
SECTIONS_HINT = ("switches", "servers", "cables", "routing", "counts", "sizing", "port_map", "models", "settings", "cluster")


# ---------------------------------------------------------------- mutations
def _strings(doc, out: set) -> set:
    if isinstance(doc, str):
        out.add(doc)
    elif isinstance(doc, dict):
        for v in doc.values():
            _strings(v, out)
    elif isinstance(doc, list):
        for v in doc[:40]:
            _strings(v, out)
    return out


def _walk(data, doc) -> tuple[object, object]:
    """A random (container, key) in ``doc``: a walk from the top, stopping at each level with some chance."""
    parent, key = None, None
    node = doc
    depth = 0
    while isinstance(node, (dict, list)) and node:
        keys = sorted(node) if isinstance(node, dict) else range(len(node))
        if depth == 0 and data.draw(st.booleans(), label="favour a section with references"):
            keys = [k for k in SECTIONS_HINT if k in node] or list(keys)
        keys = list(keys)
        k = keys[data.draw(st.integers(0, len(keys) - 1), label="key")]
        parent, key, node = node, k, node[k]
        depth += 1
        if depth > 1 and data.draw(st.integers(0, 3), label="stop here") == 0:
            break
    return parent, key


def mutate(data, doc: dict, pool: list[str]) -> list[str]:
    """Apply 1-3 random edits to ``doc`` in place; a description of each (for the failure report)."""
    done = []
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        parent, key = _walk(data, doc)
        if parent is None:
            continue
        op = data.draw(st.sampled_from(["delete", "duplicate", "retype", "reference", "number", "mode"]), label="op")
        if op == "mode":
            doc["routing"]["mode"] = "bgp" if doc.get("routing", {}).get("mode") == "static" else "static"
        elif op == "delete":
            del parent[key]
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif op == "reference" and isinstance(parent[key], str):
            parent[key] = pool[data.draw(st.integers(0, len(pool) - 1), label="string")]
        elif op == "number" and isinstance(parent[key], (int, float)) and not isinstance(parent[key], bool):
            parent[key] = parent[key] + data.draw(st.sampled_from([1, -1, 7, -1000, 2**40]), label="delta")
        else:
            op = "retype"
            parent[key] = data.draw(st.sampled_from(ODD_VALUES), label="value")
        done.append(f"{op} {key!r}")
    return done


def write_plan_file(data, doc: dict, path: Path) -> None:
    """The canonical layout (the commands' fast, selective read) or an indented one (the whole read)."""
    if data.draw(st.booleans(), label="canonical layout"):
        write_canonical(doc, path)
    else:
        path.write_text(json.dumps(doc, indent=1))
    text = path.read_text()
    if DEEP in text or HUGE in text:
        path.write_text(text.replace(f'"{DEEP}"', "[" * 5000 + "]" * 5000).replace(f'"{HUGE}"', "1" + "0" * 5000))


# ---------------------------------------------------------------- running commands
def invoke(*args: str) -> tuple[int, str]:
    with deadline(120):
        r = CliRunner().invoke(cli, list(args), catch_exceptions=True)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise AssertionError(f"zcube {' '.join(args)}: uncaught {type(r.exception).__name__}: {r.exception}") from r.exception
    assert r.exit_code in (0, 1, 2), f"zcube {' '.join(args)}: exit {r.exit_code}\n{r.output[-2000:]}"
    return r.exit_code, r.output


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now: a connection is refused at once
    return port


@pytest.fixture(scope="module")
def base(lab64_build, tmp_path_factory):
    """lab-64's plan and rendered files, an empty recording folder and a lab.json whose switches refuse connections."""
    root = tmp_path_factory.mktemp("fuzz-base")
    doc = json.loads((lab64_build / "plan.json").read_text())
    port = _closed_port()
    (root / "lab.json").write_text(json.dumps({"switches": {s["name"]: {"host": "127.0.0.1", "port": port} for s in doc["switches"]},
                                               "plan": wiring_identity_of(lab64_build / "plan.json")}))  # the lab of lab-64, not running
    (root / "recordings").mkdir()
    return {"doc": doc, "dir": lab64_build, "root": root, "pool": sorted(_strings(doc, set()))}


def _no_output(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def run_all(base: dict, plan: Path, tmp: Path) -> dict[str, int]:
    """Every command that reads a plan, on ``plan``; their exit codes (each already checked to be 0, 1 or 2)."""
    rc: dict[str, int] = {}
    out = tmp / "render"
    rc["render"], text = invoke("render", str(plan), "-o", str(out))
    if rc["render"] == 0:
        manifest = json.loads((out / "manifest.json").read_text())
        for rel, sha in manifest["files"].items():
            assert hashlib.sha256((out / rel).read_bytes()).hexdigest() == sha, rel
        rc["check-routing"], _ = invoke("check-routing", str(out))
    else:
        assert _no_output(out) == [], f"render failed (exit {rc['render']}) but left files:\n{text[-1500:]}"
    rc["cabling"], _ = invoke("cabling", str(plan), "-o", str(tmp / "cabling"))
    rc["hall"], _ = invoke("hall", str(plan), "-o", str(tmp / "hall"))
    rc["analyze"], text = invoke("analyze", str(plan), "-o", str(tmp / "analyze"), "--samples", "2", "--probabilities", "0.01")
    if rc["analyze"] != 0:
        assert not (tmp / "analyze" / "analyze.json").exists(), text[-1500:]
    rc["diff"], _ = invoke("diff", str(base["dir"] / "plan.json"), str(plan), "--fail-on", "none")
    rc["verify"], _ = invoke("verify", str(plan), "--from", str(base["root"] / "recordings"), "-o", str(tmp / "verify"))
    rc["push"], _ = invoke("push", str(plan), "--configs", str(base["dir"]), "--dry-run", "--lab", str(base["root"] / "lab.json"),
                           "--timeout", "2")
    return rc


def _run_edited(edits: list[str], tmp: Path, run) -> None:
    """``run()``, its failure naming the edits that led to it; ``tmp`` removed either way."""
    try:
        run()
    except AssertionError as exc:
        raise AssertionError(f"after the edits {edits}: {exc}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _fuzz_plan(base, tmp_path_factory, data) -> None:
    doc = copy.deepcopy(base["doc"])
    edits = mutate(data, doc, base["pool"])
    tmp = tmp_path_factory.mktemp("fuzz")
    plan = tmp / "plan.json"
    write_plan_file(data, doc, plan)
    _run_edited(edits, tmp, lambda: run_all(base, plan, tmp))


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), phases=NO_SHRINK, derandomize=True)
@given(data=st.data())
def test_mutated_plans_end_0_1_or_2(base, tmp_path_factory, data):
    _fuzz_plan(base, tmp_path_factory, data)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), phases=NO_SHRINK)  # ~4 s each: CI stays under 30 min
@given(data=st.data())
def test_mutated_plans_end_0_1_or_2_many(base, tmp_path_factory, data):
    _fuzz_plan(base, tmp_path_factory, data)


# ---------------------------------------------------------------- hand-edited configs into check-routing
def _edit_configs(data, folder: Path) -> list[str]:
    files = sorted((folder / "configs").glob("*.cfg")) + sorted((folder / "hosts").glob("*.yaml"))
    done = []
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        f = files[data.draw(st.integers(0, len(files) - 1), label="file")]
        lines = f.read_text(encoding="utf-8", errors="replace").splitlines(True)
        if not lines:
            continue
        i = data.draw(st.integers(0, len(lines) - 1), label="line")
        op = data.draw(st.sampled_from(["delete", "duplicate", "garble", "junk", "truncate", "binary"]), label="op")
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "garble":
            rng = random.Random(data.draw(st.integers(0, 2**32), label="seed"))
            chars = list(lines[i])
            for _ in range(3):
                if chars:
                    chars[rng.randrange(len(chars))] = rng.choice("9.:/ -x\t{}[]\x1b\x00")
            lines[i] = "".join(chars)
        elif op == "junk":
            lines.insert(i, data.draw(st.sampled_from(["ip route 999.0.0.0 255.255.255.0 10.0.0.1\n", "interface\n", " ip address\n",
                                                       "router bgp x\n", "      - to: 10.0.0.0/99\n", "    ens1: [\n", "\x1b[2Khostname x\n",
                                                       "ip route 10.0.0.0 255.255.0.255 10.0.0.1\n"]), label="junk"))
        elif op == "truncate":
            lines = lines[:i]
        else:
            f.write_bytes(b"\xff\xfe" + "".join(lines).encode()[:200])
            done.append(f"{op} {f.name}")
            continue
        f.write_text("".join(lines), encoding="utf-8")
        done.append(f"{op} {f.name}:{i + 1}")
    return done


def _fuzz_configs(base, tmp_path_factory, data) -> None:
    tmp = tmp_path_factory.mktemp("fuzz-cfg")
    shutil.copytree(base["dir"] / "configs", tmp / "configs")
    shutil.copytree(base["dir"] / "hosts", tmp / "hosts")
    edits = _edit_configs(data, tmp)
    _run_edited(edits, tmp, lambda: invoke("check-routing", str(tmp)))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), phases=NO_SHRINK, derandomize=True)
@given(data=st.data())
def test_hand_edited_configs_into_check_routing(base, tmp_path_factory, data):
    _fuzz_configs(base, tmp_path_factory, data)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), phases=NO_SHRINK)
@given(data=st.data())
def test_hand_edited_configs_into_check_routing_many(base, tmp_path_factory, data):
    _fuzz_configs(base, tmp_path_factory, data)


# ---------------------------------------------------------------- the cases issue 23 found, as a user runs them
def _edited(base, tmp: Path, edit) -> Path:
    doc = copy.deepcopy(base["doc"])
    edit(doc)
    write_canonical(doc, tmp / "plan.json")
    return tmp / "plan.json"


CASES = {
    "a cable to a device not in the plan": (lambda d: d["cables"][3]["b"].update(device="ZC-NOPE"), "cables[3].b.device",
                                            ["cabling", "hall", "analyze", "verify", "diff"]),
    "a cable to a port the switch lacks": (lambda d: d["cables"][3]["b"].update(port="HundredGigabitEthernet 0/99:9"), "cables[3].b.port",
                                           ["analyze", "verify", "diff"]),
    "a duplicated cable id": (lambda d: d["cables"][5].update(id=d["cables"][4]["id"]), "cables[5].id",
                              ["cabling", "hall", "analyze", "verify", "diff"]),
    "a switch without its interfaces": (lambda d: d["switches"][2].update(interfaces=[]), ("switches[2].interfaces", "has no interface"),
                                        ["render", "analyze", "verify", "diff", "push"]),
    "mode bgp without the BGP data": (lambda d: d["routing"].update(mode="bgp"), "routing.asn_last", ["render", "analyze", "verify", "diff"]),
    "a duplicated switch name": (lambda d: d["switches"][2].update(name=d["switches"][1]["name"]), "switches[2].name",
                                 ["render", "cabling", "hall", "analyze", "verify", "diff", "push"]),
    "a NIC route leaving on another server's port": (lambda d: d["servers"][0]["nics"][0]["routes"][0].update(dev="eth9"),
                                                     "servers[0].nics[0].routes[0].dev", ["render", "analyze", "diff"]),
}


def _args(cmd: str, plan: Path, base: dict, tmp: Path) -> list[str]:
    return {"render": ["render", str(plan), "-o", str(tmp / "r")], "cabling": ["cabling", str(plan), "-o", str(tmp / "c")],
            "hall": ["hall", str(plan), "-o", str(tmp / "h")], "analyze": ["analyze", str(plan), "-o", str(tmp / "a"), "--samples", "2"],
            "verify": ["verify", str(plan), "--from", str(base["root"] / "recordings"), "-o", str(tmp / "v")],
            "diff": ["diff", str(base["dir"] / "plan.json"), str(plan)],
            "push": ["push", str(plan), "--configs", str(base["dir"]), "--dry-run", "--lab", str(base["root"] / "lab.json")]}[cmd]


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_inconsistent_plan_is_refused_with_its_data_path(base, tmp_path, case):
    """Each command that reads the disagreeing part refuses the plan with exit 2 before writing anything,
    naming the file and the data path (it was a KeyError, an AssertionError or a half-written render)."""
    edit, where, commands = CASES[case]
    plan = _edited(base, tmp_path, edit)
    for cmd in commands:
        code, text = invoke(*_args(cmd, plan, base, tmp_path))
        assert code == 2, f"{cmd}: exit {code}\n{text[-1500:]}"
        assert f"{plan}: not a consistent plan" in text, f"{cmd}:\n{text[-1500:]}"
        assert any(w in text for w in ((where,) if isinstance(where, str) else where)), f"{cmd}:\n{text[-1500:]}"
        assert _no_output(tmp_path / "r") == [] and not (tmp_path / "a" / "analyze.json").exists()


def test_render_of_mode_bgp_without_bgp_data_writes_nothing_as_a_user_runs_it(base, tmp_path):
    """Issue 23: `render` of a plan edited to mode bgp left 16 configs with `router bgp None` and a manifest."""
    plan = _edited(base, tmp_path, lambda d: d["routing"].update(mode="bgp"))
    r = run_zcube("render", str(plan), "-o", str(tmp_path / "out"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "routing.asn_last: missing (null) in mode bgp" in r.stderr + r.stdout and "Traceback" not in r.stderr
    assert _no_output(tmp_path / "out") == []


def test_a_failed_rerender_leaves_the_previous_render_as_it_was(base, tmp_path, monkeypatch):
    """A render that fails after every file was rendered (here the self-check of the last switch finds a
    mismatch) into a folder holding an earlier render leaves that render's files and manifest exactly as
    they were, though the new files differ (another MTU) and no stage folder behind."""
    import zcube_deploy.render as render

    shutil.copytree(base["dir"] / "configs", tmp_path / "out" / "configs")
    shutil.copytree(base["dir"] / "hosts", tmp_path / "out" / "hosts")
    shutil.copy(base["dir"] / "manifest.json", tmp_path / "out" / "manifest.json")
    before = {str(p.relative_to(tmp_path / "out")): p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    plan = _edited(base, tmp_path, lambda d: d["settings"].update(mtu=d["settings"]["mtu"] - 100, switch_mtu=d["settings"]["switch_mtu"] - 100))
    last = base["doc"]["switches"][-1]["name"]
    real = render.check_switch_config
    monkeypatch.setattr(render, "check_switch_config",
                        lambda text, sw, *a, **k: real(text, sw, *a, **k) + ([f"{last}: a mismatch"] if sw["name"] == last else []))
    code, text = invoke("render", str(plan), "-o", str(tmp_path / "out"))
    assert code == 1 and f"{last}: a mismatch" in text, text
    after = {str(p.relative_to(tmp_path / "out")): p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert after == before
    monkeypatch.setattr(render, "check_switch_config", real)
    assert invoke("render", str(plan), "-o", str(tmp_path / "out"))[0] == 0  # and without the mismatch it renders the new files
    changed = {k for k, v in before.items() if (tmp_path / "out" / k).read_bytes() != v}
    assert "manifest.json" in changed and any(k.startswith("hosts/") for k in changed) and any(k.startswith("configs/") for k in changed)
