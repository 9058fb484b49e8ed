"""A stage's plan: the fabric as it stands after the stage, as a plan every command reads (design ``stage``).

After stage t the units moved so far are on the TO side, the others on the FROM side. The stage plan holds:

- the FROM island: FROM's rows for its switches still in use (the leaves of the units still there, the spines
  it keeps), each with only the interfaces of its remaining hosts and of its fabric links to switches of the
  island; FROM's NIC ports of those units; FROM's cables among them;
- the TO island: TO's rows for the roles in service (a switch that took a role is the role: its name,
  management address, loopback, rack and U), with the interfaces of their hosts and of the fabric links
  among them (static routes only through those links); TO's NIC ports of the moved units; TO's cables;
- a role standing in a temporary place (places.py) at that place, its cables as laid there (length, medium, part);
- TO's sections for the rest (cluster, layout, models, settings, addressing, sizing: the target's), the
  port maps of every role, TO's routing section (its ASN range widened to hold the FROM island's), each switch
  that routes otherwise (a ROFT leaf in eBGP while TO routes statically) with its own ``routing_mode``, counts of
  its own rows.

Cable ids: a NIC port's cable has the same id in both plans and sits in one island. Switch-to-switch cables
are numbered by each plan on its own; a FROM fabric cable whose id TO also uses is named ``R`` + its id in
stage plans (:func:`stage_cable_id`). Pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zcube_deploy.plan.model import SCHEMA_VERSION
from zcube_deploy.version import __version__

if TYPE_CHECKING:  # the planner builds its switch work from to_cables (below): a runtime import would be a cycle
    from zcube_deploy.migrate.planner import Migration

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
    """TO's routing section; with any switch in mode bgp, an ASN range holding every switch's ASN and a path limit
    (a FROM switch routing otherwise than TO carries its own ``routing_mode``)."""
    rt = dict(plan_to["routing"])
    asns = [s["asn"] for s in switches if s["asn"] is not None]
    if asns:
        last = [x for x in (rt["asn_last"], plan_from["routing"]["asn_last"]) if x is not None]
        rt["asn_base"] = min([rt["asn_base"], *asns])
        rt["asn_last"] = max([*last, *asns])
        rt["maximum_paths"] = max(rt["maximum_paths"] or 0, plan_from["routing"]["maximum_paths"] or 0) or None
    return rt


def _own_mode(rows: list[dict], plan: dict, plan_mode: str) -> list[dict]:
    """``rows`` of ``plan``'s switches, each carrying its mode when it is not ``plan_mode`` (the stage plan's)."""
    out = []
    for sw in rows:
        mode = sw.get("routing_mode") or plan["routing"]["mode"]
        out.append(dict(sw, routing_mode=mode) if mode != plan_mode else {k: v for k, v in sw.items() if k != "routing_mode"})
    return out


def _away(rows: list[dict], away: dict) -> list[dict]:
    """TO's switch rows with each role in a temporary place (``away``: role -> places.Temp) at that place."""
    return [dict(sw, rack=away[sw["name"]].rack, u=away[sw["name"]].u) if sw["name"] in away else sw for sw in rows]


def _laid(cables: list[dict], away: dict, laid: dict) -> list[dict]:
    """TO's cable rows with each end on a role in a temporary place at that place, and the cable laid there (its
    length, medium and part: places.Laid) instead of the planned one."""
    out = []
    for c in cables:
        ends = {k: c[k] for k in ("a", "b")}
        if not any(e["device"] in away for e in ends.values()):
            out.append(c)
            continue
        row = dict(c, **{k: dict(e, rack=away[e["device"]].rack, u=away[e["device"]].u) if e["device"] in away else e
                         for k, e in ends.items()})
        x = laid.get(c["id"])
        if x is not None:
            row.update(length_m=x.length_m, medium=x.medium, part=x.part)
        out.append(row)
    return out


def stage_plans_blocked(plan_from: dict, plan_to: dict) -> str | None:
    """Why no stage plan can be written for these two plans (None: they can): every switch carries its own routing
    mode (``routing_mode``) when it differs from the plan's, so islands that route apart share a stage plan."""
    return None


def _same(cid: str, host: bool) -> str:
    return cid


def _away_after(mig: Migration, to_sw: set[str], t: int) -> dict:
    """The roles in service standing in a temporary place after stage ``t`` (role -> places.Temp)."""
    return {r: tp for r, tp in mig.temp.items() if r in to_sw and t < tp.until}


def to_cables(plan_to: dict, mig: Migration, t: int) -> list[dict]:
    """TO's cable rows of the TO island after stage ``t`` as the stage plan has them: an end on a role in a temporary
    place at that place, a cable laid there with the laid length, medium and part."""
    _, _, to_sw, to_ports = islands(mig, t)
    return _laid(_cables(plan_to, to_sw, to_ports, _same), _away_after(mig, to_sw, t), mig.laid)


def stage_plan(plan_from: dict, plan_to: dict, mig: Migration, t: int) -> dict:
    """The plan of the fabric after stage ``t``."""
    from_sw, from_ports, to_sw, to_ports = islands(mig, t)
    to_ids = {c["id"] for c in plan_to["cables"]}

    def from_id(cid: str, host: bool) -> str:
        return stage_cable_id(cid, to_ids, host)

    mode = plan_to["routing"]["mode"]
    away = _away_after(mig, to_sw, t)
    switches = (_own_mode(_switch_rows(plan_from, from_sw, from_ports, from_id), plan_from, mode)
                + _own_mode(_away(_switch_rows(plan_to, to_sw, to_ports, _same), away), plan_to, mode))
    cables = _cables(plan_from, from_sw, from_ports, from_id) + to_cables(plan_to, mig, t)
    from_nics = {s["name"]: s["nics"] for s in plan_from["servers"]}
    servers = []
    for srv in sorted(plan_to["servers"], key=lambda s: s["index"]):
        nics = [n for n in srv["nics"] if (srv["name"], n["port"]) in to_ports]
        nics += [n for n in from_nics.get(srv["name"], []) if (srv["name"], n["port"]) in from_ports]
        servers.append(dict(srv, nics=sorted(nics, key=lambda n: (n["gpu"], n["nic_port"]))))
    host = sum(1 for c in cables if c["kind"] == "host")
    routing = _routing(plan_from, plan_to, switches)
    bgp_fabric = {s["name"] for s in switches if (s.get("routing_mode") or routing["mode"]) == "bgp"}
    counts = {"host_cables": host, "fabric_cables": len(cables) - host, "cables": len(cables), "switches": len(switches),
              "servers": len(servers), "gpus": plan_to["counts"]["gpus"], "static_routes": sum(len(s["routes"]) for s in switches),
              "bgp_sessions": sum(1 for c in cables if c["kind"] == "fabric" and c["a"]["device"] in bgp_fabric)}
    port_maps = {**(plan_from.get("port_maps") or {}), **(plan_to.get("port_maps") or {})}
    for sw in plan_to["switches"]:
        port_maps.setdefault(sw["group"], plan_to["port_map"])
    for sw in plan_from["switches"]:
        port_maps.setdefault(sw["group"], plan_from["port_map"])
    # the FROM island's pools: push's managed scope takes them too (its aggregates and routes are inside them)
    own = [plan_to["addressing"][k] for k in ("host_pool", "fabric_pool", "loopback_pool")]
    other = sorted({plan_from["addressing"][k] for k in ("host_pool", "fabric_pool", "loopback_pool")} - set(own))
    addressing = dict(plan_to["addressing"], **({"other_pools": other} if other and from_sw else {}))
    return {**{k: v for k, v in plan_to.items() if k not in ("switches", "servers", "cables", "counts", "routing", "checks")},
            "design": STAGE_DESIGN, "addressing": addressing, "schema_version": SCHEMA_VERSION, "tool_version": __version__,
            "port_maps": port_maps, "switches": switches, "servers": servers, "cables": cables, "counts": counts,
            "routing": routing, "checks": []}


__all__ = ["STAGE_DESIGN", "islands", "stage_cable_id", "stage_plan", "stage_plans_blocked", "to_cables"]
