"""What draining an element takes out of service (pure): the blast radius, from the plan and `zcube analyze`.

On ZCube a switch is mostly the attachment point of K GPU ports; each of those GPUs keeps its other
NIC port on a switch of the other group. Draining a switch therefore moves those GPUs' traffic to
their other port (the hosts' fallbacks, triggered by carrier loss) and, in mode bgp, steers transit
away from it. The radius says which GPU ports go down, which fabric links, which routes are
withdrawn, and `zcube analyze`'s prediction for the element removed (GPU pairs left without a
routed path; 0 is the design's promise for any single switch or link).
"""

from __future__ import annotations

from dataclasses import dataclass

from zcube_deploy.analysis.report import single_failure_elements
from zcube_deploy.errors import InputErrors, Problem, names_hint


@dataclass(frozen=True)
class Element:
    kind: str  # "switch" or "link"
    name: str  # a switch name or a cable ID

    @property
    def key(self) -> str:
        """The element as written on the command line and in the record's file name."""
        return f"{self.kind}:{self.name}"


def parse_element(text: str, plan: dict) -> Element:
    """``switch:NAME`` or ``link:CABLE``, checked against the plan."""
    kind, _, name = text.partition(":")
    if kind == "switch" and any(s["name"] == name for s in plan["switches"]):
        return Element(kind, name)
    if kind == "link" and any(c["id"] == name for c in plan["cables"]):
        return Element(kind, name)
    if kind in ("switch", "link"):
        what = "switch" if kind == "switch" else "cable"
        names = [s["name"] for s in plan["switches"]] if kind == "switch" else [c["id"] for c in plan["cables"]]
        raise InputErrors(Problem("ELEMENT", f"no {what} {name!r} in the plan", names_hint(name, names, what)))
    meant = ("switch" if any(s["name"] == text for s in plan["switches"]) else
             "link" if any(c["id"] == text for c in plan["cables"]) else None)  # a bare name of the plan: say which it is
    raise InputErrors(Problem("ELEMENT", f"{text!r} is not switch:NAME or link:CABLE", f"did you mean {meant}:{text}?" if meant else None))


@dataclass(frozen=True)
class Blast:
    """What draining ``element`` takes out of service."""
    element: Element
    ports: dict[str, tuple[str, ...]]  # switch -> its ports that go down (host ports first, then fabric ports)
    host_ports: tuple[str, ...]  # "server:nic-port" GPU ports that move to their other port
    fabric_links: tuple[str, ...]  # cable IDs of the fabric links that go down
    routes_withdrawn: tuple[dict, ...]  # what the analysis says is withdrawn (mode static's routes via it)
    gpu_pairs_without_routed_path: int  # the analysis' prediction with the element removed
    gpu_pairs_disconnected: int
    mode: str

    def as_dict(self) -> dict:
        return {"element": self.element.key, "mode": self.mode, "ports": {k: list(v) for k, v in self.ports.items()},
                "ports_down": sum(len(v) for v in self.ports.values()),
                "host_ports": list(self.host_ports), "fabric_links": list(self.fabric_links),
                "routes_withdrawn": list(self.routes_withdrawn),
                "gpu_pairs_without_routed_path": self.gpu_pairs_without_routed_path,
                "gpu_pairs_disconnected": self.gpu_pairs_disconnected}


def _cable_ports(cable: dict, switches: set[str]) -> list[tuple[str, str]]:
    return [(e["device"], e["port"]) for e in (cable["a"], cable["b"]) if e["device"] in switches]


def blast_radius(plan: dict, element: Element) -> Blast:
    """The blast radius of draining ``element`` (see the module doc)."""
    switches = {s["name"] for s in plan["switches"]}
    mode = (plan.get("routing") or {}).get("mode", "static")
    if element.kind == "switch":
        sw = next(s for s in plan["switches"] if s["name"] == element.name)
        host = [i for i in sw["interfaces"] if i["kind"] == "host"]
        fabric = [i for i in sw["interfaces"] if i["kind"] != "host"]
        ports = {element.name: tuple(i["name"] for i in host) + tuple(i["name"] for i in fabric)}
        host_ports = tuple(f"{i['peer']['device']}:{i['peer']['port']}" for i in host)
        fabric_links = tuple(i["cable"] for i in fabric)
    else:
        cable = next(c for c in plan["cables"] if c["id"] == element.name)
        ends = _cable_ports(cable, switches)
        ports = {}
        for dev, port in ends:
            ports.setdefault(dev, ())
            ports[dev] += (port,)
        servers = [e for e in (cable["a"], cable["b"]) if e["device"] not in switches]
        host_ports = tuple(f"{e['device']}:{e['port']}" for e in servers)
        fabric_links = () if servers else (element.name,)
    row = _analysis_row(plan, element, fabric_links)
    return Blast(element, ports, host_ports, fabric_links, tuple(row.get("routes_withdrawn", ())),
                 int(row.get("gpu_pairs_without_routed_path", 0)), int(row.get("gpu_pairs_disconnected", 0)), mode)


def _analysis_row(plan: dict, element: Element, fabric_links: tuple[str, ...]) -> dict:
    """`zcube analyze`'s single-failure row of the element (a host link: no row; its GPU keeps its other port)."""
    if element.kind == "link" and not fabric_links:
        return {}
    rows = single_failure_elements(plan)
    want = ("switch", element.name) if element.kind == "switch" else ("fabric_link", element.name)
    for r in rows:
        if (r["kind"], r["element"]) == want:
            return r
    raise InputErrors(Problem("ELEMENT", f"{element.key}: the analysis has no row for it"))
