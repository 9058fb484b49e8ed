"""The driver's reading of a command's answer (``_RuijieSSH.read_command``: one loop over the SSH channel, the
prompt looked for at the end only) gives what netmiko's ``send_command`` gives, over the lab; a prompt that comes
late from an earlier exchange is not taken for the end of the answer; line ends are normalised as netmiko does."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import build_example
from zcube_deploy.access import DEFAULT_ENABLE_SECRET, DEFAULT_PASSWORD, DEFAULT_USERNAME
from zcube_deploy.lab.server import running_lab
from zcube_deploy.platforms.ruijie_rgos import VERIFY_COMMANDS
from zcube_deploy.platforms.ruijie_rgos.driver import RuijieRGOSDriver, _normal_line_ends

NETMIKO_NEWLINE = re.compile("(\r\r\r\n|\r\r\n|\r\n|\n\r)")


def netmiko_normalize(text: str) -> str:
    """netmiko's BaseConnection.normalize_linefeeds (RESPONSE_RETURN "\\n"), as netmiko 4 writes it."""
    return re.sub("\r", "\n", NETMIKO_NEWLINE.sub("\n", text))


@given(st.text(alphabet="\r\nab ", max_size=40))
def test_line_ends_are_normalised_as_netmiko_does(text):
    assert _normal_line_ends(text, netmiko_normalize) == netmiko_normalize(text)


@pytest.fixture(scope="module")
def device(tmp_path_factory):
    built = build_example(tmp_path_factory, "lab-64.yaml")
    out = tmp_path_factory.mktemp("lab")
    with running_lab(json.loads((built / "plan.json").read_text()), out_dir=out) as lab:
        host, port = lab.endpoints["ZC-O001"]
        d = RuijieRGOSDriver(host, DEFAULT_USERNAME, DEFAULT_PASSWORD, optional_args={
            "port": port, "secret": DEFAULT_ENABLE_SECRET, "known_hosts": str(out / "known_hosts")})
        d.open()
        try:
            yield d
        finally:
            d.close()


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
