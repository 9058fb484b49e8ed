"""The data-hall model: what the hall page draws, computed from the plan and the overlays (pure).

Everything here is a function of its arguments: no I/O, no clock. Coordinates are in metres on
the floor (x along a row, y across rows) and in U inside a rack. The page writer (draw.py) turns
this model into SVG and HTML.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from zcube_deploy.plan.roles import ROLES, port_map_for
from zcube_deploy.plan.summary import shape_text

# Rack depth is not part of the plan's layout; the floor plan draws racks this deep (metres),
# capped at half the row spacing so that the aisle stays visible.
RACK_DEPTH_M = 1.2

# Above this many rack-to-rack bundles the floor plan draws row-to-row bundles instead (the
# rack-level bundles stay in each rack's details, loaded with its elevation).
MAX_RACK_BUNDLES = 1500

GROUPS = ("odd", "even", "fabric")
ROLE_COLOUR = {"leaf": "odd", "spine": "fabric"}  # a ROFT rail leaf drawn as a rail switch; a spine, all fabric, in the fabric colour


def colour_groups(plan: dict) -> list[tuple[str, str]]:
    """(group, the catalog colour it takes): ZCube's groups, and a ROFT's roles when the plan has them."""
    roles = {s["group"] for s in plan["switches"]}
    return [(g, g) for g in GROUPS] + [(r, like) for r, like in ROLE_COLOUR.items() if r in roles]


def _group(cable: dict) -> str:
    return "fabric" if cable["kind"] == "fabric" else cable["group"]


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def _port_use(cables: list[dict]) -> tuple[Counter, Counter]:
    """Cabled host and fabric ports per switch (a host cable's B end is its switch)."""
    host = Counter(c["b"]["device"] for c in cables if c["kind"] != "fabric")
    fabric = Counter(c["a"]["device"] for c in cables if c["kind"] == "fabric")
    fabric.update(c["b"]["device"] for c in cables if c["kind"] == "fabric")
    return host, fabric


@dataclass(frozen=True)
class Findings:
    """verify.json's findings as the page shows them, and where each one is drawn."""

    items: list[dict] = field(default_factory=list)
    by_rack: dict[str, list[str]] = field(default_factory=dict)     # rack -> finding ids
    by_cable: dict[str, list[str]] = field(default_factory=dict)    # cable id -> finding ids


@dataclass(frozen=True)
class Bundles:
    """Cables between two racks per group, and what the floor plan draws of them."""

    level: str                                  # "rack" or "row": what the floor plan's bundles join
    drawn: list[dict]                           # the floor plan's bundles
    per_rack: dict[str, list[dict]]             # rack -> its rack-to-rack bundles (its details panel)
    rack_pairs: int                             # rack-to-rack bundles in the hall


def rack_devices(plan: dict) -> dict[str, list[dict]]:
    """Rack -> its servers and switches, top U first; a switch with its port use (host, fabric,
    reserved, unused) from the cables' ends and the port map."""
    models = plan["models"]
    srv_h = int(models["server"].get("u_height", 1))
    sw_model = models["switch"]
    sw_h = int(sw_model.get("u_height", 1))
    devices: dict[str, list[dict]] = defaultdict(list)
    for s in plan["servers"]:
        devices[s["rack"]].append({"kind": "server", "name": s["name"], "model": s.get("model", models["server"]["name"]),
                                   "u": s["u"], "height": srv_h})
    host_used, fabric_used = _port_use(plan["cables"])
    logical = int(plan["sizing"]["logical_ports"])
    for s in plan["switches"]:
        pm = port_map_for(plan, s["group"])  # a ROFT spine has ports of its own
        n_host_ports, n_fabric_ports = len(pm["host_ports"]), len(pm["fabric_ports"])
        h, f = host_used[s["name"]], fabric_used[s["name"]]
        reserved = (n_host_ports - h) + (n_fabric_ports - f)
        devices[s["rack"]].append({
            "kind": "switch", "name": s["name"], "model": s.get("model", sw_model["name"]), "u": s["u"], "height": sw_h,
            "group": s["group"], "plane": s.get("plane", 0),
            "ports": {"host": h, "fabric": f, "reserved": reserved, "unused": logical - h - f - reserved},
        })
    for lst in devices.values():
        lst.sort(key=lambda d: (-d["u"], d["name"]))
    return devices


def verify_findings(plan: dict, verify: dict | None, racks: set[str]) -> Findings:
    """Each finding with the plan's racks at its ends, then one finding per unreachable switch."""
    if not verify:
        return Findings()
    items = []
    by_rack: dict[str, list[str]] = defaultdict(list)
    by_cable: dict[str, list[str]] = defaultdict(list)
    for f in verify.get("findings", []):
        on_racks = sorted({e["rack"] for e in f.get("ends", []) if e.get("rack") in racks})
        devs = sorted({e["device"] for e in f.get("ends", []) if e.get("device")})
        cables = list(f.get("cables", []))
        items.append({"id": f["id"], "kind": f["kind"], "what": f.get("what", ""), "instruction": f.get("instruction", ""),
                      "racks": on_racks, "devices": devs, "cables": cables})
        for r in on_racks:
            by_rack[r].append(f["id"])
        for c in cables:
            by_cable[c].append(f["id"])
    sw_rack = {s["name"]: s["rack"] for s in plan["switches"]}
    for name, error in sorted((verify.get("unreachable") or {}).items()):
        fid = f"unreachable:{name}"
        rack = sw_rack.get(name)
        items.append({"id": fid, "kind": "unreachable", "what": f"{name} could not be verified: {error}",
                      "instruction": f"check {name}'s management connection and credentials, then run verify again",
                      "racks": [rack] if rack else [], "devices": [name], "cables": []})
        if rack:
            by_rack[rack].append(fid)
    return Findings(items, dict(by_rack), dict(by_cable))


def cable_bundles(plan: dict, finding_cables: dict[str, list[str]], row_of: dict[str, str],
                  utilisation: dict[str, float] | None = None) -> Bundles:
    """Cables between two racks per group; above MAX_RACK_BUNDLES of them the floor plan draws
    row-to-row bundles (a bundle carries the ids of its cables with findings either way, and with
    ``utilisation`` (cable id -> traffic utilisation) the highest of its cables')."""
    rack_bundles: Counter = Counter((*_pair(c["a"]["rack"], c["b"]["rack"]), _group(c)) for c in plan["cables"])
    busiest: dict[tuple, float] = {}
    for c in plan["cables"] if utilisation else ():
        if c["id"] in utilisation:
            k = (*_pair(c["a"]["rack"], c["b"]["rack"]), _group(c))
            busiest[k] = max(busiest.get(k, 0.0), float(utilisation[c["id"]]))
    bundle_findings: dict[tuple, list[str]] = defaultdict(list)
    if finding_cables:
        for c in plan["cables"]:
            if c["id"] in finding_cables:
                bundle_findings[(*_pair(c["a"]["rack"], c["b"]["rack"]), _group(c))].append(c["id"])
    level = "rack" if len(rack_bundles) <= MAX_RACK_BUNDLES else "row"
    if level == "rack":
        drawn, drawn_findings, drawn_busiest = rack_bundles, bundle_findings, busiest
    else:
        drawn, drawn_findings, drawn_busiest = Counter(), defaultdict(list), {}
        for (ra, rb, g), n in rack_bundles.items():
            k = (*_pair(row_of[ra], row_of[rb]), g)
            drawn[k] += n
            if (ra, rb, g) in bundle_findings:
                drawn_findings[k].extend(bundle_findings[(ra, rb, g)])
            if (ra, rb, g) in busiest:
                drawn_busiest[k] = max(drawn_busiest.get(k, 0.0), busiest[(ra, rb, g)])
    bundles = [{"a": a, "b": b, "group": g, "count": n, "finding_cables": sorted(drawn_findings.get((a, b, g), [])),
                "utilisation": drawn_busiest.get((a, b, g))}
               for (a, b, g), n in sorted(drawn.items())]
    per_rack: dict[str, list[dict]] = defaultdict(list)
    for (a, b, g), n in sorted(rack_bundles.items()):
        fc = sorted(bundle_findings.get((a, b, g), []))
        per_rack[a].append({"peer": b, "group": g, "count": n, "finding_cables": fc})
        if b != a:
            per_rack[b].append({"peer": a, "group": g, "count": n, "finding_cables": fc})
    return Bundles(level, bundles, dict(per_rack), len(rack_bundles))


def cabling_progress(status: dict | None, racks: set[str]) -> tuple[dict[str, dict], dict[str, dict]]:
    """(per rack, per row) installed/checked counts of a filled-in workbook's cut sheets."""
    per_rack: dict[str, dict] = {}
    per_row: dict[str, dict] = {}
    for sh in (status or {}).get("sheets", []):
        title = sh["sheet"]
        entry = {k: sh[k] for k in ("cables", "installed", "checked", "issues")}
        if title.startswith("Rack ") and title[5:] in racks:
            per_rack[title[5:]] = entry
        elif title.startswith("Row "):
            per_row[title[4:]] = entry
    return per_rack, per_row


def rack_entries(lay: dict, devices: dict[str, list[dict]], bundles: Bundles, findings: Findings,
                 progress: tuple[dict[str, dict], dict[str, dict]]) -> list[dict]:
    """Every rack of the layout: where it stands on the floor (metres), what it holds, its bundles,
    findings and cabling progress."""
    pitch, spacing = float(lay["rack_pitch_m"]), float(lay["row_spacing_m"])
    per_rack, per_row = progress
    racks = []
    for r in lay["racks"]:
        devs = devices.get(r["name"], [])
        holds = {"servers": sum(d["kind"] == "server" for d in devs),
                 "odd": sum(d["kind"] == "switch" and d["group"] == "odd" for d in devs),
                 "even": sum(d["kind"] == "switch" and d["group"] == "even" for d in devs)}
        used = sum(d["height"] for d in devs)
        racks.append({
            "name": r["name"], "row": r["row"], "row_index": r["row_index"], "position": r["position"],
            "role": r["role"], "u_height": r["u_height"], "allow_switches": r.get("allow_switches", False),
            "x_m": round((r["position"] - 1) * pitch, 4), "y_m": round(r["row_index"] * spacing, 4),
            "holds": holds, "switch_rack": holds["odd"] + holds["even"] > 0, "u_used": used, "u_free": r["u_height"] - used,
            "devices": devs, "bundles": bundles.per_rack.get(r["name"], []),
            "findings": findings.by_rack.get(r["name"], []), "progress": per_rack.get(r["name"]) or per_row.get(r["row"]),
        })
    return racks


def row_entries(racks: list[dict], pitch: float) -> list[dict]:
    """Every row in layout order: its extent on the floor, its racks and their findings."""
    rows = []
    for name in dict.fromkeys(r["row"] for r in racks):
        rr = [r for r in racks if r["row"] == name]
        rows.append({"name": name, "row_index": rr[0]["row_index"], "y_m": rr[0]["y_m"],
                     "x0_m": min(r["x_m"] for r in rr), "x1_m": max(r["x_m"] for r in rr) + pitch,
                     "racks": [r["name"] for r in rr], "findings": sum(len(r["findings"]) for r in rr)})
    return rows


def hall_summary(plan: dict, racks: list[dict], rows: list[dict], bom: dict, status: dict | None, rack_pairs: int) -> dict:
    """The side panel's figures: shape, counts, models, bill of materials, pools, routing, cages."""
    sz, counts, ad, pm, models = plan["sizing"], plan["counts"], plan["addressing"], plan["port_map"], plan["models"]
    sw = plan["switches"]
    summary = {
        "cluster": plan["cluster"]["name"],
        "shape": ({"roft": shape_text(sz), "planes": sz["planes"]} if "leaves_per_plane" in sz else
                  {"S": sz["S"], "K": sz["K"], "m": sz["m"], "R": int(sz["logical_ports"]), "planes": sz["planes"]}),
        "counts": {"rows": len(rows), "racks": len(racks), "switch_racks": sum(r["switch_rack"] for r in racks),
                   "servers": counts["servers"], "gpus": counts["gpus"], "switches": counts["switches"],
                   "odd_switches": sum(s["group"] == "odd" for s in sw), "even_switches": sum(s["group"] == "even" for s in sw),
                   # switches per role, ZCube's odd and even first (shown even when 0, as they always were)
                   "roles": {r: sum(s["group"] == r for s in sw) for r in ROLES if r in ("odd", "even") and "leaves_per_plane" not in sz
                             or any(s["group"] == r for s in sw)},
                   "host_cables": counts["host_cables"], "fabric_cables": counts["fabric_cables"], "cables": counts["cables"],
                   "bundles": rack_pairs},
        "models": {"switch": models["switch"]["name"], "server": models["server"]["name"]},
        "bom": bom["totals"],
        "pools": [{"name": k, "prefix": ad.get(k) or ad.get(f"{k}_network") or "", "used": ad["used"][k], "size": ad["size"][k]}
                  for k in sorted(ad["used"])],
        "routing_mode": (plan.get("routing") or {}).get("mode", "static"),
        "cages": {"host": pm.get("host_cages"), "fabric": pm.get("fabric_cages"), "unused": pm.get("unused_cages"),
                  "lanes_per_cage": pm.get("lanes_per_cage"), "speed": pm.get("speed")},
    }
    if status:
        summary["cabling"] = status["overall"]
    return summary


def build_hall_model(plan: dict, colours: dict[str, dict], bom: dict, status: dict | None = None,
                     verify: dict | None = None, analysis: dict | None = None, traffic: dict | None = None) -> dict:
    """The hall page's content, in named steps: devices per rack, findings, bundles, cabling
    progress, racks, rows, summary.

    Args:
        plan: a plan (layout, switches, servers, cables, port_map, models, sizing, counts,
            cluster, addressing; routing when present).
        colours: the cabling catalog's colours by group: ``{"odd": {"fill": "DDEBF7", "label": "blue"}, ...}``.
        bom: ``bill_of_materials(plan, catalog)``.
        status: ``read_status(workbook)`` of a filled-in cabling workbook, or None.
        verify: a verify.json document as ``overlays.load_verify`` checked it, or None.
        analysis: ``{"rows": [...], "png_base64": str | None}`` from ``overlays.load_analysis``, or None.
        traffic: ``{"cables": {cable id: utilisation}, "workload": str}`` from ``overlays.load_traffic``, or None.
    """
    lay = plan["layout"]
    pitch, spacing = float(lay["rack_pitch_m"]), float(lay["row_spacing_m"])
    rack_names = {r["name"] for r in lay["racks"]}
    findings = verify_findings(plan, verify, rack_names)
    bundles = cable_bundles(plan, findings.by_cable, {r["name"]: r["row"] for r in lay["racks"]}, traffic["cables"] if traffic else None)
    racks = rack_entries(lay, rack_devices(plan), bundles, findings, cabling_progress(status, rack_names))
    rows = row_entries(racks, pitch)
    depth = min(RACK_DEPTH_M, spacing / 2)
    return {
        "summary": hall_summary(plan, racks, rows, bom, status, bundles.rack_pairs),
        "colours": {g: {"fill": "#" + colours[like]["fill"].upper(), "stroke": colours[like]["label"]} for g, like in colour_groups(plan)},
        "floor": {"rack_pitch_m": pitch, "row_spacing_m": spacing, "rack_depth_m": depth,
                  "width_m": max((r["x1_m"] for r in rows), default=0), "depth_m": max((r["y_m"] for r in rows), default=0) + depth},
        "rows": rows, "racks": racks, "bundle_level": bundles.level, "bundles": bundles.drawn,
        "findings": findings.items, "verify": ({"mode": verify.get("mode"), "summary": verify.get("summary", {})} if verify else None),
        "analysis": analysis, "traffic": {"workload": traffic["workload"]} if traffic else None,
    }
