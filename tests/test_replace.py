"""zcube replace and the lab's replace/console: the bootstrap and its access-line checks, the refusal of a bad switch
name, and over the lab (lab-64 over SSH): the new unit ends with its rendered config inside the managed scope while
every other switch is neither contacted nor changed (with the known-bad case: a run that touches a neighbour fails
that check); a drained switch comes back drained; the docs' walkthrough as a user runs it."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, lab_session, run_zcube, zcube_exe
from zcube_deploy.plan.io import wiring_identity_of
from zcube_deploy.platforms.ruijie_rgos.bootstrap import console_bootstrap
from zcube_deploy.platforms.ruijie_rgos.drain import drained_config
from zcube_deploy.push.targets import select_targets
from zcube_deploy.errors import InputErrors
from zcube_deploy.replace.access import access_problems, read_access_lines

ACCESS = ROOT / "inventories" / "lab-access-lines.txt"
SECRET = "S3cr3tValue"


def _work(lab64_build, tmp_path) -> Path:
    """A private copy of the lab-64 build (replace writes beside the configs; drains beside the plan)."""
    work = tmp_path / "l64"
    shutil.copytree(lab64_build, work, ignore=shutil.ignore_patterns("hall", "*.xlsx", "*.pdf", "cabling"))
    return work


def test_the_bootstrap_carries_the_plans_management_and_the_sites_lines(lab64_build):
    plan = json.loads((lab64_build / "plan.json").read_text())
    sw = plan["switches"][2]
    lines = console_bootstrap(sw["name"], "Mgmt 0", sw["mgmt_address"], "255.255.255.0", plan["settings"]["mgmt_gateway"],
                              ["enable service ssh-server"])
    assert lines[:2] == ["enable", "configure terminal"] and lines[-2:] == ["end", "write"]
    assert f"hostname {sw['name']}" in lines and f" ip address {sw['mgmt_address']} 255.255.255.0" in lines
    assert f"ip route 0.0.0.0 0.0.0.0 {plan['settings']['mgmt_gateway']}" in lines
    # no fabric line: push sends those once the unit answers
    assert not any(x.startswith(("interface TwoHundred", "interface FourHundred", "interface Loopback", "router bgp")) for x in lines)


def test_access_lines_are_checked_every_problem_at_once_secrets_masked(lab64_build):
    plan = json.loads((lab64_build / "plan.json").read_text())
    target = select_targets(plan, lab64_build, "ZC-O001", None)[0]
    host_port = next(i["name"] for i in plan["switches"][0]["interfaces"] if i["kind"] == "host")
    text = "\n".join([
        "! a comment",
        f"username ops privilege 15 secret 5 {SECRET}",     # 2 ok
        " login local",                                    # 3 ok (inside the username section: RGOS would reject it, the device says so)
        "write",                                           # 4 exec command
        "hostname SOMETHING",                              # 5 managed scope (push owns it)
        f"interface {host_port}",                          # 6 managed scope (a planned port)
        " description by-hand",                            # 7 goes with line 6
        "interface Mgmt 0",                                # 8 the management interface
        "ip route 10.0.0.0 255.255.255.0 10.200.0.1",      # 9 inside the pools
        "snmp-server community public? ro",                # 10 '?'
        f"tacacs-server host 192.0.2.50 key 7 {SECRET}\x1b[2K",  # 11 a control character, with a secret
        "ntp server 192.0.2.10",                           # 12 ok
        "end",                                             # 13 exec command
    ])
    lines, problems = access_problems("site.txt", text, target.scope, "Mgmt 0", "ruijie_rgos")
    assert lines == [f"username ops privilege 15 secret 5 {SECRET}", " login local", "ntp server 192.0.2.10"]
    where = [p.path for p in problems]
    assert where == [f"site.txt:{n}" for n in (4, 5, 6, 8, 9, 10, 11, 13)], where
    said = "\n".join(p.message for p in problems)
    assert SECRET not in said and "<redacted>" in said
    assert "exec command" in problems[0].message and "managed scope" in problems[1].message and "management interface" in problems[3].message
    lines, problems = access_problems("site.txt", "  login local\nntp server 192.0.2.10\n", target.scope, "Mgmt 0", "ruijie_rgos")
    assert [p.path for p in problems] == ["site.txt:1"] and "outside any section" in problems[0].message
    # another file given (the plan.json): refused line by line, not pasted as 200-odd "access lines"
    lines, problems = access_problems("plan.json", (lab64_build / "plan.json").read_text(), target.scope, "Mgmt 0", "ruijie_rgos")
    assert lines == [] and problems and problems[0].path == "plan.json:1" and "not a configuration command" in problems[0].message
    assert max(len(p.message) for p in problems) < 260 and any("...: " in p.message for p in problems)  # a long line cut at 80
    with pytest.raises(InputErrors) as exc:  # the first 10 listed and the rest counted (it listed 40 of 300+ characters each)
        read_access_lines(str(lab64_build / "plan.json"), target.scope, "Mgmt 0", "ruijie_rgos")
    shown = exc.value.problems
    assert len(shown) == 11 and shown[-1].message == f"... and {len(problems) - 10} more lines refused", shown[-1]
    assert [p.message for p in shown[:10]] == [p.message for p in problems[:10]] and sum(len(p.message) for p in shown) < 2500
    long = f"username ops privilege 15 secret 5 {SECRET} " + "x" * 200
    said = access_problems("site.txt", f"write {long}", target.scope, "Mgmt 0", "ruijie_rgos")[1][0].message
    assert SECRET not in said and said.startswith("'write username ops privilege 15 secret 5 <redacted>") and "...: " in said


def test_bad_input_exits_2_and_writes_nothing(lab64_build, tmp_path):
    work = _work(lab64_build, tmp_path)
    plan = str(work / "plan.json")
    r = run_zcube("replace", plan, "ZC-X001", "--configs", str(work), "--lab", str(tmp_path / "none.json"))
    assert r.returncode == 2 and "'ZC-X001' is not a switch of the plan" in r.stderr and "switches: ZC-E002, ZC-E004" in r.stderr, r.stderr
    bad = tmp_path / "access.txt"
    bad.write_text(f"username ops secret 5 {SECRET}\nreload\n")
    r = run_zcube("replace", plan, "ZC-O001", "--configs", str(work), "--access-lines", str(bad), "--lab", str(tmp_path / "none.json"))
    assert r.returncode == 2 and f"{bad}:2" in r.stderr and "exec command" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = run_zcube("replace", plan, "ZC-O001", "--configs", str(work), "--access-lines", str(tmp_path / "missing.txt"), "--lab",
                  str(tmp_path / "none.json"))
    assert r.returncode == 2 and "no such file" in r.stderr
    assert not (work / "replace").exists()
    r = run_zcube("lab", "replace", str(tmp_path / "nolab"), "ZC-O001")
    assert r.returncode == 2 and "no lab.json here" in r.stderr


# ---- over the lab

def _session(lab, name):
    return lab_session(lab, name)  # conftest's: no 2 s waits for the config mode


def _running_all(lab, names) -> dict[str, str]:
    """Each switch's running config, read over SSH, its volatile header cut."""
    out = {}
    for n in names:
        with _session(lab, n) as c:
            c.enable()
            out[n] = c.send_command("show running-config", read_timeout=30).split("\nversion ", 1)[-1]
    return out


def untouched(others: list[str], before: dict[str, str], after: dict[str, str], logins_before: dict, logins_after: dict) -> list[str]:
    """What a replace did to switches it must leave alone: a session opened to one, a running config changed."""
    problems = [f"{n}: {logins_after.get(n, 0) - logins_before.get(n, 0)} sessions opened" for n in others
                if logins_after.get(n, 0) != logins_before.get(n, 0)]
    return problems + [f"{n}: running config changed" for n in others if before[n] != after[n]]


def _scoped_drift(plan: dict, configs: Path, name: str, running: str, edit=None) -> list:
    """The new unit's running config against its rendered config (``edit``ed), inside the managed scope ([] when equal)."""
    from zcube_deploy.platforms.ruijie_rgos.drift import drift_rows

    target = select_targets(plan, configs, name, None)[0]
    return drift_rows(running, edit(target.intended) if edit else target.intended, target.scope.owns)


@pytest.mark.lab
def test_replace_over_the_lab_pushes_that_switch_only(lab64_build, tmp_path):
    from zcube_deploy import push_configs
    from zcube_deploy.lab.core import unit_serial
    from zcube_deploy.lab.server import running_lab

    work = _work(lab64_build, tmp_path)
    plan = json.loads((work / "plan.json").read_text())
    names = [s["name"] for s in plan["switches"]]
    dead, others = "ZC-O003", [n for n in names if n != "ZC-O003"]
    with running_lab(plan, out_dir=tmp_path / "lab") as lab:
        lab_json = str(tmp_path / "lab" / "lab.json")
        assert push_configs(plan, work, dry_run=False, lab=lab_json)["ok"]
        chassis_before = lab.model.chassis[dead]
        unit = lab.runner.call(lab.replace_unit, dead)
        assert unit["unit"] == 1 and unit["serial"] != unit_serial(dead, 0)
        assert lab.model.chassis[dead] == unit["chassis_id"] != chassis_before
        # the neighbours see the fresh unit: a new chassis id, the factory hostname, no management address
        peer = next(c for c in plan["cables"] if c["kind"] == "fabric" and c["a"]["device"] == dead)["b"]["device"]
        seen = [n for n in lab.model.neighbors(lab.model.switches[peer]) if n.chassis_id == unit["chassis_id"]]
        assert seen and {(n.system_name, n.management_address) for n in seen} == {("Ruijie", "")}
        before = _running_all(lab, others)
        logins = dict(lab.logins)
        args = ("replace", str(work / "plan.json"), dead, "--configs", str(work), "--lab", lab_json, "--access-lines", str(ACCESS))
        r = run_zcube(*args)
        assert r.returncode == 1 and "waiting for the console bootstrap" in r.stdout and "does not answer" in r.stdout, r.stdout + r.stderr
        boot = work / "replace" / dead / "bootstrap.txt"
        assert boot.stat().st_mode & 0o077 == 0 and "$1$Lb7q$" in boot.read_text()  # the operator's lines, owner-only
        assert "$1$Lb7q$" not in r.stdout + r.stderr + (work / "replace" / dead / "replace.json").read_text()
        assert lab.refused.get(dead, 0) >= 1
        rejected = lab.runner.call(lab.model.console, dead, boot.read_text().splitlines())
        assert rejected == [] and lab.model.ssh_refusal(dead) is None
        typed = len(lab.model.switches[dead].config_log)
        r = run_zcube(*args)  # the new unit's host key is not the one known_hosts pins: refused, as it must be
        assert r.returncode == 1 and "host key refused" in r.stdout and "--new-host-key" in r.stdout, r.stdout + r.stderr
        assert len(lab.model.switches[dead].config_log) == typed  # nothing was sent to it
        args = (*args, "--new-host-key")
        t = time.monotonic()
        r = run_zcube(*args)
        took = time.monotonic() - t
        assert r.returncode == 0 and r.stdout.strip().endswith("replaced"), r.stdout + r.stderr
        assert f"contacted: {dead} (no other switch)" in r.stdout and "verify: 0 findings" in r.stdout
        rep = json.loads((work / "replace" / dead / "replace.json").read_text())
        assert rep["contacted"] == [dead] and rep["push"]["status"] == "changed" and rep["unit"]["serial"] == unit["serial"]
        # the target: the new unit's scoped running config is the rendered one; every other switch untouched
        new = _running_all(lab, [dead])[dead]
        assert _scoped_drift(plan, work, dead, new) == []
        logins_after = dict(lab.logins)
        after = _running_all(lab, others)
        assert untouched(others, before, after, logins, logins_after) == []
        # the whole fabric verifies clean with the new unit (its new chassis id pins nothing)
        v = run_zcube("verify", str(work / "plan.json"), "--lab", lab_json, "-o", str(tmp_path / "v"))
        assert v.returncode == 0, v.stdout
        # a second replace of the unit already in the fabric is not a replace (refused: test_a_unit_not_swapped_...);
        # with --same-unit it changes nothing
        r = run_zcube(*args, "--same-unit")
        assert r.returncode == 0 and "push: unchanged (0 lines)" in r.stdout, r.stdout
        # the known-bad cases of the check: a run that touches a neighbour fails it
        peer_before = _running_all(lab, [peer])
        logins = dict(lab.logins)
        _configure(lab, peer, ["interface Loopback 0", "description by-hand", "exit"])  # a hand edit the push then reverts
        p = run_zcube("push", str(work / "plan.json"), "--configs", str(work), "--lab", lab_json, "--only", f"{dead},{peer}")
        assert p.returncode == 0, p.stdout + p.stderr
        found = untouched(others, {**after, **peer_before}, {**after, **_running_all(lab, [peer])}, logins, dict(lab.logins))
        assert found and all(f.startswith(peer) for f in found), found
        logins = dict(lab.logins)
        run_zcube("verify", str(work / "plan.json"), "--lab", lab_json, "--only", peer)  # contact alone, nothing changed
        assert untouched(others, after, after, logins, dict(lab.logins)) == [f"{peer}: 1 sessions opened"]
        # and a hand edit on the new unit shows in the scoped comparison
        _configure(lab, dead, ["interface Loopback 0", "description by-hand", "exit"])
        assert _scoped_drift(plan, work, dead, _running_all(lab, [dead])[dead])
    print(f"replace of {dead} (lab-64): {took:.1f} s")


@pytest.mark.lab
def test_a_unit_not_swapped_is_refused_unless_same_unit(lab64_build, tmp_path):
    """`zcube replace` on a switch whose unit is the one that was there (no `zcube lab replace`): its SSH host key is the
    one known_hosts pinned, so the run refuses (exit 2, the key it saw and where the old one is pinned, nothing sent,
    known_hosts as it was), a dry run and --new-host-key too; --same-unit goes on. A completed replace records the
    unit's serial: a run after it on the same unit is refused by both; a unit swapped in then is new by both."""
    from zcube_deploy import push_configs
    from zcube_deploy.access import load_lab, pinned_host_keys
    from zcube_deploy.lab.server import running_lab

    work = _work(lab64_build, tmp_path)
    plan = json.loads((work / "plan.json").read_text())
    dead = "ZC-O005"
    with running_lab(plan, out_dir=tmp_path / "lab") as lab:
        lab_json = str(tmp_path / "lab" / "lab.json")
        assert push_configs(plan, work, dry_run=False, lab=lab_json)["ok"]
        eps, kh = load_lab(lab_json)
        pinned = pinned_host_keys(kh, *eps[dead])
        assert len(pinned) == 1
        kh_before, typed = Path(kh).read_text(), len(lab.model.switches[dead].config_log)
        args = ("replace", str(work / "plan.json"), dead, "--configs", str(work), "--lab", lab_json, "--access-lines", str(ACCESS))
        for extra in ((), ("--new-host-key",), ("--dry-run",), ("--dry-run", "--new-host-key")):
            r = run_zcube(*args, *extra)
            said = r.stdout + r.stderr
            assert r.returncode == 2 and "not a new unit" in said and "nothing was pushed" in said, (extra, said)
            assert f"SSH host key {pinned[0]}" in said and f"the key {kh} pinned for [{eps[dead][0]}]:{eps[dead][1]}" in said, said
            assert "--same-unit" in said and f"zcube lab replace {tmp_path / 'lab'} {dead}" in said, said
            assert "Traceback" not in said
        assert len(lab.model.switches[dead].config_log) == typed and Path(kh).read_text() == kh_before  # nothing sent, nothing kept
        r = run_zcube(*args, "--same-unit")
        assert r.returncode == 0 and r.stdout.strip().endswith("replaced"), r.stdout + r.stderr
        assert f"identity: SSH host key {pinned[0]}: the same as" in r.stdout and "identity: not checked: serial: no record" in r.stdout
        serial = json.loads((work / "replace" / dead / "replace.json").read_text())["unit"]["serial"]
        r = run_zcube(*args)  # the replace is complete: a run now is a new replace, and the unit is the one it brought in
        said = r.stdout + r.stderr
        assert r.returncode == 2 and f"(serial {serial}) has the serial {serial}" in said and "replace.json" in said, said
        assert f"SSH host key {pinned[0]}" in said, said
        unit = lab.runner.call(lab.replace_unit, dead)  # now swapped: a new serial, a new key
        assert lab.runner.call(lab.model.console, dead, (work / "replace" / dead / "bootstrap.txt").read_text().splitlines()) == []
        tmp, kh_before, record = tmp_path / "tmpdir", Path(kh).read_text(), (work / "replace" / dead / "replace.json").read_text()
        tmp.mkdir()
        r = run_zcube(*args, "--new-host-key", "--dry-run", env={"TMPDIR": str(tmp)})  # the push's dry run: its diff summed up, no folder left
        assert r.returncode == 0 and r.stdout.strip().endswith("would replace"), r.stdout + r.stderr
        assert list(tmp.iterdir()) == [] and Path(kh).read_text() == kh_before
        assert (work / "replace" / dead / "replace.json").read_text() == record
        diff = work / "replace" / dead / "push" / f"{dead}.diff"  # the full diff: where a real run writes it, as push's dry run does
        sent = diff.read_text().splitlines()
        assert f"push: would_change ({sum(1 for ln in sent if ln != 'exit')} lines); diff {diff}" in r.stdout, r.stdout
        after = r.stdout.split("push: would_change", 1)[1].splitlines()  # (the bootstrap before it is printed whole)
        assert not set(after) & set(sent) and not {ln.strip() for ln in after} & {ln.strip() for ln in sent if ln != "exit"}, r.stdout
        rows = {ln.split("│")[1].strip(): [int(c) for c in ln.split("│")[2:5]] for ln in r.stdout.splitlines()
                if ln.startswith("│") and ln.split("│")[2].strip().isdigit()}
        ports = sum(1 for ln in sent if ln.startswith("interface ") and "GigabitEthernet" in ln)
        assert sum(n for k, (n, _, _) in rows.items() if "GigabitEthernet" in k) == ports > 0, (rows, ports)
        assert rows["ip route"][0] == rows["ip route"][1] > 0 and all(d == 0 for _, _, d in rows.values()), rows  # a fresh unit: adds only
        r = run_zcube(*args, "--new-host-key")
        assert r.returncode == 0 and r.stdout.strip().endswith("replaced"), r.stdout + r.stderr
        assert f"identity: serial {unit['serial']}: not the serial of the unit an earlier replace brought in" in r.stdout, r.stdout
        assert f"identity: SSH host key {pinned_host_keys(kh, *eps[dead])[0]}: not the key" in r.stdout, r.stdout


def _configure(lab, name, lines) -> None:
    with _session(lab, name) as c:
        c.enable()
        c.send_config_set(lines, read_timeout=30)


@pytest.fixture(scope="module")
def bgp_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("bgp64r")
    r = run_zcube("build", str(ROOT / "tests/inventories/lab-64-bgp.yaml"), "-o", str(out), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.lab
def test_a_drained_switch_comes_back_drained_and_undrains(bgp_build, tmp_path):
    from zcube_deploy import push_configs
    from zcube_deploy.lab.server import running_lab

    plan = json.loads((bgp_build / "plan.json").read_text())
    plan_file = str(bgp_build / "plan.json")
    dead = "ZC-E002"
    with running_lab(plan, out_dir=tmp_path / "lab") as lab:
        lab_json = str(tmp_path / "lab" / "lab.json")
        assert push_configs(plan, bgp_build, dry_run=False, lab=lab_json)["ok"]
        old = _running_all(lab, [dead])[dead]
        assert run_zcube("drain", plan_file, f"switch:{dead}", "--lab", lab_json, "--settle", "0").returncode == 0
        drained = _running_all(lab, [dead])[dead]
        lab.runner.call(lab.replace_unit, dead)
        args = ("replace", plan_file, dead, "--configs", str(bgp_build), "--lab", lab_json, "--access-lines", str(ACCESS), "--new-host-key")
        assert run_zcube(*args).returncode == 1
        assert lab.runner.call(lab.model.console, dead, (bgp_build / "replace" / dead / "bootstrap.txt").read_text().splitlines()) == []
        r = run_zcube(*args)
        assert r.returncode == 0 and r.stdout.strip().endswith("replaced, drained"), r.stdout + r.stderr
        assert f"{dead} is drained (switch:{dead})" in r.stdout and "graceful shutdown on" in r.stdout and "set aside as drained" in r.stdout
        now = _running_all(lab, [dead])[dead]
        record = json.loads((bgp_build / "drains" / f"switch-{dead}.json").read_text())
        ports = record["steps"][-1]["shut"][dead]
        assert len(ports) == len(record["ports"][dead]) > 0
        # the drain's state as recorded: the rendered config with its ports shut and graceful shutdown on, nothing else
        assert _scoped_drift(plan, bgp_build, dead, now, lambda text: drained_config(text, ports, True)) == []
        assert _scoped_drift(plan, bgp_build, dead, drained, lambda text: drained_config(text, ports, True)) == []
        assert _scoped_drift(plan, bgp_build, dead, now)  # the known-bad side: not the undrained config
        assert run_zcube("verify", plan_file, "--lab", lab_json).returncode == 0  # BGP sessions and LLDP, the drained ports aside
        u = run_zcube("undrain", plan_file, f"switch:{dead}", "--lab", lab_json)
        assert u.returncode == 0 and "back as planned" in u.stdout, u.stdout + u.stderr
        assert _scoped_drift(plan, bgp_build, dead, _running_all(lab, [dead])[dead]) == [] == _scoped_drift(plan, bgp_build, dead, old)


# ---- the walkthrough of docs/replace.md, as a user runs it (a `zcube lab up` process and the CLI)

def _quoted_blocks(page: Path) -> list[tuple[int, list[str]]]:
    """(walkthrough step, its quoted lines) for each ```text block of the page marked `<!-- output of step N -->`."""
    text = page.read_text(encoding="utf-8")
    return [(int(m[1]), m[2].splitlines()) for m in re.finditer(r"<!-- output of step (\d+) -->\n```text\n(.*?)```", text, re.S)]


def _walkthrough() -> list[tuple[int, str, int]]:
    """(step, command, expected exit code) of docs/replace.md's walkthrough block: step N is the block's N-th line; the
    expected code is the comment's `exit N`, else 0. The build and the lab's start are this test's own."""
    text = (ROOT / "docs" / "replace.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- walkthrough -->\n```sh\n(.*?)```", text, re.S)[1]
    out = []
    for step, line in enumerate(block.splitlines(), 1):
        cmd = re.sub(r"\s+#.*$", "", line).strip()
        code = re.search(r"#.*\bexit (\d)", line)
        if cmd.startswith("zcube") and not cmd.startswith(("zcube build", "zcube lab up")):
            out.append((step, cmd, int(code[1]) if code else 0))
    return out


@pytest.mark.lab
def test_the_docs_walkthrough(lab64_build, tmp_path):
    from test_docs_figures import missing_lines

    out = tmp_path / "out"
    _work(lab64_build, tmp_path).rename(out)
    (tmp_path / "inventories").mkdir()
    shutil.copy(ACCESS, tmp_path / "inventories" / ACCESS.name)
    proc = subprocess.Popen(zcube_exe() + ["lab", "up", "out/plan.json", "-o", "out/lab"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    outputs: dict[int, str] = {}
    try:
        for _ in range(150):
            if (out / "lab" / "lab.json").exists():
                break
            time.sleep(0.2)
        for step, cmd, code in _walkthrough():
            r = run_zcube(*cmd.split()[1:], cwd=tmp_path)
            said = re.sub(r"(127\.0\.0\.1\]?):\d+", r"\1:PORT", (r.stdout + r.stderr).replace(f"{tmp_path}/", ""))
            outputs[step] = re.sub(r"SHA256:[A-Za-z0-9+/]{43}", "SHA256:...", said)  # a new unit's key, new every run
            assert r.returncode == code, (cmd, r.stdout, r.stderr)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    blocks = _quoted_blocks(ROOT / "docs" / "replace.md")
    assert len(blocks) >= 3
    for step, quoted in blocks:
        missing = missing_lines(quoted, outputs[step])
        assert not missing, f"docs/replace.md: step {step} no longer prints:\n" + "\n".join(missing)


def test_a_dry_run_leaves_no_folder_behind(lab64_build, tmp_path):
    """`zcube replace --dry-run` (its work folder and, with --new-host-key, its known_hosts copy are temporary) leaves
    nothing in the temporary directory, here a unit that does not answer (a port nothing listens on)."""
    import socket

    work = _work(lab64_build, tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    kh = tmp_path / "known_hosts"
    kh.write_text(f"[127.0.0.1]:{port} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n")
    lab = tmp_path / "lab.json"
    lab.write_text(json.dumps({"switches": {"ZC-O001": {"host": "127.0.0.1", "port": port}}, "known_hosts": str(kh),
                               "plan": wiring_identity_of(work / "plan.json")}))  # (a lab of this plan: the identity checked first)
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    for extra in ((), ("--new-host-key",)):
        r = run_zcube("replace", str(work / "plan.json"), "ZC-O001", "--configs", str(work), "--lab", str(lab), "--access-lines",
                      str(ACCESS), "--dry-run", "--timeout", "2", *extra, env={"TMPDIR": str(tmp)})
        assert r.returncode == 0 and r.stdout.strip().endswith("would bootstrap"), r.stdout + r.stderr
        assert list(tmp.iterdir()) == [], extra
    assert not (work / "replace").exists() and "AAAAC3NzaC1lZDI1NTE5AAAAIOMqq" in kh.read_text()


def test_a_diff_is_summed_up_per_kind_of_section():
    """What `zcube replace --dry-run` prints of the push's diff instead of its lines: per kind of section (a top-level
    line's words before the first with a digit) how many sections, lines added, lines removed. A negation the intended
    config holds (`no switchport`) adds; one it does not hold (`no ip route` of a stray route) removes."""
    from zcube_deploy.platforms import platform_module
    from zcube_deploy.push.preview import section_changes

    pm = platform_module("ruijie_rgos")
    intended = ("hostname ZC-O001\n!\ninterface TwoHundredGigabitEthernet 0/1:1\n no switchport\n ip address 10.0.0.0 255.255.255.254\n!\n"
                "interface TwoHundredGigabitEthernet 0/1:2\n no switchport\n!\nip route 10.0.0.0 255.0.0.0 Null 0\n!\n")
    sent = ["no ip route 10.9.0.0 255.255.0.0 10.1.1.1", "hostname ZC-O001", "interface TwoHundredGigabitEthernet 0/1:1",
            " no switchport", " ip address 10.0.0.0 255.255.255.254", " no description old", "exit",
            "interface TwoHundredGigabitEthernet 0/1:2", " no switchport", "exit", "ip route 10.0.0.0 255.0.0.0 Null 0"]
    assert section_changes(sent, intended, pm) == [
        {"section": "ip route", "sections": 2, "add": 1, "remove": 1},
        {"section": "hostname", "sections": 1, "add": 1, "remove": 0},
        {"section": "interface TwoHundredGigabitEthernet", "sections": 2, "add": 3, "remove": 1}]
    assert section_changes([], intended, pm) == []


def test_error_text_separates_an_os_error_glued_to_the_text():
    """paramiko's 'Error reading SSH protocol banner' + '[Errno 104] ...' printed as 'banner[Errno 104]': a separator."""
    from zcube_deploy.replace.run import error_text

    assert error_text(Exception("Error reading SSH protocol banner[Errno 104] Connection\n reset by peer")) == \
        "Exception: Error reading SSH protocol banner: [Errno 104] Connection reset by peer"
    assert error_text(OSError(111, "Connection refused")) == "ConnectionRefusedError: [Errno 111] Connection refused"


def test_a_wait_names_the_bootstrap_and_the_console_before_it_waits(lab64_build, tmp_path, monkeypatch):
    """`--wait`: the technician is told which file to paste at which console before the wait, not after it (a new
    user watched 'not reachable yet' lines for minutes with no word of the bootstrap); the unit's error is cut at
    a word, never mid-word."""
    import zcube_deploy.replace.run as run
    from zcube_deploy.access import Credentials

    work = _work(lab64_build, tmp_path)
    plan = json.loads((work / "plan.json").read_text())
    said: list[str] = []
    probes: list[int] = []

    def probe(target, creds, known_hosts, timeout, pin_new_key=False):
        probes.append(len(said))
        return {"reachable": False, "error": "ConnectionException: " + "unreachable " * 20}

    monkeypatch.setattr(run, "probe", probe)
    monkeypatch.setattr(run, "POLL_S", 0.01)
    opts = run.ReplaceOptions(work, access_lines=str(ACCESS), wait_s=0.05)
    report = run.replace_switch(plan, work, "ZC-O003", opts, Credentials("u", "p", "s"), say=said.append)
    boot = work / "replace" / "ZC-O003" / "bootstrap.txt"
    assert report["status"] == "waiting for the console bootstrap" and boot.exists()
    assert probes[0] == 1 and str(boot) in said[0] and "its serial console" in said[0] and "waiting up to 0.05 s" in said[0], said
    retries = [s for s in said if "not reachable yet" in s]
    assert retries and all(" ...)" in s and "unreachable unreachable" in s and "unreachabl " not in s for s in retries), retries
