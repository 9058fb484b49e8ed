"""How an RGOS switch is drained: the config lines, as edits of its rendered config (platform data).

- A port is taken down with ``shutdown`` in its ``interface`` section (the rendered config has
  ``no shutdown``, which RGOS does not show: confirmed, ruijie.md).
- In mode bgp, transit is steered away first with the GRACEFUL_SHUTDOWN community (RFC 8326,
  65535:0) on every route the switch advertises but does not originate: a prefix list of its own
  prefixes (the rendered ``network`` lines: its GPU host block and loopback), a route-map that lets
  those through untagged and tags everything else, applied outbound to every fabric neighbour (with
  ``send-community``: Cisco-like CLIs send no communities by default). Its peers then prefer any
  other path for transit, while the switch's own prefixes, whose only path is through it, stay as
  they are (``bgp graceful-shutdown`` would tag those too: measured in the twin, docs/drain.md).
  **UNCONFIRMED on RGOS**: the ``ip prefix-list``, ``route-map``, ``match ip address prefix-list``,
  ``set community ... additive``, ``neighbor X route-map NAME out`` and ``neighbor X send-community``
  lines are the Cisco-like forms (FRR's are the same and run in the twin); whether RGOS spells them so,
  and whether an RGOS peer lowers LOCAL_PREF on 65535:0 without an inbound policy (FRR does), is
  unknown (ruijie.md). The managed scope (platform.yaml) owns the ``ZCUBE-`` prefix list and route-map,
  so the undrain's push of the rendered config removes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from ipaddress import IPv4Network

DRAIN_ROUTE_MAP = "ZCUBE-DRAIN"
DRAIN_OWN_LIST = "ZCUBE-DRAIN-OWN"
GSHUT_COMMUNITY = "65535:0"
GRACEFUL_SHUTDOWN_CONFIRMED = False  # see the module doc
_NETWORK = re.compile(r"^\s+network (\d+\.\d+\.\d+\.\d+) mask (\d+\.\d+\.\d+\.\d+)\s*$")
_NEIGHBOR = re.compile(r"^\s+neighbor (\d+\.\d+\.\d+\.\d+) remote-as \d+\s*$")


def steer_sections(own: Iterable[str]) -> list[str]:
    """The top-level sections the transit-only graceful shutdown adds: the prefix list of ``own`` (A.B.C.D/N)
    and the route-map (own prefixes untagged, everything else tagged)."""
    return ([f"ip prefix-list {DRAIN_OWN_LIST} seq {5 * k} permit {p}" for k, p in enumerate(own, 1)]
            + [f"route-map {DRAIN_ROUTE_MAP} permit 10", f" match ip address prefix-list {DRAIN_OWN_LIST}", "!",
               f"route-map {DRAIN_ROUTE_MAP} permit 20", f" set community {GSHUT_COMMUNITY} additive", "!"])


def neighbor_lines(address: str) -> list[str]:
    """What the transit-only graceful shutdown adds per fabric neighbour (in the address family when there is one)."""
    return [f"neighbor {address} route-map {DRAIN_ROUTE_MAP} out", f"neighbor {address} send-community"]


def _steer(lines: list[str]) -> list[str]:
    """``lines`` (a rendered config) with the transit-only graceful shutdown: the prefix list and route-map before
    `router bgp`, each neighbour's lines in its address family (or in `router bgp` without one)."""
    start = next((k for k, x in enumerate(lines) if x.startswith("router bgp ")), None)
    if start is None:
        raise ValueError("no `router bgp` section in the rendered config (mode static has no BGP to steer)")
    end = next((k for k in range(start + 1, len(lines)) if lines[k] and not lines[k][0].isspace()), len(lines))
    body = lines[start + 1:end]
    own = [f"{m.group(1)}/{IPv4Network(f'0.0.0.0/{m.group(2)}').prefixlen}" for m in map(_NETWORK.match, body) if m]
    peers = [m.group(1) for m in map(_NEIGHBOR.match, body) if m]
    if not own or not peers:
        raise ValueError("`router bgp` has no `network` or no `neighbor ... remote-as` line: nothing to steer")
    af_end = next((k for k, x in enumerate(body) if x.strip() == "exit-address-family"), None)
    if af_end is None:
        body = body + [f" {x}" for p in peers for x in neighbor_lines(p)]
    else:
        body = body[:af_end] + [f"  {x}" for p in peers for x in neighbor_lines(p)] + body[af_end:]
    return lines[:start] + steer_sections(own) + [lines[start]] + body + lines[end:]


def drained_config(intended: str, ports: Iterable[str], graceful: bool) -> str:
    """``intended`` (a rendered config) with ``ports`` shut and, with ``graceful``, the transit-only graceful shutdown."""
    wanted = {f"interface {p}" for p in ports}
    found: set[str] = set()
    out: list[str] = []
    section = ""

    def close_section() -> None:
        if section in wanted:
            at = len(out)
            while at > 0 and (not out[at - 1].strip() or out[at - 1].strip() == "!"):
                at -= 1  # before the section's trailing "!" lines
            out.insert(at, " shutdown")
            found.add(section)

    for line in intended.splitlines():
        if line and not line[0].isspace() and line.strip() != "!":
            close_section()
            section = line.rstrip()
            out.append(line)
            continue
        if section in wanted and line.strip() == "no shutdown":
            continue
        out.append(line)
    close_section()
    if wanted - found:
        raise ValueError(f"no such section in the rendered config: {sorted(wanted - found)[0]!r}")
    if graceful:
        out = _steer(out)
    return "\n".join(out) + ("\n" if intended.endswith("\n") else "")
