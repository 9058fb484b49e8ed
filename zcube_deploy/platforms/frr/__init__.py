"""Platform ``frr``: FRRouting (the routing stack of SONiC) configuration from the plan.

Everything FRR-specific lives here and in ``templates/frr/``: the per-switch view (interfaces,
static routes in ``mode: static``, eBGP + BFD in ``mode: bgp``), the daemons a mode needs, and
(:mod:`.runtime`) how to run and query them in a network namespace.

The view is computed in Python; ``templates/frr/frr.conf.j2`` only lays it out. Interface names
come from a ``names`` mapping (plan port name -> name on the FRR box): identity on a plan whose
platform is ``frr`` (the catalog names are Linux names already), the twin's shortened Linux names
otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from ipaddress import ip_network
from typing import Callable

from zcube_deploy.errors import RenderError
from zcube_deploy.safety import check_description, check_name
from zcube_deploy.templating import template
from zcube_deploy.topology.forwarding import switch_mode

TEMPLATE = "frr.conf.j2"
PLATFORM = "frr"
PEER_GROUP = "FABRIC"
BFD_PROFILE = "fabric"
SLOW_BFD_PROFILE = "fabric-slow"
KEEPALIVE_S, HOLD_S = 3, 9
CONNECT_RETRY_S = 2  # a repaired link's session comes back within seconds, not FRR's default 120 s
MAXIMUM_PATHS = 64
DAEMONS = {"static": ("zebra", "staticd"), "bgp": ("zebra", "staticd", "bfdd", "bgpd")}
LINUX_IFNAME_MAX = 15  # IFNAMSIZ - 1


def check_linux_ifname(name: str) -> str | None:
    """None when ``name`` is a valid Linux interface name (what FRR on Linux needs), else what is wrong."""
    if not name or len(name) > LINUX_IFNAME_MAX:
        return f"is {len(name)} characters; Linux interface names have 1 to {LINUX_IFNAME_MAX}"
    if name in (".", "..") or any(c in name for c in "/: \t\n") or not name.isascii() or not name.isprintable():
        return "contains '/', ':', a space or a non-printable character, which Linux interface names cannot"
    return None


def routing_mode(plan: dict) -> str:
    """The plan's routing mode (``static`` for plans written before the routing section existed)."""
    return (plan.get("routing") or {}).get("mode", "static")


def daemons(plan: dict) -> tuple[str, ...]:
    """The FRR daemons a switch of ``plan`` runs, zebra first (eBGP's when any switch of the plan runs eBGP)."""
    routing = plan.get("routing") or {"mode": routing_mode(plan)}
    return DAEMONS["bgp" if any(switch_mode(routing, sw) == "bgp" for sw in plan["switches"]) else routing_mode(plan)]


def _safe(kind: str, value: str, check) -> str:
    problem = check(value)
    if problem:
        raise RenderError(f"refusing to render {kind} {value!r} for FRR: it {problem}")
    return value


def switch_view(plan: dict, sw: dict, names: Callable[[str], str] | None = None,
                slow_bfd: dict | None = None) -> dict:
    """The FRR view of one switch of ``plan``.

    ``names`` maps a plan port name to the interface name on the box (identity by default).
    ``slow_bfd`` ({"interval_ms", "multiplier"}) puts the fabric peer group on a slower BFD
    profile (the plan's profile stays defined, so single sessions can be switched to it).
    """
    names = names or (lambda n: n)
    hostname = _safe("hostname", sw["name"], check_name)
    interfaces = []
    for itf in sorted(sw["interfaces"], key=lambda i: (i["kind"] != "host", i.get("port_index", 0), i.get("link", 0), i["name"])):
        peer = itf["peer"]
        interfaces.append({
            "name": _safe("interface", names(itf["name"]), check_linux_ifname),
            "description": _safe("description", f"{peer['device']} {peer['port']} {itf['cable']}", check_description),
            "address": itf["address"], "prefix_len": itf["prefix_len"], "kind": itf["kind"],
        })
    mode = switch_mode(plan.get("routing") or {"mode": routing_mode(plan)}, sw)  # a migration stage mixes modes
    routes = []
    for rt in sw["routes"]:
        routes.append({"prefix": rt["prefix"], "next_hop": rt["next_hop"],
                       "distance": rt.get("distance") or (250 if rt.get("fallback") else None)})
    bgp = None
    if mode == "bgp":
        # the originated host block exists in the RIB even when host ports are down (a discard route, as on RGOS);
        # a switch without hosts (a ROFT spine) originates its loopback alone
        if sw["host_block"]:
            routes.append({"prefix": sw["host_block"], "next_hop": "blackhole", "distance": None})
        by_name = {s["name"]: s for s in plan["switches"]}
        bfd = plan["routing"]["bfd"]
        profiles = [{"name": BFD_PROFILE, "interval_ms": int(bfd["interval_ms"]), "multiplier": int(bfd["multiplier"])}]
        if slow_bfd:
            profiles.append({"name": SLOW_BFD_PROFILE, "interval_ms": int(slow_bfd["interval_ms"]),
                             "multiplier": int(slow_bfd["multiplier"])})
        neighbors = []
        for itf in sw["interfaces"]:
            if itf["kind"] != "fabric":
                continue
            peer = itf["peer"]
            neighbors.append({"address": itf["peer"]["address"],
                              "description": _safe("description", f"{peer['device']} AS{by_name[peer['device']]['asn']} {itf['cable']}", check_description)})
        neighbors.sort(key=lambda n: tuple(int(x) for x in n["address"].split(".")))
        bgp = {
            "asn": int(sw["asn"]), "keepalive": KEEPALIVE_S, "hold": HOLD_S, "group": PEER_GROUP,
            "group_profile": SLOW_BFD_PROFILE if slow_bfd else BFD_PROFILE,
            "neighbors": neighbors, "networks": [sw["host_block"]] * bool(sw["host_block"]) + [f"{sw['loopback']}/32"],
            "maximum_paths": int(plan["routing"].get("maximum_paths") or MAXIMUM_PATHS), "bfd_profiles": profiles,
            "connect_retry": CONNECT_RETRY_S,
        }
    return {
        "header": (f"zcube-deploy {plan['tool_version']} | cluster {plan['cluster']['name']} | "
                   f"inventory sha256 {plan['inputs']['inventory_sha256'][:16]}"),
        "role": f"{sw['group']} switch {sw['index']} of plane {sw['plane']}, rack {sw['rack']} U{sw['u']}, routing {mode}",
        "hostname": hostname, "loopback": sw["loopback"], "interfaces": interfaces,
        "routes": routes, "bgp": bgp,
    }


def render_switch(plan: dict, sw: dict, names: Callable[[str], str] | None = None, slow_bfd: dict | None = None) -> str:
    """The FRR configuration (frr.conf) of one switch."""
    return template(PLATFORM, TEMPLATE).render(switch_view(plan, sw, names, slow_bfd))


# How an FRR switch is drained (the twin applies these with vtysh): a port is shut with `shutdown` in its
# `interface` block (zebra sets the link down: the far end loses carrier); transit is steered away with the
# GRACEFUL_SHUTDOWN community (RFC 8326, 65535:0) set by an outbound route-map on the fabric peer group on every
# route the switch does NOT originate: FRR peers receiving it set LOCAL_PREF 0 (measured in the twin: the path
# through the switch leaves the neighbours' multipath set). The switch's own prefixes (its host block and
# loopback, matched by a prefix list) go out untagged: their only path is through it, and tagging them made the
# neighbours briefly prefer detours that looped (`bgp graceful-shutdown` tags everything, and also lowers what the
# switch itself receives: measured, docs/drain.md).
DRAIN_ROUTE_MAP = "ZCUBE-DRAIN"
DRAIN_OWN_LIST = "ZCUBE-DRAIN-OWN"
GSHUT_COMMUNITY = "65535:0"


def steer_lines(own: Iterable[str]) -> list[str]:
    """The prefix list of the switch's own prefixes and the route-map that tags everything else (config lines)."""
    own = [str(ip_network(p)) for p in own]
    if not own:
        raise RenderError("a transit-only graceful shutdown needs the switch's own prefixes (its loopback at least)")
    return ([f"ip prefix-list {DRAIN_OWN_LIST} seq {5 * k} permit {p}" for k, p in enumerate(own, 1)]
            + [f"route-map {DRAIN_ROUTE_MAP} permit 10", f" match ip address prefix-list {DRAIN_OWN_LIST}", "exit",
               f"route-map {DRAIN_ROUTE_MAP} permit 20", f" set community {GSHUT_COMMUNITY} additive", "exit"])


def drain_commands(asn: int | None, shut: Iterable[str], opened: Iterable[str], graceful: bool | None,
                   own: Iterable[str] = ()) -> list[str]:
    """vtysh commands that shut the interfaces ``shut``, bring ``opened`` back, and turn the transit-only graceful
    shutdown on (True: ``own`` are the switch's own prefixes, sent untagged) or off (False) or leave it (None);
    graceful shutdown first when on, last when off."""
    shut, opened = [_safe("interface", i, check_linux_ifname) for i in shut], [_safe("interface", i, check_linux_ifname) for i in opened]
    gs: list[str] = []
    if graceful is not None and asn is not None:
        af = [f"router bgp {int(asn)}", "address-family ipv4 unicast"]
        gs = (steer_lines(own) + af + [f"neighbor {PEER_GROUP} route-map {DRAIN_ROUTE_MAP} out", "exit-address-family", "exit"]
              if graceful else af + [f"no neighbor {PEER_GROUP} route-map {DRAIN_ROUTE_MAP} out", "exit-address-family", "exit",
                                     f"no route-map {DRAIN_ROUTE_MAP}", f"no ip prefix-list {DRAIN_OWN_LIST}"])
    ports = [line for i in shut for line in (f"interface {i}", "shutdown", "exit")] + \
        [line for i in opened for line in (f"interface {i}", "no shutdown", "exit")]
    body = gs + ports if graceful else ports + gs
    return ["configure terminal", *body, "end"] if body else []
