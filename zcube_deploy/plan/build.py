"""build_plan: an ordered list of named, pure stages from a resolved inventory to the plan.

Table of contents (each stage reads what the previous ones produced):

    sizing      S, K, m from capacity, radix and oversubscription (zcube.md section 3)
    switches    the 2S switches of every plane, their names and human numbers
    placement   rack and U of every switch
    ports       logical port -> cage/lane -> interface name, host cages apart from fabric cages
    wiring      which port goes to which port: every host cable (NIC port -> switch port) and
                fabric cable (odd <-> even), and the switch interfaces and NIC ports they make
    media       each cable's ends (rack, U), estimated length, medium and part (cabling catalog)
    addressing  host /31s, fabric /31s, loopbacks, management (zcube.md section 5)
    routing     the routing section (its mode), switch static routes, host routes (zcube.md section 6)
    checks      the invariants of zcube.md section 4, evaluated; any failed one stops the build

Every stage is a function (inventory, what earlier stages returned) -> a dict of the sections it
produces. A stage never changes what it was given: a stage that adds to earlier rows (media to the
cables, addressing and routing to the switches and NIC ports) returns new rows, and a later key
replaces the earlier one in the accumulator (tests/test_plan.py checks this over several shapes).
``assemble_plan`` joins the sections into plan.json (its shape: plan/model.py).

No I/O, no clock, no randomness (the sampled checks use a fixed seed).
"""

from __future__ import annotations

from typing import Callable

from zcube_deploy.errors import InputErrors, PlanError, Problem
from zcube_deploy.inventory import ResolvedInventory
from zcube_deploy.plan import addressing as addr
from zcube_deploy.plan import checks, media, routing
from zcube_deploy.perf import bulk_allocation
from zcube_deploy.plan.model import SCHEMA_VERSION
from zcube_deploy.plan.placement import place_switches
from zcube_deploy.safety import check_interface, check_name
from zcube_deploy.topology.sizing import size_fabric
from zcube_deploy.version import __version__

Stage = Callable[[ResolvedInventory, dict], dict]


def stage_sizing(inv: ResolvedInventory, acc: dict) -> dict:
    topo = inv.spec.topology
    speed = topo.nic_port_speed
    mode = inv.switch_model.speeds[speed]
    try:
        sizing = size_fabric(
            n_gpus=inv.capacity_servers * inv.server_model.gpus,
            gpus_per_server=inv.server_model.gpus,
            logical_ports=inv.switch_model.logical_ports(speed),
            lanes_per_cage=mode.lanes,
            cages=inv.switch_model.cages,
            oversubscription=topo.oversubscription,
        )
    except PlanError as e:  # the sizing knows numbers, not files: name the inventory they came from
        raise type(e)(e.problems, f"{e.title} of {inv.source}" if inv.source else e.title) from None
    return {"sizing": sizing}


def switch_name(inv: ResolvedInventory, group: str, index: int, plane: int) -> str:
    number = 2 * index + (1 if group == "odd" else 2)
    return inv.spec.switch_naming.format(
        cluster=inv.spec.cluster, G="O" if group == "odd" else "E", group=group, number=number, index=index, plane=plane
    )


def stage_switches(inv: ResolvedInventory, acc: dict) -> dict:
    S = acc["sizing"].S
    switches: list[dict] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    server_names = {s.name for s in inv.servers}
    for plane in range(inv.planes):
        for index in range(S):
            for group in ("odd", "even"):
                name = switch_name(inv, group, index, plane)
                bad = check_name(name)
                if bad:
                    problems.append(Problem("switch_naming", f"gives {name!r}, which {bad}"))
                elif name in seen or name in server_names:
                    problems.append(Problem("switch_naming", f"gives the name {name!r} twice (or a server's name)",
                                            "include {number} (and {plane} for several planes)"))
                seen.add(name)
                switches.append({
                    "name": name, "group": group, "index": index, "plane": plane,
                    "number": 2 * index + (1 if group == "odd" else 2), "model": inv.spec.switch_model,
                })
        if problems:
            raise InputErrors(problems[:5], "invalid switch naming")
    return {"switches": switches}


def stage_placement(inv: ResolvedInventory, acc: dict) -> dict:
    sizing = acc["sizing"]
    switches = [dict(s) for s in acc["switches"]]
    place_switches(inv, switches, sizing.K // inv.server_model.gpus)
    return {"switches": switches}


def stage_ports(inv: ResolvedInventory, acc: dict) -> dict:
    sz = acc["sizing"]
    speed = inv.spec.topology.nic_port_speed
    lanes = sz.lanes_per_cage
    model = inv.switch_model

    def name(logical: int) -> str:
        return model.port_name(speed, logical // lanes + 1, logical % lanes + 1)

    abbrev = model.speeds[speed].abbreviation

    def short(logical: int) -> str:
        cage, lane = logical // lanes + 1, logical % lanes + 1
        return abbrev.format(cage=cage, lane=lane, port=logical + 1) if abbrev else name(logical)

    host_first = 0
    fabric_first = sz.host_cages * lanes  # fabric starts on a fresh cage: no cage mixes host and fabric
    host = [name(host_first + q) for q in range(sz.K)]
    fabric = [name(fabric_first + p) for p in range(sz.fabric_ports)]
    used = set(range(sz.K)) | set(range(fabric_first, fabric_first + sz.fabric_ports))
    used_cages = sz.host_cages + sz.fabric_cages
    native = next((sp for sp, mode in model.speeds.items() if mode.lanes == 1), None)
    # unused lanes of split cages keep their split names; whole unused cages keep the native name
    unused = [name(i) for i in range(used_cages * lanes) if i not in used]
    if native is not None:
        unused += [model.port_name(native, cage, 1) for cage in range(used_cages + 1, model.cages + 1)]
    else:
        unused += [name(i) for i in range(used_cages * lanes, sz.logical_ports)]
    problems = [Problem("catalog.switch_models", f"{n!r}: {bad}") for n in host[:1] + fabric[:1] if (bad := check_interface(n))]
    if len(set(host) | set(fabric) | set(unused)) != len(host) + len(fabric) + len(unused):
        problems.append(Problem(f"catalog.switch_models.{inv.spec.switch_model}.speeds.{speed}.name",
                                "the interface-name pattern gives the same name to two ports", "use {cage} and {lane}"))
    if problems:
        raise InputErrors(problems, "invalid switch model")
    port_map = {
        "speed": speed,
        "lanes_per_cage": lanes,
        "cages": model.cages,
        "host_cages": [1, sz.host_cages],
        "fabric_cages": [sz.host_cages + 1, sz.host_cages + sz.fabric_cages],
        "unused_cages": [sz.host_cages + sz.fabric_cages + 1, model.cages] if sz.host_cages + sz.fabric_cages < model.cages else None,
        "names_confirmed": model.speeds[speed].confirmed,
        "breakout_command": model.breakout_command,
        "host_ports": host,
        "fabric_ports": fabric,
        "unused_ports": unused,
        "native_speed": native,
        # every used logical port: [name, short name, cage, lane]
        "cage_of": {name(i): [short(i), i // lanes + 1, i % lanes + 1] for i in sorted(used)},
    }
    return {"port_map": port_map, "host_port_names": host, "fabric_port_names": fabric, "unused_port_names": unused}


def cable_id_width(inv: ResolvedInventory) -> int:
    total = inv.capacity_servers * inv.server_model.gpus * inv.nic_model.ports
    return max(6, len(str(total)))


def stage_wiring(inv: ResolvedInventory, acc: dict) -> dict:
    """Which port goes to which port. Host cables in GPU order (IDs stable under growth: H + GPU-port
    number), then fabric cables; the switch interfaces (``interfaces``: switch name -> rows) and the
    NIC ports (``nics``: server name -> rows) the cables make."""
    sz = acc["sizing"]
    S, K, m, G = sz.S, sz.K, sz.m, sz.gpus_per_server
    P = inv.nic_model.ports
    host_names, fabric_names = acc["host_port_names"], acc["fabric_port_names"]
    width = cable_id_width(inv)
    fwidth = max(5, len(str(inv.planes * S * S * m)))
    smodel = inv.server_model
    nic_names = [[smodel.nic_port_name(l, p) for p in range(1, P + 1)] for l in range(G)]
    bad = [n for row in nic_names for n in row if check_interface(n)]
    if bad:
        raise InputErrors(Problem(f"catalog.server_models.{inv.spec.server_model}.nic_interface", f"gives unsafe name {bad[0]!r}"))
    if len({n for row in nic_names for n in row}) != G * P:
        raise InputErrors(Problem(f"catalog.server_models.{inv.spec.server_model}.nic_interface", "gives two NIC ports the same name",
                                  "use {gpu}/{slot} and {port}"))
    switches = acc["switches"]
    by_key = {(s["plane"], s["group"], s["index"]): s for s in switches}
    interfaces: dict[str, list[dict]] = {s["name"]: [] for s in switches}
    cables: list[dict] = []
    nics: dict[str, list[dict]] = {}
    for si, server in enumerate(inv.servers):
        entries = nics.setdefault(server.name, [])
        for l in range(G):
            g = si * G + l
            for plane in range(inv.planes):
                for group, p in (("odd", 2 * plane + 1), ("even", 2 * plane + 2)):
                    if group == "odd":
                        idx, port = g % S, g // S
                    else:
                        idx, port = g // K, g % K
                    sw = by_key[(plane, group, idx)]
                    nic = nic_names[l][p - 1]
                    cid = f"H{g * P + p:0{width}d}"
                    cables.append({"id": cid, "kind": "host", "plane": plane, "group": group, "gpu": g,
                                   "a": {"device": server.name, "port": nic},
                                   "b": {"device": sw["name"], "port": host_names[port]}})
                    interfaces[sw["name"]].append({"name": host_names[port], "kind": "host", "port_index": port, "cable": cid,
                                             "peer": {"device": server.name, "port": nic, "gpu": g}})
                    entry = {"port": nic, "gpu": l, "nic_port": p, "plane": plane, "group": group,
                             "switch": sw["name"], "switch_port": host_names[port], "host_port_index": port, "cable": cid}
                    if nic in server.macs:
                        entry["mac"] = server.macs[nic]
                    entries.append(entry)
    for plane in range(inv.planes):
        for r in range(S):
            odd = by_key[(plane, "odd", r)]
            for j in range(S):
                even = by_key[(plane, "even", j)]
                for x in range(m):
                    link = (r * S + j) * m + x
                    cid = f"F{plane * S * S * m + link + 1:0{fwidth}d}"
                    op, ep = fabric_names[j * m + x], fabric_names[r * m + x]
                    cables.append({"id": cid, "kind": "fabric", "plane": plane, "link": link,
                                   "a": {"device": odd["name"], "port": op}, "b": {"device": even["name"], "port": ep}})
                    interfaces[odd["name"]].append({"name": op, "kind": "fabric", "link": link, "cable": cid,
                                              "peer": {"device": even["name"], "port": ep}})
                    interfaces[even["name"]].append({"name": ep, "kind": "fabric", "link": link, "cable": cid,
                                               "peer": {"device": odd["name"], "port": op}})
    for rows in interfaces.values():
        rows.sort(key=lambda i: (0, i["port_index"]) if i["kind"] == "host" else (1, i["peer"]["device"], i["link"]))
    return {"cables": cables, "nics": nics, "interfaces": interfaces}


def stage_media(inv: ResolvedInventory, acc: dict) -> dict:
    return media.cables_with_media(inv, acc)


def stage_addressing(inv: ResolvedInventory, acc: dict) -> dict:
    return addr.address_fabric(inv, acc)


def stage_routing(inv: ResolvedInventory, acc: dict) -> dict:
    return routing.route_fabric(inv, acc)


def stage_checks(inv: ResolvedInventory, acc: dict) -> dict:
    results = checks.evaluate_invariants(inv, acc)
    checks.require_invariants(results)
    return {"checks": results}


STAGES: list[tuple[str, Stage]] = [
    ("sizing", stage_sizing),
    ("switches", stage_switches),
    ("placement", stage_placement),
    ("ports", stage_ports),
    ("wiring", stage_wiring),
    ("media", stage_media),
    ("addressing", stage_addressing),
    ("routing", stage_routing),
    ("checks", stage_checks),
]


def run_stages(inv: ResolvedInventory, until: str | None = None, stages: list[tuple[str, Stage]] | None = None) -> dict:
    """The stages' sections, up to and including ``until`` (all of them by default); ``stages``: another design's
    (designs/roft), else ZCube's STAGES."""
    acc: dict = {}
    for name, fn in STAGES if stages is None else stages:
        acc.update(fn(inv, acc))
        if name == until:
            break
    return acc


def build_plan(inv: ResolvedInventory) -> dict:
    """The plan as a JSON-ready dict (see plan/io.py for the canonical writer)."""
    with bulk_allocation():
        return assemble_plan(inv, run_stages(inv))


def assemble_plan(inv: ResolvedInventory, acc: dict) -> dict:
    """plan.json from the stages' sections (its shape and field list: plan/model.py)."""
    sz = acc["sizing"]
    sizing = sz if isinstance(sz, dict) else sz.as_dict()  # a design's own sizing section, or ZCube's Sizing
    spec = inv.spec
    servers = []
    for si, s in enumerate(inv.servers):
        entry = {"name": s.name, "index": si, "rack": s.rack, "u": s.u, "model": spec.server_model, "nics": acc["nics"][s.name]}
        if s.serial:
            entry["serial"] = s.serial
        servers.append(entry)
    counts = {
        "host_cables": sum(1 for c in acc["cables"] if c["kind"] == "host"),
        "fabric_cables": sum(1 for c in acc["cables"] if c["kind"] == "fabric"),
    }
    counts.update(
        cables=counts["host_cables"] + counts["fabric_cables"],
        switches=len(acc["switches"]),
        servers=len(inv.servers),
        gpus=len(inv.servers) * sizing["gpus_per_server"],
        # a config count (the static route lines the switch configs carry), not forwarding state: stays here
        static_routes=sum(len(s["routes"]) for s in acc["switches"]),
        bgp_sessions=counts["fabric_cables"] if acc["routing"]["mode"] == "bgp" else 0,
    )
    return {
        "schema_version": SCHEMA_VERSION,
        "design": "zcube",
        "tool_version": __version__,
        "inputs": {"inventory": inv.source, "inventory_sha256": inv.sha256, "catalog_sha256": inv.catalog.sha256,
                   "cabling_catalog": inv.cabling_source, "cabling_catalog_sha256": inv.cabling.sha256},
        "cluster": {"name": spec.cluster, "description": spec.description, "platform": spec.platform,
                    "switch_model": spec.switch_model, "server_model": spec.server_model, "nic_model": inv.server_model.nic_model},
        "sizing": {**sizing, "planes": inv.planes, "capacity_servers": inv.capacity_servers,
                   "installed_servers": len(inv.servers), "installed_gpus": counts["gpus"]},
        "models": {
            "switch": {"name": spec.switch_model, **inv.switch_model.model_dump(mode="json")},
            "server": {"name": spec.server_model, **inv.server_model.model_dump(mode="json")},
            "nic": {"name": inv.server_model.nic_model, **inv.nic_model.model_dump(mode="json")},
        },
        "port_map": acc["port_map"],
        "layout": {
            "rack_pitch_m": spec.layout.rack_pitch_m, "row_spacing_m": spec.layout.row_spacing_m, "u_pitch_m": spec.layout.u_pitch_m,
            "racks": [{"name": r.name, "row": r.row, "row_index": r.row_index, "position": r.position, "role": r.role,
                       "u_height": r.u_height, "allow_switches": r.allow_switches} for r in inv.racks],
        },
        "settings": {"mtu": spec.topology.mtu, "switch_mtu": spec.topology.switch_mtu,
                     "same_group_fallback": acc["routing"]["same_group_fallback"],
                     "lossless": spec.lossless.model_dump(mode="json"),
                     "mgmt_gateway": str(spec.addressing.management.gateway) if spec.addressing.management.gateway else None,
                     "mgmt_prefix_len": spec.addressing.management.network.prefixlen},
        "addressing": acc["addressing"],
        "routing": acc["routing"],
        "counts": counts,
        "switches": acc["switches"],
        "servers": servers,
        "cables": acc["cables"],
        "checks": acc["checks"],
    }


__all__ = ["STAGES", "SCHEMA_VERSION", "assemble_plan", "build_plan", "run_stages", "PlanError"]
