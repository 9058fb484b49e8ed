"""Per-device views: everything a template lays out, computed in Python from the plan (no I/O).

Templates stay dumb: every interface arrives with its name, description, address, prefix length
and dotted mask; every route with network, prefix length, mask and next hop (a template takes the
form its platform writes). Names the platform decides (the loopback) come from the platform
module (``platforms/<name>``). Every string is checked against the CLI-safe
patterns here, so nothing from the inventory can break out of its line in a rendered config.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from zcube_deploy.errors import RenderError
from zcube_deploy.ipv4 import dotted_mask
from zcube_deploy.plan.roles import host_words, port_map_for, role_words
from zcube_deploy.platforms import known_platforms, platform_module
from zcube_deploy.topology.forwarding import switch_mode
from zcube_deploy.safety import DESCRIPTIONS_RE, check_description, check_interface, check_name


def _safe(kind: str, value: str, check) -> str:
    problem = check(value)
    if problem:
        raise RenderError(f"refusing to render {kind} {value!r}: it {problem}")
    return value


def _safe_all(kind: str, values: list[str], bulk, check) -> None:
    """Every one of ``values`` passes ``check``: one match of ``bulk`` (the check's pattern over the values joined by
    newlines) when they all do, the first that does not named as :func:`_safe` would."""
    joined = "\n".join(values)
    if joined.count("\n") != max(len(values) - 1, 0) or not bulk.fullmatch(joined):  # a line break inside a value is caught here
        for v in values:
            _safe(kind, v, check)
        raise AssertionError(f"{kind}s: the joined check and the single checks disagree")  # never: a bug in the patterns


class _Prefixes(dict):
    """"net/len" -> {"network", "prefix_len", "mask"}, computed on first use (switches share their route prefixes)."""

    def __init__(self, masks: dict[int, str]):
        super().__init__()
        self.masks = masks

    def __missing__(self, prefix: str) -> dict:
        net, plen = prefix.split("/")
        value = self[prefix] = {"network": net, "prefix_len": int(plen), "mask": self.masks[int(plen)]}
        return value


class PlanIndex:
    """Fabric-wide facts of a plan computed once, shared by every device's view."""

    def __init__(self, plan: dict):
        self.plan = plan
        self.roles: dict[str, RolePorts] = {}  # a role's ports, made on first use (port_maps, else port_map: plan/roles.py)
        self.model = plan["models"]["switch"]
        platform = plan["cluster"]["platform"]
        # a platform that renders itself (platforms.switch_renderer) may have no data file here
        self.loopback_name = getattr(platform_module(platform), "LOOPBACK", None) if platform in known_platforms() else None
        self.settings = plan["settings"]
        self.mgmt_mask = dotted_mask(self.settings["mgmt_prefix_len"])
        self.masks = {n: dotted_mask(n) for n in range(33)}
        self.prefixes = _Prefixes(self.masks)
        self._nic_ports: dict[str, str] = {}
        self.header = (f"zcube-deploy {plan['tool_version']} | cluster {plan['cluster']['name']} | "
                       f"inventory sha256 {plan['inputs']['inventory_sha256'][:16]}")
        G = plan["sizing"]["gpus_per_server"]
        self.gpus_per_server = G
        self.global_lines = [line.format(switch_mtu=self.settings["switch_mtu"]) for line in self.model.get("config_lines", [])]
        self.routing = plan.get("routing") or {"mode": "static"}
        self.bgp_syntax = self.model.get("bgp") or {}
        if any(switch_mode(self.routing, sw) == "bgp" for sw in plan["switches"]):
            if not self.bgp_syntax:
                raise RenderError(f"switch model {self.model.get('name')} has no bgp syntax in the catalog; cannot render mode bgp")
            self.asn_of = {s["name"]: s["asn"] for s in plan["switches"]}
        lossless = self.settings["lossless"]
        self.lossless = {"enabled": bool(lossless["enabled"]), "lines": list(lossless["lines"]),
                         "interface_lines": list(lossless["interface_lines"])}

    def ports(self, role: str) -> "RolePorts":
        """The ports of a switch of ``role`` (every switch of a role has the same)."""
        ports = self.roles.get(role)
        if ports is None:
            ports = self.roles[role] = RolePorts(port_map_for(self.plan, role), self.model)
        return ports

    def nic_port(self, name: str) -> str:
        """``name`` once checked CLI-safe as a NIC interface name (servers share their port names: each is checked once)."""
        safe = self._nic_ports.get(name)
        if safe is None:
            safe = self._nic_ports[name] = _safe("NIC interface", name, check_interface)
        return safe


def split_cages(pm: dict) -> range:
    """The cages a role's port map breaks out into ``lanes_per_cage`` ports (none with one lane per cage): the host
    and fabric cages, or the host ones alone when the fabric runs at another speed (a ROFT leaf)."""
    if pm["lanes_per_cage"] <= 1:
        return range(0)
    first = pm["host_cages"][0] if pm["host_cages"][1] else pm["fabric_cages"][0]
    last = pm["host_cages"][1] if pm.get("fabric_speed") else pm["fabric_cages"][1]
    return range(first, last + 1)


class RolePorts:
    """A role's port map as a switch's view needs it: every port in port order, the spare ones, the breakout lines."""

    def __init__(self, pm: dict, model: dict):
        ports = pm["host_ports"] + pm["fabric_ports"] + pm["unused_ports"]
        self.port_order = {_safe("interface", n, check_interface): i for i, n in enumerate(ports)}  # every switch of the role has these
        host_index = {n: i for i, n in enumerate(pm["host_ports"])}
        # (name, description) of every port, in port order: a switch's ports that end no cable are these
        self.spare_ports = [(n, f"reserved host port {host_index[n]} for growth" if n in host_index else "unused") for n in ports]
        lanes = pm["lanes_per_cage"]
        self.breakout = []
        cmd = model.get("breakout_command")
        if cmd and lanes > 1:
            native = pm.get("native_speed")
            for cage in split_cages(pm):
                name = model["speeds"][native]["name"].format(cage=cage, lane=1, port=cage) if native else str(cage)
                self.breakout.append(cmd.format(cage=cage, speed=pm["speed"], lanes=lanes, name=name))


def switch_view(index: PlanIndex, sw: dict) -> dict:
    """The view of one switch: hostname, management, loopback, routed ports, unused ports, routes."""
    hostname = _safe("hostname", sw["name"], check_name)
    masks = index.masks
    role = index.ports(sw["group"])
    order = role.port_order  # every port name in it was checked CLI-safe once (RolePorts)
    keys = [order[i["name"]] for i in sw["interfaces"]]
    planned = [sw["interfaces"][k] for k in sorted(range(len(keys)), key=keys.__getitem__)]
    descriptions = [f"{i['peer']['device']} {i['peer']['port']} {i['cable']}" for i in planned]
    _safe_all("description", descriptions, DESCRIPTIONS_RE, check_description)
    interfaces = [{"name": i["name"], "description": d, "address": i["address"], "prefix_len": i["prefix_len"],
                   "mask": masks[i["prefix_len"]], "kind": i["kind"]} for i, d in zip(planned, descriptions)]
    used = {i["name"] for i in planned}
    unused = [{"name": n, "description": d} for n, d in role.spare_ports if n not in used]
    prefixes = index.prefixes
    routes = [{**prefixes[rt["prefix"]], "next_hop": rt["next_hop"]} for rt in sw["routes"]]
    bgp = bgp_view(index, sw, interfaces, order) if switch_mode(index.routing, sw) == "bgp" else None
    return {
        "header": index.header,
        "hostname": hostname,
        "role": role_text(sw),
        "global_lines": index.global_lines,
        "breakout": role.breakout,
        "mgmt": {"name": _safe("interface", index.model["mgmt_interface"], check_interface), "address": sw["mgmt_address"],
                 "prefix_len": index.settings["mgmt_prefix_len"], "mask": index.mgmt_mask},
        "loopback": {"name": index.loopback_name, "address": sw["loopback"], "prefix_len": 32, "mask": masks[32]},
        "interfaces": interfaces,
        "unused": unused,
        "routes": routes,
        "lossless": index.lossless,
        "bgp": bgp,
    }


def role_text(sw: dict) -> str:
    """The switch's role in one line of its config's header."""
    where = f"rack {sw['rack']} U{sw['u']}"
    if sw["group"] == "leaf":
        return f"leaf of rail {sw['index']} of pod {sw.get('pod')} of plane {sw['plane']} ({role_words('leaf')}), {where}"
    return f"{sw['group']} switch {sw['index']} of plane {sw['plane']} ({role_words(sw['group'])}), {where}"


def bgp_view(index: PlanIndex, sw: dict, interfaces: list[dict], order: dict[str, int]) -> dict:
    """Mode bgp: BFD on every fabric port, one neighbour per fabric /31 (remote AS = the peer
    switch's ASN), the host block (with its discard route) and the loopback as networks. The
    lines that no Ruijie guide confirms come from the catalog (models.switch.bgp), formatted here."""
    syn, rt = index.bgp_syntax, index.routing
    bfd = rt["bfd"]
    bfd_line = f"bfd interval {bfd['interval_ms']} min_rx {bfd['interval_ms']} multiplier {bfd['multiplier']}"
    for itf in interfaces:
        itf["bfd"] = bfd_line if itf["kind"] == "fabric" else None
    neighbors = []
    for itf in sorted((i for i in sw["interfaces"] if i["kind"] == "fabric"), key=lambda i: order[i["name"]]):
        peer = itf["peer"]
        neighbors.append({"address": peer["address"], "remote_as": index.asn_of[peer["device"]],
                          "description": _safe("description", f"{peer['device']} {peer['port']}", check_description)})
    # a switch without hosts (a ROFT spine) originates its loopback alone
    nets = ([(sw["host_block"].split("/")[0], int(sw["host_block"].split("/")[1]))] if sw["host_block"] else []) + [(sw["loopback"], 32)]
    networks = [syn["network"].format(network=n, mask=index.masks[p], prefix_len=p) for n, p in nets]
    discard = syn.get("discard_route") if sw["host_block"] else None
    return {
        "asn": sw["asn"],
        "router_id": syn["router_id"].format(router_id=sw["loopback"]),
        "global_lines": list(syn.get("global_lines") or []),
        "neighbors": neighbors,
        "address_family": syn.get("address_family"),
        "exit_address_family": syn["exit_address_family"],
        "networks": networks,
        "maximum_paths": syn["maximum_paths"].format(paths=rt["maximum_paths"]),
        "discard_routes": [discard.format(network=nets[0][0], mask=index.masks[nets[0][1]], prefix_len=nets[0][1])] if discard else [],
        # the same, neutral (what the self-check compares the platform's parse with)
        "neighbor_addresses": [n["address"] for n in neighbors],
        "prefixes": [f"{n}/{p}" for n, p in nets],
        "discard_prefixes": [sw["host_block"]] if discard else [],
    }


def server_view(index: PlanIndex, srv: dict) -> dict:
    """The view of one server: every NIC port with address, MTU, routes and its policy table."""
    mtu = index.settings["mtu"]
    ports = []
    nic_port = index.nic_port
    nics = sorted(srv["nics"], key=lambda n: (n["gpu"], n["nic_port"]))
    for nic in nics:
        ports.append({
            "name": nic_port(nic["port"]),
            "mac": nic.get("mac"),
            "address": f"{nic['address']}/{nic['prefix_len']}",
            "ip": nic["address"],
            "gateway": nic["gateway"],
            "mtu": mtu,
            "table": nic["table"],
            "metric": nic["table"],
            "routes": [{"to": r["to"], "via": r["via"]} for r in nic["routes"][:1]],
            "comment": f"GPU {nic['gpu']} port {nic['nic_port']} -> {nic['switch']} {nic['switch_port']} ({nic['group']}, plane {nic['plane']}, cable {nic['cable']})",
        })
    # each port's policy table, laid out under the interface each route leaves on
    by_name = {p["name"]: p for p in ports}
    for p in ports:
        p["table_routes"] = []
    for nic in nics:
        for r in nic["routes"]:
            dev = r.get("dev", nic["port"])
            by_name[dev]["table_routes"].append({"to": r["to"], "via": r["via"], "table": nic["table"], "metric": r.get("metric"),
                                                 "role": r.get("role", "")})
    in_table: dict[int, list[dict]] = {}
    for q in ports:
        for r in q["table_routes"]:
            in_table.setdefault(r["table"], []).append(r)
    for p in ports:
        p["terminal_routes"] = _terminal_routes(p["table"], in_table.get(p["table"], []))
    fabric, about = host_words({n["group"] for n in nics})
    return {"header": index.header, "hostname": _safe("hostname", srv["name"], check_name), "rack": srv["rack"], "u": srv["u"], "ports": ports,
            "fabric": fabric, "about": about}


TERMINAL_METRIC = 1000


def _terminal_routes(table: int, routes: list[dict]) -> list[dict]:
    """The end of a port's policy table: ``unreachable`` for each outermost destination of its routes, with a
    metric above every route, so that when none of them is live the lookup stops here instead of falling
    through to the main table (which would send the packet out of another GPU's NIC with this port's source
    address; docs/routing.md "Hosts")."""
    metric = max([TERMINAL_METRIC] + [int(r["metric"]) + 1 for r in routes if r.get("metric") is not None])
    return [{"to": n, "table": table, "metric": metric} for n in _outermost(frozenset(r["to"] for r in routes))]


@lru_cache(maxsize=4096)
def _outermost(prefixes: frozenset[str]) -> tuple[str, ...]:
    """The prefixes of ``prefixes`` that no other one contains, in address order (ports of one group and
    plane share the same set, so this is computed once per set, not once per port)."""
    nets = sorted({ipaddress.ip_network(p) for p in prefixes}, key=lambda n: (int(n.network_address), n.prefixlen))
    return tuple(str(n) for n in nets if not any(o != n and n.subnet_of(o) for o in nets))


def sysctl_view(index: PlanIndex, srv: dict) -> dict:
    """The kernel settings the host routes need (docs/routing.md "Hosts"), per NIC port and for all."""
    names = sorted({index.nic_port(n["port"]) for n in srv["nics"]})
    return {"header": index.header, "hostname": _safe("hostname", srv["name"], check_name), "fabric": host_words({n["group"] for n in srv["nics"]})[0],
            "interfaces": ["all", "default"] + [n.replace(".", "/") for n in names]}
