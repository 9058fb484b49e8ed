"""The two plans of a migration as the planner sees them: switches, host and fabric cables, serving units.

A migration reads two plans (docs/migrate.md): FROM, the fabric as built (a ROFT: rail leaves and
spines), and TO, the fabric to build (ZCube: odd and even switches). Both hold the same servers in
the same racks; what changes is which switch port each NIC port is cabled to, which switches exist
and how they are joined. This module reduces each plan to what the migration planner needs:

- a :class:`Side` per plan: its switches (role, plane, rack, U), each NIC port's cable (switch,
  port, length, medium) and the switch-to-switch cables;
- the serving :class:`Unit` list: whole servers, or instances of N GPUs (N dividing the GPUs of a
  server: GPUs k*N..k*N+N-1 of one server; or N a multiple of it: N/G consecutive servers);
- every problem of the pair collected at once (servers that differ, a unit size that does not fit).

Pure: no I/O. The roles are read from ``switches[].group`` (contract: odd/even for ZCube,
leaf/spine for ROFT), never from the plan's design alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zcube_deploy.errors import InputErrors, Problem


@dataclass(frozen=True)
class SwitchInfo:
    name: str
    role: str
    plane: int
    rack: str
    u: int
    index: int


def part_family(part: str, length_m: float) -> str:
    """A cable part with its length blanked ("ZC-DAC-200G-{length}M"): the catalog names every part from one template
    per medium (``part``: speed, length, kind), so two cables of the same family differ in length only and the longer
    serves where the shorter is planned; a family also carries what the template names beside the length (a DAC's
    speed: a 400G cable never serves a 200G port). "" for a cable without a part (then the medium alone decides)."""
    text = f"{length_m:g}"
    i = part.rfind(text)
    return part if i < 0 else part[:i] + "{length}" + part[i + len(text):]


@dataclass(frozen=True)
class HostEnd:
    """The switch end of one NIC port's cable."""

    switch: str
    port: str
    cable: str
    length_m: float
    medium: str
    family: str = ""  # part_family of its part

    @property
    def fit(self) -> str:
        """What a cable serving this one must be (with a length at least as long): same medium and part family."""
        return f"{self.medium} {self.family}"


@dataclass(frozen=True)
class FabricCable:
    id: str
    a: tuple[str, str]
    b: tuple[str, str]
    length_m: float
    medium: str
    plane: int
    family: str = ""  # part_family of its part

    @property
    def fit(self) -> str:
        """As HostEnd.fit."""
        return f"{self.medium} {self.family}"


@dataclass
class Side:
    """One plan reduced to what the migration needs."""

    label: str
    switches: dict[str, SwitchInfo]
    host: dict[tuple[str, str], HostEnd]  # (server, NIC port) -> its cable's switch end
    fabric: list[FabricCable]
    edges: frozenset[str] = field(default_factory=frozenset)  # switches with host cables
    design: str = "zcube"
    parts: dict[str, tuple[str, float, str]] = field(default_factory=dict)  # cable id -> (part, length, medium)

    @property
    def cores(self) -> list[str]:
        """Switches without host cables (ROFT spines), in plan order."""
        return [s for s in self.switches if s not in self.edges]


@dataclass(frozen=True)
class Unit:
    """One serving unit: the GPUs that leave and rejoin service together."""

    id: int
    label: str
    servers: tuple[str, ...]
    gpus: tuple[int, ...]  # GPU positions in each of its servers
    ports: tuple[tuple[str, str], ...]  # (server, NIC port) of every NIC port of its GPUs, in plan order


def read_side(plan: dict, label: str) -> Side:
    """The switches and cables of ``plan`` (FROM or TO)."""
    switches = {s["name"]: SwitchInfo(s["name"], s["group"], s["plane"], s["rack"], s["u"], s["index"]) for s in plan["switches"]}
    cables = {c["id"]: c for c in plan["cables"]}
    host: dict[tuple[str, str], HostEnd] = {}
    for srv in plan["servers"]:
        for nic in srv["nics"]:
            c = cables.get(nic["cable"], {})
            length = float(c.get("length_m", 0.0))
            host[(srv["name"], nic["port"])] = HostEnd(nic["switch"], nic["switch_port"], nic["cable"], length, c.get("medium", ""),
                                                      part_family(c.get("part", ""), length))
    fabric = [FabricCable(c["id"], (c["a"]["device"], c["a"]["port"]), (c["b"]["device"], c["b"]["port"]),
                          float(c["length_m"]), c["medium"], c["plane"], part_family(c.get("part", ""), float(c["length_m"])))
              for c in plan["cables"] if c["kind"] == "fabric"]
    edges = frozenset(h.switch for h in host.values())
    parts = {c["id"]: (c.get("part", ""), float(c.get("length_m", 0.0)), c.get("medium", "")) for c in plan["cables"]}
    return Side(label, switches, host, fabric, edges, plan.get("design", "zcube"), parts)


def parse_unit(text: str, gpus_per_server: int) -> tuple[int | None, Problem | None]:
    """``server`` -> (None, None); ``N-gpu`` -> (N, None); anything else a problem."""
    if text == "server":
        return None, None
    head, sep, tail = text.partition("-")
    if sep and tail == "gpu" and head.isdigit() and int(head) > 0:
        n = int(head)
        if gpus_per_server % n == 0 or n % gpus_per_server == 0:
            return (None if n == gpus_per_server else n), None
        return None, Problem("--unit", f"{n} GPUs neither divides nor is a multiple of the {gpus_per_server} GPUs of a server",
                             f"use server, or N-gpu with N in {', '.join(str(d) for d in _divisors(gpus_per_server))} or a multiple of {gpus_per_server}")
    return None, Problem("--unit", f"{text!r} is not a unit", "use server or N-gpu (e.g. 4-gpu)")


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def gpus_per_server(plan: dict) -> int:
    return max((nic["gpu"] for srv in plan["servers"] for nic in srv["nics"]), default=-1) + 1


def build_units(plan_from: dict, plan_to: dict, unit_gpus: int | None) -> list[Unit]:
    """The serving units, in server order (servers by their index in TO); a unit's ports are its GPUs' NIC ports
    in either plan (a port cabled in one plan only is still the unit's)."""
    G = gpus_per_server(plan_to)
    servers = sorted(plan_to["servers"], key=lambda s: s["index"])
    gpu_of: dict[str, dict[str, int]] = {}
    for plan in (plan_to, plan_from):
        for srv in plan["servers"]:
            ports = gpu_of.setdefault(srv["name"], {})
            for n in srv["nics"]:
                ports.setdefault(n["port"], n["gpu"])

    def ports_of(names: tuple[str, ...], gpus: tuple[int, ...]) -> tuple[tuple[str, str], ...]:
        return tuple((name, port) for name in names for port, gpu in gpu_of.get(name, {}).items() if gpu in gpus)

    units: list[Unit] = []
    if unit_gpus is None or unit_gpus >= G:
        per = 1 if unit_gpus is None else unit_gpus // G
        for k in range(0, len(servers), per):
            names = tuple(s["name"] for s in servers[k:k + per])
            label = names[0] if per == 1 else f"{names[0]}..{names[-1]}"
            units.append(Unit(len(units), label, names, tuple(range(G)), ports_of(names, tuple(range(G)))))
        return units
    for srv in servers:
        for k in range(G // unit_gpus):
            gpus = tuple(range(k * unit_gpus, (k + 1) * unit_gpus))
            units.append(Unit(len(units), f"{srv['name']}/gpu{gpus[0]}-{gpus[-1]}", (srv["name"],), gpus, ports_of((srv["name"],), gpus)))
    return units


def pair_problems(plan_from: dict, plan_to: dict, from_path: str, to_path: str) -> list[Problem]:
    """Everything that makes the two plans unfit to migrate between, all at once."""
    problems: list[Problem] = []
    if any(s["group"] not in ("leaf", "spine", "odd", "even") for s in plan_from["switches"]):
        problems.append(Problem(from_path, "has switches of a role the migration does not know"))
    if any(s["group"] not in ("odd", "even") for s in plan_to["switches"]):
        problems.append(Problem(to_path, "is not a ZCube plan: TO must hold odd and even switches only",
                                "TO is the plan to build (zcube plan INVENTORY)"))
    f_srv = {s["name"]: s for s in plan_from["servers"]}
    t_srv = {s["name"]: s for s in plan_to["servers"]}
    only_from, only_to = sorted(f_srv.keys() - t_srv.keys()), sorted(t_srv.keys() - f_srv.keys())
    if only_from:
        problems.append(Problem(f"{from_path}: servers", f"{len(only_from)} server(s) not in TO: {', '.join(only_from[:5])}",
                                "both plans must hold the same servers (the migration moves cables, not servers)"))
    if only_to:
        problems.append(Problem(f"{to_path}: servers", f"{len(only_to)} server(s) not in FROM: {', '.join(only_to[:5])}",
                                "both plans must hold the same servers (the migration moves cables, not servers)"))
    moved = sorted(n for n in f_srv.keys() & t_srv.keys() if (f_srv[n]["rack"], f_srv[n]["u"]) != (t_srv[n]["rack"], t_srv[n]["u"]))
    if moved:
        problems.append(Problem(f"{to_path}: servers", f"{len(moved)} server(s) sit elsewhere than in FROM: {', '.join(moved[:5])}",
                                "the servers stay where they are: give TO the racks and U of FROM"))
    clash = sorted({s["name"] for s in plan_from["switches"]} & {s["name"] for s in plan_to["switches"]})
    if clash and all(s["group"] in ("odd", "even") for s in plan_from["switches"]):
        problems.append(Problem(f"{to_path}: switches", f"switch name(s) also in FROM: {', '.join(clash[:5])}: FROM is a ZCube "
                                "with TO's switches, the same fabric, not one to migrate from",
                                "to grow a ZCube use zcube expand; to compare two plans, zcube diff; zcube migrate moves a "
                                "running ROFT to a new ZCube"))
    elif clash:
        problems.append(Problem(f"{to_path}: switches", f"switch name(s) also in FROM: {', '.join(clash[:5])}",
                                "a stage plan holds switches of both plans: name them apart (switch_naming)"))
    mg = sorted({s["mgmt_address"] for s in plan_from["switches"]} & {s["mgmt_address"] for s in plan_to["switches"]})
    if mg:
        problems.append(Problem(f"{to_path}: switches", f"management address(es) also used in FROM: {', '.join(mg[:5])}",
                                "a stage plan holds switches of both plans: give them management addresses apart"))
    if plan_from["models"]["switch"]["name"] != plan_to["models"]["switch"]["name"]:
        problems.append(Problem(f"{to_path}: cluster.switch_model",
                                f"{plan_to['models']['switch']['name']} is not FROM's {plan_from['models']['switch']['name']}",
                                "a switch can take a new role only as the same model"))
    return problems


def require_pair(plan_from: dict, plan_to: dict, from_path: str, to_path: str) -> None:
    problems = pair_problems(plan_from, plan_to, from_path, to_path)
    if problems:
        raise InputErrors(problems, "these plans cannot be migrated between")


__all__ = ["FabricCable", "HostEnd", "Side", "SwitchInfo", "Unit", "build_units", "gpus_per_server", "pair_problems", "part_family",
           "parse_unit", "read_side", "require_pair"]
