"""Verify in routing mode bgp (pure): planned eBGP sessions that are not Established, and installed B routes
against the shortest AS paths of the plan (over the sessions that are up).

A session finding (kind ``bgp``) names the fabric cable of the session, both ends, and the likely
cause, checked in this order:

- ``cabling``: the cable already has a finding (down, missing, wrong_peer, swapped, duplicate):
  the session follows the link; the finding refers to that one (``refers_to``).
- ``link_down``: a port of the session reports no link, with no cabling finding (e.g. out of scope).
- ``bgp_missing``: a switch runs no BGP process.
- ``wrong_asn``: a switch runs another AS than the plan's, or names its neighbour with another
  remote AS than the neighbour's planned AS.
- ``wrong_address``: a fabric port carries another address than the plan's.
- ``wrong_peer_address``: a switch has a neighbour on the link's subnet, at another address than
  the planned peer address.
- ``not_configured``: a switch has no neighbour for the planned peer address.
- ``unknown``: both ends are configured as planned and the links are up (look at BFD, logs).

An Established session whose BFD session is not Up at an observed end is a ``bgp`` finding too,
cause ``bfd`` (the plan runs BFD on every fabric session: without it a dead link is noticed only
when the BGP hold timer expires), naming what is missing: BFD on the port, or BFD fall-over on the session.
"""

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import IPv4Address, IPv4Network

from zcube_deploy.ipv4 import ntoa
from zcube_deploy.topology import forwarding
from zcube_deploy.verify.observation import Observation, as_observations
from zcube_deploy.vocabulary import CABLE_KINDS, BgpCause, Fact

__all__ = [
    "CABLE_KINDS",
    "INSTRUCTION",
    "BgpCause",
    "bfd_problem",
    "expected_routes",
    "likely_cause",
    "planned_peers",
    "planned_sessions",
    "session_counts",
    "session_state",
]


def planned_sessions(plan: dict, scope: set[str]) -> list[dict]:
    """One entry per fabric cable with an end in scope: both ends' switch, port, address, planned AS."""
    asn = {s["name"]: s.get("asn") for s in plan["switches"]}
    out, seen = [], set()
    for sw in plan["switches"]:
        if sw["name"] not in scope:
            continue
        for itf in sw["interfaces"]:
            if itf["kind"] != "fabric" or itf["cable"] in seen:
                continue
            seen.add(itf["cable"])
            p = itf["peer"]
            out.append({"cable": itf["cable"], "a": {"device": sw["name"], "port": itf["name"], "address": itf["address"], "asn": asn[sw["name"]]},
                        "b": {"device": p["device"], "port": p["port"], "address": p["address"], "asn": asn.get(p["device"])},
                        "prefix_len": itf.get("prefix_len", 31)})
    return out


def planned_peers(plan: dict) -> dict[str, set[str]]:
    return {sw["name"]: {i["peer"]["address"] for i in sw["interfaces"] if i["kind"] == "fabric"} for sw in plan["switches"]}


def session_counts(plan: dict, observed: Mapping[str, Observation | Mapping], scope: set[str]) -> dict:
    """{"planned": planned sessions with an end in scope, "established": those Established at every observed end,
    "unobserved": those whose state was observed at neither end}."""
    observed = as_observations(observed)
    planned = planned_sessions(plan, scope)
    up = unseen = 0
    for s in planned:
        states = [session_state(observed, s["a"], s["b"]), session_state(observed, s["b"], s["a"])]
        up += all(st in (None, "Established") for st in states) and any(states)
        unseen += not any(states)
    return {"planned": len(planned), "established": up, "unobserved": unseen}


def bfd_problem(s: dict, observed: Mapping[str, Observation]) -> str | None:
    """Why the BFD session of an Established session is not Up at an observed end (a missing line at
    either end first), or None when it is Up wherever observed."""
    ends = [(me, peer, _bgp(observed, me["device"])) for me, peer in ((s["a"], s["b"]), (s["b"], s["a"]))]
    # (an end whose BFD sessions were not collected says nothing: its not_checked finding says so)
    ends = [(me, peer, b) for me, peer, b in ends if b is not None and not observed[me["device"]].lacks(Fact.BFD)]
    down = [(me, peer, b.bfd.get(peer["address"])) for me, peer, b in ends]
    down = [(me, peer, st) for me, peer, st in down if st != "Up"]
    if not down:
        return None
    for me, peer, b in ends:
        cfg = b.config
        if observed[me["device"]].lacks(Fact.BGP_CONFIG):
            continue
        if me["port"] not in cfg.bfd_ports:
            return f"{me['device']} {me['port']} has no BFD configured on the port"
        if peer["address"] not in cfg.fall_over_bfd:
            return f"{me['device']} has no BFD fall-over on its session to {peer['address']}"
    me, peer, st = down[0]
    return f"{me['device']} reports BFD to {peer['address']} as {st or 'absent'}"


def _bgp(observed: Mapping[str, Observation], device: str):
    o = observed.get(device)
    return None if o is None or o.lacks(Fact.BGP_SESSIONS) else o.bgp


def session_state(observed: Mapping[str, Observation], end: dict, peer: dict) -> str | None:
    """The state ``end``'s switch reports for its session to ``peer``; None when not observed."""
    b = _bgp(observed, end["device"])
    if b is None:
        return None
    s = b.sessions.get(peer["address"])
    return s.state if s else "not configured"


def likely_cause(s: dict, observed: Mapping[str, Observation], cable_findings: dict[str, dict],
                 planned_peers: dict[str, set[str]] | None = None) -> tuple[BgpCause, str, str | None]:
    """(cause, explanation starting with the switch at fault, id of the finding it refers to).
    ``planned_peers``: switch -> the neighbour addresses the plan gives it."""
    planned_peers = planned_peers or {}
    if s["cable"] in cable_findings:
        f = cable_findings[s["cable"]]
        return BgpCause.CABLING, f"cable {s['cable']} already has a '{f['kind']}' finding ({f['id']}): the session follows the link", f["id"]
    ends = [(s["a"], s["b"]), (s["b"], s["a"])]
    for me, _peer in ends:
        o = observed.get(me["device"])
        if o is not None and not o.lacks(Fact.LINK) and not o.is_up(me["port"]):
            return BgpCause.LINK_DOWN, f"{me['device']} {me['port']} has no link", None
    net = IPv4Network(f"{s['a']['address']}/{s['prefix_len']}", strict=False)
    unread = []  # ends whose BGP configuration was not collected: no cause can be read from it
    for me, peer in ends:
        b = _bgp(observed, me["device"])
        if b is None:
            continue
        if (why := observed[me["device"]].lacks(Fact.BGP_CONFIG)) is not None:
            unread.append(f"{me['device']} ({why})")
            continue
        cfg = b.config
        if cfg.asn is None:
            return BgpCause.BGP_MISSING, f"{me['device']} runs no BGP (no BGP process with AS {me['asn']})", None
        if me["asn"] is not None and cfg.asn != me["asn"]:
            return BgpCause.WRONG_ASN, f"{me['device']} runs AS {cfg.asn}; the plan gives it AS {me['asn']}", None
        have = cfg.neighbors.get(peer["address"])
        if have is not None and peer["asn"] is not None and have != peer["asn"]:
            return BgpCause.WRONG_ASN, (f"{me['device']} expects AS {have} at {peer['address']}; {peer['device']} is AS {peer['asn']} in the plan"), None
        addr = cfg.addresses.get(me["port"])
        if addr is not None and addr != me["address"]:
            return BgpCause.WRONG_ADDRESS, f"{me['device']} {me['port']} has address {addr}; the plan gives it {me['address']}", None
        if have is None:
            # a mistyped neighbour address
            # (on the link's subnet, or not a planned neighbour of this switch but with the peer's AS)
            unplanned = set(cfg.neighbors) - planned_peers.get(me["device"], set())
            others = sorted(a for a in cfg.neighbors if _in(a, net) and a != me["address"]) or \
                sorted(a for a in unplanned if cfg.neighbors[a] == peer["asn"])
            if others:
                return BgpCause.WRONG_PEER_ADDRESS, (f"{me['device']} has neighbour {others[0]}, which the plan does not have; "
                                                      f"the peer {peer['device']} on this link is {peer['address']}"), None
            return BgpCause.NOT_CONFIGURED, f"{me['device']} has no neighbour {peer['address']} ({peer['device']} {peer['port']})", None
    if unread:
        return BgpCause.UNKNOWN, f"the BGP configuration of {', '.join(unread)} was not read: the cause is not known", None
    return BgpCause.UNKNOWN, "both ends are configured as planned and their ports are up: check BFD and the switches' logs", None


def _in(addr: str, net: IPv4Network) -> bool:
    try:
        return IPv4Address(addr) in net
    except ValueError:
        return False


INSTRUCTION = {
    BgpCause.CABLING: "fix finding {ref} first; the session comes up with the link",
    BgpCause.LINK_DOWN: "bring up the link between {a} and {b} (cable {cable})",
    BgpCause.BGP_MISSING: "push the planned config to {dev} (zcube push --only {dev})",
    BgpCause.WRONG_ASN: "push the planned config to {dev} (zcube push --only {dev}): its AS numbers differ from the plan",
    BgpCause.WRONG_ADDRESS: "push the planned config to {dev} (zcube push --only {dev}): a fabric port has the wrong address",
    BgpCause.WRONG_PEER_ADDRESS: "push the planned config to {dev} (zcube push --only {dev}): a neighbour has the wrong address",
    BgpCause.NOT_CONFIGURED: "push the planned config to {dev} (zcube push --only {dev}): a planned neighbour is missing",
    BgpCause.UNKNOWN: "check the BFD neighbours and the logs of {a} and {b}",
    BgpCause.BFD: "push the planned config to {dev} (zcube push --only {dev}): BFD must run on every fabric session",
}


def expected_routes(plan: dict, sources: set[str], down_cables: set[str]) -> dict[str, dict[str, tuple[set[str], int]]]:
    """Per source switch: prefix -> (the planned peer addresses that are equal-best next hops, how many the
    switch should install): the plan's mode-bgp forwarding state (topology/forwarding.py's
    ``switch_tables``: shortest AS paths, ECMP across every equal-length path, the plan's multipath
    relax) over the planned fabric minus ``down_cables``, at most ``routing.maximum_paths``."""
    rt = plan.get("routing") or {}
    max_paths = int(rt.get("maximum_paths") or 1)
    # a session over a down cable carries no routes: the fabric without those links
    switches = [sw if not any(i["cable"] in down_cables for i in sw["interfaces"] if i["kind"] == "fabric")
                else {**sw, "interfaces": [i for i in sw["interfaces"] if i["kind"] != "fabric" or i["cable"] not in down_cables]}
                for sw in plan["switches"]]
    tables = forwarding.switch_tables(rt, switches)  # the plan is in mode bgp (classify calls this only then)
    out = {}
    for src in sorted(sources):
        routes = {}
        for e in tables.get(src, ()):
            hops = {ntoa(h) for h in e.next_hops}
            routes[f"{ntoa(e.network)}/{e.prefix_len}"] = (hops, min(len(hops), max_paths))
        out[src] = routes
    return out
