"""zcube drain / undrain: the blast radius, the drained config, and the whole cycle over the lab (mode bgp)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter

import pytest

from conftest import ROOT, lab_session, run_zcube, zcube_exe
from zcube_deploy.drain.blast import blast_radius, parse_element
from zcube_deploy.errors import InputErrors
from zcube_deploy.platforms.ruijie_rgos.drain import drained_config


@pytest.fixture(scope="module")
def bgp_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("bgp64")
    r = run_zcube("build", str(ROOT / "tests/inventories/lab-64-bgp.yaml"), "-o", str(out), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(scope="module")
def drain_lab(bgp_build, tmp_path_factory):
    """The lab tests' one setup: lab-64 in mode bgp in a lab whose ZC-O003 rejects the graceful shutdown community, pushed.
    Yields (plan, plan file, lab, lab.json); each test leaves every switch undrained as it found it."""
    from zcube_deploy import push_configs
    from zcube_deploy.lab.server import running_lab

    plan = json.loads((bgp_build / "plan.json").read_text())
    lab_dir = tmp_path_factory.mktemp("drain-lab")
    faults = {"devices": {"ZC-O003": {"reject_lines": ["set community 65535:0 additive"]}}}
    with running_lab(plan, faults=faults, out_dir=lab_dir / "lab") as lab:
        lab_json = str(lab_dir / "lab" / "lab.json")
        assert push_configs(plan, bgp_build, dry_run=False, lab=lab_json)["ok"]
        yield plan, str(bgp_build / "plan.json"), lab, lab_json


def test_blast_radius_of_a_switch_is_its_k_gpu_ports_and_its_fabric_links(lab64_build, tmp_path):
    plan = json.loads((lab64_build / "plan.json").read_text())
    for sw in plan["switches"][:4]:
        b = blast_radius(plan, parse_element(f"switch:{sw['name']}", plan))
        host = [i for i in sw["interfaces"] if i["kind"] == "host"]
        # written from the cables, not from the switch's interfaces: every cable with an end on the switch
        ends = [c for c in plan["cables"] if sw["name"] in (c["a"]["device"], c["b"]["device"])]
        assert len(b.host_ports) == len(host) == plan["sizing"]["K"]
        assert sorted(b.fabric_links + tuple(c["id"] for c in ends if c["id"].startswith("H"))) == sorted(c["id"] for c in ends)
        assert b.ports[sw["name"]][: len(host)] == tuple(i["name"] for i in host)  # host ports first
    r = run_zcube("analyze", str(lab64_build / "plan.json"), "-o", str(tmp_path / "an"), "--samples", "10")
    assert r.returncode == 0, r.stderr
    analysis = json.loads((tmp_path / "an" / "analyze.json").read_text())
    row = next(r for r in analysis["single_failures"]["elements"] if r["element"] == plan["switches"][0]["name"])
    b = blast_radius(plan, parse_element(f"switch:{plan['switches'][0]['name']}", plan))
    assert b.gpu_pairs_without_routed_path == row["gpu_pairs_without_routed_path"]


def test_elements_are_checked(lab64_build):
    plan = json.loads((lab64_build / "plan.json").read_text())
    for bad in ("switch:NOPE", "link:X1", "rack:A01", "ZC-O001"):
        with pytest.raises(InputErrors):
            parse_element(bad, plan)
    b = blast_radius(plan, parse_element("link:H000001", plan))
    assert b.host_ports == ("gpu01:ens1f0np0",) and b.fabric_links == () and b.gpu_pairs_without_routed_path == 0
    with pytest.raises(InputErrors) as e:
        parse_element("switch:zc-o-01", plan)
    assert "did you mean 'ZC-O001'?" in e.value.problems[0].hint
    for bare, meant in (("ZC-O001", "switch:ZC-O001"), ("H000001", "link:H000001")):  # a name of the plan without its kind
        with pytest.raises(InputErrors) as e:
            parse_element(bare, plan)
        assert e.value.problems[0].hint == f"did you mean {meant}?"


def test_a_bad_element_is_refused_before_any_credential_is_asked(lab64_build, tmp_path):
    """A typo in ELEMENT is exit 2 naming the close switch; no username or password is asked for first
    (no ZCUBE_USERNAME and no terminal: asking would be the error instead)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZCUBE_")}
    for cmd in ("drain", "undrain"):
        r = subprocess.run(zcube_exe() + [cmd, str(lab64_build / "plan.json"), "switch:ZC-O01", "--dry-run"], env=env,
                           capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
        assert r.returncode == 2 and "did you mean 'ZC-O001'?" in r.stderr and "ZCUBE_USERNAME" not in r.stderr, r.stderr


def test_drained_config_shuts_exactly_the_ports_and_adds_graceful_shutdown(bgp_build):
    text = (bgp_build / "configs" / "ZC-O001.cfg").read_text()
    plan = json.loads((bgp_build / "plan.json").read_text())
    sw = next(s for s in plan["switches"] if s["name"] == "ZC-O001")
    peers = sorted(i["peer"]["address"] for i in sw["interfaces"] if i["kind"] == "fabric")
    ports = ["TwoHundredGigabitEthernet 0/1:1", "TwoHundredGigabitEthernet 0/5:1"]
    d = drained_config(text, ports, graceful=True)
    removed = [ln for ln in text.splitlines() if ln not in d.splitlines()]
    added = [ln for ln in d.splitlines() if ln not in text.splitlines()]
    assert d.count("\n shutdown\n") - text.count("\n shutdown\n") == 2 and set(removed) <= {" no shutdown"}
    # transit-only graceful shutdown: the switch's own prefixes (its `network` lines) listed and let through untagged,
    # everything else tagged 65535:0, on every fabric neighbour
    assert "ip prefix-list ZCUBE-DRAIN-OWN seq 5 permit 10.0.0.0/28" in added and f"ip prefix-list ZCUBE-DRAIN-OWN seq 10 permit {sw['loopback']}/32" in added
    assert d.index("route-map ZCUBE-DRAIN permit 10\n match ip address prefix-list ZCUBE-DRAIN-OWN\n") < \
        d.index("route-map ZCUBE-DRAIN permit 20\n set community 65535:0 additive\n") < d.index("router bgp ")
    assert sorted(ln.split()[1] for ln in added if ln.endswith("route-map ZCUBE-DRAIN out")) == peers
    assert sorted(ln.split()[1] for ln in added if ln.endswith(" send-community")) == peers
    bgp = d[d.index("router bgp "):]
    assert bgp.index(" address-family ipv4") < bgp.index("route-map ZCUBE-DRAIN out") < bgp.index("exit-address-family")
    more = Counter(d.splitlines()) - Counter(text.splitlines())
    # nothing else changed: 2 ports' "shutdown", 2 prefix-list lines, 2 route-map entries (header, one line, "!" each),
    # 2 lines per neighbour
    assert sum(more.values()) == 2 + 2 + 2 * 3 + 2 * len(peers) and more[" shutdown"] == 2 and more["!"] == 2
    assert drained_config(text, ports, graceful=False).count("ZCUBE") == 0
    with pytest.raises(ValueError):
        drained_config(text, ["TwoHundredGigabitEthernet 9/9"], graceful=False)
    static = (bgp_build / "configs" / "ZC-O001.cfg").read_text().replace("router bgp", "router_x bgp")
    with pytest.raises(ValueError):
        drained_config(static, ports, graceful=True)


def test_the_steer_lines_read_as_sent_when_secrets_are_masked(bgp_build):
    """A dry run prints, and push's .diff holds, the drain's lines with secrets masked: the masking must leave them
    whole. It once read `send-community` as an SNMP community keyword and masked the next line's first word
    (`<redacted> 10.200.0.3 route-map ZCUBE-DRAIN out`, a lone `<redacted>` for `exit`) and `65535:0`."""
    from zcube_deploy.safety import redact_secrets

    text = (bgp_build / "configs" / "ZC-O001.cfg").read_text()
    d = drained_config(text, ["TwoHundredGigabitEthernet 0/1:1"], graceful=True)
    assert "send-community" in d and "set community 65535:0 additive" in d
    assert redact_secrets(d) == d
    steer = "route-map ZCUBE-DRAIN permit 20\n set community 65535:0 additive\nexit\n  neighbor 10.200.0.1 send-community\n" \
            "  neighbor 10.200.0.3 route-map ZCUBE-DRAIN out\n match community GSHUT\n"
    assert redact_secrets(steer) == steer
    # the secrets are masked still, each on its own line
    secrets = ("snmp-server community 7 105A0C1D0D1E03 ro\nsnmp-server community public rw\nenable secret 5 $1$abc$xyz\n"
               "username ops privilege 15 password 0 Hunter2\n ip ospf authentication-key 0 k3y\n key-string S3cr3t\n")
    masked = redact_secrets(secrets)
    assert [ln.split()[-1] if "snmp" not in ln else ln.split()[-2] for ln in masked.splitlines()] == ["<redacted>"] * 6, masked
    assert masked.count("\n") == secrets.count("\n")

def test_a_drain_that_loses_pairs_is_refused_without_accept_loss(tmp_path):
    """lab-64 in mode static without the same-group fallback: a switch's drain leaves GPU pairs without a routed path."""
    inv = tmp_path / "inv.yaml"
    inv.write_text((ROOT / "inventories" / "lab-64.yaml").read_text().replace("topology:\n", "topology:\n  same_group_fallback: false\n", 1))
    assert run_zcube("plan", str(inv), "-o", str(tmp_path)).returncode == 0
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert blast_radius(plan, parse_element("switch:ZC-O001", plan)).gpu_pairs_without_routed_path > 0
    r = run_zcube("drain", str(tmp_path / "plan.json"), "switch:ZC-O001", "--dry-run", "--lab", str(tmp_path / "none.json"))
    assert r.returncode == 2 and "GPU pairs without a routed path" in r.stderr and "--accept-loss" in r.stderr


@pytest.mark.lab
def test_drain_verify_push_undrain_over_the_lab(bgp_build, drain_lab):
    plan, plan_file, lab, lab_json = drain_lab
    before = {n: _running(lab, n) for n in ("ZC-O001", "ZC-E002")}
    r = run_zcube("drain", plan_file, "switch:ZC-O001", "--dry-run", "--lab", lab_json)
    assert r.returncode == 0 and "would drain" in r.stdout and not (bgp_build / "drains").exists()
    # the dry run shows every line it would send (docs/drain.md): the graceful shutdown, each host port's shutdown
    assert "     set community" in r.stdout and r.stdout.count("\n     shutdown") >= 16, r.stdout
    assert "not run (no --host-command)" in r.stdout
    assert "lines of the steps before included" in r.stdout  # a dry run applies no step: later counts are cumulative
    j = run_zcube("drain", plan_file, "switch:ZC-O001", "--dry-run", "--lab", lab_json, "--json")
    assert j.returncode == 0 and json.loads(j.stdout)["status"] == "would drain" and "step 1 steer" in j.stderr
    moved = bgp_build.parent / "hosts-moved.txt"  # the host command: here it writes what a host would do
    hostcmd = f"sh -c 'echo {{server}} {{port}} {{state}} >> {moved}'"
    r = run_zcube("drain", plan_file, "switch:ZC-O001", "--lab", lab_json, "--settle", "0.2", "--host-command", hostcmd)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [ln.split(":")[0] for ln in r.stdout.splitlines() if ln.startswith("step")] == [
        "step 1 steer", "step 2 hosts", "step 3 host ports", "step 4 fabric ports"]
    host_ports = [i["peer"] for s in plan["switches"] if s["name"] == "ZC-O001" for i in s["interfaces"] if i["kind"] == "host"]
    assert sorted(moved.read_text().splitlines()) == sorted(f"{h['device']} {h['port']} down" for h in host_ports)
    record = json.loads((bgp_build / "drains" / "switch-ZC-O001.json").read_text())
    assert record["status"] == "drained" and record["check"]["ports_down"] and record["graceful_shutdown"]
    assert record["steps"][1]["hosts"]["ran"] and not record["steps"][1]["hosts"]["failed"]
    assert r.stdout.endswith(f"drained; check: the 16 drained ports read down; record {bgp_build / 'drains' / 'switch-ZC-O001.json'}\n")
    assert _running(lab, "ZC-E002") == before["ZC-E002"]  # no other switch touched
    running = _running(lab, "ZC-O001")
    assert running.count("\n shutdown") - before["ZC-O001"].count("\n shutdown") == 16 and "route-map ZCUBE-DRAIN permit 20" in running
    assert "neighbor 10.200.0.1 route-map ZCUBE-DRAIN out" in running
    # verify: the drained ports' findings are the expected state; push refuses the drained switch
    v = run_zcube("verify", plan_file, "--lab", lab_json)
    assert v.returncode == 0 and "set aside as expected" in v.stdout, v.stdout
    p = run_zcube("push", plan_file, "--configs", str(bgp_build), "--lab", lab_json, "--dry-run")
    assert p.returncode == 2 and "is drained" in p.stderr
    assert "(`zcube undrain PLAN ELEMENT` for each record in the plan's drains/ that names it: switch:ZC-O001, or link:CABLE" in p.stderr, p.stderr
    assert run_zcube("drain", plan_file, "switch:ZC-O001", "--lab", lab_json).returncode == 2  # already drained
    d = run_zcube("undrain", plan_file, "switch:ZC-O001", "--lab", lab_json, "--dry-run", "--host-command", hostcmd)
    assert d.returncode == 0 and d.stdout.endswith("\nwould undrain\n"), d.stdout + d.stderr  # it ended on a diff line
    assert len(moved.read_text().splitlines()) == len(host_ports)  # the dry run ran no host command
    u = run_zcube("undrain", plan_file, "switch:ZC-O001", "--lab", lab_json, "--settle", "0.2")
    assert u.returncode == 2 and "--host-command" in u.stderr  # the hosts' ports went down: undrain must bring them up
    u = run_zcube("undrain", plan_file, "switch:ZC-O001", "--lab", lab_json, "--settle", "0.2", "--host-command", hostcmd)
    assert u.returncode == 0 and "back as planned" in u.stdout, u.stdout + u.stderr
    assert [ln.split(":")[0] for ln in u.stdout.splitlines() if ln.startswith("undrain step")] == [
        "undrain step 1 fabric ports", "undrain step 2 host ports", "undrain step 3 hosts", "undrain step 4 steer off"]
    assert sorted(moved.read_text().splitlines())[1::2] == sorted(f"{h['device']} {h['port']} up" for h in host_ports)
    assert _running(lab, "ZC-O001") == before["ZC-O001"] and not (bgp_build / "drains" / "switch-ZC-O001.json").exists()
    assert run_zcube("verify", plan_file, "--lab", lab_json).returncode == 0


@pytest.mark.lab
def test_undrain_refuses_a_switch_changed_since_and_a_rejected_step_changes_nothing(bgp_build, drain_lab):
    plan, plan_file, lab, lab_json = drain_lab
    before = _running(lab, "ZC-O003")
    r = run_zcube("drain", plan_file, "switch:ZC-O003", "--lab", lab_json, "--settle", "0")
    assert r.returncode == 1 and "failed at step 1" in r.stdout
    assert _running(lab, "ZC-O003") == before and not (bgp_build / "drains" / "switch-ZC-O003.json").exists()
    # a link drain, then a hand edit inside the scope on one of its switches: undrain refuses it
    r = run_zcube("drain", plan_file, "link:F00001", "--lab", lab_json)
    assert r.returncode == 0, r.stdout + r.stderr
    _configure(lab, "ZC-O001", ["interface TwoHundredGigabitEthernet 0/1:1", "description by-hand", "exit"])
    u = run_zcube("undrain", plan_file, "link:F00001", "--lab", lab_json)
    assert u.returncode == 2 and "differs from the state the drains left" in u.stderr
    u = run_zcube("undrain", plan_file, "link:F00001", "--lab", lab_json, "--force")
    assert u.returncode == 0 and "back as planned" in u.stdout, u.stdout + u.stderr


def _session(lab, name):
    return lab_session(lab, name)  # conftest's: no 2 s waits for the config mode


def _running(lab, name) -> str:
    with _session(lab, name) as c:
        c.enable()
        return c.send_command("show running-config", read_timeout=30)


def _configure(lab, name, lines) -> None:
    with _session(lab, name) as c:
        c.enable()
        c.send_config_set(lines, read_timeout=30)



def test_set_aside_keeps_findings_on_ports_that_are_not_drained(lab64_build):
    """The known-bad case of verify's allowance: only findings all of whose cables end on drained ports go."""
    from zcube_deploy.verify.pipeline import set_aside_drained

    plan = json.loads((lab64_build / "plan.json").read_text())
    sw = plan["switches"][0]
    drained = {sw["name"]: {sw["interfaces"][0]["name"]}}
    on = {"kind": "down", "cables": [sw["interfaces"][0]["cable"]]}
    off = {"kind": "down", "cables": [sw["interfaces"][1]["cable"]]}
    both = {"kind": "swapped", "cables": [sw["interfaces"][0]["cable"], sw["interfaces"][1]["cable"]]}
    none = {"kind": "hostname", "cables": []}
    keep, aside = set_aside_drained(plan, [on, off, both, none], drained)
    assert aside == [on] and keep == [off, both, none]


def test_bad_records_are_input_errors_for_verify_push_and_undrain(lab64_build, tmp_path):
    import shutil

    work = tmp_path / "p"
    shutil.copytree(lab64_build, work, ignore=shutil.ignore_patterns("hall", "*.xlsx"))
    (work / "drains").mkdir()
    for name, text in (("switch-ZC-O001.json", "{not json"), ("link-F00001.json", json.dumps({"element": "link:F00001", "ports": {"ZC-O001": 5}})),
                       ("switch-ZC-E002.json", json.dumps({"element": "switch:ZC-E002", "ports": {"ZC-E002": ["Nope 0/1"]}, "steps": []}))):
        (work / "drains" / name).write_text(text)
    for args in (("verify", str(work / "plan.json"), "--from", str(tmp_path / "none")),
                 ("push", str(work / "plan.json"), "--configs", str(work), "--dry-run", "--lab", str(tmp_path / "x.json")),
                 ("undrain", str(work / "plan.json"), "switch:ZC-O001", "--lab", str(tmp_path / "x.json"))):
        r = run_zcube(*args)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (args, r.stderr)
        assert r.stderr.count("not a drain record") >= 3, (args, r.stderr)
        for name in ("switch-ZC-O001.json", "link-F00001.json: ports.ZC-O001", "link-F00001.json: steps", "switch-ZC-E002.json: ports"):
            assert f"drains/{name}" in r.stderr, (args, name, r.stderr)


def test_undrain_of_an_element_not_drained_says_what_is(lab64_build, tmp_path):
    """`zcube undrain PLAN switch:ZC-O005` with no such record said "is not drained (no record)" and no more."""
    import shutil

    from zcube_deploy.drain.run import DrainOptions, undrain

    work = tmp_path / "p"
    shutil.copytree(lab64_build, work, ignore=shutil.ignore_patterns("hall", "*.xlsx", "drains"))
    plan = json.loads((work / "plan.json").read_text())
    with pytest.raises(InputErrors) as got:
        undrain(plan, work, "switch:ZC-O005", DrainOptions(configs_dir=work), None)
    assert got.value.problems[0].hint == f"nothing is drained ({work / 'drains'} holds no record)", got.value.problems
    (work / "drains").mkdir()
    (work / "drains" / "link-F00001.json").write_text(json.dumps({
        "element": "link:F00001", "ports": {"ZC-E002": ["TwoHundredGigabitEthernet 0/1:1"]}, "status": "drained",
        "steps": [{"step": "ports", "ok": True, "shut": {"ZC-E002": ["TwoHundredGigabitEthernet 0/1:1"]}}]}))
    with pytest.raises(InputErrors) as got:
        undrain(plan, work, "switch:ZC-O005", DrainOptions(configs_dir=work), None)
    assert got.value.problems[0].hint == "drained now: link:F00001", got.value.problems


@pytest.mark.lab
def test_overlapping_drains_keep_each_other(bgp_build, drain_lab, tmp_path):
    """A link drain on a drained switch keeps the switch drained; its undrain reverses only its own lines."""
    plan, plan_file, lab, lab_json = drain_lab
    base = _running(lab, "ZC-O005")
    assert run_zcube("drain", plan_file, "switch:ZC-O005", "--lab", lab_json, "--settle", "0").returncode == 0
    drained = _running(lab, "ZC-O005")
    r = run_zcube("drain", plan_file, "link:F00017", "--lab", lab_json)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _running(lab, "ZC-O005") == drained  # its end was already shut: nothing of the switch drain undone
    u = run_zcube("undrain", plan_file, "link:F00017", "--lab", lab_json)
    assert u.returncode == 0 and "back as planned" in u.stdout, u.stdout + u.stderr
    assert "still drained: switch:ZC-O005" in u.stdout, u.stdout  # "back as planned" alone misled a new user
    assert _running(lab, "ZC-O005") == drained and (bgp_build / "drains" / "switch-ZC-O005.json").exists()
    v = run_zcube("verify", plan_file, "--lab", lab_json)
    assert v.returncode == 0, v.stdout
    a = run_zcube("audit", plan_file, "--lab", lab_json, "-o", str(tmp_path / "audit"))
    assert a.returncode == 0, a.stdout  # the drain's lines are not drift
    u = run_zcube("undrain", plan_file, "switch:ZC-O005", "--lab", lab_json)
    assert u.returncode == 0 and "back as planned" in u.stdout and "still drained" not in u.stdout, u.stdout + u.stderr
    assert _running(lab, "ZC-O005") == base


def test_a_drained_port_found_up_is_a_finding_with_its_fix(lab64_build, tmp_path):
    """A port a drain record has shut that someone brought back by hand: verify reports it (drained_up, never set
    aside), and audit both that and the config drift whose fix shuts it again; the port that stayed shut is set aside."""
    from zcube_deploy.audit.run import AuditOptions, audit_once
    from zcube_deploy.lab.core import LabModel
    from zcube_deploy.platforms import platform_module
    from zcube_deploy.verify.observe import record_name
    from zcube_deploy.verify.pipeline import run_verify

    plan = json.loads((lab64_build / "plan.json").read_text())
    model = LabModel(plan)
    model.enable_secret = "en"

    def feed(name, lines):
        s = model.new_session(name)
        s.feed("enable")
        s.feed("en")
        for line in ["configure terminal", *lines, "end"]:
            s.feed(line)
        return s

    for sw in plan["switches"]:
        text = (lab64_build / "configs" / f"{sw['name']}.cfg").read_text()
        feed(sw["name"], [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("!") and ln != "end"])
    sw = plan["switches"][0]
    shut, back = sw["interfaces"][0]["name"], sw["interfaces"][1]["name"]
    feed(sw["name"], [f"interface {shut}", "shutdown", "exit"])  # drained, and still shut; `back` was brought back up by hand
    rec = tmp_path / "rec"
    for s in plan["switches"]:
        (rec / s["name"]).mkdir(parents=True)
        for cmd in platform_module("ruijie_rgos").VERIFY_COMMANDS:
            out = feed(s["name"], []).feed(cmd)
            (rec / s["name"] / record_name(cmd)).write_text(out if isinstance(out, str) else "".join(out))
    drained = {sw["name"]: {shut, back}}
    v = run_verify(plan, None, replay_dir=str(rec), drained=drained)
    assert [(f["kind"], f["ends"][0]["port"]) for f in v["findings"]] == [("drained_up", back)], v["findings"]
    assert "undrain" in v["findings"][0]["instruction"] and v["summary"]["drained"]["findings_set_aside"] >= 1
    a = audit_once(plan, str(lab64_build / "plan.json"), tmp_path / "a", AuditOptions(lab64_build, replay_dir=str(rec), drained=drained))
    got = sorted((f["kind"], f.get("section") or f["ends"][0]["port"]) for f in a.findings)
    assert got == [("config_missing", f"interface {back}"), ("drained_up", back)], got
    fix = next(f["fix"] for f in a.findings if f["kind"] == "config_missing")
    assert fix == [f"interface {back}", " shutdown", "exit"]


def test_undrain_steps_reverse_the_drain_fabric_first():
    """Undrain is the drain reversed (the twin measured one push losing echoes: GPU ports up before the sessions):
    fabric ports up first, then the GPU ports, then graceful shutdown off; from a partial drain only what remains."""
    from zcube_deploy.drain.run import undrain_steps

    rec = {"element": "switch:ZC-O001", "blast": {"host_ports": ["gpu0001:nic0-p1", "gpu0002:nic0-p1"]},
           "ports": {"ZC-O001": ["H1", "H2", "F1", "F2"]},
           "steps": [{"step": "steer", "ok": True, "shut": {"ZC-O001": []}, "graceful": ["ZC-O001"]},
                     {"step": "host ports", "ok": True, "shut": {"ZC-O001": ["H1", "H2"]}, "graceful": ["ZC-O001"]},
                     {"step": "fabric ports", "ok": True, "shut": {"ZC-O001": ["H1", "H2", "F1", "F2"]}, "graceful": ["ZC-O001"]}]}
    assert undrain_steps(rec) == [("fabric ports", {"ZC-O001": ("H1", "H2")}, {"ZC-O001"}),
                                  ("host ports", {}, {"ZC-O001"}), ("steer off", {}, set())]
    rec["steps"][-1]["ok"] = False  # the drain stopped after its GPU ports: nothing of the fabric to bring back
    assert undrain_steps(rec) == [("host ports", {}, {"ZC-O001"}), ("steer off", {}, set())]
    rec["steps"] = rec["steps"][:1]  # only steered
    assert undrain_steps(rec) == [("steer off", {}, set())]
    # the hosts took their ports down (--host-command): they come back after the switch's GPU ports, before the steer
    moved = {"step": "hosts", "ok": True, "shut": {"ZC-O001": []}, "graceful": ["ZC-O001"], "hosts": {"ran": True, "state": "down"}}
    rec["steps"] = [rec["steps"][0], moved]
    assert undrain_steps(rec) == [("hosts", {}, {"ZC-O001"}), ("steer off", {}, set())]
    rec["steps"].append({"step": "undrain hosts", "ok": True, "shut": {}, "graceful": ["ZC-O001"], "hosts": {"ran": True, "state": "up"}})
    assert undrain_steps(rec) == [("steer off", {}, set())]
    rec["steps"] = [rec["steps"][0], {**moved, "hosts": {"ran": False, "state": "down"}}]  # no --host-command: nothing to undo
    assert undrain_steps(rec) == [("steer off", {}, set())]
    link = {"element": "link:F00001", "blast": {"host_ports": []}, "ports": {"ZC-O001": ["F1"], "ZC-E002": ["F9"]},
            "steps": [{"step": "ports", "ok": True, "shut": {"ZC-O001": ["F1"], "ZC-E002": ["F9"]}, "graceful": []}]}
    assert undrain_steps(link) == [("ports", {}, set())]


def test_host_commands_are_split_before_the_names_go_in():
    """--host-command: one argument vector per GPU port, the names formatted into words (never parsed by a shell
    of ours), a name that could smuggle anything refused, a template without {port} refused."""
    from zcube_deploy.drain.run import host_commands

    cmds = host_commands("ssh {server} ip link set dev {port} {state}", ["gpu01:ens1f0np0", "gpu02:ens2f0np0"], "down")
    assert cmds == [["ssh", "gpu01", "ip", "link", "set", "dev", "ens1f0np0", "down"],
                    ["ssh", "gpu02", "ip", "link", "set", "dev", "ens2f0np0", "down"]]
    assert host_commands("sh -c 'echo {server} {port}'", ["gpu01:p1"], "up") == [["sh", "-c", "echo gpu01 p1"]]
    for bad_port in ("gpu01:p1;reboot", "gpu01:p 1", "gpu01:$(x)"):
        with pytest.raises(InputErrors):
            host_commands("ssh {server} ip link set dev {port} {state}", [bad_port], "down")
    with pytest.raises(InputErrors):
        host_commands("ssh {server} true", ["gpu01:p1"], "down")
    with pytest.raises(InputErrors):
        host_commands("ssh {server} {nope} {port}", ["gpu01:p1"], "down")


def test_the_hosts_step_says_what_its_commands_did_and_undrain_does_not_claim_more(tmp_path):
    """A host command that fails: the step said "8 GPU ports taken down by their hosts" before any command ran, then
    listed the failures (`exit 1: ` with nothing after it), and undrain's refusal said the drain "took 8 GPU ports
    down" when none was. Now: the count done and failed, the exit code with "(no output)", and "not known"."""
    from zcube_deploy.drain.run import DrainOptions, hosts_left, move_hosts

    ports = [f"gpu0{i}:ens{i}f0np0" for i in range(1, 4)]
    said: list[str] = []
    opts = DrainOptions(configs_dir=tmp_path, host_command="sh -c 'test {port} != ens2f0np0' {port}")
    moved = move_hosts(ports, "down", opts, said.append)
    assert said == ["  2 of 3 done, 1 failed:", "  gpu02:ens2f0np0: exit 1 (no output)"], said
    record = {"steps": [{"step": "hosts", "ok": False, "hosts": moved}]}
    assert hosts_left(record, 3) == ("the drain ran --host-command to take 3 GPU ports down on their hosts: 2 done, 1 failed "
                                     "(their ports' state on the hosts is not known)")
    said.clear()
    moved = move_hosts(ports, "down", DrainOptions(configs_dir=tmp_path, host_command="true {port}"), said.append)
    assert said == ["  3 of 3 done"] and hosts_left({"steps": [{"step": "hosts", "ok": True, "hosts": moved}]}, 3) == \
        "the drain took 3 GPU ports down on their hosts (--host-command)"


def test_counts_of_one_are_singular_and_hints_name_the_plan(lab64_build, tmp_path):
    """A link drain said "1 fabric links down", undrain "in 1 steps", push's steps "(1 lines)"; its hints
    `zcube push PLAN --only SWITCH` where the plan and the switch were known."""
    from zcube_deploy.drain.run import DrainOptions, blast_lines, command_for, counted

    assert [counted(n, "fabric link") for n in (0, 1, 2)] == ["0 fabric links", "1 fabric link", "2 fabric links"]
    assert counted(1, "switch") == "1 switch" and counted(3, "switch") == "3 switches"
    plan = json.loads((lab64_build / "plan.json").read_text())
    link = blast_radius(plan, parse_element("link:F00001", plan))
    said = blast_lines(link, tmp_path / "blast.json")[0]
    assert "2 ports down, 0 GPU ports move to their other port, 1 fabric link down, " in said, said
    switch = blast_lines(blast_radius(plan, parse_element("switch:ZC-O001", plan)), tmp_path / "blast.json")[0]
    assert f"{plan['sizing']['K']} GPU ports move to their other port" in switch and " fabric links down" in switch, switch
    opts = DrainOptions(configs_dir=lab64_build / "r", lab_path="lab dir/lab.json", plan_path=str(lab64_build / "plan.json"))
    assert command_for(opts, "push", "ZC-O001") == (f"zcube push {lab64_build / 'plan.json'} --only ZC-O001 --configs "
                                                    f"{lab64_build / 'r'} --lab 'lab dir/lab.json'")
    assert command_for(DrainOptions(configs_dir=lab64_build, plan_path=str(lab64_build)), "verify", "ZC-O001,ZC-E002") == \
        f"zcube verify {lab64_build} --only ZC-O001,ZC-E002"


def test_the_drains_last_line_says_the_check_and_the_record_file(tmp_path):
    """It said "drained; record out/drains" (a folder) and nothing of step 5's check; a check not run must say so."""
    from zcube_deploy.drain.run import closing_line

    doc = {"element": "switch:ZC-O001", "status": "drained", "ports": {"ZC-O001": ["A", "B"]}, "check": {"ports_down": True}}
    (tmp_path / "drains").mkdir()
    assert closing_line(doc, tmp_path, dry_run=False) == "drained; check: the 2 drained ports read down; no record written"
    (tmp_path / "drains" / "switch-ZC-O001.json").write_text("{}")
    assert closing_line(doc, tmp_path, dry_run=False).endswith(f"; record {tmp_path / 'drains' / 'switch-ZC-O001.json'}")
    doc.update(status="drained, check not run", check={"ports_down": None, "error": "ConnectionException: x"})
    assert "; check not run: ConnectionException: x; record " in closing_line(doc, tmp_path, dry_run=False)
    doc.update(status="drained, check failed", check={"ports_down": False, "still_up": ["ZC-O001 B"]})
    assert "; check: 1 drained port reads up: ZC-O001 B; record " in closing_line(doc, tmp_path, dry_run=False)
    assert closing_line({**doc, "status": "would drain"}, tmp_path, dry_run=True) == "would drain"


def test_a_hand_edit_refuses_the_drain_before_step_1_with_its_lines_and_no_record(lab64_build, tmp_path):
    """Mode static: step 1 is the hosts' (no push), so the switch's state was first checked before step 2, after the
    hosts had acted, and the drain stopped there with exit 1 and a record that then blocked push and undrain; a dry
    run folded the repair into its diff. Now: exit 2 before step 1, every differing line, the hint, no record."""
    from zcube_deploy import push_configs
    from zcube_deploy.lab.server import running_lab

    work = tmp_path / "out"
    shutil.copytree(lab64_build, work, ignore=shutil.ignore_patterns("drains", "drain-work"))
    plan = json.loads((work / "plan.json").read_text())
    with running_lab(plan, out_dir=tmp_path / "lab") as lab:
        lab_json = str(tmp_path / "lab" / "lab.json")
        assert push_configs(plan, work, dry_run=False, lab=lab_json, only="ZC-O001")["ok"]
        _configure(lab, "ZC-O001", ["interface TwoHundredGigabitEthernet 0/1:1", "description by-hand", "exit"])
        before = _running(lab, "ZC-O001")
        for extra in (["--dry-run"], []):
            r = run_zcube("drain", str(work / "plan.json"), "switch:ZC-O001", "--lab", lab_json, *extra)
            assert r.returncode == 2, (extra, r.stdout, r.stderr)
            assert "ZC-O001: interface TwoHundredGigabitEthernet 0/1:1" in r.stderr and "by-hand" in r.stderr, r.stderr
            # the hint is the command to paste: this plan, this switch, this lab (it said `zcube push PLAN --only SWITCH`)
            assert f"`zcube push {work / 'plan.json'} --only ZC-O001 --lab {lab_json}`" in r.stderr, r.stderr
            assert "step 1" not in r.stdout and "would drain" not in r.stdout
            assert not (work / "drains").exists()
        assert _running(lab, "ZC-O001") == before
