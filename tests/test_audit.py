"""zcube audit: config drift (pure, and seeded by hand edits in a pushed lab), verify's checks, metrics."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rgos_oracles as oracles
from conftest import run_zcube
from zcube_deploy.audit.drift import DRIFT_KINDS, config_drift
from zcube_deploy.audit.run import AuditOptions, audit_once
from zcube_deploy.platforms.ruijie_rgos.lab.drift import DRIFT_FAULT_KINDS, Drift, apply_drifts, plan_drifts
from zcube_deploy.platforms import platform_module
from zcube_deploy.push.scope import ManagedScope
from zcube_deploy.safety import redact_secrets

RGOS = platform_module("ruijie_rgos")


@pytest.fixture(scope="module")
def built(lab64_build):
    plan = json.loads((lab64_build / "plan.json").read_text())
    intended = {sw["name"]: (lab64_build / "configs" / f"{sw['name']}.cfg").read_text() for sw in plan["switches"]}
    return lab64_build, plan, intended


def _drift(plan, intended, name, running):
    sw = next(s for s in plan["switches"] if s["name"] == name)
    scope = ManagedScope.for_switch(plan, sw, RGOS.top_level_lines(intended[name]), "ruijie_rgos")
    return config_drift(name, running, intended[name], scope.owns, RGOS.drift_rows)


def test_no_drift_when_running_equals_rendered_and_site_lines_are_ignored(built):
    _, plan, intended = built
    site = "username admin privilege 15 secret 5 $1$x\nsnmp-server location hall-B\nip route 0.0.0.0 0.0.0.0 172.16.0.1\n"
    for name in ("ZC-O001", "ZC-E002"):
        assert _drift(plan, intended, name, intended[name] + site) == []


def test_each_hand_edit_is_named_with_its_kind_and_fix(built):
    _, plan, intended = built
    text = intended["ZC-O001"]
    port = "interface TwoHundredGigabitEthernet 0/1:2"
    routes = [ln for ln in text.splitlines() if ln.startswith("ip route ")]
    running = (text.replace("hostname ZC-O001", "hostname ZC-HAND")
               .replace(f"{port}\n description gpu02 ens1f0np0 H000017", f"{port}\n description edited\n shutdown\n load-interval 30")
               .replace(routes[0] + "\n", "")
               + "ip route 10.0.0.64 255.255.255.240 10.200.0.7\n")
    got = Counter((f["kind"], f["section"]) for f in _drift(plan, intended, "ZC-O001", running))
    assert got == Counter({("config_changed", "hostname ZC-O001"): 1, ("config_changed", port): 1, ("port_shut", port): 1,
                           ("config_stray", port): 1, ("missing_route", routes[0]): 1,
                           ("stray_route", "ip route 10.0.0.64 255.255.255.240 10.200.0.7"): 1})
    # each finding's text names its switch: a terminal shows `ID kind: what` and nothing else
    assert all("ZC-O001" in f["what"] for f in _drift(plan, intended, "ZC-O001", running))
    f = next(f for f in _drift(plan, intended, "ZC-O001", running) if f["kind"] == "port_shut")
    assert f["fix"][0] == port and " no shutdown" in f["fix"] and f["id"].startswith("A")
    assert "verify: its cable's down finding, cause shut" in f["what"]  # the two name each other
    # a changed next hop is one change, not a stray plus a missing route
    changed = text.replace(routes[0], routes[0].rsplit(" ", 1)[0] + " 10.200.0.99")
    assert [f["kind"] for f in _drift(plan, intended, "ZC-O001", changed)] == ["config_changed"]


def test_drift_ids_are_stable_and_distinct(built):
    _, plan, intended = built
    drifts = plan_drifts(plan, intended, 60, seed=3)
    ids = []
    for _ in range(2):
        ids.append(sorted(f["id"] for name in intended for f in _drift(plan, intended, name, _edited(intended[name], drifts, name))))
    assert ids[0] == ids[1] and len(set(ids[0])) == len(ids[0]) == 60


def _edited(text: str, drifts, name: str) -> str:
    """Apply drifts to a config text the way the switch would show them (for the pure test)."""
    for d in (d for d in drifts if d.switch == name):
        if d.kind == "stray_route":
            text += d.lines[0] + "\n"
        elif d.kind == "missing_route":
            text = text.replace(d.section + "\n", "")
        else:
            head, edit = d.section, d.lines[1].strip()
            lines = text.split("\n")
            i = lines.index(head)
            j = i + 1
            while j < len(lines) and lines[j].startswith(" "):
                j += 1
            block = lines[i + 1:j]
            if edit == "no description":
                block = [b for b in block if not b.startswith(" description ")]
            elif edit.startswith("description "):
                block = [(" " + edit if b.startswith(" description ") else b) for b in block]
            elif edit == "shutdown":
                block = [b for b in block if b != " no shutdown"] + [" shutdown"]
            else:
                block = block + [" " + edit]
            lines[i + 1:j] = block
            text = "\n".join(lines)
    return text


def test_kinds_of_the_lab_faults_are_the_audit_kinds():
    assert set(DRIFT_FAULT_KINDS) == set(DRIFT_KINDS)


@pytest.mark.lab
def test_seeded_drifts_in_a_pushed_lab_are_all_found_and_push_repairs_them(built, tmp_path):
    """Hand edits over SSH on a pushed lab: every one found with its kind, nothing else but their link
    effects, the fixes repair it (push) and a second audit is clean; the CLI's exit codes and metrics."""
    from zcube_deploy import push_configs
    from zcube_deploy.lab.server import lab_credentials, running_lab

    out, plan, intended = built
    with running_lab(plan, out_dir=tmp_path / "lab") as lab:
        lab_json = str(tmp_path / "lab" / "lab.json")
        assert push_configs(plan, out, dry_run=False, lab=lab_json)["ok"]
        opts = AuditOptions(Path(out), lab_path=lab_json)
        from zcube_deploy.access import credentials

        creds = credentials(True)
        clean = audit_once(plan, str(out / "plan.json"), tmp_path / "a0", opts, creds)
        assert clean.clean, clean.findings[:3]
        drifts = plan_drifts(plan, intended, 120, seed=11)
        apply_drifts(lab.endpoints, lab_credentials(), drifts)
        unused = plan["port_map"]["unused_ports"][0]  # push owns the unused ports too: a hand edit there is drift
        apply_drifts(lab.endpoints, lab_credentials(), [Drift("ZC-E002", "config_missing", f"interface {unused}",
                                                              (f"interface {unused}", " no shutdown", "exit"))])
        r = audit_once(plan, str(out / "plan.json"), tmp_path / "a1", opts, creds)
        config = [f for f in r.findings if f.get("source") == "config"]
        expected = Counter((d.switch, d.kind, d.section) for d in drifts) + Counter({("ZC-E002", "config_missing", f"interface {unused}"): 1})
        assert Counter((f["device"], f["kind"], f["section"]) for f in config) == expected
        shut = {(d.switch, d.section.split(" ", 1)[1]) for d in drifts if d.kind == "port_shut"}
        others = [f for f in r.findings if f.get("source") != "config"]
        routed = {d.switch for d in drifts if d.kind in ("stray_route", "missing_route", "port_shut")}
        for f in others:  # only the drifts' own effects may show: shut ports' links down, changed routing tables
            if f["kind"] == "down":  # the switch says shut: a push, never cable work (nor a lab fix)
                assert any((e["device"], e["port"]) in shut for e in f["ends"]), f
                assert (f["cause"], f["fix"]) == ("shut", []) and "port_shut" in f["instruction"], f
            else:
                assert f["kind"] == "route" and f["ends"][0]["device"] in routed, f
        # the CLI: exit 1 with the findings and the metrics file, then push repairs and exit 0
        res = run_zcube("audit", str(out / "plan.json"), "--lab", lab_json, "-o", str(tmp_path / "a2"), "--metrics", str(tmp_path / "m.prom"))
        assert res.returncode == 1, res.stderr
        cli_ids = sorted(f["id"] for f in json.loads((tmp_path / "a2" / "audit.json").read_text())["findings"])
        assert cli_ids == sorted(f["id"] for f in r.findings)  # the CLI reads the plan as the library does (port_map too)
        prom = (tmp_path / "m.prom").read_text()
        assert 'zcube_audit_findings{cluster="lab64",kind="port_shut"} %d.0' % expected_kind(drifts, "port_shut") in prom
        assert 'zcube_audit_clean{cluster="lab64"} 0.0' in prom
        assert push_configs(plan, out, dry_run=False, lab=lab_json)["ok"]
        res = run_zcube("audit", str(out / "plan.json"), "--lab", lab_json, "-o", str(tmp_path / "a3"), "--metrics", str(tmp_path / "m.prom"),
                        "--runner", "nornir")
        assert res.returncode == 0, res.stdout + res.stderr
        clean = (tmp_path / "m.prom").read_text()
        assert 'zcube_audit_clean{cluster="lab64"} 1.0' in clean
        # every kind a series, 0 included, verify's too (a series that vanishes at 0 breaks an alert)
        assert all(f'zcube_audit_findings{{cluster="lab64",kind="{k}"}} 0.0' in clean for k in ("down", "route", "bgp", "drained_up", "config_stray"))
        # offline from the recordings of the drifted run: the same findings
        res = run_zcube("audit", str(out / "plan.json"), "--from", str(tmp_path / "a1" / "recordings"), "-o", str(tmp_path / "a4"))
        assert res.returncode == 1
        offline = json.loads((tmp_path / "a4" / "audit.json").read_text())["findings"]
        assert sorted(f["id"] for f in offline) == sorted(f["id"] for f in r.findings)


def expected_kind(drifts, kind: str) -> int:
    return sum(d.kind == kind for d in drifts)


def test_a_switch_without_a_recording_is_not_checked_not_clean(built, tmp_path):
    out, plan, intended = built
    rec = tmp_path / "rec"
    rec.mkdir()
    res = run_zcube("audit", str(out / "plan.json"), "--from", str(rec), "-o", str(tmp_path / "a"))
    assert res.returncode == 1
    doc = json.loads((tmp_path / "a" / "audit.json").read_text())
    nc = [f for f in doc["findings"] if f["kind"] == "not_checked" and f["check"] == "config_drift"]
    assert {f["device"] for f in nc} == set(intended) and not doc["summary"]["clean"]
    # nor did verify's checks run there: said, not silent
    nv = [f for f in doc["findings"] if f["kind"] == "not_checked" and f["check"] == "verify"]
    assert sorted(f["device"] for f in nv) == sorted(intended) and all("no recording" in f["what"] for f in nv)


def test_a_check_not_run_is_a_finding_on_every_switch_it_skipped(built, tmp_path, monkeypatch):
    """More switches than a terminal note lists (verify's summary once named only the first 20, and audit made
    its not_checked findings from that list): each switch gets its not_checked finding in audit.json."""
    import zcube_deploy.verify.pipeline as pipeline

    out, plan, intended = built
    many = [f"GHOST-{i:02d}" for i in range(30)]  # (switches a check skipped, as verify's check reports them)
    real = pipeline.check

    def check(*a, **k):
        findings, not_checked = real(*a, **k)
        return findings, {**not_checked, "lldp": {"`x` was not collected": many}}

    monkeypatch.setattr(pipeline, "check", check)
    rec = tmp_path / "rec"
    rec.mkdir()
    r = audit_once(plan, str(out / "plan.json"), tmp_path / "a", AuditOptions(out, replay_dir=str(rec)))
    doc = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert sorted(f["device"] for f in doc["findings"] if f["kind"] == "not_checked" and f.get("check") == "lldp") == many
    assert not r.clean


def test_an_interrupted_live_recording_leaves_no_half_recording(built, tmp_path, monkeypatch):
    """Ctrl-C in the middle of a live audit (``--every`` runs until it): the running configs recorded so far are
    removed, the earlier run's recordings stay whole (a new user found ``OUT/recordings.new`` left behind)."""
    import zcube_deploy.audit.run as run

    out, plan, _ = built
    earlier = tmp_path / "a" / "recordings" / "ZC-O001"
    earlier.mkdir(parents=True)
    (earlier / "kept.txt").write_text("the earlier run's")

    def record_live(plan, plan_path, opts, names, rec, creds):
        (rec / "ZC-O001").mkdir(parents=True)
        (rec / "ZC-O001" / "running.txt").write_text("hostname ZC-O001\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(run, "lab_targets", lambda *a, **k: ({}, None))
    monkeypatch.setattr(run, "record_live", record_live)
    with pytest.raises(KeyboardInterrupt):
        audit_once(plan, str(out / "plan.json"), tmp_path / "a", AuditOptions(out, lab_path=str(tmp_path / "lab.json")))
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["recordings"]
    assert (earlier / "kept.txt").read_text() == "the earlier run's"


def test_every_runs_again_and_count_stops_it(built, tmp_path):
    out, _, _ = built
    rec = tmp_path / "rec"
    rec.mkdir()
    res = run_zcube("audit", str(out / "plan.json"), "--from", str(rec), "-o", str(tmp_path / "a"), "--every", "1", "--count", "2",
                    "--metrics", str(tmp_path / "m.prom"))
    assert res.returncode == 1 and res.stdout.count("] run ") == 2, res.stdout + res.stderr
    assert "run 1:" in res.stdout and "run 2:" in res.stdout
    # each run says where it wrote (a clean run printed no path at all)
    assert res.stdout.count(f"  written: {tmp_path / 'a' / 'audit.json'}, {tmp_path / 'm.prom'}\n") == 2, res.stdout
    assert 'zcube_audit_switches{cluster="lab64",state="audited"} 16.0' in (tmp_path / "m.prom").read_text()
    res = run_zcube("audit", str(out / "plan.json"), "--from", str(rec), "-o", str(tmp_path / "a"), "--count", "2")
    assert res.returncode == 2 and "--count goes with --every" in res.stderr


def test_secrets_in_a_drifted_line_never_reach_the_finding(built):
    from zcube_deploy.safety import redact_secrets

    _, plan, intended = built
    port = "interface TwoHundredGigabitEthernet 0/1:2"
    running = intended["ZC-O001"].replace(f"{port}\n", f"{port}\n ip ospf authentication-key 0 S3cretPW\n")
    sw = next(s for s in plan["switches"] if s["name"] == "ZC-O001")
    scope = ManagedScope.for_switch(plan, sw, RGOS.top_level_lines(intended["ZC-O001"]), "ruijie_rgos")
    found = config_drift("ZC-O001", running, intended["ZC-O001"], scope.owns, RGOS.drift_rows, redact_secrets)
    assert [f["kind"] for f in found] == ["config_stray"] and "S3cretPW" not in json.dumps(found)
    plain = config_drift("ZC-O001", running, intended["ZC-O001"], scope.owns, RGOS.drift_rows)
    assert "S3cretPW" in json.dumps(plain) and plain[0]["id"] == found[0]["id"]  # (the known-bad case; the ID is the same)


def test_the_fast_path_agrees_with_the_remediation(built):
    """drift_rows's text comparison answers only "no drift", and only when hier_config's remediation is empty too."""
    from zcube_deploy.platforms.ruijie_rgos import drift as rgos_drift
    from zcube_deploy.platforms.ruijie_rgos.driver import remediation_lines
    from zcube_deploy.platforms.ruijie_rgos.fastparse import scoped_sections

    _, plan, intended = built
    sw = plan["switches"][0]
    scope = ManagedScope.for_switch(plan, sw, RGOS.top_level_lines(intended[sw["name"]]), "ruijie_rgos")
    text = intended[sw["name"]]
    sections = text.split("\n!\n")
    reordered = "\n!\n".join(sections[:1] + sections[1:][::-1])  # the same sections, another order
    for running in (text, reordered, text + "snmp-server location x\n", text.replace(" no shutdown", " shutdown", 1)):
        fast = scoped_sections(running, scope.owns) == scoped_sections(text, scope.owns)
        assert not fast or remediation_lines(running, text, scope.owns) == []
        assert (rgos_drift.drift_rows(running, text, scope.owns) == []) == (remediation_lines(running, text, scope.owns) == [])


def _general_findings(plan, intended, name, running):
    """Config drift the general way, nothing read once or skipped: hier_config's own top-level lines for the scope,
    both configs parsed into trees, the remediation classified against the running sections as drift.py read them
    before they became the general reader's (tests/rgos_oracles.py; no text fast path, no cache, no pool)."""
    from zcube_deploy.platforms.ruijie_rgos import drift as rgos_drift
    from zcube_deploy.platforms.ruijie_rgos.driver import remediation_lines

    sw = next(s for s in plan["switches"] if s["name"] == name)
    scope = ManagedScope.for_switch(plan, sw, [c.text for c in RGOS.parse_config(intended[name]).children], "ruijie_rgos")

    def rows(running, intended, owns):
        return rgos_drift.classify(remediation_lines(running, intended, owns), oracles.running_sections(running))

    return config_drift(name, running, intended[name], scope.owns, rows, lambda t: redact_secrets(t, "ruijie_rgos"))


def write_running(rec: Path, running: dict[str, str]) -> None:
    """A recording folder holding only each switch's running config (what config drift reads)."""
    for name, text in running.items():
        (rec / name).mkdir(parents=True, exist_ok=True)
        (rec / name / "show_running-config.txt").write_text(text)


def test_the_fast_path_gives_the_general_findings_byte_for_byte(built, tmp_path):
    """audit's config drift (text fast path, rendered configs read once and cached, a process pool) gives the very
    findings of the general path on seeded drifts: the same JSON bytes, cold and warm, on 1 and on 2 processes."""
    from zcube_deploy.audit.run import drift_findings

    _, plan, intended = built
    drifts = plan_drifts(plan, intended, 120, seed=5)
    running = {n: _edited(t, drifts, n) for n, t in intended.items()}
    running["ZC-E002"] = running["ZC-E002"].replace(" no shutdown\n", " no shutdown\n ip ospf authentication-key 0 S3cret\n", 1)
    write_running(tmp_path, running)
    names = sorted(intended)
    general = [f for n in names for f in _general_findings(plan, intended, n, running[n])]
    assert len(general) == 121 and "S3cret" not in json.dumps(general)
    cache: dict = {}
    for jobs, c in ((1, None), (2, cache), (2, cache), (1, cache)):
        found, problems = drift_findings(plan, names * 3, intended, tmp_path, c, jobs=jobs)  # > 32 switches: the pool runs
        assert not problems and json.dumps(found) == json.dumps(general * 3)
    assert len(cache) == len(names)


def test_the_file_cache_of_rendered_readings_never_changes_a_finding(built, tmp_path):
    """audit/cache.py: the rendered configs' readings kept in a folder give the general findings cold and warm, on
    1 and 2 processes; a reading is found by its config's text (an edited config is read anew, not the old one's
    reading used); a file of another shape or no JSON is read anew; a folder that cannot be written means no cache."""
    from zcube_deploy.audit.cache import intended_reading
    from zcube_deploy.audit.run import drift_findings

    _, plan, intended = built
    drifts = plan_drifts(plan, intended, 60, seed=7)
    running = {n: _edited(t, drifts, n) for n, t in intended.items()}
    write_running(tmp_path / "rec", running)
    names = sorted(intended)
    general = json.dumps([f for n in names for f in _general_findings(plan, intended, n, running[n])] * 3)
    store = tmp_path / "store"
    for jobs in (2, 2, 1):  # cold (written by the pool's processes), then warm
        found, problems = drift_findings(plan, names * 3, intended, tmp_path / "rec", None, jobs=jobs, store=store)
        assert not problems and json.dumps(found) == general
    files = sorted(store.iterdir())
    assert len(files) == len(set(intended.values())) and all(f.suffix == ".json" for f in files)
    # a switch running its rendered config, which is then edited (a route fewer): its own reading, not the old one's
    # (which would say "no drift" without asking hier_config), so the route is found
    name = names[0]
    write_running(tmp_path / "clean", {name: intended[name]})
    assert drift_findings(plan, [name], intended, tmp_path / "clean", None, jobs=1, store=store) == ([], [])
    route = next(line for line in intended[name].splitlines() if line.startswith("ip route 10."))
    edited = {**intended, name: intended[name].replace(route + "\n", "")}
    found, _ = drift_findings(plan, [name], edited, tmp_path / "clean", None, jobs=1, store=store)
    assert json.dumps(found) == json.dumps(_general_findings(plan, edited, name, intended[name])) and found
    # damaged files: read anew (and rewritten), the same findings
    files[0].write_text("{not json")
    files[1].write_text(json.dumps({"top": ["hostname X"], "sections": "hostname X", "counts": [0]}))
    found, _ = drift_findings(plan, names, intended, tmp_path / "rec", None, jobs=1, store=store)
    assert json.dumps(found * 3) == general
    assert RGOS.is_reading(json.loads(files[0].read_text())) and RGOS.is_reading(json.loads(files[1].read_text()))
    # a folder that cannot be made (a file in its place): no cache, the same findings
    (tmp_path / "blocked").write_text("")
    found, _ = drift_findings(plan, names, intended, tmp_path / "rec", None, jobs=1, store=tmp_path / "blocked" / "cache")
    assert json.dumps(found * 3) == general
    assert intended_reading(None, "ruijie_rgos", intended[name]) == RGOS.intended_reading(intended[name])


def test_an_audit_of_the_whole_fabric_prunes_the_cache_to_its_configs(built, tmp_path):
    """A re-render leaves the old configs' readings behind: the next whole audit removes them (and stale temporary
    files), keeps every file it used, so the folder holds one file per compared config; an audit of some switches
    (--only) prunes nothing."""
    import os
    import time

    from zcube_deploy.audit.cache import file_name, prune

    out, plan, intended = built
    configs = tmp_path / "r"
    shutil.copytree(out / "configs", configs / "configs")
    shutil.copy(out / "manifest.json", configs / "manifest.json")
    write_running(tmp_path / "rec", intended)
    opts = AuditOptions(configs, replay_dir=str(tmp_path / "rec"))
    store = configs / ".audit-cache"
    for stale in ("0" * 64 + ".json", "1" * 64 + ".json"):  # the readings of configs rendered before
        store.mkdir(exist_ok=True)
        (store / stale).write_text("{}")
    (store / "x.1.tmp").write_text("")
    (store / "y.2.tmp").write_text("")
    os.utime(store / "y.2.tmp", (time.time() - 3600, time.time() - 3600))  # an interrupted write an hour ago
    audit_once(plan, str(out / "plan.json"), tmp_path / "a", AuditOptions(configs, replay_dir=str(tmp_path / "rec"), only="ZC-O00*"))
    assert (store / ("0" * 64 + ".json")).exists()  # --only: nothing pruned
    res = audit_once(plan, str(out / "plan.json"), tmp_path / "a", opts)
    assert not [f for f in res.findings if f.get("source") == "config"]  # (the recordings hold configs only)
    want = {file_name("ruijie_rgos", t) for t in intended.values()}
    assert {f.name for f in store.iterdir()} == want | {"x.1.tmp"}  # a fresh temporary file may be another audit's
    assert prune(store, "ruijie_rgos", intended.values()) == 0


@pytest.mark.slow
def test_a_thousand_seeded_drifts_in_the_lab_are_all_found_with_their_kind(glm1k_build, tmp_path):
    """Issue 26's audit target: >= 1,000 hand edits of every drift kind typed into glm-1k's simulated switches (their
    shell, in-process: what `apply_drifts` sends over SSH), recorded, audited: 100 % found with the right kind and
    section, no other config finding, no verify finding but the drifts' own effects; and the fast path's findings
    equal the general path's byte for byte on every switch."""
    from zcube_deploy.lab.core import LabModel
    from zcube_deploy.verify.observe import record_name

    plan = json.loads((glm1k_build / "plan.json").read_text())
    intended = {sw["name"]: (glm1k_build / "configs" / f"{sw['name']}.cfg").read_text() for sw in plan["switches"]}
    model = LabModel(plan)
    model.enable_secret = "en"

    def session(name):
        s = model.new_session(name)
        s.feed("enable")
        s.feed("en")
        return s

    def configure(name, lines):
        s = session(name)
        for line in ["configure terminal", *lines, "end"]:
            s.feed(line)

    def record(rec):
        for sw in plan["switches"]:
            (rec / sw["name"]).mkdir(parents=True)
            for cmd in RGOS.VERIFY_COMMANDS:
                out = session(sw["name"]).feed(cmd)
                (rec / sw["name"] / record_name(cmd)).write_text(out if isinstance(out, str) else "".join(out))

    for name, text in intended.items():
        configure(name, [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("!") and ln != "end"])
    record(tmp_path / "r0")
    opts = AuditOptions(glm1k_build, replay_dir=str(tmp_path / "r0"))
    clean = audit_once(plan, str(glm1k_build / "plan.json"), tmp_path / "a0", opts)
    assert clean.clean, clean.findings[:3]
    drifts = plan_drifts(plan, intended, 1200, seed=26)
    assert Counter(d.kind for d in drifts) == Counter(dict.fromkeys(DRIFT_FAULT_KINDS, 200))
    for d in drifts:
        configure(d.switch, list(d.lines))
    record(tmp_path / "r1")
    r = audit_once(plan, str(glm1k_build / "plan.json"), tmp_path / "a1", AuditOptions(glm1k_build, replay_dir=str(tmp_path / "r1")))
    config = [f for f in r.findings if f.get("source") == "config"]
    assert Counter((f["device"], f["kind"], f["section"]) for f in config) == Counter((d.switch, d.kind, d.section) for d in drifts)
    shut = {(d.switch, d.section.split(" ", 1)[1]) for d in drifts if d.kind == "port_shut"}
    routed = {d.switch for d in drifts if d.kind in ("stray_route", "missing_route", "port_shut")}
    for f in (f for f in r.findings if f.get("source") != "config"):  # only the drifts' own effects
        if f["kind"] == "down":
            assert any((e["device"], e["port"]) in shut for e in f["ends"]), f
            assert (f["cause"], f["fix"]) == ("shut", []), f
        else:
            assert f["kind"] == "route" and f["ends"][0]["device"] in routed, f
    running = {sw["name"]: (tmp_path / "r1" / sw["name"] / "show_running-config.txt").read_text() for sw in plan["switches"]}
    general = [f for n in sorted(running) for f in _general_findings(plan, intended, n, running[n])]
    assert json.dumps(sorted(general, key=lambda f: f["id"])) == json.dumps(sorted(config, key=lambda f: f["id"])).replace(', "source": "config"', "")


def test_a_check_verify_skipped_is_one_not_checked_finding_per_switch_and_check(built, tmp_path):
    """Verify's own not_checked findings are not copied beside audit's: each (switch, check) verify could not run
    is one finding in audit.json (naming the check), and the summary counts each once (it counted them twice)."""
    out, plan, intended = built
    write_running(tmp_path / "rec", intended)  # the running configs only: LLDP, link state and routes not recorded
    r = audit_once(plan, str(out / "plan.json"), tmp_path / "a", AuditOptions(out, replay_dir=str(tmp_path / "rec")))
    doc = json.loads((tmp_path / "a" / "audit.json").read_text())
    nc = [f for f in doc["findings"] if f["kind"] == "not_checked"]
    keys = Counter((f.get("device"), f.get("check")) for f in nc)
    assert nc and set(keys.values()) == {1} and None not in {k[1] for k in keys}, keys.most_common(3)
    assert {d for d, _ in keys} == set(intended) and {c for _, c in keys} >= {"cabling", "routes"}
    assert doc["summary"]["not_checked"] == len(nc) == len(doc["findings"]) and not r.clean


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_fast_test_of_two_configs_is_the_scoped_sections_comparison(built, data):
    """drift_rows's "no drift" test (the sections the two configs hold a different number of times, each asked to the
    scope) answers as the comparison of the two configs' sorted scoped sections does, on configs made of a rendered
    config's sections dropped, repeated, reordered, edited and joined by site lines; duplicates included (a set
    would miss a repeated planned section)."""
    from zcube_deploy.platforms.ruijie_rgos.drift import differing_sections
    from zcube_deploy.platforms.ruijie_rgos.fastparse import config_sections, scoped_sections

    _, plan, intended = built
    name = data.draw(st.sampled_from(sorted(intended)[:4]))
    sw = next(s for s in plan["switches"] if s["name"] == name)
    scope = ManagedScope.for_switch(plan, sw, RGOS.top_level_lines(intended[name]), "ruijie_rgos")
    secs = config_sections(intended[name])
    site = ["snmp-server location x", "ip route 0.0.0.0 0.0.0.0 172.16.0.1", "ip route 10.0.0.64 255.255.255.240 10.200.0.7"]
    pool = secs + site + [s.replace(" description", " description edited", 1) for s in secs[:40]] + [s + "\n shutdown" for s in secs[:40]]
    picked = data.draw(st.lists(st.sampled_from(pool), max_size=60))
    base = data.draw(st.sampled_from(["all", "none", "half"]))
    keep = secs if base == "all" else [] if base == "none" else secs[::2]
    running = "\n!\n".join(keep + picked) + "\n"
    same = scoped_sections(running, scope.owns) == scoped_sections(intended[name], scope.owns)
    fast = not any(scope.owns(s.split("\n", 1)[0]) for s in differing_sections(running, Counter(secs)))
    assert fast == same


def test_configs_rendered_from_another_plan_are_refused_as_push_refuses_them(lab64_build, tmp_path):
    """Audit shares push's manifest check: configs of another inventory (or with no manifest) are exit 2, not
    thousands of false drift findings."""
    work = tmp_path / "other"
    shutil.copytree(lab64_build / "configs", work / "configs")
    manifest = json.loads((lab64_build / "manifest.json").read_text())
    (work / "manifest.json").write_text(json.dumps({**manifest, "inventory_sha256": "0" * 64}))
    (tmp_path / "rec").mkdir()
    args = ("audit", str(lab64_build / "plan.json"), "--configs", str(work), "--from", str(tmp_path / "rec"), "-o", str(tmp_path / "a"))
    r = run_zcube(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{work / 'manifest.json'}: written for another inventory" in r.stderr and "cannot audit" in r.stderr
    assert not (tmp_path / "a" / "audit.json").exists()
    (work / "manifest.json").unlink()
    r = run_zcube(*args)
    assert r.returncode == 2 and f"{work / 'manifest.json'}: no manifest" in r.stderr and "--allow-edited" not in r.stderr


def test_a_live_recording_its_reader_refuses_is_not_checked_there_not_bad_input(built, tmp_path):
    """Offline (--from) a recording no switch prints is bad input (exit 2); in a live run the recordings are what the
    switches answered: that switch is not observed (a not_checked reason) and its running config is still compared."""
    from zcube_deploy.audit.run import inspect_recordings
    from zcube_deploy.errors import InputErrors

    out, plan, intended = built
    running = dict(intended)
    running["ZC-O003"] = running["ZC-O003"].replace(" ip address 10.", " ip address 10.999999999999999999", 1)
    write_running(tmp_path, running)
    names = sorted(intended)
    with pytest.raises(InputErrors):
        inspect_recordings(plan, names, intended, tmp_path, set())
    observed, errors, drift, no_config = inspect_recordings(plan, names, intended, tmp_path, set(), strict=False)
    assert set(errors) == {"ZC-O003"} and "could not be read" in errors["ZC-O003"] and "ZC-O003" not in observed
    assert len(observed) == len(names) - 1 and not no_config
    assert [(f["device"], f["kind"]) for f in drift] == [("ZC-O003", "config_changed")]


def test_a_folder_that_is_no_recording_of_the_plan_is_bad_input(built, tmp_path):
    """`--from` given the plan's own folder (it holds things, none of them a switch's recording): exit 2 naming the
    folder and what a recordings folder is, nothing audited; it was every check not_checked on every switch, exit 1."""
    out, plan, intended = built
    res = run_zcube("audit", str(out / "plan.json"), "--from", str(out), "-o", str(tmp_path / "a"))
    assert res.returncode == 2, res.stderr
    assert f"{out}: holds no recording of any of the plan's {len(intended)} switches" in res.stderr and "--record DIR" in res.stderr
    assert not (tmp_path / "a" / "audit.json").exists()


def test_the_rendered_configs_are_read_by_one_public_function(built, tmp_path):
    """``intended_configs`` is the one reader of the rendered configs (audit, `zcube lab drift`, the benchmark): a function
    of that name, no private alias beside it; every unreadable config at once, exit 2."""
    import zcube_deploy.audit.run as run
    from zcube_deploy.errors import InputErrors

    d, plan, intended = built
    assert run.intended_configs.__name__ == "intended_configs" and not hasattr(run, "_intended")
    names = sorted(intended)[:2]
    assert run.intended_configs(AuditOptions(d), names, ".cfg") == {n: intended[n] for n in names}
    (tmp_path / "configs").mkdir()
    with pytest.raises(InputErrors) as exc:
        run.intended_configs(AuditOptions(tmp_path), names, ".cfg")
    assert [p.path for p in exc.value.problems] == [str(tmp_path / "configs" / f"{n}.cfg") for n in names]
