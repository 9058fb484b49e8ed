"""The scope binds the candidate too (issue 23 item 0): a config file with a line outside the managed scope, a
line touching the management interface or its routes, a control character, a repeated section, or a file that
no longer matches render's manifest is refused with exit 2 before any session opens, naming the file, the line
and the rule, in a dry run exactly as in a real push."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ROOT, build_example, run_zcube
from zcube_deploy.errors import InputErrors
from zcube_deploy.lab.server import running_lab
from zcube_deploy.push import select_targets

ADDED = {  # lines appended to a rendered file by hand -> a word the refusal must carry
    "snmp-server location hall-B-test": "outside the managed scope",
    "no interface Mgmt 0": "touches the management interface Mgmt 0",
    "line vty 0 35\n login local": "outside the managed scope",
    "username evil privilege 15 secret 0 Hunter2-x": "outside the managed scope",
    "reload": "outside the managed scope",
    "ip route 0.0.0.0 0.0.0.0 172.16.0.1": "lies outside the plan's pools",
    "ip route 10.0.3.0 255.255.255.0 172.16.0.1": "a route through the management network",
    "router bgp 65001\n neighbor 10.200.0.1 remote-as 65002": "the plan renders no such section",
    "interface TwoHundredGigabitEthernet 0/99:1\n no switchport": "not a port the plan names",
    "mtu other 1": "outside the managed scope",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_example(tmp_path_factory, "lab-64.yaml")


@pytest.fixture
def work(built, tmp_path):
    """A copy of the build (plan, configs, manifest) to edit by hand."""
    w = tmp_path / "w"
    shutil.copytree(built, w, ignore=shutil.ignore_patterns("hosts", "*.xlsx", "*.csv"))
    return w


def plan_of(d):
    return json.loads((d / "plan.json").read_text())


def edit(work, name, old, new):
    cfg = work / "configs" / f"{name}.cfg"
    text = cfg.read_text()
    assert old in text
    cfg.write_text(text.replace(old, new, 1))
    return text


def refused(work, only=None, allow_edited=True) -> list[str]:
    with pytest.raises(InputErrors) as e:
        select_targets(plan_of(work), work, only, None, allow_edited=allow_edited)
    return [str(p) for p in e.value.problems]


def line_of(work, name, text):
    lines = (work / "configs" / f"{name}.cfg").read_text().split("\n")
    return lines.index(text.split("\n")[0]) + 1


@pytest.mark.parametrize("inventory", ["lab-64.yaml", "glm-1k.yaml", "../tests/inventories/lab-64-bgp.yaml"])
def test_rendered_configs_pass(tmp_path_factory, inventory):
    """The good case: every config render writes is inside its switch's scope (static and bgp plans)."""
    if inventory.startswith(".."):
        out = tmp_path_factory.mktemp("bgp")
        assert run_zcube("build", str(ROOT / "tests/inventories/lab-64-bgp.yaml"), "-o", str(out)).returncode == 0
    else:
        out = build_example(tmp_path_factory, inventory)
    targets = select_targets(plan_of(out), out, None, None)
    assert len(targets) == 16 and not any(t.edited for t in targets)


@pytest.mark.parametrize("added", list(ADDED))
def test_a_line_outside_the_scope_is_refused_with_its_file_and_line(work, added):
    edit(work, "ZC-O001", "!\nend\n", f"{added}\n!\nend\n")
    problems = refused(work)
    n = line_of(work, "ZC-O001", added)
    first = added.split("\n")[0]
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{work / 'configs' / 'ZC-O001.cfg'}:{n}: ") and ADDED[added] in problems[0]
    if "secret" in added:
        assert "Hunter2-x" not in problems[0] and "<redacted>" in problems[0]
    else:
        assert repr(first) in problems[0]


def test_a_control_character_is_refused(work):
    edit(work, "ZC-O001", " description gpu01 ens1f0np0 H000001", " description gpu01 \x1b[2Khostname EVIL")
    (p,) = refused(work)
    assert ":15: " in p and "0x1b" in p and "\\x1b[2K" in p


def test_a_second_management_section_is_refused_not_a_crash(work):
    edit(work, "ZC-O001", "interface Loopback 0\n", "interface Mgmt 0\n ip address 172.16.0.99 255.255.255.0\n!\ninterface Loopback 0\n")
    (p,) = refused(work)
    assert ":11: 'interface Mgmt 0': repeats line 8" in p


def test_the_management_section_must_be_the_planned_one(work):
    edit(work, "ZC-O001", " ip address 172.16.0.11 255.255.255.0", " ip address 172.16.0.99 255.255.255.0")
    (p,) = refused(work)
    assert ":8: 'interface Mgmt 0': the management interface Mgmt 0: push never sends it" in p


def test_an_address_in_the_management_subnet_is_refused(work):
    edit(work, "ZC-O001", " ip address 10.0.0.2 255.255.255.254", " ip address 172.16.0.50 255.255.255.254")
    (p,) = refused(work)
    assert "' ip address 172.16.0.50 255.255.255.254': puts 172.16.0.50/31 on TwoHundredGigabitEthernet 0/1:2, inside the " \
           "management subnet 172.16.0.0/24" in p


def test_an_edited_file_is_refused_unless_allowed(work):
    """A hand edit inside the scope (a host port shut down) is refused as an edit; with allow_edited it is pushed,
    and the target says it was edited."""
    edit(work, "ZC-O003", "\n no switchport\n", "\n shutdown\n")
    problems = refused(work, allow_edited=False)
    assert problems == [f"{work / 'configs' / 'ZC-O003.cfg'}: does not match render's manifest.json (edited since render)"]
    targets = select_targets(plan_of(work), work, None, None, allow_edited=True)
    assert [t.name for t in targets if t.edited] == ["ZC-O003"]


def test_a_missing_manifest_or_another_inventorys_is_refused(work):
    manifest = json.loads((work / "manifest.json").read_text())
    (work / "manifest.json").write_text(json.dumps({**manifest, "inventory_sha256": "0" * 64}))
    (p,) = refused(work, allow_edited=False)
    assert "written for another inventory" in p
    (work / "manifest.json").unlink()
    (p,) = refused(work, allow_edited=False)
    assert "manifest.json: no manifest" in p
    assert all(t.edited for t in select_targets(plan_of(work), work, None, None, allow_edited=True))


def test_every_problem_of_the_run_at_once(work):
    edit(work, "ZC-O001", "!\nend\n", "reload\n!\nend\n")
    edit(work, "ZC-E002", "!\nend\n", "snmp-server location x\n!\nend\n")
    problems = refused(work, allow_edited=False)
    assert len(problems) == 4  # two edited files, two lines outside the scope


@pytest.mark.lab
def test_dry_run_and_push_refuse_alike_and_nothing_is_sent(work, tmp_path):
    """The issue's reproduction over the lab: two lines appended by hand; exit 2 in both modes, no session."""
    edit(work, "ZC-O001", "!\nend\n", "snmp-server location hall-B-test\nno interface Mgmt 0\n!\nend\n")
    with running_lab(plan_of(work), out_dir=tmp_path / "lab") as lab:
        args = ["push", str(work / "plan.json"), "--configs", str(work), "--lab", str(tmp_path / "lab" / "lab.json")]
        outs = []
        for extra in (["--dry-run"], [], ["--dry-run", "--allow-edited"], ["--allow-edited"]):
            r = run_zcube(*args, *extra)
            assert r.returncode == 2, r.stdout + r.stderr
            outs.append(r.stderr.replace("(--allow-edited pushes configs edited since render) ", ""))
            assert "ZC-O001.cfg:346: 'snmp-server location hall-B-test': outside the managed scope" in r.stderr
            assert "ZC-O001.cfg:347: 'no interface Mgmt 0': touches the management interface" in r.stderr
            assert "Traceback" not in r.stderr
        assert outs[0] == outs[1] and outs[2] == outs[3]  # a dry run refuses exactly as a push
        assert not (work / "backups").exists() and not (work / "push-report.json").exists()  # no session opened
        logs = lab.runner.call(lambda: {n: list(s.config_log) for n, s in lab.model.switches.items()})
        assert all(v == [] for v in logs.values())


def test_the_management_guard_says_when_it_could_not_run():
    """No interface holds the management address (the switch is reached another way): the guard cannot
    check the change, and says so in the device's result and the report, never a silent pass."""
    from zcube_deploy.push.device import DeviceResult
    from zcube_deploy.push.guard import management_unchecked

    facts = {"interfaces": {"Mgmt 0": ["172.16.0.11/24"], "Loopback 0": ["10.201.0.1/32"]}, "routes": []}
    assert management_unchecked(facts, ["172.16.0.11"]) is None
    assert "no interface" in management_unchecked(facts, ["172.16.0.99"])
    assert management_unchecked({"interfaces": {}, "routes": []}, ["172.16.0.11", "127.0.0.1"]).endswith("172.16.0.11 or 127.0.0.1")
    assert DeviceResult("x", not_checked=["why"]).as_dict()["not_checked"] == ["why"]
    assert "not_checked" not in DeviceResult("x").as_dict()


_HAND_LINES = ["snmp-server location x", " description edited", " shutdown", "no interface Mgmt 0", "interface Mgmt 0",
               " ip address 10.0.0.1 255.255.255.0", "ip route 10.0.0.0 255.255.255.0 10.200.0.1", "hostname Z", "!", "",
               "interface TwoHundredGigabitEthernet 0/1:1", "router bgp 1", " neighbor 1.2.3.4 remote-as 2", "end", "exit"]


def test_hand_edited_configs_into_push_dry_run_fuzzed(built, tmp_path_factory):
    """Hypothesis edits a rendered config as a person might (lines inserted, deleted, duplicated, bytes and control
    characters, truncation): the pre-session check accepts the file or refuses it with its file and line (exit 2),
    never another exception (issue 23 item 6: hand-edited configs into push --dry-run)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    base = tmp_path_factory.mktemp("fz")
    shutil.copytree(built, base / "w", ignore=shutil.ignore_patterns("hosts", "*.xlsx", "*.csv", "hall"))
    cfg = base / "w" / "configs" / "ZC-O003.cfg"
    original = cfg.read_text()
    plan = plan_of(base / "w")
    edit_ops = st.one_of(
        st.tuples(st.just("insert"), st.integers(0, 10_000), st.one_of(st.sampled_from(_HAND_LINES), st.text(max_size=40))),
        st.tuples(st.just("delete"), st.integers(0, 10_000), st.just("")),
        st.tuples(st.just("duplicate"), st.integers(0, 10_000), st.just("")),
        st.tuples(st.just("truncate"), st.integers(0, 10_000), st.just("")),
    )

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(edit_ops, min_size=1, max_size=4))
    def run(ops):
        lines = original.split("\n")
        for op, at, text in ops:
            i = at % (len(lines) + 1)
            if op == "insert":
                lines.insert(i, text)
            elif op == "delete" and lines:
                del lines[min(i, len(lines) - 1)]
            elif op == "duplicate" and lines:
                lines.insert(i, lines[min(i, len(lines) - 1)])
            elif op == "truncate":
                lines = lines[:i]
        cfg.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
        try:
            select_targets(plan, base / "w", "ZC-O003", None, allow_edited=True)
        except InputErrors as exc:
            assert exc.problems and all(p.path for p in exc.problems), exc.problems
            assert any("ZC-O003.cfg" in p.path for p in exc.problems), exc.problems

    try:
        run()
    finally:
        cfg.write_text(original)
