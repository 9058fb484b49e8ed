"""Is a plan consistent with itself? The checks :func:`zcube_deploy.plan.io.read_plan` runs on what it read.

The plan model (plan/model.py) says what each value is; these checks say that the values agree
with each other, so that every later step can trust the plan it was given: every cable names a
device and a port that exist (and the switch port names the cable back), names, cable ids,
interface names and addresses are unique, every reference from a switch interface or a NIC port
leads somewhere, the routing section is complete for its mode, the counts and the sizing agree
with the rows, and the catalog entries copied into ``models`` are still catalog entries.

A command reads only part of a plan (a projection, see plan.model.projection); each check names
the fields it needs and runs when they were read, so a check never reads what is not there and a
command is checked on everything it reads. Each check is one function in ``CHECKS``; every
problem names its data path (``cables[12].b.port``) and all of them are reported at once
(:func:`plan_problems`, exit 2 through InvalidPlanFile).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

from pydantic import ValidationError

from zcube_deploy.catalog import NicModel, ServerModel, SwitchModel
from zcube_deploy.errors import Problem
from zcube_deploy.plan.model import validation_problems
from zcube_deploy.plan.roles import design_of

HINT = "a hand-edited plan whose parts disagree: re-run `zcube plan` rather than editing plan.json"


@dataclass
class View:
    """The plan as read (``fields``: the projection it was read with, None for all of it) and indices over it."""

    plan: dict
    fields: dict | None = None

    def has(self, section: str, *path: str) -> bool:
        """Whether ``section`` (and in its rows the field ``path``, nested) was read."""
        if section not in self.plan:
            return False
        spec = None if self.fields is None else self.fields.get(section, False)
        if spec is False:
            return False
        for name in path:
            if spec is None:
                return True
            if name not in spec:
                return False
            spec = spec[name] if isinstance(spec, dict) else None
        return True

    def rows(self, section: str) -> list:
        value = self.plan.get(section)
        return value if isinstance(value, list) else []

    def _positions(self, section: str, key: str) -> dict:
        out: dict = {}
        for i, row in enumerate(self.rows(section)):
            out.setdefault(row[key], i)
        return out

    @cached_property
    def switch_at(self) -> dict[str, int]:
        return self._positions("switches", "name")

    @cached_property
    def server_at(self) -> dict[str, int]:
        return self._positions("servers", "name")

    @cached_property
    def cable_at(self) -> dict[str, int]:
        return self._positions("cables", "id")

    def end_keys(self, section: str, with_cable: bool) -> tuple[Callable[[dict, str | None], object], set]:
        """What a cable end on a ``section`` device ("switches" or "servers") must match, as precisely as was
        read: (device, port, cable) when the ports and their cables were read, (device, port), the device, or
        anything (nothing of ``section`` read); the key of an end and the set of keys that exist."""
        rows = self.rows(section)
        sub = "interfaces" if section == "switches" else "nics"
        port = "name" if section == "switches" else "port"
        if not self.has(section, "name"):
            return (lambda end, cid: None), {None}
        if not self.has(section, sub, port):
            return (lambda end, cid: end["device"]), {r["name"] for r in rows}
        if not (with_cable and self.has(section, sub, "cable")):
            return (lambda end, cid: (end["device"], end["port"])), {(r["name"], x[port]) for r in rows for x in r[sub]}
        return (lambda end, cid: (end["device"], end["port"], cid)), {(r["name"], x[port], x["cable"]) for r in rows for x in r[sub]}

    @cached_property
    def switch_pairs(self) -> set[tuple[str, str]]:
        """(switch, interface) of every switch interface."""
        return {(sw["name"], itf["name"]) for sw in self.rows("switches") for itf in sw["interfaces"]}

    @cached_property
    def server_pairs(self) -> set[tuple[str, str]]:
        """(server, NIC port) of every NIC port."""
        return {(srv["name"], nic["port"]) for srv in self.rows("servers") for nic in srv["nics"]}

    @cached_property
    def port_names(self) -> set[str] | None:
        """Every port name of the switch model (port_map), None when the port map was not read."""
        if not self.has("port_map"):
            return None
        out: set[str] = set()
        for pm in [self.plan["port_map"], *(self.plan.get("port_maps") or {}).values()]:
            out |= set(pm["host_ports"]) | set(pm["fabric_ports"]) | set(pm["unused_ports"])
        return out

    @cached_property
    def switch_ports(self) -> dict[str, dict[str, dict]]:
        """Switch name -> its interfaces by name (the first of each name)."""
        return _ports_by_name(self.rows("switches"), "interfaces", "name")

    @cached_property
    def server_ports(self) -> dict[str, dict[str, dict]]:
        """Server name -> its NIC ports by name (the first of each name)."""
        return _ports_by_name(self.rows("servers"), "nics", "port")


def _ports_by_name(rows, ports: str, key: str) -> dict[str, dict[str, dict]]:
    """Device name -> its ``ports`` rows by their ``key`` (the first row of each name)."""
    out: dict[str, dict[str, dict]] = {}
    for row in rows:
        mine = out.setdefault(row["name"], {})
        for p in row[ports]:
            mine.setdefault(p[key], p)
    return out


Check = Callable[[View], Iterator[Problem]]


def _p(path: str, message: str) -> Problem:
    return Problem(path, message, HINT)


def _duplicates(rows: list, key: str, where: str, what: str) -> Iterator[Problem]:
    if len({row[key] for row in rows}) == len(rows):
        return
    first: dict = {}
    for i, row in enumerate(rows):
        value = row[key]
        if value in first:
            yield _p(f"{where}[{i}].{key}", f"{what} {value!r} is also {where}[{first[value]}].{key}")
        else:
            first[value] = i


def unique_names(v: View) -> Iterator[Problem]:
    """Switch names, server names (and the two apart), cable ids; interface names per switch, NIC ports per server."""
    if v.has("switches", "name"):
        yield from _duplicates(v.rows("switches"), "name", "switches", "switch name")
    if v.has("servers", "name"):
        yield from _duplicates(v.rows("servers"), "name", "servers", "server name")
    if v.has("switches", "name") and v.has("servers", "name"):
        clash = v.server_at.keys() & v.switch_at.keys()
        for i, srv in enumerate(v.rows("servers")) if clash else ():
            if srv["name"] in v.switch_at:
                yield _p(f"servers[{i}].name", f"{srv['name']!r} is also the name of switches[{v.switch_at[srv['name']]}]")
    if v.has("cables", "id"):
        yield from _duplicates(v.rows("cables"), "id", "cables", "cable id")
    if v.has("switches", "interfaces", "name"):
        for i, sw in enumerate(v.rows("switches")):
            yield from _duplicates(sw["interfaces"], "name", f"switches[{i}].interfaces", "interface")
    if v.has("servers", "nics", "port"):
        for i, srv in enumerate(v.rows("servers")):
            yield from _duplicates(srv["nics"], "port", f"servers[{i}].nics", "NIC port")


def unique_addresses(v: View) -> Iterator[Problem]:
    """Every loopback, management, switch-port and NIC-port address once in the plan (of those read)."""
    switches, servers = v.rows("switches"), v.rows("servers")
    keys = [key for key in ("loopback", "mgmt_address") if v.has("switches", key)]
    itfs, nics = v.has("switches", "interfaces", "address"), v.has("servers", "nics", "address")
    every = [sw[key] for sw in switches for key in keys]
    if itfs:
        every += [itf["address"] for sw in switches for itf in sw["interfaces"]]
    if nics:
        every += [nic["address"] for srv in servers for nic in srv["nics"]]
    if len(set(every)) == len(every):
        return
    seen: dict[str, str] = {}

    def see(address: str, path: str) -> Iterator[Problem]:
        if address in seen:
            yield _p(path, f"address {address} is also {seen[address]}")
        else:
            seen[address] = path

    for i, sw in enumerate(switches):
        for key in keys:
            yield from see(sw[key], f"switches[{i}].{key}")
        if itfs:
            for k, itf in enumerate(sw["interfaces"]):
                yield from see(itf["address"], f"switches[{i}].interfaces[{k}].address")
    if nics:
        for i, srv in enumerate(servers):
            for k, nic in enumerate(srv["nics"]):
                yield from see(nic["address"], f"servers[{i}].nics[{k}].address")


def counts_match(v: View) -> Iterator[Problem]:
    """``counts`` agrees with the rows it counts."""
    if not v.has("counts"):
        return
    counts = v.plan["counts"]
    for key, section in (("switches", "switches"), ("servers", "servers"), ("cables", "cables")):
        if section in v.plan and counts[key] != len(v.rows(section)):
            yield _p(f"counts.{key}", f"says {counts[key]}, the plan has {len(v.rows(section))} {section}")
    if v.has("cables", "kind"):
        for kind in ("host", "fabric"):
            n = sum(1 for c in v.rows("cables") if c["kind"] == kind)
            if counts[f"{kind}_cables"] != n:
                yield _p(f"counts.{kind}_cables", f"says {counts[f'{kind}_cables']}, the plan has {n} {kind} cables")


def sizing_matches(v: View) -> Iterator[Problem]:
    """The planner's cheap invariants on the sizing: the port budget, and 2 x S switches per plane, each at its own place
    (a ROFT's sizing: :func:`roft_sizing_matches`)."""
    if not v.has("sizing"):
        return
    sz = v.plan["sizing"]
    if "leaves_per_plane" in sz:
        yield from roft_sizing_matches(v, sz)
        return
    stage = design_of(v.plan) == "stage"  # a migration stage holds some of the sizing's switches (and others): no counts
    S, K, m, planes = sz["S"], sz["K"], sz["m"], sz["planes"]
    if K + S * m > sz["logical_ports"]:
        yield _p("sizing", f"K + S*m = {K} + {S}*{m} is more than the {sz['logical_ports']} logical ports of a switch")
    if sz["installed_gpus"] != sz["installed_servers"] * sz["gpus_per_server"]:
        yield _p("sizing.installed_gpus", f"{sz['installed_gpus']} is not installed_servers x gpus_per_server "
                 f"= {sz['installed_servers']} x {sz['gpus_per_server']}")
    if "switches" in v.plan and not stage and len(v.rows("switches")) != 2 * S * planes:
        yield _p("switches", f"{len(v.rows('switches'))} switches, the sizing needs 2 x S x planes = {2 * S * planes}")
    if "servers" in v.plan and len(v.rows("servers")) != sz["installed_servers"]:
        yield _p("servers", f"{len(v.rows('servers'))} servers, the sizing says {sz['installed_servers']} are installed")
    if v.has("switches", "group") and v.has("switches", "plane") and v.has("switches", "index") and not stage:
        first: dict[tuple, int] = {}
        for i, sw in enumerate(v.rows("switches")):
            place = (sw["plane"], sw["group"], sw["index"])
            if not (0 <= sw["plane"] < planes and 0 <= sw["index"] < S):
                yield _p(f"switches[{i}]", f"plane {sw['plane']} index {sw['index']} is outside planes = {planes}, S = {S}")
            elif place in first:
                yield _p(f"switches[{i}]", f"plane {sw['plane']} {sw['group']} index {sw['index']} is also switches[{first[place]}]")
            else:
                first[place] = i


def roft_sizing_matches(v: View, sz: dict) -> Iterator[Problem]:
    """A ROFT's sizing against its rows: the leaves and spines it says, each at its own place (plane, pod, rail / spine)."""
    planes, pods, G, S = sz["planes"], sz["pods"], sz["gpus_per_server"], sz["spines_per_plane"]
    if sz["installed_gpus"] != sz["installed_servers"] * G:
        yield _p("sizing.installed_gpus", f"{sz['installed_gpus']} is not installed_servers x gpus_per_server "
                 f"= {sz['installed_servers']} x {G}")
    if sz["leaves_per_plane"] != pods * G or sz["uplinks_per_leaf"] != S * sz["links_per_pair"]:
        yield _p("sizing", "leaves_per_plane is not pods x gpus_per_server, or uplinks_per_leaf not spines_per_plane x links_per_pair")
    if "switches" in v.plan and len(v.rows("switches")) != planes * (pods * G + S):
        yield _p("switches", f"{len(v.rows('switches'))} switches, the sizing needs planes x (leaves + spines) = {planes * (pods * G + S)}")
    if "servers" in v.plan and len(v.rows("servers")) != sz["installed_servers"]:
        yield _p("servers", f"{len(v.rows('servers'))} servers, the sizing says {sz['installed_servers']} are installed")
    if v.has("switches", "group") and v.has("switches", "plane") and v.has("switches", "index"):
        first: dict[tuple, int] = {}
        for i, sw in enumerate(v.rows("switches")):
            leaf = sw["group"] == "leaf"
            place = (sw["plane"], sw["group"], sw.get("pod"), sw["index"])
            if sw["group"] not in ("leaf", "spine") or leaf != ("pod" in sw):
                yield _p(f"switches[{i}]", f"a {sw['group']} switch{' without a pod' if leaf else ''} in a ROFT (leaves with a pod, spines)")
            elif not (0 <= sw["plane"] < planes and 0 <= sw["index"] < (G if leaf else S) and (not leaf or 0 <= sw["pod"] < pods)):
                yield _p(f"switches[{i}]", f"plane {sw['plane']} pod {sw.get('pod')} index {sw['index']} is outside planes = {planes}, "
                         f"pods = {pods}, {'rails' if leaf else 'spines'} = {G if leaf else S}")
            elif place in first:
                yield _p(f"switches[{i}]", f"plane {sw['plane']} {sw['group']} pod {sw.get('pod')} index {sw['index']} is also "
                         f"switches[{first[place]}]")
            else:
                first[place] = i


FABRIC_PAIRS = frozenset({("odd", "even"), ("leaf", "spine")})  # (end a, end b) of a fabric cable, per design


def _end(v: View, path: str, end: dict, on_server: bool, cable_id: str | None) -> Iterator[Problem]:
    """One end of a cable: a device of the right kind, a port it has, naming this cable back."""
    device, port = end["device"], end["port"]
    if on_server:
        if not v.has("servers", "name"):
            return
        if device not in v.server_at:
            yield _p(f"{path}.device", f"{device!r} is not a server of the plan")
        elif v.has("servers", "nics", "port") and port not in v.server_ports[device]:
            yield _p(f"{path}.port", f"server {device} has no NIC port {port!r}")
        elif cable_id is not None and v.has("servers", "nics", "cable") and v.server_ports[device][port]["cable"] != cable_id:
            yield _p(f"{path}.port", f"{device} {port} names cable {v.server_ports[device][port]['cable']!r}, not {cable_id!r}")
        return
    if not v.has("switches", "name"):
        return
    if device not in v.switch_at:
        yield _p(f"{path}.device", f"{device!r} is not a switch of the plan")
    elif v.has("switches", "interfaces", "name") and port not in v.switch_ports[device]:
        yield _p(f"{path}.port", f"switch {device} has no interface {port!r} (a switch without its interfaces)")
    elif cable_id is not None and v.has("switches", "interfaces", "cable") and v.switch_ports[device][port]["cable"] != cable_id:
        yield _p(f"{path}.port", f"{device} {port} names cable {v.switch_ports[device][port]['cable']!r}, not {cable_id!r}")


def cable_ends(v: View) -> Iterator[Problem]:
    """Every cable joins a device and port that exist: host cables a server's NIC port to a switch port,
    fabric cables an odd switch to an even one (a ROFT leaf to a spine); the port names the cable back."""
    if not (v.has("cables", "a") and v.has("cables", "b") and v.has("cables", "kind")):
        return
    groups = {sw["name"]: sw["group"] for sw in v.rows("switches")} if v.has("switches", "group") else {}
    cables = v.rows("cables")
    ids = v.has("cables", "id")
    sw_key, sw_keys = v.end_keys("switches", ids)
    srv_key, srv_keys = v.end_keys("servers", ids)
    suspect = [i for i, c in enumerate(cables)
               if sw_key(c["b"], c.get("id")) not in sw_keys
               or (srv_key(c["a"], c.get("id")) not in srv_keys if c["kind"] == "host" else sw_key(c["a"], c.get("id")) not in sw_keys)
               or (groups and c["kind"] == "fabric" and (groups.get(c["a"]["device"]), groups.get(c["b"]["device"])) not in FABRIC_PAIRS)]
    for i in suspect:
        c = cables[i]
        cid = c.get("id")
        host = c["kind"] == "host"
        yield from _end(v, f"cables[{i}].a", c["a"], host, cid)
        yield from _end(v, f"cables[{i}].b", c["b"], False, cid)
        ends = (groups.get(c["a"]["device"]), groups.get(c["b"]["device"]))
        if not host and None not in ends and ends not in FABRIC_PAIRS:
            yield _p(f"cables[{i}]", f"a fabric cable from {c['a']['device']} ({groups[c['a']['device']]}) to "
                     f"{c['b']['device']} ({groups[c['b']['device']]}): fabric cables join an odd switch to an even one, "
                     "or a ROFT leaf to a spine")


def switch_interfaces(v: View) -> Iterator[Problem]:
    """Every switch interface: a port of the switch model, a prefix length, a cable and a peer that exist."""
    if v.has("switches", "interfaces"):
        for i, sw in enumerate(v.rows("switches")):
            yield from switch_row(v, i, sw)


_PREFIX_LENS = frozenset(range(33))


def _switch_clean(v: View, itfs: list[dict], check_cables: bool, peer_ports: bool) -> bool:
    """The common case, in bulk: nothing :func:`switch_row` would report."""
    ports = v.port_names
    fabric = [i["peer"] for i in itfs if i["kind"] == "fabric"]
    host = [i["peer"] for i in itfs if i["kind"] == "host"]
    return ((ports is None or {i["name"] for i in itfs} <= ports)
            and {i["prefix_len"] for i in itfs} <= _PREFIX_LENS
            and (not check_cables or {i["cable"] for i in itfs} <= v.cable_at.keys())
            and (not v.has("switches", "name") or {p["device"] for p in fabric} <= v.switch_at.keys())
            and (not peer_ports or {(p["device"], p["port"]) for p in fabric} <= v.switch_pairs)
            and (not v.has("servers", "name") or {p["device"] for p in host} <= v.server_at.keys())
            and (not v.has("servers", "nics", "port") or {(p["device"], p["port"]) for p in host} <= v.server_pairs))


def switch_row(v: View, i: int, sw: dict) -> Iterator[Problem]:
    """The interfaces of one switch (``switches[i]``), against what ``v`` holds of the rest of the plan."""
    ports = v.port_names
    check_cables = v.has("cables", "id")
    peer_ports = v.has("switches", "interfaces", "name")
    if v.has("sizing") and "leaves_per_plane" in v.plan["sizing"] and sw.get("group") in ("leaf", "spine"):
        yield from _roft_switch_ports(v.plan["sizing"], i, sw)
    elif v.has("sizing") and "S" in v.plan["sizing"] and sw.get("group", "odd") in ("odd", "even"):
        # switch_row runs on whole interfaces (every projection reads them whole)
        sz = v.plan["sizing"]
        fabric = sum(1 for itf in sw["interfaces"] if itf["kind"] == "fabric")
        if fabric != sz["S"] * sz["m"] and design_of(v.plan) != "stage":  # a stage's switch may have some of its links
            yield _p(f"switches[{i}].interfaces", f"{fabric} fabric interfaces, the sizing needs S x m = {sz['S']} x {sz['m']} "
                     "(one per link to each switch of the other group)")
        if len(sw["interfaces"]) - fabric > sz["K"]:
            yield _p(f"switches[{i}].interfaces", f"{len(sw['interfaces']) - fabric} host interfaces, more than K = {sz['K']}")
    if _switch_clean(v, sw["interfaces"], check_cables, peer_ports):
        return
    for k, itf in enumerate(sw["interfaces"]):
        path = f"switches[{i}].interfaces[{k}]"
        if ports is not None and itf["name"] not in ports:
            yield _p(f"{path}.name", f"{itf['name']!r} is not a port of the switch model (port_map)")
        if not 0 <= itf["prefix_len"] <= 32:
            yield _p(f"{path}.prefix_len", f"{itf['prefix_len']} is not a prefix length (0-32)")
        if check_cables and itf["cable"] not in v.cable_at:
            yield _p(f"{path}.cable", f"no cable {itf['cable']!r} in the plan")
        peer = itf["peer"]
        if itf["kind"] == "fabric":
            if v.has("switches", "name") and peer["device"] not in v.switch_at:
                yield _p(f"{path}.peer.device", f"{peer['device']!r} is not a switch of the plan")
            elif peer_ports and peer["port"] not in v.switch_ports.get(peer["device"], {}):
                yield _p(f"{path}.peer.port", f"switch {peer['device']} has no interface {peer['port']!r}")
        elif v.has("servers", "name"):
            if peer["device"] not in v.server_at:
                yield _p(f"{path}.peer.device", f"{peer['device']!r} is not a server of the plan")
            elif v.has("servers", "nics", "port") and peer["port"] not in v.server_ports[peer["device"]]:
                yield _p(f"{path}.peer.port", f"server {peer['device']} has no NIC port {peer['port']!r}")


def _roft_switch_ports(sz: dict, i: int, sw: dict) -> Iterator[Problem]:
    """A ROFT switch's interface counts against the sizing: a leaf's uplinks and host ports, a spine's downlinks."""
    fabric = sum(1 for itf in sw["interfaces"] if itf["kind"] == "fabric")
    hosts = len(sw["interfaces"]) - fabric
    leaf = sw["group"] == "leaf"
    want = sz["uplinks_per_leaf"] if leaf else sz["leaves_per_plane"] * sz["links_per_pair"]
    if fabric != want:
        yield _p(f"switches[{i}].interfaces", f"{fabric} fabric interfaces, the sizing needs {want} "
                 f"({'uplinks_per_leaf' if leaf else 'leaves_per_plane x links_per_pair'})")
    if hosts > (sz["host_ports_per_leaf"] if leaf else 0):
        yield _p(f"switches[{i}].interfaces", f"{hosts} host interfaces, more than the {sz['host_ports_per_leaf'] if leaf else 0} "
                 f"a {sw['group']} has")


def nic_ports(v: View) -> Iterator[Problem]:
    """Every NIC port: a prefix length, a switch port and a cable that exist, routes leaving on the server's own ports."""
    if v.has("servers", "nics"):
        for i, srv in enumerate(v.rows("servers")):
            yield from server_row(v, i, srv)


def server_row(v: View, i: int, srv: dict, nic_fields: set | frozenset | dict | None = None) -> Iterator[Problem]:
    """The NIC ports of one server (``servers[i]``), against what ``v`` holds of the rest of the plan
    (``nic_fields``: the fields of a NIC port that were read, None for all)."""
    if nic_fields is None and v.fields is not None and isinstance(v.fields.get("servers"), dict):
        nic_fields = v.fields["servers"].get("nics")

    def has(name: str) -> bool:
        return nic_fields is None or name in nic_fields

    own = {nic["port"] for nic in srv["nics"]} if has("port") else None
    switch_ports = v.has("switches", "interfaces", "name")
    switch_names, cables = v.has("switches", "name"), v.has("cables", "id")
    nics = srv["nics"]
    if ((not has("prefix_len") or {n["prefix_len"] for n in nics} <= _PREFIX_LENS)
            and (not (has("switch") and switch_names) or {n["switch"] for n in nics} <= v.switch_at.keys())
            and (not (has("switch") and has("switch_port") and switch_ports) or {(n["switch"], n["switch_port"]) for n in nics} <= v.switch_pairs)
            and (not (has("cable") and cables) or {n["cable"] for n in nics} <= v.cable_at.keys())
            and (own is None or not has("routes") or {r["dev"] for n in nics for r in n["routes"]} <= own)):
        return
    for k, nic in enumerate(srv["nics"]):
        path = f"servers[{i}].nics[{k}]"
        if has("prefix_len") and not 0 <= nic["prefix_len"] <= 32:
            yield _p(f"{path}.prefix_len", f"{nic['prefix_len']} is not a prefix length (0-32)")
        if has("switch") and v.has("switches", "name"):
            if nic["switch"] not in v.switch_at:
                yield _p(f"{path}.switch", f"{nic['switch']!r} is not a switch of the plan")
            elif has("switch_port") and switch_ports and nic["switch_port"] not in v.switch_ports[nic["switch"]]:
                yield _p(f"{path}.switch_port", f"switch {nic['switch']} has no interface {nic['switch_port']!r}")
        if has("cable") and v.has("cables", "id") and nic["cable"] not in v.cable_at:
            yield _p(f"{path}.cable", f"no cable {nic['cable']!r} in the plan")
        if own is not None and has("routes"):
            for r, route in enumerate(nic["routes"]):
                if route["dev"] not in own:
                    yield _p(f"{path}.routes[{r}].dev", f"{route['dev']!r} is not a NIC port of {srv.get('name', 'this server')}")


def routing_complete(v: View) -> Iterator[Problem]:
    """The routing section carries what its mode needs: mode bgp an ASN range, a path limit and one ASN per
    switch (unique but for the spines of a ROFT plane, which share one; in the range); mode static no ASN."""
    if not v.has("routing"):
        return
    rt = v.plan["routing"]
    with_asn = v.has("switches", "asn")
    rows = v.rows("switches")
    own = v.has("switches", "routing_mode")  # a switch's own mode (a migration stage), else the plan's
    bgp = [i for i, sw in enumerate(rows) if ((sw.get("routing_mode") if own else None) or rt["mode"]) == "bgp"]
    if rt["mode"] == "bgp" or bgp:
        for key in ("asn_last", "maximum_paths"):
            if rt[key] is None:
                yield _p(f"routing.{key}", "missing (null) in mode bgp: the plan has no BGP data")
    if not with_asn:
        return
    first: dict[int, int] = {}
    shared = v.has("switches", "group") and v.has("switches", "plane")  # the spines of a ROFT plane share an ASN
    for i in bgp:
        sw = rows[i]
        asn = sw["asn"]
        if asn is None:
            yield _p(f"switches[{i}].asn", "null in mode bgp: every switch needs its AS number")
        elif asn in first and shared and sw["group"] == rows[first[asn]]["group"] == "spine" and sw["plane"] == rows[first[asn]]["plane"]:
            continue
        elif asn in first:
            yield _p(f"switches[{i}].asn", f"AS {asn} is also switches[{first[asn]}].asn"
                     + (" (only the spines of one ROFT plane share an ASN)" if shared else ""))
        else:
            first[asn] = i
            last = rt["asn_last"] if rt["asn_last"] is not None else asn
            if not rt["asn_base"] <= asn <= last:
                yield _p(f"switches[{i}].asn", f"AS {asn} is outside routing.asn_base-asn_last ({rt['asn_base']}-{rt['asn_last']})")
    in_bgp = set(bgp)
    for i, sw in enumerate(rows):
        if i not in in_bgp and sw["asn"] is not None:
            yield _p(f"switches[{i}].asn", f"AS {sw['asn']} in mode static (null expected)")


def settings_valid(v: View) -> Iterator[Problem]:
    """Prefix lengths in the settings are prefix lengths."""
    if v.has("settings") and not 0 <= v.plan["settings"]["mgmt_prefix_len"] <= 32:
        yield _p("settings.mgmt_prefix_len", f"{v.plan['settings']['mgmt_prefix_len']} is not a prefix length (0-32)")


def models_valid(v: View) -> Iterator[Problem]:
    """The catalog entries copied into ``models`` are still entries the catalog would accept."""
    if not v.has("models"):
        return
    for key, cls in (("switch", SwitchModel), ("nic", NicModel), ("server", ServerModel)):
        entry = {k: val for k, val in v.plan["models"][key].items() if k != "name"}
        try:
            cls.model_validate(entry)
        except ValidationError as exc:
            yield from (Problem(p.path, p.message, HINT) for p in validation_problems(exc, f"models.{key}", limit=5))
        except (KeyError, TypeError, ValueError) as exc:  # the platform default hook on a platform it does not know
            yield _p(f"models.{key}", f"not a catalog entry: {exc}")


CHECKS: tuple[Check, ...] = (unique_names, unique_addresses, counts_match, sizing_matches, switch_interfaces, cable_ends, nic_ports,
                             routing_complete, settings_valid, models_valid)


def with_checked_fields(fields: dict | None) -> dict | None:
    """``fields`` (a projection) plus what its checks need to judge what it reads: a switch's ASN is judged with
    its role, plane and own routing mode (the spines of a ROFT plane share one); the port map with every role's (``port_maps``); and
    always the plan's ``design``."""
    if fields is None:
        return None
    fields = {**fields, "design": None}
    if "port_map" in fields:
        fields["port_maps"] = None
    sw = fields.get("switches")
    if isinstance(sw, (set, frozenset)) and "asn" in sw and not {"group", "plane", "routing_mode"} <= sw:
        fields["switches"] = set(sw) | {"group", "plane", "routing_mode"}
    if isinstance(sw, dict) and "asn" in sw and not {"group", "plane", "routing_mode"} <= sw.keys():
        fields["switches"] = {"group": None, "plane": None, "routing_mode": None, **sw}
    # a ROFT leaf's place is (plane, pod, rail): a projection that reads the roles reads the pod too
    sw = fields.get("switches")
    if isinstance(sw, (set, frozenset)) and "group" in sw and "pod" not in sw:
        fields["switches"] = set(sw) | {"pod"}
    if isinstance(sw, dict) and "group" in sw and "pod" not in sw:
        fields["switches"] = {"pod": None, **sw}
    return fields


def plan_problems(plan: dict, fields: dict | None = None, limit: int = 50) -> list[Problem]:
    """Every disagreement between the parts of ``plan`` that were read (``fields``: the projection; None: all),
    at most ``limit`` of them (then one line saying how many more)."""
    view = View(plan, fields)
    problems = [p for check in CHECKS for p in check(view)]
    if len(problems) > limit:
        problems = problems[:limit] + [Problem("", f"... and {len(problems) - limit} more")]
    return problems
