"""RGOS interface-name normalisation (ours: netutils/napalm map RGOS names wrongly, see ruijie.md).

Long form: keyword, one space, slot/port (``HundredGigabitEthernet 0/55``). Brief outputs
abbreviate without the space (``Hu0/55``). The 200G/400G/800G keywords and abbreviations are
unconfirmed for RGOS (the catalog holds the ones used here).
"""

from __future__ import annotations

import re

# long keyword -> abbreviation; longest keywords first so prefixes do not shadow them
KEYWORDS: list[tuple[str, str]] = sorted([
    ("EightHundredGigabitEthernet", "EH"),
    ("FourHundredGigabitEthernet", "FH"),
    ("TwoHundredGigabitEthernet", "TH"),
    ("HundredGigabitEthernet", "Hu"),
    ("FortyGigabitEthernet", "Fo"),
    ("TFGigabitEthernet", "TF"),
    ("TenGigabitEthernet", "Te"),
    ("GigabitEthernet", "Gi"),
    ("FastEthernet", "Fa"),
    ("AggregatePort", "Ag"),
    ("Loopback", "Lo"),
    ("Mgmt", "Mg"),
    ("VLAN", "VL"),
], key=lambda kv: -len(kv[0]))
_BY_SHORT = {short.lower(): long for long, short in KEYWORDS}
_BY_LONG = {long.lower(): long for long, _ in KEYWORDS}
_SPLIT = re.compile(r"^\s*([A-Za-z][A-Za-z-]*?)\s*(\d+(?:/\d+)*(?::\d+)?)\s*$")


def long_name(name: str) -> str:
    """'Hu0/55', 'hundredgigabitethernet0/55', 'HundredGigabitEthernet 0/55' -> 'HundredGigabitEthernet 0/55'."""
    m = _SPLIT.match(name)
    if not m:
        return name.strip()
    kw, num = m.group(1).lower(), m.group(2)
    if kw in _BY_LONG:
        return f"{_BY_LONG[kw]} {num}"
    if kw in _BY_SHORT:
        return f"{_BY_SHORT[kw]} {num}"
    for long, _ in KEYWORDS:  # unambiguous prefixes, as the CLI accepts them ('TwoHundred 0/1:1')
        if long.lower().startswith(kw) and len(kw) >= 3:
            return f"{long} {num}"
    return name.strip()


def short_name(name: str) -> str:
    """'HundredGigabitEthernet 0/55' -> 'Hu0/55'."""
    full = long_name(name)
    kw, _, num = full.partition(" ")
    for long, short in KEYWORDS:
        if long == kw:
            return f"{short}{num}"
    return full


def same_interface(a: str, b: str) -> bool:
    return long_name(a) == long_name(b)
