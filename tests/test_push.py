"""Push against the lab over SSH: dry run, real push, idempotence, every device fault, canary, budget, secrets."""

from __future__ import annotations

import json

import napalm
import pytest

from conftest import build_example, run_zcube
from zcube_deploy.platforms.ruijie_rgos.driver import RuijieRGOSDriver, remediation_lines
from zcube_deploy.access import DEFAULT_ENABLE_SECRET, DEFAULT_PASSWORD, DEFAULT_USERNAME
from zcube_deploy.lab.server import running_lab
from zcube_deploy.push import Credentials, PushOptions, push_all, select_targets

pytestmark = pytest.mark.lab
CREDS = Credentials(DEFAULT_USERNAME, DEFAULT_PASSWORD, DEFAULT_ENABLE_SECRET)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_example(tmp_path_factory, "lab-64.yaml")


def plan_of(built):
    return json.loads((built / "plan.json").read_text())


def targets(lab, built, only=None):
    return select_targets(plan_of(built), built, only, lab.endpoints)


def opts(lab, **kw):
    kh = lab.out / "known_hosts"
    base = dict(concurrency=8, known_hosts=str(kh), timeout=5, read_timeout=20)
    base.update(kw)
    return PushOptions(**base)


@pytest.fixture
def lab(built, tmp_path, request):
    faults = getattr(request, "param", None)
    with running_lab(plan_of(built), faults=faults, out_dir=tmp_path / "lab") as lab:
        lab.out = tmp_path / "lab"
        yield lab


def owned_diff(built, name, have, want):
    """What push would still change on ``name`` (within the scope push owns)."""
    t = select_targets(plan_of(built), built, name, None)[0]
    return remediation_lines(have, want, t.scope.owns)


def running(lab, name):
    return lab.runner.call(lambda: lab.model.switches[name].running_config())


def startup(lab, name):
    return lab.runner.call(lambda: lab.model.switches[name].startup)


def test_napalm_finds_the_driver():
    assert napalm.get_network_driver("ruijie_rgos") is RuijieRGOSDriver


def test_driver_getters_shapes(lab):
    host, port = lab.endpoints["ZC-O001"]
    d = napalm.get_network_driver("ruijie_rgos")(host, DEFAULT_USERNAME, DEFAULT_PASSWORD, optional_args={
        "port": port, "secret": DEFAULT_ENABLE_SECRET, "known_hosts": str(lab.out / "known_hosts")})
    d.open()
    try:
        facts = d.get_facts()
        assert facts["vendor"] == "Ruijie" and facts["model"] == "RG-S6980-64QC" and facts["hostname"] == "Ruijie"
        assert "TwoHundredGigabitEthernet 0/1:1" in facts["interface_list"]
        nb = d.get_lldp_neighbors()
        assert nb["TwoHundredGigabitEthernet 0/1:1"] == [{"hostname": "gpu01", "port": "ens1f0np0"}]
        det = d.get_lldp_neighbors_detail()
        one = det["TwoHundredGigabitEthernet 0/5:1"][0]
        assert set(one) == {"parent_interface", "remote_port", "remote_port_description", "remote_chassis_id",
                            "remote_system_name", "remote_system_description", "remote_system_capab", "remote_system_enable_capab"}
        assert one["remote_system_capab"] == ["repeater", "bridge", "router"]
        itf = d.get_interfaces()["TwoHundredGigabitEthernet 0/1:1"]
        assert itf["is_up"] and itf["is_enabled"] and itf["speed"] == 200000.0
        cfg = d.get_config()
        assert cfg["running"].startswith("Building configuration") and "hostname Ruijie" in cfg["startup"]
        d.load_merge_candidate(config="hostname ZC-X\n")
        assert d.compare_config() == "hostname ZC-X"
        d.discard_config()
        assert d.compare_config() == ""
    finally:
        d.close()


def test_dry_run_changes_nothing(lab, built):
    report = push_all(targets(lab, built), CREDS, opts(lab, dry_run=True), built / "dry")
    assert report["ok"] and report["summary"] == {"would_change": 16}
    logs = lab.runner.call(lambda: {n: list(s.config_log) for n, s in lab.model.switches.items()})
    assert all(v == [] for v in logs.values()), "a dry run entered config mode"
    diff = (built / "dry" / "push" / "ZC-O001.diff").read_text()
    assert diff.startswith("hostname ZC-O001\n") and "ip route" in diff
    assert all(d["backup"] for d in report["devices"])


def test_push_applies_saves_and_is_idempotent(lab, built):
    report = push_all(targets(lab, built), CREDS, opts(lab), built / "p1")
    assert report["ok"] and report["summary"] == {"changed": 16}, report
    for name in ("ZC-O001", "ZC-E016"):
        intended = (built / "configs" / f"{name}.cfg").read_text()
        assert owned_diff(built, name, running(lab, name), intended) == []
        assert owned_diff(built, name, startup(lab, name), intended) == []  # saved
    again = push_all(targets(lab, built), CREDS, opts(lab), built / "p2")
    assert again["summary"] == {"unchanged": 16}
    # after the push the fabric is up: LLDP shows configured hostnames
    detail = lab.runner.call(lambda: lab.model.lldp_text(lab.model.switches["ZC-O001"], True))
    assert "System name                       : ZC-E002" in detail


DEVICE_FAULTS = {"devices": {
    "ZC-O001": {"refuse_login": True},
    "ZC-O003": {"no_banner": True},
    "ZC-O005": {"drop_after": 60},
    "ZC-O007": {"reject_lines": ["ip route 10.0.0.128 255.255.255.240"]},
    "ZC-O009": {"delay": 0.02},
}}


@pytest.mark.slow
@pytest.mark.parametrize("lab", [DEVICE_FAULTS], indirect=True)
def test_device_faults_end_unchanged_or_rolled_back(lab, built):
    before = {n: (running(lab, n), startup(lab, n)) for n in lab.model.switches}
    report = push_all(targets(lab, built), CREDS, opts(lab, timeout=3), built / "faults")
    st = {d["name"]: d["status"] for d in report["devices"]}
    assert st["ZC-O001"] == "unreachable" and st["ZC-O003"] == "unreachable"
    assert st["ZC-O005"] == "rolled_back" and "closed the session" in next(d for d in report["devices"] if d["name"] == "ZC-O005")["error"]
    assert st["ZC-O007"] == "rolled_back"
    assert st["ZC-O009"] == "changed"
    assert all(st[n] == "changed" for n in st if n not in ("ZC-O001", "ZC-O003", "ZC-O005", "ZC-O007"))
    for n in ("ZC-O001", "ZC-O003", "ZC-O005", "ZC-O007"):
        assert remediation_lines(running(lab, n), before[n][0]) == [], f"{n} is not as it was"  # the whole config
        assert startup(lab, n) == before[n][1], f"{n} startup config touched"
    assert not report["ok"]
    r = run_zcube("push", str(built / "plan.json"), "--configs", str(built), "--lab", str(lab.out / "lab.json"),
                  "--only", "ZC-O001", "--timeout", "3")
    assert r.returncode == 1 and "unreachable" in r.stdout


@pytest.mark.parametrize("lab", [{"devices": {"ZC-O001": {"write_fault": "drop"}, "ZC-E002": {"write_fault": "fail"}}}], indirect=True)
def test_an_unconfirmed_write_is_startup_uncertain(lab, built, tmp_path):
    """The change applied and read back, but `write` not confirmed: the startup config may hold it, so the switch
    is not reported "rolled_back" (whose promise is an untouched startup config) but "startup_uncertain"."""
    import shutil

    work = tmp_path / "w"
    shutil.copytree(built / "configs", work / "configs")
    shutil.copy(built / "manifest.json", work / "manifest.json")
    names = ("ZC-O001", "ZC-E002")
    before = {n: (running(lab, n), startup(lab, n)) for n in names}
    args = ["push", str(built / "plan.json"), "--configs", str(work), "--lab", str(lab.out / "lab.json"), "--timeout", "5"]
    r = run_zcube(*args, "--only", "ZC-O001,ZC-E002,ZC-O003")
    assert r.returncode == 1, r.stdout + r.stderr
    rep = json.loads((work / "push-report.json").read_text())
    dev = {d["name"]: d for d in rep["devices"]}
    assert {n: d["status"] for n, d in dev.items()} == {"ZC-O001": "startup_uncertain", "ZC-E002": "startup_uncertain",
                                                        "ZC-O003": "changed"}
    assert rep["summary"] == {"changed": 1, "startup_uncertain": 2} and not rep["ok"]
    assert "summary: 1 changed, 2 startup uncertain" in r.stdout and "startup_uncertain" in r.stdout.split("summary:")[0]
    for n in names:
        d = dev[n]
        assert d["rolled_back"] is True and "`write` was not confirmed" in d["error"]
        assert "show startup-config" in d["action"] and f"--only {n}" in d["action"] and "do not reload" in d["action"]
        assert remediation_lines(running(lab, n), before[n][0]) == [], f"{n}: running config not back to the backup"
    intended = (built / "configs" / "ZC-O001.cfg").read_text()
    # "drop": the device wrote the new config and the answer was lost: the startup config holds the change
    assert owned_diff(built, "ZC-O001", startup(lab, "ZC-O001"), intended) == []
    assert startup(lab, "ZC-O001") != before["ZC-O001"][1]
    # "fail": nothing was written
    assert startup(lab, "ZC-E002") == before["ZC-E002"][1]
    assert "fail" in dev["ZC-E002"]["error"]
    # what the action says works: once the device saves again, re-running push for the switch applies and saves
    lab.runner.call(lambda: setattr(lab.model.faults["ZC-O001"], "write_fault", None))
    r = run_zcube(*args, "--only", "ZC-O001")
    assert r.returncode == 0, r.stdout + r.stderr
    assert owned_diff(built, "ZC-O001", running(lab, "ZC-O001"), intended) == []
    assert owned_diff(built, "ZC-O001", startup(lab, "ZC-O001"), intended) == []


@pytest.mark.parametrize("lab", [{"devices": {"ZC-E002": {"refuse_login": True}}}], indirect=True)
def test_canary_failure_stops_the_rollout(lab, built):
    report = push_all(targets(lab, built), CREDS, opts(lab, canary=2), built / "canary")
    st = {d["name"]: d["status"] for d in report["devices"]}
    # the canary batch is the first two switches of the plan: ZC-O001 and ZC-E002
    assert st["ZC-O001"] == "changed" and st["ZC-E002"] == "unreachable"
    assert all(s == "skipped" for n, s in st.items() if n not in ("ZC-O001", "ZC-E002"))
    assert "canary failed" in report["stopped"]
    logs = lab.runner.call(lambda: lab.model.switches["ZC-E004"].config_log)
    assert logs == []


@pytest.mark.parametrize("lab", [{"devices": {"ZC-E002": {"refuse_login": True}, "ZC-E004": {"refuse_login": True}}}], indirect=True)
def test_failure_budget(lab, built):
    report = push_all(targets(lab, built), CREDS, opts(lab, concurrency=1, max_failures=2), built / "budget")
    order = [t.name for t in targets(lab, built)]  # plan order: ZC-O001, ZC-E002, ZC-O003, ZC-E004, ...
    st = {d["name"]: d["status"] for d in report["devices"]}
    assert [st[n] for n in order[:4]] == ["changed", "unreachable", "changed", "unreachable"]
    assert {st[n] for n in order[4:]} == {"skipped"}
    assert "failure budget" in report["stopped"]


def test_preflight_refuses_unknown_interfaces(lab, built):
    """A plan port the device does not have (a switch of another model): refused before config mode. (A config file
    naming a port the plan does not is refused earlier, by the scope check: tests/test_push_candidate.py.)"""
    t = targets(lab, built, "ZC-O001")[0]
    t.intended = t.intended.replace("end\n", "interface TwoHundredGigabitEthernet 0/99:1\n description nope\n!\nend\n")
    report = push_all([t], CREDS, opts(lab), built / "preflight")
    d = report["devices"][0]
    assert d["status"] == "failed" and "pre-flight" in d["error"] and "0/99:1" in d["error"]
    assert lab.runner.call(lambda: lab.model.switches["ZC-O001"].config_log) == []


def _check_fleet_sections(stdout: str, diffs: list) -> None:
    """The dry run's per-kind table against the diff files, counted here on their own: a sub-line (indented, not
    'exit') or a top-level line with none under it is one line; each kind's switches are those whose diff has it."""
    head = "lines to add and remove per kind of section, 16 changing switches"
    assert head in stdout, stdout
    rows = {}
    for line in stdout[stdout.index(head):].splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if len(cells) == 5 and cells[1].isdigit():
            rows[cells[0]] = tuple(int(c) for c in cells[1:])
    want: dict[str, list[int]] = {}
    for diff in diffs:
        lines = [ln for ln in diff.read_text().splitlines() if ln.strip() and ln.strip() != "exit"]
        seen = set()
        for i, ln in enumerate(lines):
            if ln.startswith(" "):
                continue
            kind = " ".join(w for w in ln.split()[: next((k for k, w in enumerate(ln.split()) if any(c.isdigit() for c in w)), 99)])
            subs = 0
            for nxt in lines[i + 1:]:
                if not nxt.startswith(" "):
                    break
                subs += 1
            row = want.setdefault(kind, [0, 0, 0])
            row[0] += kind not in seen
            row[1] += 1
            row[2] += subs or 1
            seen.add(kind)
    assert len(diffs) == 16 and want
    assert {k: (sw, secs, n, 0) for k, (sw, secs, n) in want.items()} == rows, rows  # a fresh lab: adds only


def test_cli_push_dry_run_then_push_and_no_secrets_in_files(lab, built, tmp_path):
    import shutil

    work = tmp_path / "w"
    shutil.copytree(built / "configs", work / "configs")
    shutil.copy(built / "manifest.json", work / "manifest.json")
    shutil.copy(built / "plan.json", work / "plan.json")
    env = {"ZCUBE_PASSWORD": DEFAULT_PASSWORD, "ZCUBE_ENABLE_SECRET": DEFAULT_ENABLE_SECRET}
    args = ["push", str(work / "plan.json"), "--configs", str(work), "--lab", str(lab.out / "lab.json")]
    r = run_zcube(*args, "--dry-run", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "would_change" in r.stdout and "lines would change" in r.stdout
    _check_fleet_sections(r.stdout, sorted((work / "push").glob("*.diff")))
    r = run_zcube(*args, "--concurrency", "4", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((work / "push-report.json").read_text())
    assert rep["summary"] == {"changed": 16}
    r = run_zcube(*args, env=env)
    assert json.loads((work / "push-report.json").read_text())["summary"] == {"unchanged": 16}
    for f in list(work.rglob("*")) + list(lab.out.rglob("*")):
        if f.is_file():
            text = f.read_text(errors="replace")
            assert DEFAULT_PASSWORD not in text and DEFAULT_ENABLE_SECRET not in text, f
    assert DEFAULT_PASSWORD not in r.stdout + r.stderr


@pytest.mark.parametrize("lab", [{"devices": {"ZC-O001": {"write_fault": "fail_once"}}}], indirect=True)
def test_a_save_that_fails_once_is_saved_again(lab, built, tmp_path):
    """The first `write` is refused, the change is in the running config: push saves once more on a new session
    and the switch ends `changed` with the new config in both running and startup config (no rollback)."""
    import shutil

    work = tmp_path / "w"
    shutil.copytree(built / "configs", work / "configs")
    shutil.copy(built / "manifest.json", work / "manifest.json")
    r = run_zcube("push", str(built / "plan.json"), "--configs", str(work), "--lab", str(lab.out / "lab.json"), "--timeout", "5",
                  "--only", "ZC-O001")
    assert r.returncode == 0, r.stdout + r.stderr
    dev = json.loads((work / "push-report.json").read_text())["devices"][0]
    assert dev["status"] == "changed" and dev["save_retried"] is True and dev["error"] is None
    assert "first save was not confirmed" in dev["note"] and "a second one on a new session was" in dev["note"]
    assert "first save was not confirmed" in r.stdout
    intended = (built / "configs" / "ZC-O001.cfg").read_text()
    assert owned_diff(built, "ZC-O001", running(lab, "ZC-O001"), intended) == []
    assert owned_diff(built, "ZC-O001", startup(lab, "ZC-O001"), intended) == []
    assert lab.runner.call(lambda: lab.model.switches["ZC-O001"].write_failures) == 1


def test_a_guard_that_cannot_run_says_so(lab, built):
    """A switch reached at an address none of its interfaces holds: the management guard cannot check the
    change; the dry run's result and report say so (the known-bad case: a guard that passes silently)."""
    from dataclasses import replace

    t = targets(lab, built, "ZC-O001")[0]
    t = replace(t, mgmt_address="172.16.9.99", intended=t.intended.replace("hostname ZC-O001", "hostname ZC-O001-X"))  # a change to guard
    report = push_all([t], CREDS, opts(lab, dry_run=True), built / "unguarded")
    assert list(report["not_checked"]) == ["ZC-O001"] and "172.16.9.99" in report["not_checked"]["ZC-O001"][0]
    assert report["devices"][0]["not_checked"] == report["not_checked"]["ZC-O001"]
    ok = push_all([replace(t, mgmt_address="172.16.0.11")], CREDS, opts(lab, dry_run=True), built / "guarded")
    assert ok["not_checked"] == {} and ok["devices"][0]["status"] == "would_change"


def test_ctrl_c_during_push_writes_and_prints_what_it_did(lab, built, tmp_path):
    """A real SIGINT to a real `zcube push` to the lab mid-run: no new switch starts, the switches in flight end their
    own push, and push-report.json is THIS run's (run_id, interrupted, in_flight, not_started), never the previous
    run's; stderr names them; exit 130. Each switch reported changed runs its rendered config in the lab, each one
    not started is untouched (it printed `interrupted` and left the earlier run's "16 unchanged" report)."""
    import shutil

    from conftest import interrupt_zcube

    work = tmp_path / "w"
    shutil.copytree(built / "configs", work / "configs")
    shutil.copy(built / "manifest.json", work / "manifest.json")
    shutil.copy(built / "plan.json", work / "plan.json")
    (work / "push-report.json").write_text(json.dumps({"summary": {"unchanged": 16}, "ok": True, "devices": []}))
    before = {n: running(lab, n) for n in lab.endpoints}
    # a backup is taken as a switch starts: interrupt once 3 have started
    rc, stdout, stderr = interrupt_zcube(["push", str(work / "plan.json"), "--configs", str(work), "--lab", str(lab.out / "lab.json"),
                                          "--concurrency", "2"], work / "backups", entries=3)
    assert rc == 130, stdout + stderr
    rep = json.loads((work / "push-report.json").read_text())
    assert rep["interrupted"] is True and rep["run_id"] and rep["stopped"] == "interrupted (Ctrl-C) before it started"
    by = {d["name"]: d for d in rep["devices"]}
    assert sorted(by) == sorted(lab.endpoints)
    assert rep["in_flight"] and rep["not_started"], rep
    assert all(by[n]["status"] in ("changed", "rolled_back") for n in rep["in_flight"])  # each ended on its own
    assert all(by[n]["status"] == "skipped" for n in rep["not_started"])
    assert "push interrupted (Ctrl-C)" in stderr and f"{len(rep['in_flight'])} in flight" in stderr
    assert f"{len(rep['not_started'])} not started ({rep['not_started'][0]}" in stderr and str(work / "push-report.json") in stderr
    changed = [n for n, d in by.items() if d["status"] == "changed"]
    assert changed and all(f"{n} changed" in stderr for n in changed[:12])
    for n in changed:
        assert not owned_diff(built, n, running(lab, n), (work / "configs" / f"{n}.cfg").read_text()), n
    for n in rep["not_started"]:
        assert running(lab, n) == before[n], n
