"""The simulated switch's CLI without SSH: sub-lines of a rejected `interface`, the `write` faults."""

from __future__ import annotations

import pytest

from zcube_deploy.lab.core import DeviceFaults
from zcube_deploy.platforms.ruijie_rgos.lab.shell import INVALID, Session, SwitchState

PORTS = ["Mgmt 0", "TwoHundredGigabitEthernet 0/1:1", "TwoHundredGigabitEthernet 0/1:2"]


def session(**kw) -> tuple[SwitchState, Session]:
    st = SwitchState(model="RG-TEST", interface_names=PORTS, abbreviations={}, serial="G1TEST")
    sess = Session(st, enable_secret="", lldp=lambda *_: "", link_up=lambda *_: True, **kw)
    sess.mode = "enable"
    return st, sess


def config(sess: Session, lines: list[str]) -> list[str]:
    """Feed ``lines`` in config mode (entered when the session is not there yet); the answer to each."""
    if not sess.mode.startswith("config"):
        assert sess.feed("configure terminal").startswith("Enter configuration")
    return [sess.feed(ln) for ln in lines]


SUB_LINES = [" description orphan", " no switchport", " ip address 10.9.9.0 255.255.255.254",
             " bfd interval 300 min_rx 300 multiplier 3", " lldp enable", " mtu 9216"]


def test_sub_lines_of_a_rejected_interface_are_rejected_in_global_mode():
    st, sess = session()
    before = st.running_config(header=False)
    answers = config(sess, ["interface TwoHundredGigabitEthernet 0/99:1"] + SUB_LINES)
    assert all(INVALID in a for a in answers), answers  # the interface line and every sub-line: one error each
    assert sess.mode == "config"
    assert st.running_config(header=False) == before  # nothing landed in global configuration mode
    # an unindented line ends the rejected block: a global command works again
    assert config(sess, ["lldp enable"]) == [""] and "\nlldp enable\n" in st.running_config(header=False)


def test_sub_lines_of_a_rejected_interface_do_not_land_on_the_previous_interface():
    st, sess = session()
    answers = config(sess, ["interface TwoHundredGigabitEthernet 0/1:1", " description kept",
                            "int TwoHundredGigabitEthernet 0/99:1", " description orphan", " no switchport", "exit"])
    assert answers[:2] == ["", ""] and INVALID in answers[2] and INVALID in answers[3] and INVALID in answers[4]
    itf = st.interfaces["TwoHundredGigabitEthernet 0/1:1"]
    assert itf.description == "kept" and not itf.routed
    # the caret points at the rejected word (the echo is the prompt, then the line as sent)
    assert answers[3].splitlines()[0] == " " * len("Ruijie(config-if-TwoHundredGigabitEthernet 0/1:1)# ") + "^"


def test_sub_lines_of_an_interface_rejected_by_a_fault_are_rejected():
    st, sess = session(reject=["interface TwoHundredGigabitEthernet 0/1:2"])
    answers = config(sess, ["interface TwoHundredGigabitEthernet 0/1:2", " description orphan", " lldp enable", "exit"])
    assert INVALID in answers[0] and INVALID in answers[1] and INVALID in answers[2]
    assert st.interfaces["TwoHundredGigabitEthernet 0/1:2"].description is None and "lldp enable" not in st.running_config()


def test_lenient_cli_takes_the_sub_lines_of_a_rejected_interface_in_global_mode():
    """The `sublines: global` fault: the valid global commands among the sub-lines land as stray global lines."""
    st, sess = session(reject=["interface TwoHundredGigabitEthernet 0/1:2"], sublines="global")
    answers = config(sess, ["interface TwoHundredGigabitEthernet 0/1:1", " description kept",
                            "interface TwoHundredGigabitEthernet 0/1:2"] + SUB_LINES)
    assert answers[:2] == ["", ""] and INVALID in answers[2]
    # the caret of the rejected line stands under the prompt it was typed at (the previous interface's)
    assert answers[2].splitlines()[0] == " " * len("Ruijie(config-if-TwoHundredGigabitEthernet 0/1:1)#") + "^"
    assert sess.mode == "config"  # left in global configuration mode
    by_line = dict(zip(SUB_LINES, answers[3:]))
    taken = [" bfd interval 300 min_rx 300 multiplier 3", " lldp enable"]  # valid global commands
    assert all(by_line[ln] == "" for ln in taken), by_line
    assert all(INVALID in by_line[ln] for ln in SUB_LINES if ln not in taken), by_line  # interface-only commands
    run = st.running_config(header=False)
    assert "\nbfd interval 300 min_rx 300 multiplier 3\n" in run and "\nlldp enable\n" in run
    # nothing landed on either interface
    assert st.interfaces["TwoHundredGigabitEthernet 0/1:2"].lines() == []
    assert st.interfaces["TwoHundredGigabitEthernet 0/1:1"].lines() == [" description kept"]


def test_lenient_cli_applies_to_an_interface_name_the_switch_does_not_have():
    st, sess = session(sublines="global")
    answers = config(sess, ["interface TwoHundredGigabitEthernet 0/99:1", " bfd interval 300 min_rx 300 multiplier 3"])
    assert INVALID in answers[0] and answers[1] == ""
    assert "\nbfd interval 300 min_rx 300 multiplier 3\n" in st.running_config(header=False)


def test_sublines_values_are_checked():
    assert DeviceFaults(sublines="global").sublines == "global" and DeviceFaults().sublines == "reject"
    with pytest.raises(TypeError, match="sublines"):
        DeviceFaults(sublines="lenient")


def test_a_good_interface_still_takes_its_sub_lines():
    st, sess = session()
    answers = config(sess, ["interface TwoHundredGigabitEthernet 0/1:2", " description ok", " no switchport",
                            " ip address 10.9.9.0 255.255.255.254", "exit"])
    assert answers == [""] * 5
    itf = st.interfaces["TwoHundredGigabitEthernet 0/1:2"]
    assert itf.description == "ok" and itf.address == ("10.9.9.0", "255.255.255.254")


def test_write_fault_fail_saves_nothing_and_answers_an_error():
    st, sess = session(write_fault="fail")
    before = st.startup
    config(sess, ["hostname ZC-T1", "end"])
    answer = sess.feed("write")
    assert "[OK]" not in answer and "OK" not in answer and "% " in answer
    assert st.startup == before and st.writes == 0 and not sess.abort


def test_write_fault_drop_saves_then_drops_the_session():
    st, sess = session(write_fault="drop")
    config(sess, ["hostname ZC-T1", "end"])
    sess.feed("write")
    assert "hostname ZC-T1" in st.startup and st.writes == 1
    assert sess.abort  # the lab's server aborts the connection before sending the answer


def test_write_without_fault():
    st, sess = session()
    config(sess, ["hostname ZC-T1", "end"])
    assert sess.feed("write").endswith("[OK]") and "hostname ZC-T1" in st.startup and not sess.abort


def test_write_fault_values_are_checked():
    assert DeviceFaults(write_fault="drop").write_fault == "drop"
    with pytest.raises(TypeError, match="write_fault"):
        DeviceFaults(write_fault="sometimes")


def test_an_interface_mtu_is_set_and_removed_and_the_global_one_too():
    """`no mtu N` in an interface was rejected (it was read as the global `no mtu forwarding`)."""
    st, sess = session()
    itf = "interface TwoHundredGigabitEthernet 0/1:1"
    assert config(sess, [itf, " mtu 1500"]) == ["", ""]
    assert "\n mtu 1500\n" in st.running_config(header=False)
    assert config(sess, [" no mtu 1500"]) == [""]
    assert "mtu 1500" not in st.running_config(header=False)
    assert config(sess, ["exit", "mtu forwarding 9216"]) == ["", ""] and "\nmtu forwarding 9216\n" in st.running_config(header=False)
    assert config(sess, ["no mtu forwarding"]) == [""] and "mtu forwarding" not in st.running_config(header=False)
    assert INVALID in config(sess, ["no mtu 9216"])[0]  # in global mode `no mtu` takes `forwarding` only


def test_show_ip_route_installs_a_static_route_only_on_an_up_subnet_and_sorts_the_table():
    """Connected and local routes of the up routed ports, a static route only while its next hop is in one of their
    subnets (a /31 and a /24 here: the next hop is looked up under each connected prefix length), a discard route
    always, a host mask read as ``ipaddress`` reads it, every entry in address order."""
    up = {"TwoHundredGigabitEthernet 0/1:1": True, "TwoHundredGigabitEthernet 0/1:2": True}
    st = SwitchState(model="RG-TEST", interface_names=PORTS, abbreviations={}, serial="G1TEST")
    sess = Session(st, enable_secret="", lldp=lambda *_: "", link_up=lambda _, port: up.get(port, True))
    sess.mode = "enable"
    assert not any(config(sess, [
        "interface TwoHundredGigabitEthernet 0/1:1", " no switchport", " ip address 10.1.0.1 255.255.255.254", "exit",
        "interface TwoHundredGigabitEthernet 0/1:2", " no switchport", " ip address 10.2.0.1 255.255.255.0", "exit",
        "ip route 10.9.0.0 255.255.0.0 10.1.0.0", "ip route 10.8.0.0 0.0.0.255 10.2.0.77", "ip route 10.7.0.0 255.255.255.0 10.3.0.1",
        "ip route 10.6.0.0 255.255.255.240 Null 0", "end"]))
    table = [ln for ln in sess.feed("show ip route").splitlines() if ln[:6] in ("C     ", "L     ", "S     ")]
    assert table == [
        "C     10.1.0.0/31 is directly connected, TwoHundredGigabitEthernet 0/1:1",
        "L     10.1.0.1/32 is directly connected, TwoHundredGigabitEthernet 0/1:1",
        "C     10.2.0.0/24 is directly connected, TwoHundredGigabitEthernet 0/1:2",
        "L     10.2.0.1/32 is directly connected, TwoHundredGigabitEthernet 0/1:2",
        "S     10.6.0.0/28 is directly connected, Null 0",
        "S     10.8.0.0/24 [1/0] via 10.2.0.77",
        "S     10.9.0.0/16 [1/0] via 10.1.0.0",
    ]
    up["TwoHundredGigabitEthernet 0/1:1"] = False  # its link goes down: its subnet and the route through it go
    table = [ln for ln in sess.feed("show ip route").splitlines() if ln[:6] in ("C     ", "L     ", "S     ")]
    assert not any("10.1.0." in ln or "10.9.0.0" in ln for ln in table) and "S     10.8.0.0/24 [1/0] via 10.2.0.77" in table
