"""The ROFT planner (docs/roft.md): named, pure stages from a resolved ``design: roft`` inventory to plan.json,
the way plan/build.py plans a ZCube, and reusing its media, placement and assembly.

    sizing      pods, leaves, spines, uplinks (sizing.py: `zcube compare`'s arithmetic)
    switches    per plane: the rail leaves of every pod (pod-major, rail r = GPU r), then the spines
    placement   rack and U (the ZCube placer, every ROFT switch as a rail switch: layout.placement.odd)
    ports       a leaf's ports (host ports at the NIC speed from cage 1, uplinks at the fabric speed on
                the next cages) and a spine's (downlinks at the fabric speed from cage 1)
    wiring      NIC port p of GPU r of a server in pod q on leaf (q, r) of its plane (planes 1: both
                ports on plane 0; planes 2: port p on plane p-1); every leaf to every spine of its plane
                with ``links_per_pair`` links
    media       the cabling catalog's media, host and fabric cables each at their own speed
    addressing  a host block per leaf, /31 per host port and fabric link, loopbacks, management
    routing     eBGP: a private ASN per leaf, one per plane's spines; the hosts' policy tables
    checks      the ROFT invariants (checks.py); any failed one stops the build
"""

from __future__ import annotations

from zcube_deploy.designs.roft.checks import evaluate_invariants
from zcube_deploy.designs.roft.routing import address_and_route
from zcube_deploy.designs.roft.sizing import size_roft
from zcube_deploy.errors import InputErrors, InvariantViolation, Problem
from zcube_deploy.inventory import ResolvedInventory
from zcube_deploy.perf import bulk_allocation
from zcube_deploy.plan import media
from zcube_deploy.plan import build as plan_build
from zcube_deploy.plan.build import assemble_plan, cable_id_width
from zcube_deploy.plan.placement import place_switches
from zcube_deploy.safety import check_interface, check_name


def stage_switches(inv: ResolvedInventory, acc: dict) -> dict:
    sz, r = acc["sizing"], inv.roft
    switches, problems, seen = [], [], {s.name for s in inv.servers}
    leaf_no = spine_no = 0
    for plane in range(sz["planes"]):
        for pod in range(sz["pods"]):
            for rail in range(sz["gpus_per_server"]):
                leaf_no += 1
                name = r.leaf_naming.format(cluster=inv.spec.cluster, plane=plane, pod=pod, rail=rail, index=rail, number=leaf_no)
                switches.append({"name": name, "group": "leaf", "plane": plane, "pod": pod, "index": rail, "number": leaf_no,
                                 "model": inv.spec.switch_model})
        for j in range(sz["spines_per_plane"]):
            spine_no += 1
            name = r.spine_naming.format(cluster=inv.spec.cluster, plane=plane, index=j, number=spine_no)
            switches.append({"name": name, "group": "spine", "plane": plane, "index": j, "number": spine_no, "model": inv.spec.switch_model})
    for sw in switches:
        key = "roft.leaf_naming" if sw["group"] == "leaf" else "roft.spine_naming"
        bad = check_name(sw["name"])
        if bad:
            problems.append(Problem(key, f"gives {sw['name']!r}, which {bad}"))
        elif sw["name"] in seen:
            problems.append(Problem(key, f"gives the name {sw['name']!r} twice (or a server's name)", "include {number}"))
        seen.add(sw["name"])
    if problems:
        raise InputErrors(problems[:5], "invalid switch naming")
    return {"switches": switches}


def stage_placement(inv: ResolvedInventory, acc: dict) -> dict:
    """Every ROFT switch placed as the ZCube placer places a rail (odd) switch, in plan order."""
    switches = [dict(s) for s in acc["switches"]]
    stand_in = [{"name": s["name"], "group": "odd", "index": i, "plane": 0} for i, s in enumerate(switches)]
    place_switches(inv, stand_in, 1)
    for s, p in zip(switches, stand_in):
        s["rack"], s["u"] = p["rack"], p["u"]
    return {"switches": switches}


def _port_map(inv: ResolvedInventory, host: int, host_speed: str, fabric: int, fabric_speed: str) -> dict:
    """A role's port map: ``host`` ports at ``host_speed`` from cage 1, then ``fabric`` ports at ``fabric_speed``
    from the next free cage; the rest unused (split cages keep their lanes' names, whole cages the native name)."""
    model = inv.switch_model
    cages = model.cages

    def names(speed: str, first_cage: int, n: int) -> list[tuple[str, str, int, int]]:
        mode = model.speeds[speed]
        out = []
        for i in range(n):
            cage, lane = first_cage + i // mode.lanes, i % mode.lanes + 1
            name = model.port_name(speed, cage, lane)
            short = mode.abbreviation.format(cage=cage, lane=lane, port=(cage - 1) * mode.lanes + lane) if mode.abbreviation else name
            out.append((name, short, cage, lane))
        return out

    lh, lf = model.speeds[host_speed].lanes, model.speeds[fabric_speed].lanes
    host_cages = -(-host // lh)
    fabric_cages = -(-fabric // lf)
    hosts = names(host_speed, 1, host)
    fabrics = names(fabric_speed, host_cages + 1, fabric)
    used_cages = host_cages + fabric_cages
    native = next((sp for sp, mode in model.speeds.items() if mode.lanes == 1), None)
    unused = [n for n, *_ in names(host_speed, 1, host_cages * lh)[host:]]
    unused += [n for n, *_ in names(fabric_speed, host_cages + 1, fabric_cages * lf)[fabric:]]
    unused += [model.port_name(native or fabric_speed, c, 1) for c in range(used_cages + 1, cages + 1)]
    all_names = [n for n, *_ in hosts + fabrics] + unused
    problems = [Problem("catalog.switch_models", f"{n!r}: {bad}") for n in all_names[:1] + [x[0] for x in fabrics[:1]]
                if (bad := check_interface(n))]
    if len(set(all_names)) != len(all_names):
        problems.append(Problem(f"catalog.switch_models.{inv.spec.switch_model}.speeds", "the interface-name patterns give the same name "
                                "to two ports", "use {cage} and {lane}"))
    if problems:
        raise InputErrors(problems, "invalid switch model")
    pm = {
        "speed": host_speed if host else fabric_speed, "lanes_per_cage": lh if host else lf, "cages": cages,
        "host_cages": [1, host_cages] if host else [0, 0], "fabric_cages": [host_cages + 1, used_cages],
        "unused_cages": [used_cages + 1, cages] if used_cages < cages else None,
        "names_confirmed": model.speeds[host_speed if host else fabric_speed].confirmed, "breakout_command": model.breakout_command,
        "host_ports": [x[0] for x in hosts], "fabric_ports": [x[0] for x in fabrics], "unused_ports": unused, "native_speed": native,
        "cage_of": {n: [short, cage, lane] for n, short, cage, lane in hosts + fabrics},
    }
    if host and fabric_speed != host_speed:
        pm["fabric_speed"] = fabric_speed
    return pm


def stage_ports(inv: ResolvedInventory, acc: dict) -> dict:
    sz = acc["sizing"]
    leaf = _port_map(inv, sz["host_ports_per_leaf"], inv.spec.topology.nic_port_speed, sz["uplinks_per_leaf"], sz["fabric_speed"])
    spine = _port_map(inv, 0, sz["fabric_speed"], sz["leaves_per_plane"] * sz["links_per_pair"], sz["fabric_speed"])
    return {"port_map": leaf, "port_maps": {"leaf": leaf, "spine": spine}}


def stage_wiring(inv: ResolvedInventory, acc: dict) -> dict:
    """Host cables in GPU order (IDs as ZCube's: H + GPU-port number, so a cable keeps its label when it moves to a ZCube
    switch), then fabric cables (L + plane, leaf, spine, link: apart from ZCube's F cables, so both fit one stage plan);
    the switch interfaces and NIC ports they make. Port k of a GPU's ports on its plane, of server i of a pod, is on
    host port k x servers_per_pod + i of its rail leaf."""
    sz = acc["sizing"]
    G, planes, pod_size, S, m = sz["gpus_per_server"], sz["planes"], sz["servers_per_pod"], sz["spines_per_plane"], sz["links_per_pair"]
    P = inv.nic_model.ports
    per_plane = P // planes
    leaf_pm, spine_pm = acc["port_maps"]["leaf"], acc["port_maps"]["spine"]
    smodel = inv.server_model
    nic_names = [[smodel.nic_port_name(g, p) for p in range(1, P + 1)] for g in range(G)]
    bad = [n for row in nic_names for n in row if check_interface(n)]
    if bad or len({n for row in nic_names for n in row}) != G * P:
        raise InputErrors(Problem(f"catalog.server_models.{inv.spec.server_model}.nic_interface",
                                  f"gives unsafe name {bad[0]!r}" if bad else "gives two NIC ports the same name", "use {gpu}/{slot} and {port}"))
    leaves = {(s["plane"], s["pod"], s["index"]): s for s in acc["switches"] if s["group"] == "leaf"}
    spines = {(s["plane"], s["index"]): s for s in acc["switches"] if s["group"] == "spine"}
    interfaces: dict[str, list[dict]] = {s["name"]: [] for s in acc["switches"]}
    cables: list[dict] = []
    nics: dict[str, list[dict]] = {}
    width = cable_id_width(inv)
    for si, server in enumerate(inv.servers):
        entries = nics[server.name] = []
        pod, in_pod = divmod(si, pod_size)
        for rail in range(G):
            g = si * G + rail
            for p in range(1, P + 1):
                plane, k = divmod(p - 1, per_plane)
                sw = leaves[(plane, pod, rail)]
                t = k * pod_size + in_pod  # port k of the pod's server i on host port k x pod + i (ZCube's odd layout for k = 0)
                port, nic, cid = leaf_pm["host_ports"][t], nic_names[rail][p - 1], f"H{g * P + p:0{width}d}"
                cables.append({"id": cid, "kind": "host", "plane": plane, "group": "leaf", "gpu": g,
                               "a": {"device": server.name, "port": nic}, "b": {"device": sw["name"], "port": port}})
                interfaces[sw["name"]].append({"name": port, "kind": "host", "port_index": t, "cable": cid,
                                               "peer": {"device": server.name, "port": nic, "gpu": g}})
                entry = {"port": nic, "gpu": rail, "nic_port": p, "plane": plane, "group": "leaf", "switch": sw["name"],
                         "switch_port": port, "host_port_index": t, "cable": cid}
                if nic in server.macs:
                    entry["mac"] = server.macs[nic]
                entries.append(entry)
    L = sz["leaves_per_plane"]
    fwidth = max(5, len(str(planes * L * S * m)))
    for plane in range(planes):
        plane_leaves = [leaves[(plane, q, r)] for q in range(sz["pods"]) for r in range(G)]
        for li, lf in enumerate(plane_leaves):
            for j in range(S):
                sp = spines[(plane, j)]
                for x in range(m):
                    link = (li * S + j) * m + x
                    cid = f"L{plane * L * S * m + link + 1:0{fwidth}d}"  # L: a leaf-spine link (ZCube's odd-even cables are F)
                    lp, spp = leaf_pm["fabric_ports"][j * m + x], spine_pm["fabric_ports"][li * m + x]
                    cables.append({"id": cid, "kind": "fabric", "plane": plane, "link": link,
                                   "a": {"device": lf["name"], "port": lp}, "b": {"device": sp["name"], "port": spp}})
                    interfaces[lf["name"]].append({"name": lp, "kind": "fabric", "link": link, "cable": cid,
                                                   "peer": {"device": sp["name"], "port": spp}})
                    interfaces[sp["name"]].append({"name": spp, "kind": "fabric", "link": link, "cable": cid,
                                                   "peer": {"device": lf["name"], "port": lp}})
    for rows in interfaces.values():
        rows.sort(key=lambda i: (0, i["port_index"]) if i["kind"] == "host" else (1, i["peer"]["device"], i["link"]))
    return {"cables": cables, "nics": nics, "interfaces": interfaces}


def stage_media(inv: ResolvedInventory, acc: dict) -> dict:
    """Media per kind: host cables at the NIC speed (the leaf's cages), fabric cables at the fabric speed."""
    leaf, spine = acc["port_maps"]["leaf"], acc["port_maps"]["spine"]
    host = [c for c in acc["cables"] if c["kind"] == "host"]
    fabric = [c for c in acc["cables"] if c["kind"] == "fabric"]
    fabric_pm = {"cage_of": {**leaf["cage_of"], **spine["cage_of"]}, "speed": acc["sizing"]["fabric_speed"]}
    out = media.cables_with_media(inv, {**acc, "cables": host, "port_map": leaf})["cables"] if host else []
    out += media.cables_with_media(inv, {**acc, "cables": fabric, "port_map": fabric_pm})["cables"] if fabric else []
    return {"cables": out}


def stage_addressing_routing(inv: ResolvedInventory, acc: dict) -> dict:
    return address_and_route(inv, acc)


def stage_checks(inv: ResolvedInventory, acc: dict) -> dict:
    results = evaluate_invariants(acc)
    failures = [Problem(f"invariant {r['name']}", v) for r in results if r["status"] == "failed" for v in r["violations"]]
    if failures:
        raise InvariantViolation(failures, "the plan breaks ROFT invariants (a planner bug)")
    return {"checks": results}


STAGES = [
    ("sizing", lambda inv, acc: {"sizing": size_roft(inv)}),
    ("switches", stage_switches),
    ("placement", stage_placement),
    ("ports", stage_ports),
    ("wiring", stage_wiring),
    ("media", stage_media),
    ("addressing", stage_addressing_routing),
    ("checks", stage_checks),
]


def run_stages(inv: ResolvedInventory, until: str | None = None) -> dict:
    return plan_build.run_stages(inv, until, STAGES)


def build_plan(inv: ResolvedInventory) -> dict:
    """A ROFT plan as a JSON-ready dict (plan/model.py; written by plan/io.py)."""
    with bulk_allocation():
        acc = run_stages(inv)
        plan = assemble_plan(inv, acc)
    plan["design"] = "roft"
    plan["port_maps"] = acc["port_maps"]
    plan["counts"]["bgp_sessions"] = plan["counts"]["fabric_cables"]
    return plan
