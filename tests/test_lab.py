"""The lab over real SSH with netmiko ruijie_os: prompts, errors, no forms, write, shows, LLDP, faults."""

from __future__ import annotations

import json
import time

import pytest
from netmiko import ConnectHandler
from netmiko.exceptions import NetmikoAuthenticationException, NetmikoTimeoutException, ReadTimeout

from conftest import run_zcube
from zcube_deploy.platforms.ruijie_rgos.lab.shell import INCOMPLETE, INVALID
from zcube_deploy.access import DEFAULT_ENABLE_SECRET, DEFAULT_PASSWORD, DEFAULT_USERNAME
from zcube_deploy.lab.server import running_lab

pytestmark = pytest.mark.lab


def set_hostname(c, name):
    """Change the hostname the way an operator does; netmiko's prompt is re-read afterwards."""
    for line in ("configure terminal", f"hostname {name}", "end"):
        c.send_command_timing(line, strip_prompt=False, read_timeout=5, last_read=0.2)
    c.set_base_prompt()


def connect(lab, name, **kw):
    host, port = lab.endpoints[name]
    params = dict(device_type="ruijie_os", host=host, port=port, username=DEFAULT_USERNAME, password=DEFAULT_PASSWORD,
                  secret=DEFAULT_ENABLE_SECRET, allow_agent=False, use_keys=False, ssh_config_file=None, conn_timeout=10,
                  banner_timeout=10, auth_timeout=10)
    params.update(kw)
    return ConnectHandler(**params)


@pytest.fixture(scope="module")
def lab(lab64_plan, tmp_path_factory):
    faults = {
        "cabling": [
            {"swap": ["H000017", "H000019"]},
            {"remove": "H000033"},
            {"down": {"device": "ZC-E008", "port": "TwoHundredGigabitEthernet 0/1:1"}},
            {"wrong_host": {"cable": "H000052", "name": "gpu-impostor"}},
            {"extra": {"a": {"device": "ZC-O015", "port": "FourHundredGigabitEthernet 0/9"},
                       "b": {"device": "ZC-E016", "port": "FourHundredGigabitEthernet 0/9"}}},
            {"lldp_off": "gpu08"},
        ],
        "devices": {
            "ZC-O003": {"refuse_login": True},
            "ZC-O005": {"no_banner": True},
            "ZC-O007": {"drop_after": 8},
            "ZC-O009": {"reject_lines": ["hostname ZC-O009"]},
            "ZC-O011": {"delay": 0.3},
            "ZC-O013": {"ask_password_change": True},
            "ZC-E006": {"reject_lines": ["interface TwoHundredGigabitEthernet 0/1:1"], "sublines": "global"},
        },
    }
    out = tmp_path_factory.mktemp("lab")
    with running_lab(lab64_plan, faults=faults, out_dir=out) as lab:
        lab.out = out
        yield lab


def test_files_written(lab):
    doc = json.loads((lab.out / "lab.json").read_text())
    assert set(doc["switches"]) == set(lab.model.switches)
    assert all(ep["host"] == "127.0.0.1" for ep in doc["switches"].values())
    kh = (lab.out / "known_hosts").read_text().splitlines()
    assert len(kh) == 16 and kh[0].startswith("[127.0.0.1]:")
    exp = json.loads((lab.out / "faults.json").read_text())["expected_findings"]
    assert [e["kind"] for e in exp] == ["swapped", "down", "down", "wrong_peer", "unexpected", "missing"]
    for f in lab.out.iterdir():
        assert DEFAULT_PASSWORD not in f.read_text() and DEFAULT_ENABLE_SECRET not in f.read_text()


def test_login_enable_config_prompts_and_errors(lab):
    c = connect(lab, "ZC-O001")
    try:
        assert c.find_prompt() == "Ruijie#"
        out = c.send_command_timing("configure terminal", strip_prompt=False)
        assert "Ruijie(config)#" in out
        out = c.send_command_timing("interface TwoHundredGigabitEthernet 0/1:1", strip_prompt=False)
        assert "Ruijie(config-if-TwoHundredGigabitEthernet 0/1:1)#" in out
        assert INVALID in c.send_command_timing("frobnicate now")
        assert INCOMPLETE in c.send_command_timing("ip address")
        assert INVALID in c.send_command_timing("ip address 10.0.0.300 255.255.255.254")
        c.send_command_timing("end")
        assert '% Ambiguous command: "show c"' in c.send_command("show c")
        assert INVALID in c.send_command("show frobnicate")
        assert "^" in c.send_command("show frobnicate")
    finally:
        c.disconnect()


@pytest.mark.slow
def test_config_no_forms_write_and_startup(lab):
    c = connect(lab, "ZC-E002")
    try:
        c.send_config_set(["interface TwoHundredGigabitEthernet 0/1:2", "no switchport", "ip address 10.9.9.0 255.255.255.254",
                           "description lab-test", "shutdown", "exit", "ip route 10.8.0.0 255.255.255.0 10.9.9.1", "mtu forwarding 9216"])
        run = c.send_command("show running-config")
        assert run.startswith("Building configuration...") and "Current configuration :" in run
        block = run.split("interface TwoHundredGigabitEthernet 0/1:2\n")[1].split("!")[0]
        assert block == " description lab-test\n no switchport\n ip address 10.9.9.0 255.255.255.254\n shutdown\n"
        assert "ip route 10.8.0.0 255.255.255.0 10.9.9.1" in run
        assert "10.9.9.0" not in c.send_command("show startup-config")
        c.send_config_set(["interface TwoHundredGigabitEthernet 0/1:2", "no shutdown", "no description", "no ip address",
                           "switchport", "exit", "no ip route 10.8.0.0 255.255.255.0 10.9.9.1", "no mtu forwarding"])
        run = c.send_command("show running-config")
        assert "interface TwoHundredGigabitEthernet 0/1:2\n!" in run and "ip route 10.8.0.0" not in run and "mtu" not in run
        set_hostname(c, "ZC-E002-t")
        assert "[OK]" in c.save_config()
        assert "hostname ZC-E002-t" in c.send_command("show startup-config")
        set_hostname(c, "Ruijie")
        c.save_config()
    finally:
        c.disconnect()


def test_show_commands(lab):
    c = connect(lab, "ZC-O001")
    try:
        ver = c.send_command("show version")
        assert "Ruijie Networks" in ver and "System serial number" in ver
        st = c.send_command("show interface status")
        assert st.splitlines()[0].startswith("Interface") and "TwoHundredGigabitEthernet 0/1:1" in st
        brief = c.send_command("show lldp neighbors")
        n = lab.runner.call(lambda: len(lab.model.neighbors(lab.model.switches["ZC-O001"])))
        assert f"Total entries displayed: {n}" in brief and "gpu01" in brief and n >= 8
        detail = c.send_command("show lldp neighbors detail")
        assert "LLDP neighbor-information of port [TwoHundredGigabitEthernet 0/5:1]" in detail
        assert "Running on Software" in detail  # the wrapped system description of a switch neighbour
        route = c.send_command("show ip route")
        assert "Gateway of last resort" in route
    finally:
        c.disconnect()


def test_lldp_follows_the_peers_configured_hostname(lab):
    peer = connect(lab, "ZC-E004")
    c = connect(lab, "ZC-O001")
    try:
        assert "ZC-E004" not in c.send_command("show lldp neighbors")
        set_hostname(peer, "ZC-E004")
        detail = c.send_command("show lldp neighbors detail")
        assert "System name                       : ZC-E004" in detail
    finally:
        set_hostname(peer, "Ruijie")
        peer.disconnect()
        c.disconnect()


def test_cabling_faults_show_in_lldp(lab):
    e002 = connect(lab, "ZC-E002")
    e008 = connect(lab, "ZC-E008")
    e016 = connect(lab, "ZC-E016")
    e010 = connect(lab, "ZC-E010")
    o015 = connect(lab, "ZC-O015")
    try:
        # swap H000017 (gpu02 GPU0 -> ZC-O001) with H000019 (gpu02 GPU1 -> ZC-O003): switch ends exchanged
        o001 = connect(lab, "ZC-O001")
        brief = o001.send_command("show lldp neighbors")
        o001.disconnect()
        line = next(ln for ln in brief.splitlines() if ln.startswith("gpu02 "))
        assert "ens2f0np0" in line  # GPU1's port 1 now sits where GPU0's was planned
        st = e008.send_command("show interface status")
        assert any(ln.startswith("TwoHundredGigabitEthernet 0/1:1") and " down " in ln for ln in st.splitlines())
        assert "gpu04" in e008.send_command("show lldp neighbors")
        assert "TH0/1:1 " not in e008.send_command("show lldp neighbors")  # the forced-down port shows nothing
        assert "gpu-impostor" in e008.send_command("show lldp neighbors")  # wrong_host: H000052 is GPU 25 port 2 -> E_3
        assert "FH0/9" in o015.send_command("show lldp neighbors")  # extra cable to ZC-E016
        assert "gpu08" not in e016.send_command("show lldp neighbors")  # lldp_off
    finally:
        for c in (e002, e008, e016, e010, o015):
            c.disconnect()


def test_device_fault_refuse_login(lab):
    with pytest.raises(NetmikoAuthenticationException):
        connect(lab, "ZC-O003")


def test_device_fault_no_banner(lab):
    with pytest.raises((NetmikoTimeoutException, ReadTimeout, OSError, ValueError)):
        connect(lab, "ZC-O005", read_timeout_override=3, conn_timeout=3)


def test_device_fault_drop_after_n_commands(lab):
    c = connect(lab, "ZC-O007")
    with pytest.raises(Exception):  # noqa: B017 - whatever netmiko raises when the session drops
        for _ in range(10):
            c.send_command("show version", read_timeout=5)
    assert lab.drops.get("ZC-O007", 0) >= 1


@pytest.mark.slow
def test_device_fault_reject_line_and_slow(lab):
    c = connect(lab, "ZC-O009")
    try:
        out = c.send_config_set(["hostname ZC-O009"], cmd_verify=False)
        assert INVALID in out
        assert "hostname Ruijie" in c.send_command("show running-config")
    finally:
        c.disconnect()
    t = time.perf_counter()
    c = connect(lab, "ZC-O011")
    c.send_command("show version")
    c.disconnect()
    assert time.perf_counter() - t >= 0.3 * 4  # enable, terminal width/length, show: every answer delayed


def test_device_fault_lenient_cli_over_ssh(lab):
    """`sublines: global`: the rejected interface's valid global sub-lines become stray global lines."""
    c = connect(lab, "ZC-E006")
    try:
        out = c.send_config_set(["interface TwoHundredGigabitEthernet 0/1:1", " no switchport",
                                 " bfd interval 300 min_rx 300 multiplier 3", " description stray"], cmd_verify=False)
        assert out.count(INVALID) == 3  # the interface line, `no switchport` and `description` (interface-only)
        run = c.send_command("show running-config")
        assert "\nbfd interval 300 min_rx 300 multiplier 3\n" in run  # a stray global line
        block = run.split("interface TwoHundredGigabitEthernet 0/1:1\n")[1].split("!")[0]
        assert block == ""  # nothing on the interface
        c.send_config_set(["no bfd interval 300 min_rx 300 multiplier 3"], cmd_verify=False)
        assert "bfd interval" not in c.send_command("show running-config")
    finally:
        c.disconnect()


def test_password_change_question(lab):
    c = connect(lab, "ZC-O013")
    assert c.find_prompt() == "Ruijie#"
    c.disconnect()


def test_wiring_cli(lab):
    r = run_zcube("lab", "wiring", str(lab.out), "--json")
    assert r.returncode == 0, r.stderr
    w = json.loads(r.stdout)
    assert any(not c["planned"] for c in w["cables"]) and "gpu08" in w["lldp_off"]


def test_lab_up_cli_serves_and_stops(tmp_path, lab64_plan):
    import signal
    import subprocess

    from conftest import zcube_exe

    plan = tmp_path / "plan.json"
    from zcube_deploy.plan.io import write_plan

    write_plan(lab64_plan, tmp_path)
    proc = subprocess.Popen(zcube_exe() + ["lab", "up", str(plan), "-o", str(tmp_path / "lab"), "--faults", "random:3", "--seed", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            if (tmp_path / "lab" / "lab.json").exists():
                break
            time.sleep(0.2)
        doc = json.loads((tmp_path / "lab" / "lab.json").read_text())
        assert len(doc["switches"]) == 16
        name, ep = next(iter(doc["switches"].items()))
        c = ConnectHandler(device_type="ruijie_os", host=ep["host"], port=ep["port"], username=DEFAULT_USERNAME,
                           password=DEFAULT_PASSWORD, secret=DEFAULT_ENABLE_SECRET, allow_agent=False, use_keys=False,
                           ssh_config_file=None, system_host_keys=False, alt_host_keys=True, alt_key_file=doc["known_hosts"])
        assert c.find_prompt().endswith("#")
        c.disconnect()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "lab stopped" in out and "Traceback" not in err
