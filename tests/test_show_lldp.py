"""The whole-text reader of `show lldp neighbors detail` (platforms/ruijie_rgos/show_lldp.py) against the
general reader, the TextFSM template (parsers.parse): the same rows over generated outputs (field order,
missing fields, padding, CRLF and CR, odd white space, several neighbours on a port, wrapped and long
system descriptions, stray lines), over the lab's own outputs and the recorded samples; a text it
refuses is read by the general reader, never dropped."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from zcube_deploy.platforms.ruijie_rgos.lab import lldp as lab_lldp
from zcube_deploy.platforms.ruijie_rgos.parsers import parse
from zcube_deploy.platforms.ruijie_rgos.show_lldp import KEYS, lldp_fast, lldp_rows

MOCKED = Path(__file__).parent / "mocked" / "show_lldp_neighbors_detail"


def template_rows(text: str) -> list[dict]:
    return [{k: r[k] for k in KEYS} for r in parse("show lldp neighbors detail", text)]


def same_as_template(text: str) -> list[dict] | None:
    """Assert both readers give the template's rows; returns the fast reader's result (None: it refused)."""
    want = template_rows(text)
    fast = lldp_fast(text)
    if fast is not None:
        assert fast == want
    assert lldp_rows(text) == want
    return fast


# ---- generated outputs: lines of the shapes a switch prints, and of shapes it should not
_space = st.sampled_from([" ", "  ", "   "])
_pad = st.sampled_from(["", "", " ", "  "])
_value = st.one_of(
    st.sampled_from(["", "gpu00001", "ZC-O001", "MAC address", "Interface name", "Locally assigned", "0244.41eb.c20e",
                     "TwoHundredGigabitEthernet 0/5:1", "ens1f1np1", "172.16.0.11", "a : b", "1", "42", "x1", " padded ",
                     "----------", "[x]", "LLDP neighbor-information of port [X 0/1]"]),
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12))
_key = st.sampled_from(["Neighbor index", "Chassis ID type", "Chassis ID", "System name", "System description",
                        "System capabilities supported", "System capabilities enabled", "Management address",
                        "Management address subtype", "Port ID type", "Port ID", "Port description", "Device type",
                        "Update time", "Port VLAN ID", "Neighbor  index", "Port  ID", "System name:", "PortID"])


def _reorder(draw, seq: list, at: int, how: str) -> bool:
    """The edits both generators make to a list in place (``how``: drop, repeat or move the item at ``at``); False for
    any other ``how`` (the caller's own)."""
    if how == "drop":
        del seq[at]
    elif how == "repeat":
        seq.insert(at, seq[at])
    elif how == "move":
        seq.insert(draw(st.integers(0, len(seq))), seq.pop(at))
    else:
        return False
    return True


@st.composite
def _field(draw) -> str:
    key = draw(_key)
    if draw(st.integers(0, 9)) == 0:  # a key with other white space inside it
        key = key.replace(" ", draw(_space), 1)
    lead = draw(st.sampled_from(["  ", "  ", " ", "", "      "]))
    gap = draw(st.sampled_from([" " * max(1, 34 - len(key)), " ", "", "  "]))  # "" : a colon glued to the key
    return f"{lead}{key}{gap}:{draw(st.sampled_from([' ', '', '  ']))}{draw(_value)}{draw(_pad)}"


_separator = st.builds(lambda lead, n, trail: f"{lead}{'-' * n}{trail}", st.sampled_from(["", "", "  "]),
                       st.sampled_from([76, 76, 10, 9, 40]), st.sampled_from(["", "", " "]))
_header = st.builds(lambda word, sp, port, trail: f"{word}{sp}neighbor-information of port [{port}]{trail}",
                    st.sampled_from(["LLDP", "LLDP", "Lldp", "lldp", "  LLDP", "LLD P"]), st.sampled_from([" ", " ", "  "]),
                    st.sampled_from(["TwoHundredGigabitEthernet 0/1:1", "TwoHundredGigabitEthernet 0/1:2", "Hu 0/3", "", "a]b"]),
                    st.sampled_from(["", "", " ", "x"]))
_odd = st.sampled_from(["\t", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u2028", "\u00fc", "\u3000", "\r"])
_stray = st.sampled_from(["", "", "  802.1 organizationally information", "Running on Software RGOS 11.0(5)B9P66, Release(10172204)",
                          "      PPVID Supported               : YES", "  Port and protocol VLAN ID(PPVID)  : 0",
                          "garbage", "  " + "x" * 300, "\x07 bell", "\x1b[0m"])


@st.composite
def _neighbour(draw) -> list[str]:
    """One neighbour: its index, then fields in any order, any of them missing, with padding lines between."""
    lines = []
    if draw(st.integers(0, 5)):
        lines.append(f"  Neighbor index{' ' * 20}: {draw(st.sampled_from(['1', '2', '17', 'x', '', '3 ']))}")
    lines += draw(st.lists(st.one_of(_field(), _stray), max_size=14))
    if draw(st.booleans()):  # a system description wrapped onto unindented lines, maybe long
        at = draw(st.integers(0, len(lines)))
        wrapped = draw(st.lists(st.sampled_from(["Running on Software RGOS 11.0", "x" * 500, "  Port ID : inside-the-description",
                                                 "-" * 76, "LLDP neighbor-information of port [Hu 0/9]"]), max_size=3))
        lines[at:at] = [f"  System description{' ' * 16}: {draw(_value)}", *wrapped,
                        "  System capabilities supported     : Bridge, Router"]
    return lines


@st.composite
def lldp_outputs(draw) -> str:
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 4))):  # ports
        if draw(st.integers(0, 6)):
            lines += [draw(_separator), draw(_header), draw(_separator)]
        for k in range(draw(st.integers(1, 3))):  # neighbours on the port, a separator between them
            if k:
                lines.append(draw(_separator))
            lines += draw(_neighbour())
    if draw(st.booleans()):
        lines.append(draw(_separator))
    end = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    text = end.join(lines) + draw(st.sampled_from(["", end, end + end]))
    for _ in range(draw(st.sampled_from([0, 0, 1, 3]))):  # odd white space or a character that is not ASCII, anywhere
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(_odd) + text[at:]
    return text


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lldp_outputs())
@example("  Neighbor index : 1\n  System name : x\n")  # a neighbour before any port header
@example("LLDP neighbor-information of port [Hu 0/1]\n" + "-" * 76 + "\n")  # a port with no neighbour at the end
def test_generated_outputs_read_as_the_template_reads_them(text):
    same_as_template(text)


def _lab_neighbour(port: str, name: str, desc: str, mgmt: str, by_mac: bool) -> lab_lldp.Neighbor:
    return lab_lldp.Neighbor(port, port, name, "02:44:41:eb:c2:0e" if by_mac else "ens1f1np1", "MAC address" if by_mac else "Interface name",
                             "ens1f1np1", "0244.41eb.c20e", "MAC address", desc, "Bridge, Router", "B, R", mgmt)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["TwoHundredGigabitEthernet 0/1:1", "TwoHundredGigabitEthernet 0/1:2", "Hu 0/3"]),
                          st.sampled_from(["gpu00001", "ZC-O001", "", "a : b"]),
                          st.sampled_from(["Ubuntu 22.04.4 LTS", "Ruijie Networks,\nRunning on Software RGOS 11.0", "", "y" * 2000,
                                           "wrapped\n  Port ID : not-a-field"]),
                          st.sampled_from(["", "172.16.0.11"]), st.booleans()), max_size=6),
       st.sampled_from(["LLDP", "Lldp"]), st.sampled_from(["\n", "\r\n"]))
def test_the_labs_layout_reads_as_the_template_reads_it(neighbours, word, end):
    """The lab's own printer (several neighbours on a port follow a dashed line, wrapped descriptions): the
    fast reader reads every such text itself (it never needs the general one for them)."""
    text = lab_lldp.detail([_lab_neighbour(*n) for n in sorted(neighbours, key=lambda n: n[0])], word).replace("\n", end)
    assert same_as_template(text) is not None


@pytest.mark.parametrize("path", sorted(MOCKED.glob("*/raw.txt")), ids=lambda p: p.parent.name)
def test_recorded_samples_read_as_the_template_reads_them(path):
    assert same_as_template(path.read_text()) is not None


def test_every_output_of_the_lab_reads_as_the_template_reads_it(lab64_build):
    """Every switch of lab-64 as the lab prints it (servers answering by MAC and by name, a server with LLDP
    off), through the lab's own sessions."""
    import json

    from zcube_deploy.lab.core import LabModel

    plan = json.loads((lab64_build / "plan.json").read_text())
    model = LabModel(plan)
    model.wiring.lldp_off.add(next(s["name"] for s in plan["servers"]))
    for by in ("name", "mac"):
        model.server_model["lldp_port_id"] = by
        for sw in plan["switches"]:
            st = model.switches[sw["name"]]
            rows = same_as_template(model.lldp_text(st, True))
            assert rows is not None and len(rows) == len(model.neighbors(st)) > 1


def test_a_text_it_cannot_read_goes_to_the_general_reader_never_dropped():
    """A neighbour whose port description holds a tab, a system name that is not ASCII, a vertical tab in a
    key: the fast reader refuses the whole text (None), and lldp_rows gives the template's rows, that
    neighbour included."""
    base = lab_lldp.detail([_lab_neighbour("Hu 0/1", "gpu1", "d", "", False), _lab_neighbour("Hu 0/2", "gpu2", "d", "", False)])
    for odd in (base.replace("gpu2", "gp\u00fc2"), base.replace("Port description                  : ens1f1np1",
                                                                "Port description                  : ens1\tf1np1", 1),
                base.replace("  System name", "\x0b System name", 1), base.replace("\n", "\x85", 3)):
        assert lldp_fast(odd) is None
        rows = lldp_rows(odd)
        assert rows == template_rows(odd)
    rows = lldp_rows(base.replace("gpu2", "gp\u00fc2"))
    assert [r["system_name"] for r in rows] == ["gpu1", "gp\u00fc2"]


# ---- hand-written texts with the template's corners
TRICKY = """----------------------------------------------------------------------------
Lldp neighbor-information of port [TwoHundredGigabitEthernet 0/1:1]
----------------------------------------------------------------------------
  Neighbor index                    : 1
  Chassis ID type                   : MAC address
  Chassis ID                        : 0244.41eb.c20e
  System name                       : gpu00001
  System description                : Ubuntu 22.04.4 LTS
  Port ID                           : not-a-field-inside-the-description
  ---------------------------------------------
  System capabilities supported     : Bridge, Router
  Management address                : 172.16.0.11
  Port ID type                      : MAC address
  Port  ID                          : 02:44:41:eb:c2:0e
  Port description                  :   ens1f1np1  \r
----------------------------------------------------------------------------
  Neighbor index                    : 2
  System name                       : stray
  Neighbor index                    : 9
  Port ID                           : eth0
----------------------------------------------------------------------------
LLDP neighbor-information of port [TwoHundredGigabitEthernet 0/2:1]
----------------------------------------------------------------------------
"""


# keys the template does not take: no whitespace before the colon, a non-numeric neighbour index
TRICKY_KEYS = """LLDP neighbor-information of port [TwoHundredGigabitEthernet 0/3:1]
  Neighbor index                    : first
  System name                       : not-read-before-an-index
  Neighbor index                    : 3
  System name                       : gpu00003
  System name: glued-colon
  Port ID\t\t\t: ens2
  Port ID type :MAC address
----------------------------------------------------------------------------
"""


@pytest.mark.parametrize("text", [TRICKY, TRICKY.replace("\n", "\r\n"), TRICKY.rsplit("-" * 76, 2)[0],
                                  TRICKY + "  Neighbor index : 1\n  System name : x\n", "", TRICKY_KEYS, TRICKY_KEYS.replace("\t", " ")])
def test_hand_written_corners_read_as_the_template_reads_them(text):
    same_as_template(text)


def test_the_tricky_text_holds_what_it_should():
    rows = lldp_rows(TRICKY)
    assert [(r["local_interface"], r["system_name"], r["port_id"]) for r in rows] == [
        ("TwoHundredGigabitEthernet 0/1:1", "gpu00001", "02:44:41:eb:c2:0e"),
        ("TwoHundredGigabitEthernet 0/1:1", "stray", "eth0"),
        ("TwoHundredGigabitEthernet 0/2:1", "", "")]  # a port header at the end: the template's last (empty) record


def test_only_the_templates_keys_are_read():
    for text in (TRICKY_KEYS, TRICKY_KEYS.replace("\t", " ")):  # (with its tabs the general reader reads it)
        rows = lldp_rows(text)  # the neighbour, then the port's last (empty) record, as the template gives it
        assert [(r["neighbor_index"], r["system_name"], r["port_id"], r["port_id_type"]) for r in rows] == [
            ("3", "gpu00003", "ens2", "MAC address"), ("", "", "", "")]


def test_verify_findings_are_the_same_with_the_general_reader(lab64_build, tmp_path, monkeypatch):
    """Seeded cabling faults of every kind in lab-64 (swapped, moved, missing cables, wrong hosts, LLDP off, ...)
    over a configured lab, recorded, verified offline: the findings with the fast reader are byte for byte the
    findings with the general reader alone (the fast reader made to refuse every text)."""
    import json

    import zcube_deploy.platforms.ruijie_rgos.show_lldp as show_lldp
    from zcube_deploy.lab.core import LabModel
    from zcube_deploy.lab.inject import apply_faults, load_faults
    from zcube_deploy.platforms import platform_module
    from zcube_deploy.verify.observe import record_name
    from zcube_deploy.verify.pipeline import run_verify

    plan = json.loads((lab64_build / "plan.json").read_text())
    model = LabModel(plan)
    model.enable_secret = "en"
    applied = apply_faults(model, load_faults("random:40", plan, seed=26))
    assert len(applied) >= 20

    def session(name):
        s = model.new_session(name)
        s.feed("enable")
        s.feed("en")
        return s

    for sw in plan["switches"]:
        s = session(sw["name"])
        text = (lab64_build / "configs" / f"{sw['name']}.cfg").read_text()
        for line in ["configure terminal", *[ln for ln in text.splitlines() if ln.strip() and not ln.startswith("!") and ln != "end"], "end"]:
            s.feed(line)
    for sw in plan["switches"]:
        (tmp_path / sw["name"]).mkdir()
        for cmd in platform_module("ruijie_rgos").VERIFY_COMMANDS:
            out = session(sw["name"]).feed(cmd)
            (tmp_path / sw["name"] / record_name(cmd)).write_text(out if isinstance(out, str) else "".join(out))
    fast = run_verify(plan, None, replay_dir=str(tmp_path))
    assert len(fast["findings"]) >= 20
    monkeypatch.setattr(show_lldp, "lldp_fast", lambda text: None)
    general = run_verify(plan, None, replay_dir=str(tmp_path))
    assert json.dumps(fast, sort_keys=True) == json.dumps(general, sort_keys=True)


# ---- neighbours as printed, read column by column (show_lldp._as_printed) against the states (_states)
_port = st.sampled_from(["TwoHundredGigabitEthernet 0/1:1", "Hu 0/3", "x"])


@st.composite
def printed_matches(draw):
    """The matched lines of neighbours as RGOS prints them, then maybe broken: a line dropped, repeated or moved, a
    header where a separator goes, an index that is no number, a key written otherwise."""
    from zcube_deploy.platforms.ruijie_rgos.show_lldp import _PRINTED

    ms = []
    for _ in range(draw(st.integers(0, 3))):
        ms += [("", "", ""), (draw(_port), "", ""), ("", "", "")]
        ms += [("", k, draw(st.sampled_from(["1", "12", "3 "])) if k == "Neighbor index" else draw(_value) + draw(_pad))
               for k in _PRINTED[3:]]
    for _ in range(draw(st.sampled_from([0, 0, 1, 2]))):
        if not ms:
            break
        at = draw(st.integers(0, len(ms) - 1))
        how = draw(st.sampled_from(["drop", "repeat", "move", "header", "index", "key"]))
        if _reorder(draw, ms, at, how):
            pass
        elif how == "header":
            ms[at] = (draw(_port), "", "")
        elif how == "index":
            ms[at] = ("", "Neighbor index", draw(st.sampled_from(["x", "", " ", "1x"])))
        else:
            ms[at] = ("", draw(st.sampled_from(["Port  ID", "Chassis ID", "System name"])), ms[at][2])
    return ms


def _printed(port: str, index: str = "1") -> list[tuple[str, str, str]]:
    from zcube_deploy.platforms.ruijie_rgos.show_lldp import _PRINTED

    return [("", "", ""), (port, "", ""), ("", "", "")] + [("", k, index if k == "Neighbor index" else f"{k} v") for k in _PRINTED[3:]]


@settings(max_examples=500, deadline=None)
@given(printed_matches())
@example([("Hu 0/9", "", "")] + _printed("Hu 0/1")[1:] + [("Hu 0/8", "", "")] + _printed("Hu 0/2")[1:])  # headers for separators
@example(_printed("Hu 0/1")[:2] + [("Hu 0/8", "", "")] + _printed("Hu 0/1")[3:])
@example(_printed("Hu 0/1") + _printed("Hu 0/2", "x"))
def test_neighbours_as_printed_read_column_by_column_as_the_states_read_them(ms):
    """The column reader gives the states' rows or refuses (None); it never reads a broken sequence otherwise."""
    from zcube_deploy.platforms.ruijie_rgos.show_lldp import _as_printed, _states

    rows = _as_printed(ms)
    assert rows is None or rows == _states(ms)


def test_the_labs_single_neighbours_are_read_column_by_column_and_odd_ones_by_the_states():
    """The lab's (and RGOS's) layout, one neighbour a port, takes the column reader; an index that is no number, a
    wrapped description holding a field line, a separator at the end: the states read them (the same rows as the
    template's, as every test above asserts)."""
    from zcube_deploy.platforms.ruijie_rgos.show_lldp import _LINE, _as_printed

    text = lab_lldp.detail([_lab_neighbour("Hu 0/1", "gpu1", "d", "", False), _lab_neighbour("Hu 0/2", "ZC-O001", "e", "172.16.0.11", True)])
    assert _as_printed(_LINE.findall("\n" + text)) is not None
    for odd in (text.replace("Neighbor index                    : 1", "Neighbor index                    : x", 1),
                text.replace("\n  System capabilities supported", "\n  Port ID : inside\n  System capabilities supported", 1),
                text + "-" * 76 + "\n"):
        assert _as_printed(_LINE.findall("\n" + odd)) is None
        same_as_template(odd)


# ---- whole neighbours as printed, one pattern match each (show_lldp._as_units), against the template
_INSERTED = st.sampled_from([
    "  Port ID                           : inserted", "  Port  ID : two-spaces", "  Chassis ID : c2", "  Chassis ID type : t2",
    "  System name                       : other", "  System  name : x", "  Management address : 10.9.9.9", "  Port description : d2",
    "  Port ID type : MAC address", "  System description : again", "  Neighbor index                    : 7", "-" * 76, "  " + "-" * 12,
    "-" * 9, "LLDP neighbor-information of port [Hu 0/7]", "lldp neighbor-information of port [Hu 0/7]", "Chassis ID : col0",
    "System name : col0", "  System capabilities supported     : Bridge", "  System capabilities enabled : x", "  Port VLAN ID : 1",
    "  Management address subtype : ipv4", "  PortID : glued", "  Portable : x", "  Systematic : x", "  Cha : x", "  Nothing : x", "",
    "   ", "Running on Software RGOS 11.0", "  Link aggregation supported : x", "  lldp : x", "  Neighbors : x"])


@st.composite
def printed_texts(draw) -> tuple[str, bool]:
    """(the lab's printed text of a few neighbours, then maybe edited line by line: a line dropped, repeated,
    moved, inserted (rule lines of every kind, near misses), a value with trailing or no spaces, an index that is no
    number; whether it was edited)."""
    neighbours = draw(st.lists(st.tuples(
        st.sampled_from(["TwoHundredGigabitEthernet 0/1:1", "TwoHundredGigabitEthernet 0/1:2", "Hu 0/3"]),
        st.sampled_from(["gpu00001", "ZC-O001", "", "a : b", "x  "]),
        st.sampled_from(["Ubuntu 22.04.4 LTS", "Ruijie Networks,\nRunning on Software RGOS 11.0", "", "w\n  Port ID : not-a-field",
                         "w\n  System capabilities supported : early"]),
        st.sampled_from(["", "172.16.0.11"]), st.booleans()), min_size=1, max_size=4))
    text = lab_lldp.detail([_lab_neighbour(*n) for n in sorted(neighbours, key=lambda n: n[0])])
    lines = text.split("\n")
    edits = draw(st.sampled_from([0, 0, 1, 2, 3]))
    for _ in range(edits):
        at = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["drop", "repeat", "move", "insert", "insert", "pad", "spaces", "index"]))
        if _reorder(draw, lines, at, how):
            pass
        elif how == "insert":
            lines.insert(at, draw(_INSERTED))
        elif how == "pad":
            lines[at] += draw(st.sampled_from([" ", "   ", " x"]))
        elif how == "index":  # an index that is no number
            lines = [ln + "x" if ln.startswith("  Neighbor index") else ln for ln in lines]
        else:
            lines[at] = lines[at].replace(" ", draw(st.sampled_from(["  ", ""])), 1)
    end = draw(st.sampled_from(["", "\n", "\n\n"]))
    return "\n".join(lines) + end, bool(edits)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(printed_texts())
@example(("-" * 76 + "\n  Neighbor index : 1\n  Chassis ID type : t\n  Chassis ID : c\n  System name : n\n  System description : d\n"
          "  System capabilities supported : b\n  Management address : m\n  Port ID type : pt\n  Port ID : p\n  Port description : pd", True))
def test_neighbours_as_printed_read_whole_as_the_template_reads_them(printed):
    """The whole-neighbour reader gives the template's rows or refuses (None: the line readers then read the text);
    the lab's layout, unedited, it always reads itself."""
    from zcube_deploy.platforms.ruijie_rgos.show_lldp import _as_units

    text, edited = printed
    rows = _as_units(text if text.endswith("\n") else text + "\n")
    assert rows is None or rows == template_rows(text)
    assert edited or rows is not None
    same_as_template(text)
