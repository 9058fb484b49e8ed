"""IPv4 addresses and masks as integers: the one module for them (pure; the planner, the analysis and
the renderer handle ~10^6 addresses at 64k GPUs, so these are the fast forms, not ``ipaddress``).

Examples:
    >>> ntoa(aton("10.0.1.2") + 1)
    '10.0.1.3'
    >>> dotted_mask(9), mask_len("255.128.0.0")
    ('255.128.0.0', 9)
    >>> network(aton("10.0.1.3"), 31) == aton("10.0.1.2")
    True
"""

from __future__ import annotations

import socket
import struct

_PACK = struct.Struct("!I").pack
_UNPACK = struct.Struct("!I").unpack
_inet_aton, _inet_ntoa = socket.inet_aton, socket.inet_ntoa


def aton(text: str) -> int:
    """A dotted quad as an integer, for text already known to be one (a validated plan's addresses).

    The C library's ``inet_aton`` reads it, so it also accepts short forms such as ``"10.1"``: text
    from outside (a device's output, a file) goes through :func:`parse` instead.

    Args:
        text: a dotted-quad IPv4 address.

    Returns:
        The address as an unsigned 32-bit integer.

    Examples:
        >>> aton("10.0.0.1")
        167772161
        >>> aton("128.0.0.0") == 2**31
        True
    """
    return _UNPACK(_inet_aton(text))[0]


def ntoa(value: int) -> str:
    """An integer address in dotted-quad form.

    Examples:
        >>> ntoa(167772161)
        '10.0.0.1'
        >>> ntoa(0)
        '0.0.0.0'
    """
    return _inet_ntoa(_PACK(value))


def parse(text: str) -> int | None:
    """A strict dotted quad (four decimal octets of at most three digits, each <= 255) as an
    integer; None for anything else (short forms, signs, spaces, a fifth part).

    Examples:
        >>> parse("192.168.0.1") == aton("192.168.0.1")
        True
        >>> parse("10.1") is None, parse("1.2.3.256") is None, parse(" 1.2.3.4") is None
        (True, True, True)
    """
    parts = text.split(".")
    if len(parts) != 4 or not all(p.isdigit() and len(p) <= 3 for p in parts):
        return None
    v = 0
    for p in parts:
        o = int(p)
        if o > 255:
            return None
        v = v << 8 | o
    return v


MASKS: tuple[int, ...] = tuple((0xFFFFFFFF << (32 - n)) & 0xFFFFFFFF for n in range(33))
"""``MASKS[n]``: the integer mask of prefix length ``n`` (0..32), for lookups in hot loops."""

DOTTED_MASKS: tuple[str, ...] = tuple(_inet_ntoa(_PACK(m)) for m in MASKS)
"""``DOTTED_MASKS[n]``: the dotted mask of prefix length ``n`` (0..32)."""

MASK_LENS: dict[str, int] = {m: n for n, m in enumerate(DOTTED_MASKS)}
"""Dotted mask -> prefix length, for the 33 contiguous masks only (no host masks, no other spelling)."""


def mask(plen: int) -> int:
    """The integer mask of a prefix length.

    Examples:
        >>> hex(mask(24)), mask(0), mask(32) == 0xFFFFFFFF
        ('0xffffff00', 0, True)
    """
    return MASKS[plen]


def dotted_mask(plen: int) -> str:
    """The dotted mask of a prefix length.

    Examples:
        >>> dotted_mask(12), dotted_mask(1), dotted_mask(0)
        ('255.240.0.0', '128.0.0.0', '0.0.0.0')
    """
    return DOTTED_MASKS[plen]


def mask_len(dotted: str) -> int | None:
    """The prefix length of a contiguous dotted mask; None for anything else.

    Examples:
        >>> mask_len("255.254.0.0"), mask_len("0.0.0.255"), mask_len("255.0.255.0")
        (15, None, None)
    """
    return MASK_LENS.get(dotted)


def network(addr: int, plen: int) -> int:
    """The network address of ``addr`` in a prefix of length ``plen``.

    Examples:
        >>> ntoa(network(aton("10.1.2.3"), 16))
        '10.1.0.0'
    """
    return addr & MASKS[plen]


def block_len(size: int) -> int:
    """The prefix length of an aligned block of ``size`` addresses (a power of two).

    Examples:
        >>> block_len(2), block_len(256), block_len(1)
        (31, 24, 32)
    """
    return 32 - (size.bit_length() - 1)


def cidr(start: int, size: int) -> str:
    """``a.b.c.d/len`` of the aligned block of ``size`` addresses (a power of two) at ``start``.

    Examples:
        >>> cidr(aton("10.0.4.0"), 1024)
        '10.0.4.0/22'
    """
    return f"{ntoa(start)}/{block_len(size)}"
