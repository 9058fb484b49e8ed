"""The lab's model: one simulated switch per plan switch, the physical wiring, servers' LLDP.

No SSH here (see server.py): this is what the SSH sessions talk to. The switch itself (its CLI,
show outputs, routing protocols, site baseline) is the platform's simulator,
``platforms/<name>/lab`` (:func:`zcube_deploy.platforms.simulator`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from ipaddress import IPv4Network
from string import Template

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.ipv4 import dotted_mask
from zcube_deploy.lab.wiring import Wiring
from zcube_deploy.plan.roles import cage_of, port_map_for
from zcube_deploy.platforms import simulator


def synthetic_mac(*parts: str) -> str:
    """A stable, locally administered MAC for a device (and port)."""
    return "02:%02x:%02x:%02x:%02x:%02x" % tuple(hashlib.sha256("/".join(parts).encode()).digest()[:5])


def unit_serial(name: str, unit: int) -> str:
    """The serial number of the ``unit``-th unit in switch ``name``'s place (0: the first one)."""
    return "G1" + hashlib.sha256((name if unit == 0 else f"{name}/unit-{unit}").encode()).hexdigest()[:10].upper()


def dotted_mac(mac: str) -> str:
    raw = mac.replace(":", "")
    return f"{raw[0:4]}.{raw[4:8]}.{raw[8:12]}"


WRITE_FAULTS = (None, "fail", "drop", "fail_once")
SUBLINES = ("reject", "global")


@dataclass
class DeviceFaults:
    refuse_login: bool = False
    banner_delay: float = 0.0
    no_banner: bool = False
    drop_after: int | None = None  # close the session after this many commands
    reject_lines: list[str] = field(default_factory=list)
    delay: float = 0.0  # seconds before every answer
    ask_password_change: bool = False
    # the save command: "fail" answers an error and saves nothing; "drop" saves, then the session drops before
    # the answer (the confirmation is lost): push cannot know what the startup config holds; "fail_once" fails the
    # switch's first save only (a transient flash error: push's second attempt saves)
    write_fault: str | None = None
    # the sub-lines of a rejected `interface X`: "reject" (each one rejected) or "global" (a lenient CLI, as IOS
    # may be: they are taken in global configuration mode, where the valid global commands among them land)
    sublines: str = "reject"

    def __post_init__(self) -> None:
        if self.sublines not in SUBLINES:
            raise TypeError(f"sublines: {self.sublines!r} is not one of {', '.join(SUBLINES)}")
        if self.write_fault not in WRITE_FAULTS:
            raise TypeError(f"write_fault: {self.write_fault!r} is not one of {', '.join(str(w) for w in WRITE_FAULTS[1:])}")


def site_baseline(plan: dict, text: str | None = None) -> str:
    """The site baseline for ``plan``: ``text`` (any configuration lines) or the platform's default file, with
    ``${mgmt_gateway}``, ``${mgmt_network}``, ``${mgmt_mask}`` and ``${mgmt_wildcard}`` filled in."""
    raw = simulator(plan["models"]["switch"]["platform"]).DEFAULT_BASELINE.read_text(encoding="utf-8") if text is None else text
    net = IPv4Network(plan["addressing"]["management_network"])
    return Template(raw).safe_substitute(mgmt_gateway=plan["settings"]["mgmt_gateway"], mgmt_network=str(net.network_address),
                                         mgmt_mask=str(net.netmask), mgmt_wildcard=str(net.hostmask))


class LabModel:
    def __init__(self, plan: dict, baseline: str | None = None, baseline_name: str = "baseline"):
        """``baseline``: the site baseline every switch starts from (None: the lab's default file; "": none);
        ``baseline_name``: where it came from, for the error that refuses it."""
        self.plan = plan
        self.sim = sim = simulator(plan["models"]["switch"]["platform"])  # the switch model's platform
        self.wiring = Wiring.from_plan(plan)
        model = plan["models"]["switch"]
        self.model_name = model["name"]
        self.abbrev = {name: v[0] for name, v in cage_of(plan).items()}
        ports_of: dict[str, list[str]] = {}  # role -> every port of a switch of that role (plan/roles.py)
        for role in sorted({sw["group"] for sw in plan["switches"]}):
            pm = port_map_for(plan, role)
            ports_of[role] = pm["host_ports"] + pm["fabric_ports"] + pm["unused_ports"]
            for name in pm["unused_ports"]:
                self.abbrev.setdefault(name, sim.short_name(name))
        self.mgmt_if = mgmt_if = model["mgmt_interface"]
        self.port_names = {sw["name"]: [mgmt_if] + ports_of[sw["group"]] for sw in plan["switches"]}  # a unit's ports, by its role
        self.gateway = plan["settings"].get("mgmt_gateway")
        mgmt_mask = dotted_mask(plan["settings"]["mgmt_prefix_len"])
        self.switches: dict = {}  # name -> the simulator's SwitchState
        site = site_baseline(plan, baseline)
        for sw in plan["switches"]:
            st = sim.SwitchState(model=self.model_name, interface_names=self.port_names[sw["name"]], abbreviations=self.abbrev,
                                 serial=unit_serial(sw["name"], 0))
            st.interfaces[mgmt_if] = sim.Interface(mgmt_if, physical=True, routed=True, address=(sw["mgmt_address"], mgmt_mask))
            if site:
                try:
                    sim.load_baseline(st, site)
                except ValueError as exc:
                    raise InputErrors(Problem(baseline_name, f"the simulated switch rejects {exc}", sim.BASELINE_HINT)) from None
            st.startup = st.running_config(header=False)
            self.switches[sw["name"]] = st
        self.mgmt = {sw["name"]: sw["mgmt_address"] for sw in plan["switches"]}
        self.server_model = plan["models"]["server"]
        self.nic_mac: dict[tuple[str, str], str] = {}  # inventory MACs; others are synthesised on demand
        for srv in plan["servers"]:
            for nic in srv.get("nics", ()):
                if nic.get("mac"):
                    self.nic_mac[(srv["name"], nic["port"])] = nic["mac"]
        self.faults: dict[str, DeviceFaults] = {name: DeviceFaults() for name in self.switches}
        self.state_of = {id(st): name for name, st in self.switches.items()}
        self._bgp_key = None
        self._bgp_model = None  # the simulator's bgp.Model
        self._bgp_parsed: dict[str, tuple] = {}  # name -> (generation, the simulator's parsed config)
        # the hardware in each switch's place: units replaced so far (`zcube lab replace`), the chassis MAC it
        # announces in LLDP, and the replaced units that still refuse SSH until their console bootstrap is in
        self.units: dict[str, int] = {name: 0 for name in self.switches}
        self.chassis: dict[str, str] = {name: dotted_mac(synthetic_mac(name)) for name in self.switches}
        self.fresh: set[str] = set()

    # ---- physical layer
    def name_of(self, st) -> str:
        return self.state_of[id(st)]

    def _end_up(self, device: str, port: str) -> bool:
        if (device, port) in self.wiring.forced_down:
            return False
        st = self.switches.get(device)
        if st is not None:
            itf = st.interfaces.get(port)
            return itf is not None and not itf.shutdown
        return device in self.wiring.servers or device.startswith("lab-")

    def link_up(self, st, port: str) -> bool:
        me = self.name_of(st)
        if (me, port) in self.wiring.forced_down:
            return False
        return any(self._end_up(*peer) for peer in self.wiring.far_ends((me, port)))

    def neighbors(self, st) -> list:
        me = self.name_of(st)
        out: list = []
        for port, itf in st.interfaces.items():
            if not itf.physical or itf.shutdown or (me, port) in self.wiring.forced_down:
                continue
            for cable, (dev, pport) in self.wiring.peers((me, port)):
                if not self._end_up(dev, pport):
                    continue
                n = self._neighbor(port, cable.id, dev, pport)
                if n is not None:
                    out.append(n)
        return out

    def _neighbor(self, port: str, cable_id: str, dev: str, pport: str) -> object | None:
        short = self.abbrev.get(port)
        if short is None:
            short = self.sim.short_name(port)
        peer = self.switches.get(dev)
        if peer is not None:
            return self.sim.lldp.Neighbor(
                local_port=port, local_short=short, system_name=peer.hostname, port_id=pport, port_id_type="Interface name",
                port_description=(peer.interfaces[pport].description or pport) if pport in peer.interfaces else pport,
                chassis_id=self.chassis[dev], chassis_id_type="MAC address",
                system_description=self.sim.system_description(peer.model),
                capabilities="Repeater, Bridge, Router", capability_codes="P, B, R", management_address=self._mgmt_of(peer))
        if dev in self.wiring.lldp_off:
            return None
        name = self.wiring.announced_name.get(cable_id, dev)
        mac = self.nic_mac.get((dev, pport)) or synthetic_mac(dev, pport)
        by_mac = self.server_model.get("lldp_port_id") == "mac"
        return self.sim.lldp.Neighbor(
            local_port=port, local_short=short, system_name=name, port_id=mac if by_mac else pport,
            port_id_type="MAC address" if by_mac else "Interface name", port_description=pport,
            chassis_id=dotted_mac(synthetic_mac(dev)), chassis_id_type="MAC address",
            system_description="Ubuntu 22.04.4 LTS Linux 5.15.0-105-generic #115-Ubuntu SMP x86_64",
            capabilities="Bridge, Router, Station", capability_codes="B, R, S")

    def _mgmt_of(self, st) -> str:
        """The management address a switch announces: the one configured on its management interface."""
        itf = st.interfaces.get(self.mgmt_if)
        return itf.address[0] if itf is not None and itf.address else ""

    # ---- the hardware: a dead switch swapped for a factory-fresh unit (`zcube lab replace`)
    def replace_unit(self, name: str) -> dict:
        """Put a factory-fresh unit of the same model in ``name``'s place: the same cables in the same ports, a new
        serial and chassis MAC, an empty configuration (no hostname, management address or site lines, nothing
        saved), no device faults. It refuses SSH until its console bootstrap is in (:meth:`ssh_refusal`)."""
        old = self.switches[name]
        self.units[name] += 1
        st = self.sim.SwitchState(model=self.model_name, interface_names=self.port_names[name], abbreviations=self.abbrev,
                                  serial=unit_serial(name, self.units[name]))
        st.interfaces[self.mgmt_if] = self.sim.Interface(self.mgmt_if, physical=True, routed=True)
        st.startup = st.running_config(header=False)
        self.switches[name] = st
        del self.state_of[id(old)]
        self.state_of[id(st)] = name
        self.faults[name] = DeviceFaults()
        self.chassis[name] = dotted_mac(synthetic_mac(name, f"unit-{self.units[name]}"))
        self.fresh.add(name)
        self._bgp_parsed.pop(name, None)
        self._bgp_key = None
        return {"switch": name, "unit": self.units[name], "serial": st.serial, "chassis_id": self.chassis[name]}

    def rebreak(self, name: str, ports: list[str]) -> dict:
        """``name``'s cages broken out anew for another role (a migration stage, `zcube lab fix --stage`): its ports
        become ``ports`` (the new role's, in port order). A port it keeps keeps its configuration; one it loses goes
        with its configuration, as a split or joined cage's does; a new one starts as a factory port. The management
        and logical interfaces stay. Returns {"switch", "added", "removed"}."""
        st = self.switches[name]
        physical = [n for n, itf in st.interfaces.items() if itf.physical and n != self.mgmt_if]
        keep = set(ports)
        others = {n: itf for n, itf in st.interfaces.items() if n == self.mgmt_if or not itf.physical}
        added = [n for n in ports if n not in st.interfaces]
        removed = [n for n in physical if n not in keep]
        itfs = {self.mgmt_if: others.pop(self.mgmt_if)} if self.mgmt_if in others else {}
        for n in ports:
            itfs[n] = st.interfaces.get(n) or self.sim.Interface(n)
            self.abbrev.setdefault(n, self.sim.short_name(n))
        itfs.update(others)
        st.interfaces = itfs
        st.interface_names = list(ports)
        st.generation += 1
        self.port_names[name] = [self.mgmt_if] + list(ports)
        self._bgp_key = None
        return {"switch": name, "added": len(added), "removed": len(removed)}

    def ssh_refusal(self, name: str) -> str | None:
        """Why ``name`` refuses an SSH connection (a replaced unit whose console bootstrap is not in), else None."""
        if name not in self.fresh:
            return None
        return self.sim.ssh_refusal(self.switches[name], self.mgmt_if, self.mgmt[name], self.gateway)

    def console(self, name: str, lines: list[str], knows_secret: bool = False) -> list[tuple[int, str, str]]:
        """Paste ``lines`` at ``name``'s serial console; (line number, line, error) of each line it rejected.

        ``enable`` asks the lab's enable secret only once the unit's configuration has an enable password, unless
        ``knows_secret``: the site's technician types it at the prompt (a switch in service, re-roled by a migration
        stage; the secret is in no file)."""
        st = self.switches[name]
        if knows_secret:
            return self.sim.console_paste(st, lines, None)
        has_secret = any(t.startswith(("enable secret", "enable password")) for region in st.verbatim.values() for t in region)
        return self.sim.console_paste(st, lines, self.enable_secret if has_secret else None)

    def lldp_text(self, st, detail: bool) -> str:
        ns = self.neighbors(st)
        lldp = self.sim.lldp
        return lldp.detail(ns) if detail else lldp.brief(ns)

    def lldp_output(self, st, detail: bool):
        """What the CLI sends: the brief table as text, the detail as a stream of chunks."""
        lldp = self.sim.lldp
        if not detail:
            return lldp.brief(self.neighbors(st))
        return lldp.detail_chunks(self.neighbors(st))

    def new_session(self, name: str):
        f = self.faults[name]
        return self.sim.Session(self.switches[name], enable_secret=self.enable_secret, lldp=self.lldp_output, link_up=self.link_up,
                       ask_password_change=f.ask_password_change, reject=f.reject_lines, routing=self.routing,
                       write_fault=f.write_fault, sublines=f.sublines)

    # ---- routing protocols (the simulator's bgp), recomputed only when a config or the wiring changed
    def bgp_model(self):
        bgp = self.sim.bgp
        w = self.wiring
        key = (tuple(st.generation for st in self.switches.values()), len(w.cables), w.generation, frozenset(w.forced_down))
        if key != self._bgp_key:
            configs = {}
            for name, st in self.switches.items():
                cached = self._bgp_parsed.get(name)
                if cached is None or cached[0] != st.generation:
                    cached = (st.generation, bgp.parse_config(st.running_config(header=False)))
                    self._bgp_parsed[name] = cached
                configs[name] = cached[1]
            self._bgp_model = bgp.compute(configs, w)
            self._bgp_key = key
        return self._bgp_model

    def routing(self, st) -> tuple:
        """(the protocol model, the switch's name) for ``st``'s routing outputs: the whole lab's model, or the switch's
        own when it runs no BGP (its answers then depend on no other switch: the simulator's ``speaks_bgp``)."""
        name = self.name_of(st)
        if not self.sim.bgp.speaks_bgp(st):
            return self.sim.bgp.alone(name), name
        return self.bgp_model(), name

    enable_secret = ""
