"""`show lldp neighbors detail`, read whole: the rows the TextFSM template gives (parsers.parse, the
general reader and the oracle), restricted to the fields verify reads, without running a state machine
over every line.

About 50 lines of a neighbour's output are padding the template ignores in every state (update
and aging times, the 802.1 and 802.3 parts, blank lines). A text that is nothing but neighbours as
RGOS prints them is read one neighbour a match (:func:`_as_units`: a row from each match's groups).
Else one compiled pattern finds, over the whole text, only the lines a template rule acts on
(separators, port headers, the template's field lines); the template's states (Start, Neighbor,
Description) are then run over those few, in order. Both are exactly the template's result as long
as white space inside a line is only spaces and every line ends in a newline: the reader checks that
first (one scan) and refuses anything else, which the general reader then reads (:func:`lldp_rows`).
At zcube-64k (512 neighbours, ~1 MB a switch) this is what verify's replay of a recording spends
most of its time on.
"""

from __future__ import annotations

import re

from zcube_deploy.platforms.ruijie_rgos.parsers import parse

# the fields verify reads, as the template names them (lower case)
KEYS = ("local_interface", "neighbor_index", "chassis_id_type", "chassis_id", "system_name", "management_address",
        "port_id_type", "port_id", "port_description")

# The characters with which a pattern over the whole text would not stand for the template's per-line
# rules: any non-ASCII one and the ASCII white space other than the space and the newline (\s matches
# them; TextFSM splits lines with str.splitlines, which also splits at \x0b, \x0c, \x1c-\x1e, \x85,
# \u2028, ...). A text with one is the general reader's. (Substring tests: a scan at memchr speed.)
_ODD_SPACE = ("\t", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")

# The lines a template rule acts on; every other line is a no-op in Start and Neighbor (`^.*$$`) and only
# lengthens the system description (not read) in Description. Each alternative is a template rule's regex
# with \s as a space; a field's value is taken to the end of its line (the trailing spaces the rule's
# `\s*$$` leaves out are stripped after: a lazy value would cost a match attempt per character).
_LINE = re.compile(
    r"\n *+(?:"
    r"-{10,}+ *+(?![^\n])"  # a separator (no group: the line is one when the others are empty)
    r"|[Ll][Ll][Dd][Pp] +neighbor-information +of +port +\[([^\]\n]+)\] *(?![^\n])"  # 1: a port header
    r"|(?<= )(Neighbor +index|Chassis +ID(?: +type)?|System +(?:name|description|capabilities +supported)"
    r"|Management +address|Port +(?:ID(?: +type)?|description)) +: *+([^\n]*+)"  # 2, 3: a field line (>= 1 space before it)
    r")")

_FIELD = {"Chassis ID type": "chassis_id_type", "Chassis ID": "chassis_id", "System name": "system_name",
          "Management address": "management_address", "Port ID type": "port_id_type", "Port ID": "port_id",
          "Port description": "port_description"}
_KEY_OF: dict[str, str] = {}  # a field line's key as written (padded) -> the key with its spaces collapsed


def _key(written: str) -> str:
    k = _KEY_OF.get(written)
    if k is None:
        k = " ".join(written.split())
        if len(_KEY_OF) < 4096:
            _KEY_OF[written] = k
    return k


def lldp_fast(text: str) -> list[dict[str, str]] | None:
    """The template's rows of ``text`` (the fields in ``KEYS``, '' where absent), or None when the text holds a
    character other than printable ASCII and the newline (after CRLF and CR are read as newlines): then
    this reader does not claim to know what the template makes of it."""
    if "\r" in text:  # (a replace copies the whole text even when there is nothing to replace)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.isascii() or any(c in text for c in _ODD_SPACE):
        return None
    rows = _as_units(text if text.endswith("\n") else text + "\n")
    if rows is not None:
        return rows
    matches = _LINE.findall("\n" + text)
    rows = _as_printed(matches)
    return rows if rows is not None else _states(matches)


# Neighbours as RGOS (and the lab) prints them, each read with one match of the pattern below: a separator (after a
# port header and a separator when the port changes), the index, then the field lines verify reads, each once, in the
# printed order, with lines between them that no template rule reads (PAD). In the template's terms: the first
# separator records the neighbour before (Neighbor -> Start; at the start of the text a no-op), the header sets the
# port, the second separator is a no-op in Start, the index enters Neighbor, each field line sets its field, the
# description line goes to Description, every line after it is the description's until the capabilities line brings
# it back, and the next unit's separator (or the end of the text) records it. PAD is a line that, after its leading
# spaces, is empty or starts with none of the characters a template rule (Neighbor's, Start's) starts with, or with
# one of them but not followed by a rule's words (coarse: a line refused here only sends the text to the readers below).
# A field's value is the rest of its line after the colon and the spaces after it, less its trailing spaces.
_PAD = (r"(?: *+(?:[^CSMPNLl\n -][^\n]*+\n|\n|(?:C(?!hassis)|S(?!ystem +(?:name|desc))|M(?!anagement +address +:)"
        r"|P(?!ort +(?:ID|desc))|N(?!eighbor)|[Ll](?![Ll][Dd][Pp]))[^\n]*+\n))*+")
_VALUE = r" +: *+([^\n]*[^ \n])? *+\n"


def _field(key: str) -> str:
    return " +" + key.replace(" ", " +") + _VALUE + _PAD


_SEPARATOR = r" *+-{10,}+ *+\n"
_UNIT = re.compile(
    "((?:" + _SEPARATOR + r" *+[Ll][Ll][Dd][Pp] +neighbor-information +of +port +\[([^\]\n]+)\] *+\n)?"  # 2: the port
    + _SEPARATOR + r" +Neighbor +index +: *+(\d++) *+\n" + _PAD  # 3: the index
    + _field("Chassis ID type") + _field("Chassis ID") + _field("System name")
    + r" +System +description +:[^\n]*+\n(?:(?! +System +capabilities +supported +:)[^\n]*+\n)*+"
    + r" +System +capabilities +supported +:[^\n]*+\n" + _PAD
    + _field("Management address") + _field("Port ID type") + _field("Port ID") + _field("Port description") + ")")


def _as_units(text: str) -> list[dict[str, str]] | None:
    """The template's rows of ``text`` (ending in a newline) when it is nothing but neighbours as printed (see
    ``_UNIT``: the units found cover the whole text), else None."""
    units = _UNIT.findall(text)
    if not units or sum(len(u[0]) for u in units) != len(text):
        return None
    local = ""
    rows = []
    for _, port, index, ct, c, sn, ma, pt, pi, pd in units:
        local = port or local
        rows.append({"local_interface": local, "neighbor_index": index, "chassis_id_type": ct, "chassis_id": c, "system_name": sn,
                     "management_address": ma, "port_id_type": pt, "port_id": pi, "port_description": pd})
    return rows


# The matches of one neighbour as RGOS (and the lab) prints it: a separator, the port header, a separator, then the
# field lines, each once, in this order (the lines between them match no rule). Over such neighbours only, one
# after the other, the states below take every neighbour the same way: the first separator is a no-op in Start,
# the header sets the port, the index enters Neighbor, the description and capabilities lines go to Description
# and back, each field line sets its field, and the next neighbour's separator (or the end of the text) records it.
_PRINTED = ("", "", "", "Neighbor index", "Chassis ID type", "Chassis ID", "System name", "System description",
            "System capabilities supported", "Management address", "Port ID type", "Port ID", "Port description")
_N = len(_PRINTED)


def _as_printed(matches: list[tuple[str, str, str]]) -> list[dict[str, str]] | None:
    """:func:`_states`'s rows of ``matches`` read column by column, when they are neighbours as printed (see
    ``_PRINTED``: the keys as written, a port on each header and none on a separator, a number for each index);
    else None (:func:`_states` reads them). At zcube-64k it skips a Python step per matched line."""
    n, rest = divmod(len(matches), _N)
    if rest or not n or [m[1] for m in matches] != list(_PRINTED) * n:
        return None
    ports = [m[0] for m in matches]
    if any(ports[0::_N]) or any(ports[2::_N]) or not all(ports[1::_N]):
        return None
    values = [m[2].rstrip(" ") for m in matches]
    index = values[3::_N]
    if not all(v.isdigit() for v in index):
        return None
    return [{"local_interface": p, "neighbor_index": i, "chassis_id_type": ct, "chassis_id": c, "system_name": sn,
             "management_address": ma, "port_id_type": pt, "port_id": pi, "port_description": pd}
            for p, i, ct, c, sn, ma, pt, pi, pd in zip(ports[1::_N], index, values[4::_N], values[5::_N], values[6::_N],
                                                        values[9::_N], values[10::_N], values[11::_N], values[12::_N])]


def _states(matches: list[tuple[str, str, str]]) -> list[dict[str, str]]:
    """The template's states (Start, Neighbor, Description) run over the matched lines, in order."""
    rows: list[dict[str, str]] = []
    local = ""  # the template's Filldown LOCAL_INTERFACE
    rec: dict[str, str] = {}
    state = 0  # 0 Start, 1 Neighbor, 2 Description
    for port, written, value in matches:
        if state == 1:
            if written:
                key = _KEY_OF.get(written) or _key(written)
                field = _FIELD.get(key)
                if field:
                    rec[field] = value.rstrip(" ") if value[-1:] == " " else value
                elif key == "System description":
                    state = 2
            elif not port:  # a separator: Record, back to Start (a port header is no rule's line here)
                rows.append(_row(local, rec))
                rec = {}
                state = 0
        elif state == 0:
            if port:
                local = port
            elif written and value.rstrip(" ").isdigit() and (_KEY_OF.get(written) or _key(written)) == "Neighbor index":
                rec["neighbor_index"] = value.rstrip(" ")
                state = 1
        elif written and (_KEY_OF.get(written) or _key(written)) == "System capabilities supported":
            state = 1
    if local or rec:  # the template's implicit Record at the end of the text (none when every value is empty)
        rows.append(_row(local, rec))
    return rows


def _row(local: str, rec: dict[str, str]) -> dict[str, str]:
    return {"local_interface": local, "neighbor_index": rec.get("neighbor_index", ""), "chassis_id_type": rec.get("chassis_id_type", ""),
            "chassis_id": rec.get("chassis_id", ""), "system_name": rec.get("system_name", ""),
            "management_address": rec.get("management_address", ""), "port_id_type": rec.get("port_id_type", ""),
            "port_id": rec.get("port_id", ""), "port_description": rec.get("port_description", "")}


def lldp_rows(text: str) -> list[dict[str, str]]:
    """The template's rows of `show lldp neighbors detail` (the fields in ``KEYS``): :func:`lldp_fast`'s, or the
    general reader's (TextFSM) when the fast reader refuses the text."""
    rows = lldp_fast(text)
    if rows is None:
        rows = [{k: r[k] for k in KEYS} for r in parse("show lldp neighbors detail", text)]
    return rows
