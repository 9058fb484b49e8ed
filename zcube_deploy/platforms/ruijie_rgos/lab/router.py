"""The RGOS command line of the lab's BGP and BFD: `router bgp` with its sub-modes, interface `bfd interval`.

Grammar (ruijie.md; lines marked [U] there are accepted in their Cisco-like form, which is the
form the templates emit as platform data):

    (config)#          router bgp ASN                 -> (config-router)#      no router bgp ASN
    (config-if-X)#     bfd interval MS min_rx MS multiplier N                   no bfd interval [...]
    (config-router)#   neighbor A remote-as ASN | neighbor A fall-over bfd | neighbor A activate
                       neighbor A description TEXT | neighbor A route-map NAME in|out | neighbor A send-community ([U])
                       bgp router-id A | bgp log-neighbor-changes | bgp bestpath as-path multipath-relax
                       bgp graceful-shutdown ([U]: kept as a line; the lab's best paths do not read it)
                       network A mask M | maximum-paths [ebgp] N | redistribute connected
                       address-family ipv4 [unicast]  -> (config-router-af)#   exit-address-family
    and the `no` form of each. A line that is not a router command while in a router sub-mode
    falls back to the enclosing mode (as on Cisco-like CLIs), so pushed blocks need no `exit`.

State: ``RouterBgp`` (asn, global lines, address-family blocks) rendered in running-config order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network

ASN_MAX = 4294967295
ROUTER_MODES = ("config-router", "config-router-af")
_AF_OK = {("ipv4",), ("ipv4", "unicast")}


@dataclass
class RouterBgp:
    asn: int
    lines: list[str] = field(default_factory=list)  # depth-1 lines, entry order (replaced in place)
    af: dict[str, list[str]] = field(default_factory=dict)  # "ipv4 unicast" -> its lines

    def render(self) -> list[str]:
        out = [f"router bgp {self.asn}"] + [f" {ln}" for ln in self.lines]
        for name, lines in self.af.items():
            out += [" !", f" address-family {name}"] + [f"  {ln}" for ln in lines] + [" exit-address-family"]
        return out


class RouterError(Exception):
    """An RGOS error message for the line (the session prints it)."""


class Fallback(Exception):
    """Not a command of this sub-mode: the session retries the line in the enclosing mode."""


def _ip(text: str) -> bool:
    if not re.fullmatch(r"\d{1,3}(\.\d{1,3}){3}", text):
        return False
    try:
        IPv4Address(text)
        return True
    except ValueError:
        return False


def _asn(text: str) -> int | None:
    if not text.isdigit():
        return None
    v = int(text)
    return v if 1 <= v <= ASN_MAX else None


def _mask_ok(addr: str, mask: str) -> bool:
    try:
        IPv4Network(f"{addr}/{mask}", strict=True)
        return True
    except ValueError:
        return False


def modelled(mode: str, words: list[str]) -> str | None:
    """'router' or 'bfd' when the line is one this module models in ``mode`` (other `router`/`bfd` lines
    are kept verbatim by rgos.py), else None."""
    w = [x.lower() for x in words]
    if w and w[0] == "no":
        w = w[1:]
    if len(w) >= 2 and w[0] == "router" and len(w[1]) >= 2 and "bgp".startswith(w[1]):
        return "router"
    if mode == "config-if" and w and w[0] == "bfd" and (len(w) == 1 or (len(w[1]) >= 2 and "interval".startswith(w[1]))):
        return "bfd"
    return None


# ---- config mode: router bgp / no router bgp
def router_bgp(sw, words: list[str], negate: bool) -> str | None:
    """`[no] router bgp ASN`; returns the new mode, or None after a removal. ``words`` start at 'router'."""
    if len(words) < 2 or not "bgp".startswith(words[1].lower()) or len(words[1]) < 2:
        raise RouterError("invalid:1")
    if len(words) < 3:
        raise RouterError("incomplete")
    asn = _asn(words[2])
    if asn is None or len(words) > 3:
        raise RouterError(f"invalid:{2 if asn is None else 3}")
    cur = sw.bgp
    if negate:
        if cur is None or cur.asn != asn:
            return None  # nothing to remove (RGOS prints nothing)
        sw.bgp = None
        return None
    if cur is not None and cur.asn != asn:
        raise RouterError(f"% BGP is already running; AS is {cur.asn}: the AS number cannot change without 'no router bgp {cur.asn}'.")
    if cur is None:
        sw.bgp = RouterBgp(asn)
    return "config-router"


# ---- interface mode: bfd interval
def bfd_line(words: list[str]) -> str:
    """Validate `bfd interval X min_rx Y multiplier Z` (``words`` start at 'bfd'); return its canonical form."""
    kw = ["bfd", "interval", None, "min_rx", None, "multiplier", None]
    if len(words) < 2:
        raise RouterError("incomplete")
    if not "interval".startswith(words[1].lower()):
        raise RouterError("invalid:1")
    for i, want in enumerate(kw):
        if i >= len(words):
            raise RouterError("incomplete")
        w = words[i]
        if want is None:
            lo, hi = (1, 50) if i == 6 else (10, 9999)
            if not w.isdigit() or not lo <= int(w) <= hi:
                raise RouterError(f"invalid:{i}")
        elif i > 1 and w.lower() != want:
            raise RouterError(f"invalid:{i}")
    if len(words) > 7:
        raise RouterError("invalid:7")
    return f"bfd interval {words[2]} min_rx {words[4]} multiplier {words[6]}"


# ---- router sub-modes
def router_command(sw, mode: str, words: list[str]) -> str:
    """One line in (config-router)# or (config-router-af)#; returns the mode after it."""
    r: RouterBgp = sw.bgp
    negate = words[0].lower() == "no"
    w = words[1:] if negate else words
    if not w:
        raise RouterError("incomplete")
    head = w[0].lower()
    in_af = mode == "config-router-af"
    lines = r.af[sw_af(sw)] if in_af else r.lines
    if head == "exit-address-family" and in_af and not negate:
        return "config-router"
    if head == "address-family":
        fam = tuple(x.lower() for x in w[1:])
        if not fam:
            raise RouterError("incomplete")
        if fam not in _AF_OK:
            raise RouterError(f"invalid:{2 if negate else 1}")
        name = "ipv4 unicast"
        if negate:
            r.af.pop(name, None)
            return "config-router"
        r.af.setdefault(name, [])
        sw.bgp_af = name
        return "config-router-af"
    if head == "neighbor":
        return _neighbor(r, lines, w, negate, in_af, mode)
    if head == "network":
        if len(w) < 4:
            raise RouterError("incomplete")
        if not _ip(w[1]) or w[2].lower() != "mask" or not _ip(w[3]) or not _mask_ok(w[1], w[3]) or len(w) > 4:
            raise RouterError("% Invalid network/mask: the address must be the network address of the mask."
                              if _ip(w[1]) and _ip(w[3]) else "invalid:1")
        _set(lines, f"network {w[1]} mask {w[3]}", None, negate)
        return mode
    if head == "maximum-paths":
        rest = w[1:]
        if rest and rest[0].lower() in ("ebgp", "ibgp"):
            rest = rest[1:]
        if negate:
            _set(lines, None, "maximum-paths ", True)
            return mode
        if not rest:
            raise RouterError("incomplete")
        if not rest[0].isdigit() or not 1 <= int(rest[0]) <= 512 or len(rest) > 1:
            raise RouterError("invalid:1")
        _set(lines, " ".join(w), "maximum-paths ", False)
        return mode
    if head == "redistribute":
        if len(w) != 2 or w[1].lower() != "connected":
            raise RouterError("invalid:1" if len(w) > 1 else "incomplete")
        _set(lines, "redistribute connected", None, negate)
        return mode
    if head == "bgp" and not in_af:
        sub = [x.lower() for x in w[1:]]
        if sub[:1] == ["router-id"]:
            if negate:
                _set(lines, None, "bgp router-id ", True)
                return mode
            if len(sub) != 2 or not _ip(w[2]):
                raise RouterError("incomplete" if len(sub) < 2 else "invalid:2")
            _set(lines, f"bgp router-id {w[2]}", "bgp router-id ", False)
            return mode
        # graceful-shutdown (RFC 8326, zcube drain): [U] on RGOS; kept as a line, the lab's best paths do not read it
        if sub in (["log-neighbor-changes"], ["bestpath", "as-path", "multipath-relax"], ["graceful-shutdown"]):
            _set(lines, "bgp " + " ".join(sub), None, negate)
            return mode
        raise RouterError("invalid:1")
    raise Fallback()


def sw_af(sw) -> str:
    return getattr(sw, "bgp_af", None) or "ipv4 unicast"


def _set(lines: list[str], text: str | None, prefix: str | None, negate: bool) -> None:
    """Add ``text`` (replacing a line starting with ``prefix`` in place), or remove it (or the ``prefix`` line)."""
    if negate:
        for i, ln in enumerate(lines):
            if (text is not None and ln == text) or (prefix is not None and ln.startswith(prefix)):
                del lines[i]
                return
        return
    if text in lines:
        return
    if prefix is not None:
        for i, ln in enumerate(lines):
            if ln.startswith(prefix):
                lines[i] = text
                return
    lines.append(text)


def _neighbor(r: RouterBgp, lines: list[str], w: list[str], negate: bool, in_af: bool, mode: str) -> str:
    if len(w) < 2:
        raise RouterError("incomplete")
    if not _ip(w[1]):
        raise RouterError("invalid:1")
    addr = w[1]
    pre = f"neighbor {addr} "
    if in_af and len(w) > 2 and w[2].lower() in ("remote-as", "fall-over", "description"):
        raise Fallback()  # a router-mode command typed in the address family: the router mode takes it
    known = any(ln.startswith(pre + "remote-as ") for ln in r.lines)
    if len(w) == 2:
        if not negate:
            raise RouterError("incomplete")
        w = w + ["remote-as"]
    attr = w[2].lower()
    if attr == "remote-as" and not in_af:
        if negate:  # removes the neighbour and everything configured for it
            r.lines[:] = [ln for ln in r.lines if not ln.startswith(pre)]
            for af in r.af.values():
                af[:] = [ln for ln in af if not ln.startswith(pre)]
            return mode
        if len(w) < 4:
            raise RouterError("incomplete")
        if _asn(w[3]) is None or len(w) > 4:
            raise RouterError(f"invalid:{3 if _asn(w[3]) is None else 4}")
        _set(r.lines, f"neighbor {addr} remote-as {int(w[3])}", pre + "remote-as ", False)
        return mode
    if not known and not negate:
        raise RouterError(f"% Specify remote-as or peer-group commands first for neighbor {addr}.")
    if attr == "fall-over" and not in_af:
        if len(w) < 4:
            raise RouterError("incomplete")
        if w[3].lower() != "bfd" or len(w) > 4:
            raise RouterError("invalid:3")
        _set(lines, f"neighbor {addr} fall-over bfd", None, negate)
        return mode
    if attr in ("activate", "send-community"):  # send-community: zcube drain's steer ([U] on RGOS: the Cisco-like form)
        if len(w) > 3:
            raise RouterError("invalid:3")
        _set(lines, f"neighbor {addr} {attr}", None, negate)
        return mode
    if attr == "route-map":  # zcube drain's transit-only graceful shutdown ([U] on RGOS: the Cisco-like form)
        if len(w) < 5:
            raise RouterError("incomplete")
        if len(w) > 5 or w[4].lower() not in ("in", "out"):
            raise RouterError("invalid:4")
        _set(lines, f"neighbor {addr} route-map {w[3]} {w[4].lower()}", None, negate)
        return mode
    if attr == "description" and not in_af:
        if len(w) < 4 and not negate:
            raise RouterError("incomplete")
        _set(lines, None if negate else f"neighbor {addr} description {' '.join(w[3:])[:80]}", pre + "description ", negate)
        return mode
    raise RouterError("invalid:2")
