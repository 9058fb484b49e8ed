"""The words verify, the lab and the reports share: finding kinds, injected fault kinds, fix operations.

One definition each, as ``StrEnum`` members: a member *is* its string (``FindingKind.SWAPPED ==
"swapped"``, ``json.dumps`` and f-strings print ``swapped``), so verify.json, faults.json and the
terminal output are byte-identical to the plain strings they replace, and a YAML faults file or a
verify.json read back compares equal to the members.

- ``FindingKind``: what `zcube verify` reports (docs/verify-kinds.md), one classifier each
  (verify/classify.py).
- ``Check`` and ``Fact``: verify's per-switch checks and the parts of a switch's report they read (a
  check whose facts were not collected is a ``not_checked`` finding).
- ``BgpCause``: the likely cause a ``bgp`` finding names (verify/bgp.py); ``DownCause``: a ``down``
  finding's (a port shut in its config or the link itself).
- ``FaultKind``: the cabling faults the lab injects (lab/inject.py, a faults file's ``cabling:`` keys).
- ``FixOp``: the physical actions a finding's ``fix`` lists and the lab's wiring applies
  (lab/wiring.py, ``zcube lab fix``).
"""

from __future__ import annotations

from enum import Enum, unique

try:
    from enum import StrEnum
except ImportError:  # Python 3.10 (pyproject: requires-python >= 3.10): the same behaviour, by hand
    class StrEnum(str, Enum):  # type: ignore[no-redef]
        """A str whose str() and format() are its value (what enum.StrEnum is from 3.11 on)."""

        def __str__(self) -> str:
            return str.__str__(self)

        def __format__(self, spec: str) -> str:
            return str.__format__(str.__str__(self), spec)


@unique
class FindingKind(StrEnum):
    MISSING = "missing"          # port up, no neighbour (or its port holds another cable); a silent server
    DOWN = "down"                # no link on a planned port
    WRONG_PEER = "wrong_peer"    # a cable's far end is on another port, or a port sees someone not in the plan
    SWAPPED = "swapped"          # two cables whose ends are exchanged (one finding)
    UNEXPECTED = "unexpected"    # a neighbour on a port the plan leaves empty
    DUPLICATE = "duplicate"      # two neighbours on one port
    HOSTNAME = "hostname"        # a switch's configured hostname is not the plan's
    MANAGEMENT = "management"    # the management interface lacks the plan's address
    ROUTE = "route"              # installed routes differ from what the plan's routing mode predicts
    BGP = "bgp"                  # a planned eBGP session is not Established (or its BFD is not Up)
    NOT_CHECKED = "not_checked"  # a planned check could not run on a switch (its data was not collected): why
    DRAINED_UP = "drained_up"    # a port a drain record says is shut reads up (brought back by hand during the drain)


# the kinds about one cable: a bgp session over such a cable follows the link (cause "cabling")
CABLE_KINDS = (FindingKind.DOWN, FindingKind.MISSING, FindingKind.WRONG_PEER, FindingKind.SWAPPED, FindingKind.DUPLICATE)


@unique
class DownCause(StrEnum):
    """Why a planned port has no link (a ``down`` finding's ``cause``)."""
    LINK = "link"        # the switch says the port is not shut: the cable or its optics (physical work)
    SHUT = "shut"        # an end is shut in its running config (audit: port_shut): push, no cable work
    UNKNOWN = "unknown"  # the switch does not say whether the port is shut: either is possible


@unique
class BgpCause(StrEnum):
    CABLING = "cabling"
    LINK_DOWN = "link_down"
    BGP_MISSING = "bgp_missing"
    WRONG_ASN = "wrong_asn"
    WRONG_ADDRESS = "wrong_address"
    WRONG_PEER_ADDRESS = "wrong_peer_address"
    NOT_CONFIGURED = "not_configured"
    UNKNOWN = "unknown"
    BFD = "bfd"


@unique
class Check(StrEnum):
    """The per-switch checks of `zcube verify`: a ``not_checked`` finding names the ones that could not run."""
    HOSTNAME = "hostname"        # the configured hostname
    MANAGEMENT = "management"    # the management interface's address
    CABLING = "cabling"          # LLDP neighbours and link state of the switch's ports
    ROUTES = "routes"            # installed static routes (mode static) or B routes (mode bgp)
    BGP = "bgp"                  # mode bgp: the planned eBGP sessions
    BFD = "bfd"                  # mode bgp: BFD of the Established sessions


@unique
class Fact(StrEnum):
    """What a switch reports, one part each (an observation's ``unavailable`` says which were not collected)."""
    HOSTNAME = "hostname"          # the hostname line of the running config
    ADDRESSES = "addresses"        # the interface addresses of the running config
    BGP_CONFIG = "bgp_config"      # the BGP part of the running config
    LINK = "link"                  # link state per port
    LLDP = "lldp"                  # LLDP neighbours per port
    ROUTES = "routes"              # the routing table
    BGP_SESSIONS = "bgp_sessions"  # the BGP session summary
    BFD = "bfd"                    # the BFD sessions


@unique
class FaultKind(StrEnum):
    """Cabling faults the lab injects (a faults file's ``cabling:`` entries, ``random:N``)."""
    SWAP = "swap"              # exchange the switch-side ends of two cables
    MOVE = "move"              # plug a cable's switch end into another port
    REMOVE = "remove"          # take a cable out
    EXTRA = "extra"            # an unplanned cable
    DOWN = "down"              # a port without link
    WRONG_HOST = "wrong_host"  # a NIC end announces another hostname
    LLDP_OFF = "lldp_off"      # a server's LLDP agent sends nothing


@unique
class FixOp(StrEnum):
    """Physical actions in a finding's ``fix`` (what a technician does; the lab's wiring applies them)."""
    MOVE = "move"                    # {"cable", "end": "a"|"b", "to": {device, port}}
    CONNECT = "connect"              # {"cable", "a": {device, port}, "b": {device, port}}
    REMOVE = "remove"                # {"cable"}
    RESEAT = "reseat"                # {"device", "port"}: clears a port without link
    LLDP_ON = "lldp_on"              # {"server"}
    FIX_HOSTNAME = "fix_hostname"    # {"cable"}: the NIC end announces the planned name
    UNPLUG = "unplug"                # {"device", "port"}: every cable at that port
    UNPLUG_EXCEPT = "unplug_except"  # {"device", "port", "keep"}: every cable there but one
