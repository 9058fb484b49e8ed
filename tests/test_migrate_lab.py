"""zcube migrate end to end in the lab, as docs/migrate.md's walk-through runs it: roft-small -> zcube-small, and
roft-small -> zcube-small-inplace (TO's switches where the ROFT's serve: temporary places, moved in stage 2).

A lab started from the ROFT plan (`zcube lab up`, a subprocess) is pushed and verified clean; then for every stage:
`zcube lab fix LAB --stage DIR/stage-NN` (the moves, each switch's cages broken out for its role and its console
file pasted), `zcube push` of the stage's configs, `zcube verify` clean. After stage 1's moves, seeded mis-moves (a
cable left behind, two swapped, one to the wrong port) are each found with the fix that puts it right, nothing else
is reported, and `lab fix --findings` then verify comes back clean. Stages out of order are refused.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, run_zcube, zcube_exe

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def _ok(r, *codes: int) -> subprocess.CompletedProcess:
    assert r.returncode in (codes or (0,)), f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module", params=["zcube-small.yaml", "zcube-small-inplace.yaml"])
def walk(request, tmp_path_factory):
    """roft-small built (plan + configs), zcube-small planned (or zcube-small-inplace: its switches where the ROFT's
    serve, so some roles stand in temporary places and move in stage 2), migrated in 4-GPU units at a floor of 0.5; a
    lab of the ROFT running (stopped after the module's tests)."""
    d = tmp_path_factory.mktemp(f"walk-{request.param.removesuffix('.yaml')}")
    _ok(run_zcube("build", str(ROOT / "tests" / "inventories" / "roft-small.yaml"), "-o", str(d / "roft")))
    _ok(run_zcube("plan", str(ROOT / "tests" / "inventories" / request.param), "-o", str(d / "zcube")))
    _ok(run_zcube("migrate", str(d / "roft" / "plan.json"), str(d / "zcube" / "plan.json"), "-o", str(d / "mig"),
                  "--unit", "4-gpu", "--capacity-floor", "0.5"))
    env = {**os.environ, "NO_COLOR": "1"}
    lab = subprocess.Popen(zcube_exe() + ["lab", "up", str(d / "roft" / "plan.json"), "-o", str(d / "lab")], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (d / "lab" / "lab.json").exists():
            assert lab.poll() is None, lab.stderr.read()
            assert time.monotonic() < deadline, "the lab did not start within 60 s"
            time.sleep(0.2)
        yield d
    finally:
        lab.send_signal(signal.SIGTERM)
        try:
            lab.wait(30)
        except subprocess.TimeoutExpired:
            lab.kill()
            lab.wait()


def push(d: Path, plan: str, configs: str):
    return _ok(run_zcube("push", str(d / plan), "--configs", str(d / configs), "--lab", str(d / "lab" / "lab.json")))


def verify(d: Path, plan: str, out: str, *codes: int) -> dict:
    _ok(run_zcube("verify", str(d / plan), "--lab", str(d / "lab" / "lab.json"), "-o", str(d / out)), *codes)
    return json.loads((d / out / "verify.json").read_text())


def _wiring(d: Path) -> dict[str, dict]:
    return {c["id"]: c for c in json.loads((d / "lab" / "wiring.json").read_text())["cables"]}


def _control(d: Path, ops: list[dict]) -> None:
    """Wiring operations sent to the running lab as `lab fix` sends them (here: the seeded mis-moves)."""
    from zcube_deploy.lab.control import request_fixes

    request_fixes(str(d / "lab"), ops, 30)


def seed_mismoves(d: Path, stage: str) -> dict[str, tuple[str, ...]]:
    """After a stage's lab fix: one cable left where it was (its move undone), two host cables of one switch swapped,
    one plugged into a free port of its switch. Returns kind -> the cables it touched."""
    plan = json.loads((d / "mig" / stage / "plan.json").read_text())
    roles = {r["role"]: r["switch"] for r in json.loads((d / "mig" / "migrate.json").read_text())["roles"]}
    wiring = _wiring(d)
    used = {(c[e]["device"], c[e]["port"]) for c in wiring.values() for e in ("a", "b")}
    with open(d / "mig" / stage / "moves.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["action"] in ("move", "unplug") and r["kind"] == "host"]
    with open(d / "mig" / stage / "moves.csv", newline="") as fh:
        plugged = {r["cable"]: r for r in csv.DictReader(fh) if r["action"] in ("move", "plug") and r["kind"] == "host"}
    # left behind: a host cable's move not done, so it still sits in its old port, and the cable the stage plugged
    # there instead cannot be plugged (it hangs: not in the lab's wiring)
    behind = rows[0]
    old_end = (roles.get(behind["unplug_device"], behind["unplug_device"]), behind["unplug_port"])
    blocked = [c["id"] for c in wiring.values() if (c["b"]["device"], c["b"]["port"]) == old_end]
    host = sorted((c for c in plan["cables"] if c["kind"] == "host" and c["id"] != behind["cable"] and c["id"] not in blocked),
                  key=lambda c: c["id"])
    by_switch: dict[str, list[dict]] = {}
    for c in host:
        by_switch.setdefault(c["b"]["device"], []).append(c)
    sw, cabled = next((s, cs) for s, cs in sorted(by_switch.items()) if len(cs) >= 3
                      and s not in (plugged[behind["cable"]]["plug_device"], behind["unplug_device"]))
    x, y, z = cabled[:3]
    phys = roles.get(sw, sw)
    group = next(s["group"] for s in plan["switches"] if s["name"] == sw)
    pm = plan["port_maps"][group]
    free = next(p for p in pm["host_ports"] + pm["fabric_ports"] + pm["unused_ports"] if (phys, p) not in used)
    _control(d, [{"op": "remove", "cable": c} for c in blocked] + [
        {"op": "move", "cable": behind["cable"], "to": {"device": old_end[0], "port": old_end[1]}, "end": "b"},
        {"op": "move", "cable": x["id"], "to": {"device": phys, "port": y["b"]["port"]}, "end": "b"},
        {"op": "move", "cable": y["id"], "to": {"device": phys, "port": x["b"]["port"]}, "end": "b"},
        {"op": "move", "cable": z["id"], "to": {"device": phys, "port": free}, "end": "b"},
    ])
    return {"left behind": (behind["cable"], *blocked), "swapped": tuple(sorted((x["id"], y["id"]))), "wrong port": (z["id"],)}


def test_the_lab_goes_from_roft_to_zcube_stage_by_stage_with_verify_clean_after_each(walk):
    d = walk
    push(d, "roft/plan.json", "roft")
    assert verify(d, "roft/plan.json", "v-roft")["findings"] == []
    doc = json.loads((d / "mig" / "migrate.json").read_text())
    assert doc["stages"] == 2
    if "inplace" in str(d):  # roles in temporary places in stage 1, moved (their cables re-plugged) in stage 2
        assert doc["temporary_places"] and all(tp["moves_in_stage"] == 2 for tp in doc["temporary_places"])
        assert "from its temporary place" in (d / "mig" / "stage-02" / "moves.csv").read_text()
    # out of order: refused, nothing applied, the next stage named
    r = _ok(run_zcube("lab", "fix", str(d / "lab"), "--stage", str(d / "mig" / "stage-02")), 2)
    assert "stage 02 is not next" in r.stderr and "stage-01 next" in r.stderr, r.stderr
    before = _wiring(d)
    for t in range(1, doc["stages"] + 1):
        stage = f"stage-{t:02d}"
        r = _ok(run_zcube("lab", "fix", str(d / "lab"), "--stage", str(d / "mig" / stage)))
        assert "0 line(s) rejected" in r.stdout and "rejected)" in r.stdout, r.stdout
        push(d, f"mig/{stage}/plan.json", f"mig/{stage}")
        if t == 1:
            assert _wiring(d) != before
            seeded_and_found(d, stage)
        v = verify(d, f"mig/{stage}/plan.json", f"v-{stage}")
        assert v["findings"] == [], [f["what"] for f in v["findings"]]
        plan = json.loads((d / "mig" / stage / "plan.json").read_text())
        assert v["summary"]["switches_verified"] == len(plan["switches"]) and not v["unreachable"]
        assert v["summary"]["bgp_sessions"]["established"] == v["summary"]["bgp_sessions"]["planned"] > 0
    # the same stage again: refused (each stage once)
    r = _ok(run_zcube("lab", "fix", str(d / "lab"), "--stage", str(d / "mig" / "stage-02")), 2)
    assert "stage 02 is not next" in r.stderr, r.stderr


def seeded_and_found(d: Path, stage: str) -> None:
    """Seeded mis-moves after a stage's moves: each found with a fix, nothing else reported (0 false positives);
    the fixes applied (`lab fix --findings`), verify is clean."""
    seeded = seed_mismoves(d, stage)
    v = verify(d, f"mig/{stage}/plan.json", "v-seeded", 1)
    touched = {c for cables in seeded.values() for c in cables}
    reported = {c for f in v["findings"] for c in f["cables"]}
    assert reported == touched, [f["what"] for f in v["findings"]]
    by_cable = {}
    for f in v["findings"]:
        assert f["fix"], f
        for c in f["cables"]:
            by_cable.setdefault(c, []).append(f["kind"])
    assert "swapped" in by_cable[seeded["swapped"][0]] and "swapped" in by_cable[seeded["swapped"][1]], by_cable
    _ok(run_zcube("lab", "fix", str(d / "lab"), "--findings", str(d / "v-seeded" / "verify.json")))
