"""Push owns only what the plan manages (issue 12): the managed scope, the management guard, the
site baseline of the lab, dry-run diffs that hold every line sent, and secrets kept out of files.

The pure tests drive the simulated switch's CLI directly (no SSH) so that hypothesis can try many
baselines; the lab tests do the same over SSH as a user would.
"""

from __future__ import annotations

import json
import os
import re
import stat
from ipaddress import IPv4Network

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import build_example, run_zcube
from zcube_deploy.platforms.ruijie_rgos.driver import remediation_lines
from zcube_deploy.lab.core import LabModel, site_baseline
from zcube_deploy.platforms.ruijie_rgos.lab.shell import Session
from zcube_deploy.access import DEFAULT_ENABLE_SECRET, DEFAULT_PASSWORD, DEFAULT_USERNAME
from zcube_deploy.lab.server import running_lab
from zcube_deploy.platforms.ruijie_rgos import l3_facts, top_level_lines
from zcube_deploy.push import Credentials, PushOptions, push_all, select_targets
from zcube_deploy.push.guard import management_problems
from zcube_deploy.push.scope import ManagedScope

CREDS = Credentials(DEFAULT_USERNAME, DEFAULT_PASSWORD, DEFAULT_ENABLE_SECRET)
VOLATILE = re.compile(r"^(Building configuration|Current configuration|version |end$|!)")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_example(tmp_path_factory, "lab-64.yaml")


@pytest.fixture(scope="module")
def plan(built):
    return json.loads((built / "plan.json").read_text())


def intended_of(built, name):
    return (built / "configs" / f"{name}.cfg").read_text()


def scope_of(plan, built, name):
    sw = next(s for s in plan["switches"] if s["name"] == name)
    return ManagedScope.for_switch(plan, sw, top_level_lines(intended_of(built, name)))


def content(text: str) -> list[str]:
    """Config lines as a reader compares them: volatile lines and separators dropped, order kept."""
    return [ln for ln in text.replace("\r", "").splitlines() if ln.strip() and not VOLATILE.match(ln)]


def outside(text: str, scope: ManagedScope) -> list[str]:
    """Every line of the top-level sections outside ``scope``, in order (written independently of the
    push code: sections are cut by indentation, not by hier_config)."""
    out, keep = [], False
    for ln in content(text):
        if not ln.startswith(" "):
            keep = not scope.owns(ln)
        if keep:
            out.append(ln)
    return out


# ---------------------------------------------------------------- the scope as data
def test_scope_owns_exactly_the_plan(plan, built):
    sc = scope_of(plan, built, "ZC-O001")
    sw = plan["switches"][0]
    host_port = next(i["name"] for i in sw["interfaces"] if i["kind"] == "host")
    owned = ["hostname ZC-O001", "hostname Ruijie", f"interface {host_port}", "interface Loopback 0",
             f"interface {plan['port_map']['unused_ports'][0]}", f"interface {plan['port_map']['fabric_ports'][0]}",
             "ip route 10.0.0.128 255.255.255.240 10.200.0.1", "ip route 10.0.3.0 255.255.255.0 10.200.0.9",
             "ip route 10.201.0.7 255.255.255.255 10.200.0.1"]
    never = ["interface Mgmt 0", "interface Loopback 1", "ip route 0.0.0.0 0.0.0.0 172.16.0.1",
             "ip route 198.51.100.0 255.255.255.0 172.16.0.1", "ip route 10.0.0.0 255.0.0.0 172.16.0.1",
             "username netops privilege 15 secret 5 $1$x", "enable secret 5 $1$y", "snmp-server community 7 0A ro",
             "line vty 0 35", "ip access-list extended MGMT-IN", "ntp server 192.0.2.10", "router bgp 65001",
             "banner motd ^C", "mtu other 1"]
    assert [ln for ln in owned if not sc.owns(ln)] == []
    assert [ln for ln in never if sc.owns(ln)] == []


def test_scope_takes_rendered_sections_and_catalog_lines(plan, built):
    sw = plan["switches"][0]
    base = top_level_lines(intended_of(built, "ZC-O001"))
    sc = ManagedScope.for_switch(plan, sw, base + ["router bgp 4200000001", "mtu forwarding 9216"])
    assert sc.owns("router bgp 65001") and sc.owns("router bgp 4200000001")  # a stale process is replaced
    assert sc.owns("mtu forwarding 9000") and not sc.owns("mtu something 1")


# ---------------------------------------------------------------- pure: the CLI model, many baselines
def apply(st, lines: list[str]) -> None:
    sess = Session(st, enable_secret="", lldp=lambda *_: "", link_up=lambda *_: True)
    sess.mode = "config"
    for ln in lines:
        reply = sess.feed(ln)
        assert "%" not in reply, (ln, reply)
    sess.feed("end")


def switch_with(plan, name: str, baseline: str):
    model = LabModel({**plan, "switches": [s for s in plan["switches"] if s["name"] == name]}, baseline)
    return model.switches[name]


def push_and_check(plan, built, name: str, baseline: str) -> None:
    """push (as the driver computes it), push again, roll back: nothing outside the scope moves."""
    sc = scope_of(plan, built, name)
    st_ = switch_with(plan, name, baseline)
    before = st_.running_config()
    want_outside = outside(before, sc)
    intended = intended_of(built, name)
    lines = remediation_lines(before, intended, sc.owns)
    assert lines, "the plan changes a bare switch"
    for ln in lines:  # nothing outside the scope is ever sent
        top = ln[3:] if ln.startswith("no ") else ln
        assert ln.startswith(" ") or ln == "exit" or sc.owns(top), ln
    apply(st_, lines)
    after = st_.running_config()
    assert outside(after, sc) == want_outside
    assert remediation_lines(after, intended, sc.owns) == []  # the second push changes nothing
    back = remediation_lines(after, before, sc.owns)  # rollback to the backup
    apply(st_, back)
    assert outside(st_.running_config(), sc) == want_outside
    assert remediation_lines(st_.running_config(), before, sc.owns) == []


def test_default_baseline_survives_push_and_rollback(plan, built):
    for name in ("ZC-O001", "ZC-E002"):
        push_and_check(plan, built, name, site_baseline(plan))


word = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,10}", fullmatch=True)
octet = st.integers(1, 223)
ip = st.tuples(octet, st.integers(0, 255), st.integers(0, 255), st.integers(1, 254)).map(lambda t: ".".join(map(str, t)))


def outside_pools(pools):
    def ok(n: IPv4Network) -> bool:
        return not any(n.overlaps(p) for p in pools)
    return st.tuples(ip, st.integers(8, 30)).map(lambda t: IPv4Network(f"{t[0]}/{t[1]}", strict=False)).filter(ok)


@st.composite
def baselines(draw, pools, gateway):
    lines = []
    for _ in range(draw(st.integers(0, 3))):
        lines.append(f"username {draw(word)} privilege {draw(st.integers(1, 15))} secret 5 $1${draw(word)}${draw(word)}")
    if draw(st.booleans()):
        lines.append(f"enable secret 5 $1${draw(word)}")
    for _ in range(draw(st.integers(0, 2))):
        lines.append(f"snmp-server community 7 {draw(st.from_regex(r'[0-9A-F]{8,14}', fullmatch=True))} {draw(st.sampled_from(['ro', 'rw']))}")
    if draw(st.booleans()):
        lines.append(f"snmp-server location {draw(word)}")
    for _ in range(draw(st.integers(0, 2))):
        lines.append(f"ntp server {draw(ip)}")
    acl = draw(st.lists(st.tuples(st.sampled_from(["permit", "deny"]), ip), max_size=4))
    if acl:
        lines.append(f"ip access-list extended {draw(word)}")
        lines += [f" {10 * (i + 1)} {a} ip host {h} any" for i, (a, h) in enumerate(acl)]
    if draw(st.booleans()):
        lines.append(f"banner motd ^C{draw(word)} {draw(word)}^C")
    for net in draw(st.lists(outside_pools(pools), max_size=3, unique=True)):
        lines.append(f"ip route {net.network_address} {net.netmask} {gateway}")
    if draw(st.booleans()):
        lines += ["line vty 0 4", " login local", " transport input ssh"]
    return "\n".join(lines) + "\n"


def test_random_baselines_survive(plan, built):
    pools = [IPv4Network(plan["addressing"][k]) for k in ("host_pool", "fabric_pool", "loopback_pool")] + \
            [IPv4Network(plan["addressing"]["management_network"])]

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(baselines(pools, plan["settings"]["mgmt_gateway"]))
    def check(baseline):
        push_and_check(plan, built, "ZC-E004", baseline)

    check()


def test_stale_route_in_pools_goes_route_outside_stays(plan, built):
    name = "ZC-O003"
    sc = scope_of(plan, built, name)
    base = site_baseline(plan) + "ip route 10.0.2.0 255.255.255.0 10.200.0.5\nip route 203.0.113.0 255.255.255.0 172.16.0.1\n"
    st_ = switch_with(plan, name, base)
    lines = remediation_lines(st_.running_config(), intended_of(built, name), sc.owns)
    assert "no ip route 10.0.2.0 255.255.255.0 10.200.0.5" in lines
    assert not any("203.0.113.0" in ln or "0.0.0.0 0.0.0.0" in ln for ln in lines)
    apply(st_, lines)
    run = st_.running_config()
    assert "ip route 10.0.2.0 255.255.255.0 10.200.0.5" not in run and "ip route 203.0.113.0 255.255.255.0 172.16.0.1" in run


# ---------------------------------------------------------------- the management guard
def test_guard_sees_what_cuts_management():
    before = l3_facts("interface Mgmt 0\n ip address 172.16.0.11 255.255.255.0\n"
                      "interface X 0/1\n ip address 10.0.0.0 255.255.255.254\n"
                      "ip route 0.0.0.0 0.0.0.0 172.16.0.1\nip route 10.0.9.0 255.255.255.0 172.16.0.1\n")
    same = dict(before)
    assert management_problems(before, same, ["172.16.0.11"]) == []
    no_route = {**before, "routes": [r for r in before["routes"] if r[0] != "10.0.9.0/24"]}
    assert "10.0.9.0/24 via 172.16.0.1" in management_problems(before, no_route, ["172.16.0.11"])[0]
    moved = {**before, "interfaces": {**before["interfaces"], "Mgmt 0": ["172.16.0.12/24"]}}
    assert "Mgmt 0" in management_problems(before, moved, ["172.16.0.11"])[0]
    gone = {**before, "interfaces": {k: v for k, v in before["interfaces"].items() if k != "Mgmt 0"}}
    assert "remove interface Mgmt 0" in management_problems(before, gone, ["172.16.0.11"])[0]
    clash = {**before, "interfaces": {**before["interfaces"], "X 0/1": ["172.16.0.200/25"]}}
    assert "overlapping the management subnet" in management_problems(before, clash, ["172.16.0.11"])[0]
    # an unrelated change is fine, and a device without the address is not guessed at
    other = {**before, "interfaces": {**before["interfaces"], "X 0/1": ["10.0.0.2/31"]}}
    assert management_problems(before, other, ["172.16.0.11"]) == []
    assert management_problems(before, gone, ["192.0.2.1"]) == []


# ---------------------------------------------------------------- over SSH, as a user runs it
def opts(lab, **kw):
    base = dict(concurrency=8, known_hosts=str(lab.out / "known_hosts"), timeout=5, read_timeout=20)
    base.update(kw)
    return PushOptions(**base)


@pytest.mark.lab
def test_push_twice_and_rollback_keep_every_baseline_line(plan, built, tmp_path):
    base_lines = content(site_baseline(plan))
    faults = {"devices": {"ZC-O007": {"reject_lines": ["ip route 10.0.0.128 255.255.255.240"]}}}
    with running_lab(plan, faults=faults, out_dir=tmp_path / "lab") as lab:
        lab.out = tmp_path / "lab"
        def get(n, what):
            sw = lab.model.switches[n]
            return lab.runner.call(lambda: sw.running_config() if what == "running" else sw.startup)

        before = {n: get(n, "running") for n in lab.model.switches}
        rep = push_all(select_targets(plan, built, None, lab.endpoints), CREDS, opts(lab), tmp_path / "p1")
        st_ = {d["name"]: d["status"] for d in rep["devices"]}
        assert st_["ZC-O007"] == "rolled_back" and all(s == "changed" for n, s in st_.items() if n != "ZC-O007"), rep
        rep2 = push_all(select_targets(plan, built, None, lab.endpoints), CREDS, opts(lab), tmp_path / "p2")
        assert {d["name"]: d["status"] for d in rep2["devices"] if d["name"] != "ZC-O007"} == \
            {n: "unchanged" for n in lab.model.switches if n != "ZC-O007"}
        for n in lab.model.switches:
            sc = scope_of(plan, built, n)
            for text in (get(n, "running"), get(n, "startup")):
                have = content(text)
                it = iter(have)
                assert all(ln in it for ln in base_lines), f"{n}: a baseline line moved or went"  # in order
                assert outside(text, sc) == outside(before[n], sc)
        assert content(get("ZC-O007", "running")) == content(before["ZC-O007"])  # rolled back whole


@pytest.mark.lab
def test_management_route_in_pools_is_refused(plan, built, tmp_path):
    # an operator reaches the switches from 10.0.3.0/24, inside the host pool, through the management gateway
    base = site_baseline(plan) + "ip route 10.0.3.0 255.255.255.0 172.16.0.1\n"
    with running_lab(plan, out_dir=tmp_path / "lab", baseline=base) as lab:
        lab.out = tmp_path / "lab"
        before = lab.runner.call(lambda: lab.model.switches["ZC-O001"].running_config())
        rep = push_all(select_targets(plan, built, "ZC-O001", lab.endpoints), CREDS, opts(lab), tmp_path / "p")
        d = rep["devices"][0]
        assert d["status"] == "refused" and "10.0.3.0/24 via 172.16.0.1" in d["error"] and not rep["ok"]
        assert lab.runner.call(lambda: lab.model.switches["ZC-O001"].config_log) == []
        assert lab.runner.call(lambda: lab.model.switches["ZC-O001"].running_config()) == before


@pytest.mark.lab
def test_cli_dry_run_holds_every_line_sent_and_secrets_stay_private(plan, built, tmp_path):
    import shutil

    work = tmp_path / "w"
    shutil.copytree(built / "configs", work / "configs")
    shutil.copy(built / "manifest.json", work / "manifest.json")
    shutil.copy(built / "plan.json", work / "plan.json")
    secrets = ["$1$zQ3x$7hE1kYqvV0cB2mN4pL8sT/", "0822455D0A165E1F", "$1$Rj8k$Hq2Lw9zXy3Vb6Nc1Md5Pe0",
               "070C285F4D061A0A19", "105A0C1D0D1E03"]
    assert all(s in site_baseline(plan) for s in secrets)
    with running_lab(plan, out_dir=tmp_path / "lab") as lab:
        args = ["push", str(work / "plan.json"), "--configs", str(work), "--lab", str(tmp_path / "lab" / "lab.json")]
        r = run_zcube(*args, "--dry-run")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "more switches would change" in r.stdout and str(work / "push") in r.stdout
        assert len(r.stdout.splitlines()) < 120  # a bounded preview
        diffs = {p.stem: p.read_text().splitlines() for p in (work / "push").glob("*.diff")}
        assert len(diffs) == 16
        r = run_zcube(*args)
        assert r.returncode == 0, r.stdout + r.stderr
        for name, lines in diffs.items():
            sent = lab.runner.call(lambda name=name: list(lab.model.switches[name].config_log))
            assert [ln.strip() for ln in lines] == [ln for ln in sent if ln != "end"], name
        r = run_zcube("verify", str(work / "plan.json"), "--lab", str(tmp_path / "lab" / "lab.json"), "-o", str(work / "verify"),
                      "--record", str(work / "rec"))
        assert r.returncode == 0, r.stdout + r.stderr  # clean: the baseline's routes are not findings
    private = [work / "backups", work / "rec"]
    for d in private:
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    for f in work.rglob("*"):
        if f.is_dir():
            if any(p in f.parents or p == f for p in private):
                assert stat.S_IMODE(os.stat(f).st_mode) == 0o700, f
            continue
        text = f.read_text(errors="replace")
        if any(p in f.parents for p in private):
            assert stat.S_IMODE(os.stat(f).st_mode) == 0o600, f
            continue
        assert not [s for s in secrets if s in text], f
    assert any(secrets[0] in f.read_text() for f in (work / "backups").rglob("*.cfg"))


@pytest.mark.lab
def test_trust_on_first_use_records_new_host_keys(plan, built, tmp_path):
    kh = tmp_path / "kh"
    with running_lab(plan, out_dir=tmp_path / "lab") as lab:
        args = ["push", str(built / "plan.json"), "--configs", str(built), "--lab", str(tmp_path / "lab" / "lab.json"),
                "--dry-run", "--only", "ZC-O00*", "--known-hosts", str(kh)]
        r = run_zcube(*args)
        assert r.returncode == 1 and "unreachable" in r.stdout  # unknown keys are refused by default
        r = run_zcube(*args, "--trust-on-first-use")
        assert r.returncode == 0, r.stdout + r.stderr
        recorded = kh.read_text().splitlines()
        assert len(recorded) == 5 and all(" ssh-ed25519 " in ln for ln in recorded)  # ZC-O001 ... ZC-O009
        assert {ln.split()[0] for ln in recorded} == {f"[127.0.0.1]:{lab.endpoints[n][1]}" for n in lab.endpoints if n.startswith("ZC-O00")}
        assert run_zcube(*args).returncode == 0  # known now


def test_trust_on_first_use_without_a_file_uses_the_users_known_hosts(tmp_path, monkeypatch):
    from zcube_deploy.cli import _known_hosts_for

    monkeypatch.setenv("HOME", str(tmp_path))
    assert _known_hosts_for(None, True) == str(tmp_path / ".ssh" / "known_hosts")
    assert stat.S_IMODE(os.stat(tmp_path / ".ssh").st_mode) == 0o700
    assert _known_hosts_for(None, False) is None and _known_hosts_for("x", True) == "x"


def test_a_changed_remote_as_is_overwritten_in_place():
    """`no neighbor A remote-as OLD` would take the neighbour's other lines with it: overwrite in place."""
    from zcube_deploy.platforms.ruijie_rgos.lab.shell import SwitchState

    running = ("router bgp 65001\n neighbor 10.0.0.1 remote-as 65002\n neighbor 10.0.0.1 fall-over bfd\n"
               " neighbor 10.0.0.3 remote-as 65003\n neighbor 10.0.0.3 fall-over bfd\n")
    intended = "router bgp 65001\n neighbor 10.0.0.1 remote-as 65009\n neighbor 10.0.0.1 fall-over bfd\n"
    lines = remediation_lines(running, intended)
    assert " no neighbor 10.0.0.1 remote-as 65002" not in lines and " neighbor 10.0.0.1 remote-as 65009" in lines
    assert " no neighbor 10.0.0.3 remote-as 65003" in lines  # a stale neighbour still goes
    sw = SwitchState(model="X", interface_names=["Mgmt 0"], abbreviations={})
    apply(sw, running.splitlines())
    apply(sw, lines)
    assert remediation_lines(sw.running_config(), intended, lambda line: line.startswith("router bgp")) == []


_OCTET = st.one_of(st.integers(0, 255).map(str), st.sampled_from(["00", "010", "256", "1000", ""]))
_QUAD = st.lists(_OCTET, min_size=4, max_size=4).map(".".join)
_MASK = st.one_of(st.integers(0, 32).map(lambda n: str(IPv4Network(f"0.0.0.0/{n}").netmask)),
                  st.integers(0, 32).map(lambda n: str(IPv4Network(f"0.0.0.0/{n}").hostmask)), _QUAD)


@settings(max_examples=400, deadline=None)
@given(network=_QUAD, mask=_MASK)
def test_the_scope_reads_a_route_as_ipaddress_does(network, mask):
    """The scope's integer test of a route (audit runs it on every route of every switch) agrees with
    ``ipaddress``: inside a pool, outside, or not a network and mask (host masks, leading zeros, 256 ...)."""
    pools = (IPv4Network("10.0.0.0/10"), IPv4Network("10.200.0.0/16"), IPv4Network("10.255.255.0/24"))
    scope = ManagedScope((), frozenset(), pools, frozenset(), frozenset())
    try:
        net = IPv4Network(f"{network}/{mask}", strict=False)
        want = any(net.subnet_of(p) for p in pools)
    except ValueError:
        want = None
    assert scope._route_inside(network, mask) is want


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["", " ", "  ", "\t"]),
                          st.sampled_from(["hostname A", "hostname  A", "interface X 0/1", "ip route 10.0.0.0 255.0.0.0 10.1.1.1",
                                           "description d", "no shutdown", "shutdown", "!", "end", "version 1", "banner motd ^C hi ^C",
                                           "banner motd ^C", "text", "^C", "exit", "router bgp 1"])), max_size=25))
def test_top_level_lines_are_hier_configs(lines):
    """The platform's text reading of a config's top-level lines is hier_config's, line for line."""
    from zcube_deploy.platforms.ruijie_rgos import parse_config

    def outcome(read):
        try:
            return read(text)
        except Exception as exc:  # (an unclosed banner, a duplicate section: hier_config's error, both ways)
            return f"{type(exc).__name__}: {exc}"

    text = "\n".join(ind + ln for ind, ln in lines) + "\n"
    assert outcome(top_level_lines) == outcome(lambda t: [c.text for c in parse_config(t).children])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["", " ", "  ", "\t", "\x0c", "\u3000"]),
                          st.sampled_from(["no shutdown", "no shutdown ", "!", "! x", "end", "end ", "version 11", "versionX",
                                           "Building configuration...", "Current configuration : 1 bytes", "shutdown", "hostname A",
                                           "banner motd ^Chi^C", "", " "])), max_size=12))
def test_strip_volatile_drops_exactly_what_the_volatile_rule_matches(lines):
    from zcube_deploy.platforms.ruijie_rgos.hconfig import _ONE_LINE_BANNER, _VOLATILE_RE, strip_volatile

    text = "\n".join(ind + ln for ind, ln in lines)
    want = []
    for line in text.splitlines():
        if line.strip() and not _VOLATILE_RE.match(line):
            want.append("banner\t" + line[7:] if line.startswith("banner ") and _ONE_LINE_BANNER.match(line) else line)
    assert strip_volatile(text) == "\n".join(want)
