"""A stage's plan: the fabric as it stands after the stage, as a plan every command reads (design ``stage``).

After stage t the units moved so far are on the TO side, the others on the FROM side. The stage plan holds:

- the FROM island: FROM's rows for its switches still in use (the leaves of the units still there, the spines
  it keeps), each with only the interfaces of its remaining hosts and of its fabric links to switches of the
  island; FROM's NIC ports of those units; FROM's cables among them;
- the TO island: TO's rows for the roles in service (a switch that took a role is the role: its name,
  management address, loopback, rack and U), with the interfaces of their hosts and of the fabric links
  among them (static routes only through those links); TO's NIC ports of the moved units; TO's cables;
- TO's sections for the rest (cluster, layout, models, settings, addressing, sizing: the target's), the
  port maps of every role, a routing section holding both islands' ASN ranges, counts of its own rows.

Cable ids: a NIC port's cable has the same id in both plans and sits in one island. Switch-to-switch cables
are numbered by each plan on its own; a FROM fabric cable whose id TO also uses is named ``R`` + its id in
stage plans (:func:`stage_cable_id`). Pure.
"""

from __future__ import annotations

from zcube_deploy.migrate.planner import Migration
from zcube_deploy.plan.model import SCHEMA_VERSION
from zcube_deploy.version import __version__

STAGE_DESIGN = "stage"


def stage_cable_id(cable_id: str, to_ids: set[str], host: bool) -> str:
    """The id a FROM cable carries in stage plans: its own, or ``R`` + it when TO numbers another cable so."""
    return cable_id if host or cable_id not in to_ids else "R" + cable_id


def islands(mig: Migration, t: int) -> tuple[set[str], set[tuple[str, str]], set[str], set[tuple[str, str]]]:
    """(FROM switches in use, NIC ports on FROM, TO roles in service, NIC ports on TO) after stage t (0: before any)."""
    moved = {u for batch in mig.batches[:t] for u in batch}
    from_ports = {p for u in mig.units if u.id not in moved for p in u.ports if p in mig.src.host}
    to_ports = {p for u in mig.units if u.id in moved for p in u.ports if p in mig.dst.host}
    cores = {s for s in mig.src.cores if mig.free_stage.get(s, 1) > t}
    from_sw = {mig.src.host[p].switch for p in from_ports} | (cores if from_ports else set())
    to_sw = {r for r, s in mig.need_stage.items() if s <= t}
    return from_sw, from_ports, to_sw, to_ports


def _switch_rows(plan: dict, keep: set[str], ports: set[tuple[str, str]], rename) -> list[dict]:
    out = []
    for sw in plan["switches"]:
        if sw["name"] not in keep:
            continue
        itfs = [dict(i, cable=rename(i["cable"], i["kind"] == "host")) for i in sw["interfaces"]
                if (i["kind"] == "host" and (i["peer"]["device"], i["peer"]["port"]) in ports)
                or (i["kind"] == "fabric" and i["peer"]["device"] in keep)]
        hops = {i["peer"]["address"] for i in itfs if i["kind"] == "fabric"}
        out.append(dict(sw, interfaces=itfs, routes=[r for r in sw["routes"] if r["next_hop"] in hops]))
    return out


def _cables(plan: dict, keep: set[str], ports: set[tuple[str, str]], rename) -> list[dict]:
    out = []
    for c in plan["cables"]:
        host = c["kind"] == "host"
        if (host and (c["a"]["device"], c["a"]["port"]) in ports) or (not host and c["a"]["device"] in keep and c["b"]["device"] in keep):
            out.append(dict(c, id=rename(c["id"], host)))
    return out


def _routing(plan_from: dict, plan_to: dict, switches: list[dict]) -> dict:
    """TO's routing section, its ASN range widened to hold the FROM island's ASNs."""
    rt = dict(plan_to["routing"])
    asns = [s["asn"] for s in switches if s["asn"] is not None]
    if asns and rt["mode"] == "bgp":
        rt["asn_base"] = min([rt["asn_base"], *asns])
        rt["asn_last"] = max([rt["asn_last"] or rt["asn_base"], *asns])
        rt["maximum_paths"] = max(rt["maximum_paths"] or 1, plan_from["routing"]["maximum_paths"] or 1)
    return rt


def stage_plans_blocked(plan_from: dict, plan_to: dict) -> str | None:
    """Why no stage plan can be written for these two plans (None: they can). A plan has one routing mode, so
    both islands of a stage must route alike."""
    a, b = plan_from["routing"]["mode"], plan_to["routing"]["mode"]
    if a != b:
        return (f"FROM routes in mode {a}, TO in mode {b}: a stage plan holds both islands and a plan has one routing mode "
                f"(plan TO with routing.mode: {a} to get stage plans)")
    return None


def stage_plan(plan_from: dict, plan_to: dict, mig: Migration, t: int) -> dict:
    """The plan of the fabric after stage ``t``."""
    from_sw, from_ports, to_sw, to_ports = islands(mig, t)
    to_ids = {c["id"] for c in plan_to["cables"]}

    def from_id(cid: str, host: bool) -> str:
        return stage_cable_id(cid, to_ids, host)

    def same(cid: str, host: bool) -> str:
        return cid

    switches = _switch_rows(plan_from, from_sw, from_ports, from_id) + _switch_rows(plan_to, to_sw, to_ports, same)
    cables = _cables(plan_from, from_sw, from_ports, from_id) + _cables(plan_to, to_sw, to_ports, same)
    from_nics = {s["name"]: s["nics"] for s in plan_from["servers"]}
    servers = []
    for srv in sorted(plan_to["servers"], key=lambda s: s["index"]):
        nics = [n for n in srv["nics"] if (srv["name"], n["port"]) in to_ports]
        nics += [n for n in from_nics.get(srv["name"], []) if (srv["name"], n["port"]) in from_ports]
        servers.append(dict(srv, nics=sorted(nics, key=lambda n: (n["gpu"], n["nic_port"]))))
    host = sum(1 for c in cables if c["kind"] == "host")
    routing = _routing(plan_from, plan_to, switches)
    bgp_fabric = {s["name"] for s in switches if s["asn"] is not None}
    counts = {"host_cables": host, "fabric_cables": len(cables) - host, "cables": len(cables), "switches": len(switches),
              "servers": len(servers), "gpus": plan_to["counts"]["gpus"], "static_routes": sum(len(s["routes"]) for s in switches),
              "bgp_sessions": sum(1 for c in cables if c["kind"] == "fabric" and c["a"]["device"] in bgp_fabric)}
    port_maps = {**(plan_from.get("port_maps") or {}), **(plan_to.get("port_maps") or {})}
    for sw in plan_to["switches"]:
        port_maps.setdefault(sw["group"], plan_to["port_map"])
    for sw in plan_from["switches"]:
        port_maps.setdefault(sw["group"], plan_from["port_map"])
    return {**{k: v for k, v in plan_to.items() if k not in ("switches", "servers", "cables", "counts", "routing", "checks")},
            "design": STAGE_DESIGN, "schema_version": SCHEMA_VERSION, "tool_version": __version__,
            "port_maps": port_maps, "switches": switches, "servers": servers, "cables": cables, "counts": counts,
            "routing": routing, "checks": []}


__all__ = ["STAGE_DESIGN", "islands", "stage_cable_id", "stage_plan", "stage_plans_blocked"]
