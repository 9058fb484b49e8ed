"""The RGOS NAPALM driver against napalm's own conformance pieces (issue 23 item 4): napalm.base.test's method-
signature test, and every getter's return value checked against napalm.base.models with napalm's own helper,
over the lab. Plus what the driver reports: MTU from the device, unknowns as napalm's values, revert_in refused,
the save confirmed only by its exact success line; and how it reads a command's answer (read_command: netmiko's
send_command's text, a late prompt before the echo, netmiko's line ends)."""

from __future__ import annotations

import json
import re

import pytest
from napalm.base import models
from napalm.base.exceptions import CommitError
from napalm.base.test import helpers
from hypothesis import given
from hypothesis import strategies as st
from napalm.base.test.getters import BaseTestGetters

from conftest import build_example
from zcube_deploy.access import DEFAULT_ENABLE_SECRET, DEFAULT_PASSWORD, DEFAULT_USERNAME
from zcube_deploy.lab.server import running_lab
from zcube_deploy.platforms.ruijie_rgos import VERIFY_COMMANDS
from zcube_deploy.platforms.ruijie_rgos.driver import RuijieRGOSDriver, _normal_line_ends


class _Probe:
    driver = RuijieRGOSDriver


def test_napalms_method_signature_test():
    """napalm's own test_method_signatures (napalm.base.test.getters), run on the driver: every public method exists
    in napalm.base.NetworkDriver with the same signature (no extra public methods). (The class's other tests need
    napalm's mocked-device fixtures; the getters' model checks run over the lab below.)"""
    BaseTestGetters.test_method_signatures(_Probe())


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_example(tmp_path_factory, "lab-64.yaml")


@pytest.fixture(scope="module")
def device(built, tmp_path_factory):
    out = tmp_path_factory.mktemp("lab")
    with running_lab(json.loads((built / "plan.json").read_text()), out_dir=out) as lab:
        host, port = lab.endpoints["ZC-O001"]
        d = RuijieRGOSDriver(host, DEFAULT_USERNAME, DEFAULT_PASSWORD, optional_args={
            "port": port, "secret": DEFAULT_ENABLE_SECRET, "known_hosts": str(out / "known_hosts")})
        d.open()
        d.lab = lab
        try:
            yield d
        finally:
            d.close()


@pytest.mark.lab
def test_getters_match_napalms_models(device):
    assert helpers.test_model(models.AliveDict, device.is_alive())
    assert helpers.test_model(models.FactsDict, device.get_facts())
    interfaces = device.get_interfaces()
    assert interfaces and all(helpers.test_model(models.InterfaceDict, v) for v in interfaces.values())
    config = device.get_config()
    assert helpers.test_model(models.ConfigDict, config)
    lldp = device.get_lldp_neighbors()
    assert lldp and all(helpers.test_model(models.LLDPNeighborDict, n) for ns in lldp.values() for n in ns)
    detail = device.get_lldp_neighbors_detail()
    assert detail and all(helpers.test_model(models.LLDPNeighborDetailDict, n) for ns in detail.values() for n in ns)


@pytest.mark.lab
def test_interfaces_report_what_the_device_says(device):
    """MTU from the running config (`mtu forwarding`, a port's own `mtu` wins); MAC unknown: napalm's ""."""
    before = device.get_interfaces()
    port = "TwoHundredGigabitEthernet 0/1:1"
    assert before[port]["mac_address"] == ""
    assert before[port]["mtu"] == -1  # the site baseline sets no MTU: unknown, not a guessed 9216
    device.load_merge_candidate(config="mtu forwarding 9000\n")
    device.commit_config()
    after = device.get_interfaces()
    assert after[port]["mtu"] == 9000 and after["TwoHundredGigabitEthernet 0/2:1"]["mtu"] == 9000


@pytest.mark.lab
def test_revert_in_is_refused(device):
    device.load_merge_candidate(config="hostname ZC-X\n")
    with pytest.raises(NotImplementedError, match="revert"):
        device.commit_config(revert_in=60)
    device.discard_config()
    assert "hostname ZC-X" not in device.get_config("running")["running"]


class _Saving:
    """A netmiko connection whose `write` answers what the test says."""

    def __init__(self, answer: str):
        self.answer = answer

    def save_config(self):
        return self.answer


@pytest.mark.parametrize("answer", ["write\nBuilding configuration...\n[OK]\n", "Building configuration...\r\n  [OK]  \r\n"])
def test_the_save_is_confirmed_by_its_exact_success_line(answer):
    d = RuijieRGOSDriver("h", "u", "p")
    d.device = _Saving(answer)
    d._save()


@pytest.mark.parametrize("answer, said", [
    ("Building configuration...\n% Error: failed to write. OK?", "'% Error: failed to write. OK?'"),
    ("Building configuration...\nNOT OK", "'Building configuration... / NOT OK'"),
    ("Building configuration...\n[OK] but flash is full", "'Building configuration... / [OK] but flash is full'"),
    ("", "nothing"),
])
def test_any_other_answer_is_not_a_save(answer, said):
    """Known-bad cases: answers holding "OK" that are not the success line (the old check took any "OK")."""
    d = RuijieRGOSDriver("h", "u", "p")
    d.device = _Saving(answer)
    with pytest.raises(CommitError) as e:
        d._save()
    assert str(e.value) == f"write answered {said}, not the success line [OK]"


# ---- reading a command's answer (RuijieSSH.read_command: one loop over the SSH channel, the prompt looked for at the
# end only): what netmiko's send_command gives; a late prompt is not the end of the answer; netmiko's line ends
NETMIKO_NEWLINE = re.compile("(\r\r\r\n|\r\r\n|\r\n|\n\r)")


def netmiko_normalize(text: str) -> str:
    """netmiko's BaseConnection.normalize_linefeeds (RESPONSE_RETURN "\\n"), as netmiko 4 writes it."""
    return re.sub("\r", "\n", NETMIKO_NEWLINE.sub("\n", text))


@given(st.text(alphabet="\r\nab ", max_size=40))
def test_line_ends_are_normalised_as_netmiko_does(text):
    assert _normal_line_ends(text, netmiko_normalize) == netmiko_normalize(text)


@pytest.mark.lab
def test_answers_are_netmikos_send_command_answers(device):
    dev = device.device
    for command in (*VERIFY_COMMANDS, "show version", "show lldp neighbors", "show nonsense", "frobnicate"):
        want = dev.send_command(command, read_timeout=30)
        assert dev.read_command(command, 30) == want, command
        assert device.cli([command]) == {command: want}  # the NAPALM call reads through it
    assert "LLDP neighbor-information of port" in dev.read_command("show lldp neighbors detail", 30)


@pytest.mark.lab
def test_a_late_prompt_before_the_echo_is_not_the_end_of_the_answer(device):
    """A prompt still on its way from an earlier exchange when the command goes (here: a bare return typed just
    before it, which the switch answers with its prompt) comes before the command's echo: the answer starts at the
    echo, as netmiko's own echo check makes it."""
    dev = device.device
    want = dev.send_command("show running-config", read_timeout=30)
    write = dev.write_channel
    dev.write_channel = lambda text: write(dev.RETURN + text)
    try:
        got = dev.read_command("show running-config", 30)
    finally:
        del dev.write_channel
    assert got == want and "hostname" in got
    assert dev.read_command("show version", 30) == dev.send_command("show version", read_timeout=30)  # nothing left behind


def test_a_connection_that_fails_says_where_and_why_on_one_line():
    """An endpoint that closes the connection before the SSH banner (a firewall, a port that is no SSH server) makes
    netmiko raise with a message that starts with a newline; push, verify and audit keep an error's first line, so
    the reason read `ConnectionException: NetmikoTimeoutException: ` and nothing else. The driver says it on one
    line, with the endpoint."""
    import socket
    import threading

    from napalm.base.exceptions import ConnectionException

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]

    def hang_up() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=hang_up, daemon=True).start()
    try:
        drv = RuijieRGOSDriver("127.0.0.1", "user", "pw-Zq9", timeout=3, optional_args={"port": port})
        with pytest.raises(ConnectionException) as got:
            drv.open()
    finally:
        server.close()
    text = f"{type(got.value).__name__}: {got.value}"
    assert len(text.splitlines()) == 1, text
    # the peer's reset reaches paramiko, or not, as the machine's timing has it: its OS error, when there, after ': '
    said = re.escape(f"ConnectionException: [127.0.0.1]:{port}: NetmikoTimeoutException: A paramiko SSHException "
                     "occurred during connection creation: Error reading SSH protocol banner")
    assert re.fullmatch(said + r"(: \[Errno \d+\] [A-Za-z ]+)?", text), text
