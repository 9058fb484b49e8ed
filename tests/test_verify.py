"""Verify against the lab: every injected fault found with the right kind and cable, fixes make it clean,
offline mode on recordings with the real-output quirks, stable IDs, reports."""

from __future__ import annotations

import json
import shutil

import pytest
from openpyxl import load_workbook

from conftest import build_example, run_zcube
from zcube_deploy.lab.server import lab_credentials, running_lab
from zcube_deploy.push import Credentials, PushOptions, push_all, select_targets
from zcube_deploy.verify.collect import collect, replay
from zcube_deploy.verify.classify import classify

pytestmark = pytest.mark.lab
CREDS = Credentials(*lab_credentials())


def build(tmp_path_factory, inventory):
    out = build_example(tmp_path_factory, inventory)
    return out, json.loads((out / "plan.json").read_text())


@pytest.fixture(scope="module")
def lab64(tmp_path_factory):
    return build(tmp_path_factory, "lab-64.yaml")


def observe_lab(lab, kh, names=None):
    names = names or sorted(lab.endpoints)
    obs, err = collect([(n, *lab.endpoints[n]) for n in names], CREDS, kh, concurrency=8)
    assert not err, err
    return obs


def round_trip(out, plan, faults, seed, tmp_path):
    with running_lab(plan, faults=faults, seed=seed, out_dir=tmp_path / "lab") as lab:
        kh = str(tmp_path / "lab" / "known_hosts")
        rep = push_all(select_targets(plan, out, None, lab.endpoints), CREDS, PushOptions(concurrency=8, known_hosts=kh), tmp_path)
        assert rep["ok"], rep["summary"]
        findings = classify(plan, observe_lab(lab, kh))
        found = {(f["kind"], tuple(f["cables"])) for f in findings}
        for e in lab.expected:
            assert (e["kind"], tuple(e["cables"])) in found, f"{e} not found in {sorted(found)}"
        assert len(findings) == len(lab.expected), [f["what"] for f in findings]
        for f in findings:
            assert f["instruction"] and f["ends"][0]["rack"] != "?" and f["id"].startswith("V")
        lab.runner.call(lab.apply_operations, [op for f in findings for op in f["fix"]])
        assert classify(plan, observe_lab(lab, kh)) == [], "the fixes did not make the lab clean"
        return findings


@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow), pytest.param(3, marks=pytest.mark.slow)])
def test_round_trip_lab64(lab64, seed, tmp_path):
    out, plan = lab64
    findings = round_trip(out, plan, "random:9", seed, tmp_path)
    assert {f["kind"] for f in findings} >= {"swapped", "wrong_peer", "down", "missing"}


@pytest.mark.slow
def test_round_trip_glm1k(tmp_path_factory, tmp_path):
    out, plan = build(tmp_path_factory, "glm-1k.yaml")
    findings = round_trip(out, plan, "random:8", 11, tmp_path)
    assert {"swapped", "duplicate", "wrong_peer", "down", "missing"} <= {f["kind"] for f in findings}


@pytest.mark.slow
def test_clean_lab_reports_nothing_and_ids_are_stable(lab64, tmp_path):
    out, plan = lab64
    faults = {"cabling": [{"swap": ["H000017", "H000019"]}, {"remove": "H000033"}]}
    with running_lab(plan, faults=faults, out_dir=tmp_path / "lab") as lab:
        kh = str(tmp_path / "lab" / "known_hosts")
        push_all(select_targets(plan, out, None, lab.endpoints), CREDS, PushOptions(concurrency=8, known_hosts=kh), tmp_path)
        a = classify(plan, observe_lab(lab, kh))
        b = classify(plan, observe_lab(lab, kh))
        assert [f["id"] for f in a] == [f["id"] for f in b] and len(a) == 2
    with running_lab(plan, faults=faults, out_dir=tmp_path / "lab2") as lab:
        kh = str(tmp_path / "lab2" / "known_hosts")
        push_all(select_targets(plan, out, None, lab.endpoints), CREDS, PushOptions(concurrency=8, known_hosts=kh), tmp_path / "p2")
        assert [f["id"] for f in classify(plan, observe_lab(lab, kh))] == [f["id"] for f in a]  # same fault, same ID
    with running_lab(plan, out_dir=tmp_path / "lab3") as lab:
        kh = str(tmp_path / "lab3" / "known_hosts")
        push_all(select_targets(plan, out, None, lab.endpoints), CREDS, PushOptions(concurrency=8, known_hosts=kh), tmp_path / "p3")
        assert classify(plan, observe_lab(lab, kh)) == []


def test_before_push_hostname_route_and_unexpected(lab64, tmp_path):
    out, plan = lab64
    faults = {"cabling": [{"extra": {"a": {"device": "ZC-O015", "port": "FourHundredGigabitEthernet 0/9"},
                                     "b": {"device": "ZC-E016", "port": "FourHundredGigabitEthernet 0/9"}}}]}
    with running_lab(plan, faults=faults, out_dir=tmp_path / "lab") as lab:
        findings = classify(plan, observe_lab(lab, str(tmp_path / "lab" / "known_hosts")))
    kinds = [f["kind"] for f in findings]
    assert kinds.count("hostname") == 16 and kinds.count("route") == 16
    unexpected = [f for f in findings if f["kind"] == "unexpected"]
    assert len(unexpected) == 1  # one finding for the extra cable, not one per end
    assert "FourHundredGigabitEthernet 0/9" in unexpected[0]["instruction"]


@pytest.mark.slow
def test_cli_record_then_offline_with_real_quirks(lab64, tmp_path):
    out, plan = lab64
    faults = {"cabling": [{"swap": ["H000017", "H000019"]}]}
    with running_lab(plan, faults=faults, out_dir=tmp_path / "lab") as lab:
        kh = str(tmp_path / "lab" / "known_hosts")
        push_all(select_targets(plan, out, None, lab.endpoints), CREDS, PushOptions(concurrency=8, known_hosts=kh), tmp_path)
        r = run_zcube("verify", str(out / "plan.json"), "--lab", str(tmp_path / "lab" / "lab.json"), "-o", str(tmp_path / "v"),
                      "--record", str(tmp_path / "rec"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "swapped" in r.stdout and "swap cables H000017 and H000019" in r.stdout
    rep = json.loads((tmp_path / "v" / "verify.json").read_text())
    assert [f["kind"] for f in rep["findings"]] == ["swapped"]
    ws = load_workbook(tmp_path / "v" / "verify.xlsx")["Fixes"]
    rows = list(ws.iter_rows(values_only=True))
    assert rows[0][-1] == "Done" and rows[1][4] == "swapped" and "H000017" in rows[1][5]
    rec = tmp_path / "rec"
    assert (rec / "ZC-O001" / "show_lldp_neighbors_detail.txt").exists()
    assert (rec / "ZC-O001" / "show_interface_status.txt").exists()
    # real-output quirks: CRLF everywhere, the old 'Lldp' header
    for f in rec.rglob("*.txt"):
        text = f.read_text().replace("\r\n", "\n").replace("LLDP neighbor-information", "Lldp neighbor-information")
        f.write_bytes(text.replace("\n", "\r\n").encode())
    r = run_zcube("verify", str(out / "plan.json"), "--from", str(rec), "-o", str(tmp_path / "v2"))
    assert r.returncode == 1
    assert json.loads((tmp_path / "v2" / "verify.json").read_text())["findings"][0]["id"] == rep["findings"][0]["id"]
    # a second neighbour on a port, appended the RGOS way (dashed line, new index, no port header)
    d = rec / "ZC-O003" / "show_lldp_neighbors_detail.txt"
    text = d.read_bytes().decode()
    block = text.split("  Neighbor index                    : 1\r\n", 1)[1].split("-" * 76)[0]
    head, sep, tail = text.partition("-" * 76 + "\r\nLldp neighbor-information of port [TwoHundredGigabitEthernet 0/1:2]")
    stray = block.replace("gpu", "stray")
    d.write_bytes((head + "-" * 76 + "\r\n  Neighbor index                    : 2\r\n" + stray + sep + tail).encode())
    obs, _ = replay(rec, [s["name"] for s in plan["switches"]])
    kinds = {f["kind"] for f in classify(plan, obs)}
    assert "duplicate" in kinds
    # --only re-verifies a subset
    r = run_zcube("verify", str(out / "plan.json"), "--from", str(rec), "--only", "ZC-E0*", "-o", str(tmp_path / "v3"))
    scope = json.loads((tmp_path / "v3" / "verify.json").read_text())["scope"]
    assert scope and all(s.startswith("ZC-E0") for s in scope)


def test_only_an_unknown_name_gets_a_did_you_mean(lab64, tmp_path):
    """`zcube verify --only` with a name the plan does not hold: exit 2 before any switch is contacted (no credentials
    asked for), no traceback, the close names offered; in a list, the one unknown name is refused, not dropped (the
    rest was verified before as if it were the whole scope). A rack pattern that matches no rack lists the racks."""
    out, plan = lab64
    env = {"ZCUBE_USERNAME": "", "ZCUBE_PASSWORD": ""}
    for only, said in [("ZC-O01", "did you mean 'ZC-O001'?"), ("zc-o-1", "did you mean 'ZC-O001'?"),
                       ("ZC-O001,ZC-E0002", "'ZC-E0002' matches no switch"), ("rack:B9*", "matches no rack"),
                       ("", "'' holds no pattern")]:
        r = run_zcube("verify", str(out / "plan.json"), "--only", only, "-o", str(tmp_path / "v"), env=env)
        assert r.returncode == 2 and said in r.stderr, (only, r.stdout + r.stderr)
        assert "Traceback" not in r.stderr and "ZCUBE_USERNAME" not in r.stderr and not (tmp_path / "v").exists(), r.stderr
    r = run_zcube("verify", str(out / "plan.json"), "--only", "ZC-O001,ZC-E0002", env=env)
    assert "did you mean 'ZC-E002'?" in r.stderr and "'ZC-O001'" not in r.stderr, r.stderr
    racks = sorted({s["rack"] for s in plan["switches"]})
    r = run_zcube("verify", str(out / "plan.json"), "--only", "rack:B9*", env=env)
    assert f"racks: {', '.join(racks[:8])}" in r.stderr, r.stderr


def test_a_clean_verify_prints_no_empty_table():
    """A clean result: the title as a line and the clean line, no "kind | count" table with no row (the
    demo's step 9 printed one); with findings the table stays."""
    from zcube_deploy.cli.common import out
    from zcube_deploy.cli.printers import print_verify
    from zcube_deploy.verify.classify import summarize

    def printed(findings):
        with out.capture() as cap:
            print_verify({"findings": findings, "summary": {**summarize(findings), "switches_verified": 16}, "errors": {},
                          "paths": None})
        return cap.get()

    clean = printed([])
    assert clean.splitlines()[0] == "verify: 16 switches, 0 findings", clean
    assert "kind" not in clean and "count" not in clean and "clean: every planned check ran" in clean, clean
    finding = {"id": "F1", "kind": "swapped", "cables": ["F00001"], "ends": [{"rack": "A01", "device": "ZC-O001", "port": "x"}],
               "instruction": "swap", "what": "", "fix": []}
    assert "count" in printed([finding]) and "swapped" in printed([finding])


@pytest.mark.slow
def test_demo_end_to_end(tmp_path):
    r = run_zcube("demo", "-o", str(tmp_path / "demo"), timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "all injected faults found" in r.stdout and "after the fixes: 0 findings" in r.stdout
    assert "kind" not in r.stdout.split("verify again")[-1], r.stdout[-3000:]  # step 9 (clean) prints no empty table
    d = tmp_path / "demo"
    for rel in ("plan.json", "cabling.xlsx", "push-report.json", "verify-1/verify.json", "verify-1/verify.xlsx",
                "verify-2/verify.json", "lab/known_hosts", "lab/faults.json"):
        assert (d / rel).exists(), rel
    assert not (d / "lab" / "lab.json").exists()  # the demo stopped its lab: a stopped lab leaves no lab.json (docs/lab.md)
    assert json.loads((d / "verify-2" / "verify.json").read_text())["findings"] == []
    assert len(json.loads((d / "verify-1" / "verify.json").read_text())["findings"]) >= 5


@pytest.mark.slow
def test_cli_lab_up_verify_fix_verify(lab64, tmp_path):
    """The demo's loop with the CLI alone: lab up (faults), push, verify (exit 1), lab fix, verify (exit 0)."""
    import signal
    import subprocess
    import time

    from conftest import zcube_exe

    out, plan = lab64
    work = tmp_path / "w"
    shutil.copytree(out / "configs", work / "configs")
    shutil.copy(out / "manifest.json", work / "manifest.json")
    shutil.copy(out / "plan.json", work / "plan.json")
    lab_dir = tmp_path / "lab"
    proc = subprocess.Popen(zcube_exe() + ["lab", "up", str(work / "plan.json"), "-o", str(lab_dir), "--faults", "random:5", "--seed", "9"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(150):
            if (lab_dir / "lab.json").exists():
                break
            time.sleep(0.2)
        lab_json = str(lab_dir / "lab.json")
        assert run_zcube("push", str(work / "plan.json"), "--configs", str(work), "--lab", lab_json).returncode == 0
        r = run_zcube("verify", str(work / "plan.json"), "--lab", lab_json, "-o", str(tmp_path / "v1"))
        assert r.returncode == 1, r.stdout + r.stderr
        expected = json.loads((lab_dir / "faults.json").read_text())["expected_findings"]
        found = json.loads((tmp_path / "v1" / "verify.json").read_text())["findings"]
        assert sorted((e["kind"], e["cables"]) for e in expected) == sorted((f["kind"], f["cables"]) for f in found)
        r = run_zcube("lab", "fix", str(lab_dir), "--findings", str(tmp_path / "v1" / "verify.json"))
        assert r.returncode == 0, r.stdout + r.stderr
        r = run_zcube("verify", str(work / "plan.json"), "--lab", lab_json, "-o", str(tmp_path / "v2"))
        assert r.returncode == 0, r.stdout + r.stderr
        assert "verify: 16 switches, 0 findings" in r.stdout and "kind" not in r.stdout, r.stdout  # no empty table
        w = json.loads(run_zcube("lab", "wiring", str(lab_dir), "--json").stdout)
        assert all(c["planned"] for c in w["cables"]) and not w["down"] and not w["lldp_off"]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)


def test_each_session_gets_its_own_known_hosts_lines(tmp_path):
    """per_host_known_hosts: a file per (host, port) with exactly the lines naming it as the SSH client
    looks it up (`[host]:port`, or `host` on port 22); none for a host without a line; the whole file
    (no split) when names are hashed or marked."""
    from zcube_deploy.verify.collect import per_host_known_hosts

    kh = tmp_path / "known_hosts"
    kh.write_text("# lab keys\n[127.0.0.1]:2201 ssh-ed25519 AAAA1\n[127.0.0.1]:2202 ssh-ed25519 AAAA2\n\n"
                  "10.0.0.5,[127.0.0.1]:2201 ssh-rsa BBBB1\n10.0.0.5\tssh-ed25519 CCCC5\n")
    d = tmp_path / "split"
    d.mkdir()
    files = per_host_known_hosts(str(kh), [("127.0.0.1", 2201), ("127.0.0.1", 2202), ("10.0.0.5", 22), ("127.0.0.1", 2203),
                                           ("127.0.0.1", 2201)], d)
    read = {k: open(v).read() for k, v in files.items()}
    assert read == {("127.0.0.1", 2201): "[127.0.0.1]:2201 ssh-ed25519 AAAA1\n10.0.0.5,[127.0.0.1]:2201 ssh-rsa BBBB1\n",
                    ("127.0.0.1", 2202): "[127.0.0.1]:2202 ssh-ed25519 AAAA2\n",
                    ("10.0.0.5", 22): "10.0.0.5,[127.0.0.1]:2201 ssh-rsa BBBB1\n10.0.0.5\tssh-ed25519 CCCC5\n",
                    ("127.0.0.1", 2203): ""}
    for bad in ("|1|salt=|hash= ssh-ed25519 AAAA9\n", "@cert-authority *.lab ssh-ed25519 AAAA9\n"):
        kh.write_text("[127.0.0.1]:2201 ssh-ed25519 AAAA1\n" + bad)
        assert per_host_known_hosts(str(kh), [("127.0.0.1", 2201)], d) == {}
    assert per_host_known_hosts(None, [("127.0.0.1", 2201)], d) == {}


def test_per_switch_known_hosts_refuse_an_unknown_or_wrong_key(lab64, tmp_path):
    """Each session reads only its own switch's known_hosts lines: a switch without a line and a switch whose line
    holds another switch's key are refused (host key), exactly as with the whole file; the others are read."""
    out, plan = lab64
    with running_lab(plan, out_dir=tmp_path / "lab") as lab:
        names = sorted(lab.endpoints)[:3]
        missing, wrong, good = names
        ep = {n: f"[{lab.endpoints[n][0]}]:{lab.endpoints[n][1]}" for n in names}
        lines = (tmp_path / "lab" / "known_hosts").read_text().splitlines()
        line = {n: next(ln for ln in lines if ln.split(" ", 1)[0].split(",")[0] == ep[n]) for n in names}
        other_key = line[good].split(" ", 1)[1]
        kept = [ln for ln in lines if ln not in (line[missing], line[wrong])] + [f"{ep[wrong]} {other_key}"]
        kh = tmp_path / "known_hosts"
        kh.write_text("\n".join(kept) + "\n")
        obs, err = collect([(n, *lab.endpoints[n]) for n in names], CREDS, str(kh), concurrency=3, timeout=10)
    assert set(obs) == {good} and set(err) == {missing, wrong}
    # said as what it is, not as netmiko's timeout
    assert err[missing] == f"ConnectionException: SSH host key: {ep[missing]} has no known_hosts line (refused)", err
    assert err[wrong].startswith(f"ConnectionException: SSH host key: {ep[wrong]} does not match its known_hosts line"), err
