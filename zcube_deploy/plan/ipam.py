"""Small, fast IPv4 helpers over integers (the planner handles ~10^6 addresses at 64k GPUs)."""

from __future__ import annotations

import socket
import struct
from ipaddress import IPv4Network

_PACK = struct.Struct("!I").pack


def ntoa(value: int) -> str:
    return socket.inet_ntoa(_PACK(value))


def aton(text: str) -> int:
    return struct.unpack("!I", socket.inet_aton(text))[0]


def next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def prefix_len(size: int) -> int:
    """Prefix length of an aligned block of ``size`` (a power of two) addresses."""
    return 32 - (size.bit_length() - 1)


def cidr(start: int, size: int) -> str:
    return f"{ntoa(start)}/{prefix_len(size)}"


def dotted_mask(plen: int) -> str:
    return ntoa((0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF)


def net_bounds(net: IPv4Network) -> tuple[int, int]:
    return int(net.network_address), net.num_addresses


def prefix_for(size: int) -> str:
    """'a /15' for a block of ``size`` addresses (rounded up to a power of two)."""
    return f"a /{prefix_len(next_pow2(size))}"
