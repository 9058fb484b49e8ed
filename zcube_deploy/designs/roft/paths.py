"""What a ROFT's routing must do between two of its NIC ports (docs/roft.md): the switch paths the routing
proof (``zcube check-routing``) and the twin hold its forwarding to.

A NIC port reaches every other port of its plane (its table routes the plane's aggregate via its leaf). Two
ports on one leaf: that leaf alone. On two leaves: leaf, spine, leaf through EVERY spine of the plane (eBGP
multipath over the spines, which share one ASN, so no path crosses two spines): a spine whose routes are
gone leaves its leaves with fewer paths, which is a failure, not a pass. Pure.
"""

from __future__ import annotations

from zcube_deploy.designs.switchroles import SwitchRoles

REACHES = {"leaf": ("leaf",)}  # a leaf's NIC ports reach the NIC ports of every leaf of their plane
SWITCHES_PER_PATH = frozenset({1, 3})
MAX_SWITCHES = 3


def expected_paths(roles: SwitchRoles, first: str, last: str) -> frozenset[tuple[str, ...]] | str:
    """Every switch path a packet from a port whose first switch is ``first`` to a port on ``last`` must take,
    or what is wrong with the pair (a spine as a host's gateway, leaves of two planes, a plane without spines)."""
    (role_a, plane_a), (role_b, plane_b) = roles.of[first], roles.of[last]
    if role_a != "leaf" or role_b != "leaf":
        return f"a NIC port's switch must be a leaf: {first} is a {role_a}, {last} a {role_b}"
    if plane_a != plane_b:
        return f"{first} (plane {plane_a}) and {last} (plane {plane_b}) are leaves of different planes"
    if first == last:
        return frozenset({(first,)})
    spines = roles.members("spine", plane_a)
    if not spines:
        return f"plane {plane_a} has no spine: {first} cannot reach {last}"
    return frozenset((first, s, last) for s in spines)


__all__ = ["MAX_SWITCHES", "REACHES", "SWITCHES_PER_PATH", "expected_paths"]
