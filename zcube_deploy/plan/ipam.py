"""The planner's address-block helpers (sizes rounded to powers of two); addresses and masks
themselves are zcube_deploy/ipv4.py."""

from __future__ import annotations

from ipaddress import IPv4Network

from zcube_deploy.ipv4 import block_len


def next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def net_bounds(net: IPv4Network) -> tuple[int, int]:
    return int(net.network_address), net.num_addresses


def prefix_for(size: int) -> str:
    """'a /15' for a block of ``size`` addresses (rounded up to a power of two)."""
    return f"a /{block_len(next_pow2(size))}"
