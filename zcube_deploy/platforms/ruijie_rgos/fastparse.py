"""Single-pass readers of the two RGOS outputs verify parses on every switch, for speed.

At zcube-16k, `zcube verify --from` parses 256 recordings; the TextFSM template of
`show lldp neighbors detail` (about 490 kB a switch) and the hier_config tree built only to read the
interface addresses of the running config were about two thirds of the per-switch cost. These
readers give the same result as those (``parse("show lldp neighbors detail", ...)`` restricted to
the fields verify reads, and ``l3_facts(text)["interfaces"]``): tests/test_compare_findings.py checks
both on the mocked outputs and on a lab's recordings.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Interface

from zcube_deploy.ipv4 import MASK_LENS as _PLEN  # dotted mask -> prefix length: the one table
from zcube_deploy.ipv4 import ntoa
from zcube_deploy.ipv4 import parse as _aton  # dotted quad -> int, None when not one
from zcube_deploy.platforms.ruijie_rgos.bgp_parse import parse_config
from zcube_deploy.platforms.ruijie_rgos.bgp_parse import prefix_len as _mask_len
from zcube_deploy.platforms.facts import UnreadableOutput, line_number

# ---------------------------------------------------------------- show lldp neighbors detail
# the template's states: Start (port header, neighbour index), Neighbor (fields), Description
# (a multi-line system description, until "System capabilities supported"). Lines are told apart by
# their key (the text before the first colon, whitespace collapsed), as the template's rules do.
_HEADER = re.compile(r"^\s*[Ll][Ll][Dd][Pp]\s+neighbor-information\s+of\s+port\s+\[([^\]]+)\]\s*$")
_SEP = re.compile(r"^\s*-{10,}\s*$")
_FIELDS = {"Neighbor index": "neighbor_index", "Chassis ID type": "chassis_id_type", "Chassis ID": "chassis_id",
           "System name": "system_name", "System description": "", "System capabilities supported": "",
           "System capabilities enabled": "", "Management address": "management_address", "Port ID type": "port_id_type",
           "Port ID": "port_id", "Port description": "port_description"}
_KEYS = ("local_interface", "neighbor_index", "chassis_id_type", "chassis_id", "system_name", "management_address",
         "port_id_type", "port_id", "port_description")


_KEY_OF: dict[str, str] = {}  # the text before a line's first colon -> its ``_FIELDS`` key or '' (a few dozen distinct)


def _key(prefix: str) -> str:
    """The ``_FIELDS`` key of a line whose text before the first colon is ``prefix`` ('' when none): the
    template's field lines are indented, have whitespace before the colon, and their key is the prefix
    with whitespace collapsed. Cached: a real output repeats the same padded keys on every neighbour."""
    k = _KEY_OF.get(prefix)
    if k is None:
        k = " ".join(prefix.split()) if len(prefix) >= 2 and prefix[0].isspace() and prefix[-1].isspace() else ""
        if k not in _FIELDS:
            k = ""
        if len(_KEY_OF) < 4096:
            _KEY_OF[prefix] = k
    return k


def lldp_detail(text: str) -> list[dict[str, str]]:
    """Rows of `show lldp neighbors detail` as the TextFSM template gives them (the fields in ``_KEYS``;
    '' where absent). CRLF and CR are accepted."""
    rows: list[dict[str, str]] = []
    local = ""
    rec: dict[str, str] = {}
    state = 0  # 0 Start, 1 Neighbor, 2 Description
    key_of = _KEY_OF

    def emit() -> None:
        if local or rec:
            rows.append({k: rec.get(k, "") for k in _KEYS} | {"local_interface": local})

    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        i = line.find(":")  # the line's field key (inlined: this loop reads every line of ~0.5 MB a switch)
        if i < 2:
            key = ""
        else:
            key = key_of.get(line[:i])
            if key is None:
                key = _key(line[:i])
        if state == 2:
            if key == "System capabilities supported":
                state = 1
        elif state == 0:
            if "neighbor-information" in line:
                m = _HEADER.match(line)
                if m:
                    local = m.group(1)
                    continue
            if key == "Neighbor index":
                v = line[i + 1:].strip()
                if v.isdigit():
                    rec["neighbor_index"] = v
                    state = 1
        else:
            if key and key != "Neighbor index":
                if key == "System description":
                    state = 2
                elif _FIELDS[key]:
                    rec[_FIELDS[key]] = line[i + 1:].strip()
            elif line[:1] in " \t-" and "-" * 10 in line and _SEP.match(line):
                emit()
                rec = {}
                state = 0
    emit()
    return rows


# ---------------------------------------------------------------- running config: interface addresses
_ADDR = re.compile(r"^ip address (\d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+)(?:\s+secondary)?$")


def _interface(address: str, mask: str, line: str, text: str) -> str:
    """"a.b.c.d/len" of an address line; an address or mask out of range (a hand-edited recording) is
    :class:`UnreadableOutput` naming the line, not a traceback."""
    try:
        return str(IPv4Interface(f"{address}/{mask}"))
    except ValueError as exc:
        raise UnreadableOutput("show running-config", line_number(text, line), line, str(exc)) from None


def interface_addresses(config_text: str) -> dict[str, list[str]]:
    """{interface: ["a.b.c.d/len", ...]} of every `interface` block of an RGOS config (l3_facts' "interfaces")."""
    out: dict[str, list[str]] = {}
    cur: str | None = None
    for raw in config_text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.rstrip()
        if not line or line.lstrip().startswith("!"):
            continue
        if not line[0].isspace():
            cur = line[len("interface "):].strip() if line.startswith("interface ") else None
            if cur is not None:
                out.setdefault(cur, [])
            continue
        if cur is not None:
            m = _ADDR.match(line.strip())
            if m:
                out[cur].append(_interface(m.group(1), m.group(2), line, config_text))
    return out


# ---------------------------------------------------------------- show ip route, show interface status
# The TextFSM templates' rules, as the same regular expressions (TextFSM matches each rule's regex at the
# start of a line, in order; a Filldown value keeps its last assignment, the others are cleared after a
# record; an unmatched optional group is ''). Without the TextFSM engine around them they cost a fifth.
_IF_NAME = r"[A-Za-z][A-Za-z-]*\s?\d+(?:/\d+)*(?::\d+)?"
_RT_HEAD = r"(?P<protocol>[A-Z*][A-Za-z0-9*]*)\s+(?P<network>\d+\.\d+\.\d+\.\d+)/(?P<prefix_length>\d+)\s+"
_RT_VIA = (r"\[(?P<distance>\d+)/(?P<metric>\d+)\]\s+via\s+(?P<nexthop_ip>\d+\.\d+\.\d+\.\d+)(?:,\s+\d[\d:dhmsw]*)?"
           r"(?:,\s+(?P<nexthop_if>" + _IF_NAME + r"))?\s*$")
_RT_RULES = (re.compile(_RT_HEAD + _RT_VIA),  # a route with its (first) next hop
             re.compile(_RT_HEAD + r"is\s+directly\s+connected,\s+(?P<nexthop_if>" + _IF_NAME + r")\s*$"),
             re.compile(r"\s+" + _RT_VIA))  # an equal-cost next hop under the route above
_RT_KEYS = ("distance", "metric", "nexthop_ip", "nexthop_if")


def _lines(text: str) -> list[str]:
    """The lines as parsers.parse gives them to TextFSM (CRLF and CR accepted)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").splitlines()


def ip_route(text: str) -> list[dict[str, str]]:
    """Rows of `show ip route` as ``parse("show ip route", text)`` gives them (one per next hop; protocol,
    network and prefix length filled down to the continuation lines)."""
    rows: list[dict[str, str]] = []
    head = {"protocol": "", "network": "", "prefix_length": ""}
    r1, r2, r3 = _RT_RULES
    for line in _lines(text):
        m = r1.match(line) or r2.match(line) or r3.match(line)
        if m is None:
            continue
        g = m.groupdict()
        if "protocol" in g:
            head = {"protocol": g["protocol"], "network": g["network"], "prefix_length": g["prefix_length"]}
        rows.append(head | {k: g.get(k) or "" for k in _RT_KEYS})
    return rows


_ST_HEADER = re.compile(r"\s*Interface\s+Status\s+Vlan")
_ST_SEP = re.compile(r"\s*-{4,}")
_ST_ROW = re.compile(r"(?P<interface>" + _IF_NAME + r")\s+(?P<status>\S+)\s+(?P<vlan>\S+)\s+(?P<duplex>\S+)\s+(?P<speed>\S+)\s*"
                     r"(?P<type>\S*)\s*$")


def interface_status(text: str) -> list[dict[str, str]]:
    """Rows of `show interface status` as ``parse("show interface status", text)`` gives them (the rows after
    the `Interface  Status  Vlan ...` header)."""
    rows: list[dict[str, str]] = []
    lines = iter(_lines(text))
    for line in lines:
        if _ST_HEADER.match(line):
            break
    for line in lines:
        if _ST_SEP.match(line):
            continue
        m = _ST_ROW.match(line)
        if m is not None:
            rows.append(m.groupdict())
    return rows


# ---------------------------------------------------------------- running config: addresses and BGP, one pass
_ODD_SPACE = re.compile(r"[^\S \n]")  # whitespace other than space and newline (a tab, a lone CR, ...)
_CFG_ITF = re.compile(r"^interface (.+?)\s*$")


def running_config(config_text: str) -> tuple[dict[str, list[str]], dict]:
    """(``interface_addresses(text)``, the BGP part of ``bgp_parse.parse_config(text)`` that verify reads:
    {"asn", "neighbors", "addresses", "bfd_ports", "fall_over_bfd"} as observations.observe_bgp gives it)
    in one pass over the text, without parse_config's work on everything else (its static routes, its
    ipaddress objects). Text whose whitespace is not only spaces and newlines (the two readers treat tabs
    and lone CRs differently) is read by the two readers themselves."""
    text = config_text.replace("\r\n", "\n")
    if _ODD_SPACE.search(text):
        return interface_addresses(config_text), bgp_config_of(parse_config(config_text))
    addrs: dict[str, list[str]] = {}
    itfs: dict[str, list] = {}  # parse_config's interfaces: name -> [address text or None, has bfd interval]
    asn: int | None = None
    neighbors: dict[str, list] = {}  # address -> [remote AS, fall-over bfd]
    cur_a: list[str] | None = None  # interface_addresses' current block
    cur_i: list | None = None  # parse_config's current interface
    block = None  # parse_config's block: "itf", "bgp", "af" or None
    af_ok = False
    masks: dict[str, int | None] = {}
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line[0] == "!":
            continue
        if raw[0] != " ":  # top level (both readers: only spaces indent here)
            cur_a = addrs.setdefault(line[len("interface "):].strip(), []) if line.startswith("interface ") else None
            block, cur_i = None, None
            if line[0] == "i" and (m := _CFG_ITF.match(line)):
                cur_i = itfs.setdefault(m.group(1), [None, False])
                block = "itf"
            elif line[0] == "r":
                words = line.split()
                if words[:2] == ["router", "bgp"] and len(words) == 3 and words[2].isdigit():
                    asn, neighbors, block = int(words[2]), {}, "bgp"
            continue
        if cur_a is not None:
            m = _ADDR.match(line)
            if m:
                cur_a.append(_interface(m.group(1), m.group(2), line, text) if m.group(2) not in _PLEN
                             or ntoa(_aton(m.group(1)) or 0) != m.group(1) else f"{m.group(1)}/{_PLEN[m.group(2)]}")
        if block == "itf":
            words = line.split()
            if words[:2] == ["ip", "address"] and len(words) == 4:
                a = _aton(words[2])
                plen = masks[words[3]] if words[3] in masks else masks.setdefault(words[3], _mask_len(words[3]))
                if a is not None and plen is not None:
                    cur_i[0] = ntoa(a)
            elif words[0] == "bfd" and len(words) == 7 and words[1] == "interval" and words[3] == "min_rx" and words[5] == "multiplier":
                if all(w.isdigit() for w in (words[2], words[4], words[6])):
                    cur_i[1] = True
        elif block in ("bgp", "af"):
            words = line.split()
            if words[0] == "address-family":
                block = "af"
                af_ok = words[1:2] == ["ipv4"] and (len(words) == 2 or words[2] == "unicast")
            elif words[0] == "exit-address-family":
                block = "bgp"
            elif (block != "af" or af_ok) and words[0] == "neighbor" and len(words) >= 3:
                n = neighbors.get(words[1], [None, False])
                if words[2] == "remote-as" and len(words) == 4 and words[3].isdigit():
                    neighbors[words[1]] = [int(words[3]), n[1]]
                elif words[2:] == ["fall-over", "bfd"]:
                    neighbors[words[1]] = [n[0], True]
    bgp = {"asn": asn, "neighbors": {a: n[0] for a, n in sorted(neighbors.items())},
           "addresses": {name: i[0] for name, i in itfs.items() if i[0] is not None},
           "bfd_ports": sorted(name for name, i in itfs.items() if i[1]),
           "fall_over_bfd": sorted(a for a, n in neighbors.items() if n[1])}
    return addrs, bgp


def bgp_config_of(cfg) -> dict:
    """The BGP part of a parsed config (bgp_parse.SwitchConfig) that verify reads."""
    return {"asn": cfg.bgp.asn if cfg.bgp else None,
            "neighbors": {a: n.remote_as for a, n in sorted(cfg.bgp.neighbors.items())} if cfg.bgp else {},
            "addresses": {name: str(i.address.ip) for name, i in cfg.interfaces.items() if i.address is not None},
            "bfd_ports": sorted(name for name, i in cfg.interfaces.items() if i.bfd),
            "fall_over_bfd": sorted(a for a, n in cfg.bgp.neighbors.items() if n.fall_over_bfd) if cfg.bgp else []}
