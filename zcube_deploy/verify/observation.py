"""What one switch reports, as typed, platform-neutral data: the input of verify's classifiers.

A platform's parsers (verify/observe.py for RGOS) produce the plain dict that recordings and the
lab give; ``Observation.from_dict`` reads it. Tests write observations by hand (tests/test_compare_findings.py).
Port names are the platform's long names, as in the plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from itertools import chain, repeat
from typing import NamedTuple


class Neighbour(NamedTuple):
    """One LLDP neighbour seen on a port (a named tuple: 130 of them a switch, built and hashed fast)."""
    system_name: str
    port_id: str
    port_id_type: str = "Interface name"  # "MAC address" for a NIC announcing its MAC
    chassis_id: str = ""
    management_address: str = ""


@dataclass(frozen=True, slots=True)
class Session:
    """One BGP session as the switch reports it."""
    state: str  # "Established", "Active", "Idle", ...
    remote_as: int | None = None
    prefixes: int | None = None


@dataclass(frozen=True, slots=True)
class BgpConfig:
    """The BGP part of the running config."""
    asn: int | None = None
    neighbors: Mapping[str, int | None] = field(default_factory=dict)  # address -> remote AS
    addresses: Mapping[str, str] = field(default_factory=dict)  # port -> configured address (no prefix length)
    bfd_ports: tuple[str, ...] = ()  # ports with BFD configured
    fall_over_bfd: tuple[str, ...] = ()  # neighbour addresses whose session falls over with BFD


@dataclass(frozen=True, slots=True)
class Bgp:
    local_as: int | None
    sessions: Mapping[str, Session]  # neighbour address -> session
    bfd: Mapping[str, str]  # neighbour address -> BFD state ("Up", "Down", ...)
    config: BgpConfig


@dataclass(frozen=True, slots=True)
class Observation:
    """One switch: hostname, link state, LLDP neighbours, addresses, installed routes, BGP.

    ``shut``: port -> shut in its config (administratively down), for the ports whose platform's reader
    tells it (an interface's ``shut`` in the dict); a port left out may be either (``is_shut`` None).

    ``addresses``: port -> ["a.b.c.d/len", ...] from the running config. ``bgp`` None: BGP state not
    collected (an older recording). ``unavailable``: the parts of the report that were not collected
    (vocabulary.Fact -> why, e.g. that its command was not recorded): the checks that read
    them are ``not_checked`` findings, never passed."""
    hostname: str | None
    up: Mapping[str, bool]  # port -> link up
    lldp: Mapping[str, tuple[Neighbour, ...]] = field(default_factory=dict)
    addresses: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    static_routes: tuple[tuple[str, str], ...] = ()  # (prefix, next hop)
    bgp_routes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # prefix -> next hops
    bgp: Bgp | None = None
    unavailable: Mapping[str, str] = field(default_factory=dict)
    shut: Mapping[str, bool] = field(default_factory=dict)  # port -> shut in its config (only ports whose reader says)

    def lacks(self, *facts: str) -> str | None:
        """Why the first of ``facts`` that was not collected is missing; None when all were."""
        for f in facts:
            if f in self.unavailable:
                return self.unavailable[f]
        return None

    def neighbours(self, port: str) -> tuple[Neighbour, ...]:
        return self.lldp.get(port, ())

    def is_up(self, port: str) -> bool:
        return self.up.get(port, False)

    def is_shut(self, port: str) -> bool | None:
        """True: the switch says the port is shut in its config (administratively down); False: it says it
        is not; None: its reader does not tell (a platform that does not say, an observation without it)."""
        return self.shut.get(port)

    def __reduce__(self):
        """Pickled with its LLDP neighbours as columns when every port has one (audit's pool workers send an
        observation a switch to the parent: a named tuple pickles and unpickles through a Python call each, 512 a
        switch at zcube-64k; columns of strings do not). The same observation comes back, its ports in order."""
        state = [getattr(self, f.name) for f in _FIELDS]
        lldp = self.lldp
        if type(lldp) is dict and all(len(ns) == 1 for ns in lldp.values()):
            state[_LLDP] = (tuple(lldp), *zip(*chain.from_iterable(lldp.values())))
        return _unpickle, tuple(state)

    @classmethod
    def from_dict(cls, d: Mapping) -> Observation:
        """The dict of verify/observe.py's ``observe`` (or a recording's replay, or the lab)."""
        b = d.get("bgp")
        bgp = None
        if b is not None:
            c = b.get("config") or {}
            bgp = Bgp(local_as=b.get("local_as"),
                      sessions={a: Session(s["state"], s.get("remote_as"), s.get("prefixes")) for a, s in b.get("sessions", {}).items()},
                      bfd={a: x.get("state") for a, x in b.get("bfd", {}).items()},
                      config=BgpConfig(c.get("asn"), dict(c.get("neighbors") or {}), dict(c.get("addresses") or {}),
                                       tuple(c.get("bfd_ports") or ()), tuple(c.get("fall_over_bfd") or ())))
        return cls(
            hostname=d.get("hostname"),
            up={p: bool(s and s.get("up")) for p, s in (d.get("interfaces") or {}).items()},
            lldp={p: tuple(Neighbour(n["system_name"], n["port_id"], n.get("port_id_type") or "", n.get("chassis_id") or "",
                                     n.get("management_address") or "") for n in ns)
                  for p, ns in (d.get("lldp") or {}).items()},
            addresses={p: tuple(a) for p, a in (d.get("addresses") or {}).items()},
            static_routes=tuple((r[0], r[1]) for r in d.get("static_routes") or ()),
            bgp_routes={p: tuple(h) for p, h in (d.get("bgp_routes") or {}).items()},
            bgp=bgp,
            unavailable=dict(d.get("unavailable") or {}),
            shut={p: bool(s["shut"]) for p, s in (d.get("interfaces") or {}).items() if s and "shut" in s},
        )


_FIELDS = fields(Observation)
_LLDP = [f.name for f in _FIELDS].index("lldp")


def _unpickle(*state) -> Observation:
    """:meth:`Observation.__reduce__`'s state back into an observation (its LLDP columns into neighbours a port)."""
    lldp = state[_LLDP]
    if type(lldp) is tuple:
        ports, *columns = lldp
        neighbours = map(tuple.__new__, repeat(Neighbour), zip(*columns)) if columns else ()
        state = (*state[:_LLDP], dict(zip(ports, zip(neighbours))), *state[_LLDP + 1:])
    return Observation(*state)


def as_observations(observed: Mapping[str, Observation | Mapping]) -> dict[str, Observation]:
    return {k: v if isinstance(v, Observation) else Observation.from_dict(v) for k, v in observed.items()}
