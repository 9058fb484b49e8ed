"""The neutral facts of a switch configuration: what a platform's ``config_facts(text)`` returns.

Render's self-check and the routing proof read a rendered config through these, never through a
platform's syntax. Addresses and routes are kept as columns (parallel lists) in the plan's own
representation (an interface's address and prefix length; a route's "net/len" prefix and next
hop): a switch of 512 ports is then compared with its plan by a few list comparisons, without a
string or tuple built per port on either side. ``addresses`` and ``routes`` give the same facts as
rows.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ConfigFacts:
    """Everything read from one config, in the order the config has it.

    - ``hostnames``: every hostname line's name (one expected);
    - ``interfaces``: the name of every interface section;
    - ``address_interfaces``, ``address_ips``, ``address_lens``: one entry per address line, its
      interface, address and prefix length (an ``int``; a mask that is no contiguous mask is kept
      as the string ``"?<mask>"``, so that a comparison with the plan fails instead of the line
      being lost);
    - ``shutdown``, ``routed``, ``bfd``: the interfaces shut down, routed (layer 3) and running BFD;
    - ``route_prefixes``, ``route_next_hops``: one entry per static route, its "net/len" prefix
      (an unreadable mask as ``"net/?<mask>"``) and next hop (``None``: a discard route);
    - ``bgp``: one entry per BGP instance, ``{"asn", "neighbors": [(address, remote AS)],
      "bfd_neighbors": [address], "networks": ["net/len"]}``.
    """

    hostnames: list[str]
    interfaces: list[str]
    address_interfaces: list[str]
    address_ips: list[str]
    address_lens: list[int | str]
    shutdown: list[str]
    routed: list[str]
    bfd: list[str]
    route_prefixes: list[str]
    route_next_hops: list[str | None]
    bgp: list[dict]

    @property
    def addresses(self) -> list[tuple[str, str]]:
        """``[(interface, "a.b.c.d/len"), ...]``, one per address line."""
        return [(n, f"{a}/{plen}") for n, a, plen in zip(self.address_interfaces, self.address_ips, self.address_lens)]

    @property
    def routes(self) -> list[tuple[str, str | None]]:
        """``[("net/len", next hop or None), ...]``, one per static route."""
        return list(zip(self.route_prefixes, self.route_next_hops))


class UnreadableOutput(ValueError):
    """A switch's output that its platform's reader cannot take (e.g. a hand-edited recording with an
    address octet over 255): the command, the line (1-based; 0 when not known), the line's text and why.
    Offline verify reports it as bad input (exit 2, the file and line), a live run as that switch's error."""

    def __init__(self, command: str, line: int, text: str, why: str):
        self.command, self.line, self.text, self.why = command, line, text, why
        super().__init__(f"`{command}` line {line}: {why} ({text.strip()[:120]!r})")


def line_number(text: str, line: str) -> int:
    """The 1-based number of the first line of ``text`` equal to ``line`` once stripped (0 when none): where
    a reader that failed on ``line`` points (only on that error path: the readers do not count lines)."""
    want = line.strip()
    for i, raw in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), start=1):
        if raw.strip() == want:
            return i
    return 0
