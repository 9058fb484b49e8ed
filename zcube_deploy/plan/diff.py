"""What changed between two plans: cables added, removed or moved; addresses, forwarding, placement."""

from __future__ import annotations

from zcube_deploy.ipv4 import ntoa
from zcube_deploy.topology.forwarding import switch_tables


SHAPE_KEYS = ("S", "K", "m", "planes", "pods", "servers_per_pod", "leaves_per_plane", "spines_per_plane", "links_per_pair")

def _ends(c: dict) -> tuple:
    return (c["a"]["device"], c["a"]["port"], c["b"]["device"], c["b"]["port"])


def diff_plans(old: dict, new: dict) -> dict:
    oc = {c["id"]: c for c in old["cables"]}
    nc = {c["id"]: c for c in new["cables"]}
    added = [nc[i] for i in sorted(nc.keys() - oc.keys())]
    removed = [oc[i] for i in sorted(oc.keys() - nc.keys())]
    moved = []
    for cid in sorted(oc.keys() & nc.keys()):
        if _ends(oc[cid]) != _ends(nc[cid]):
            moved.append({"id": cid, "from": {"a": oc[cid]["a"], "b": oc[cid]["b"]}, "to": {"a": nc[cid]["a"], "b": nc[cid]["b"]}})

    def addr_map(plan: dict) -> dict:
        out = {}
        for sw in plan["switches"]:
            out[(sw["name"], "loopback")] = sw["loopback"]
            out[(sw["name"], "mgmt")] = sw["mgmt_address"]
            for itf in sw["interfaces"]:
                out[(sw["name"], itf["name"])] = f"{itf['address']}/{itf['prefix_len']}"
        for srv in plan["servers"]:
            for nic in srv["nics"]:
                out[(srv["name"], nic["port"])] = f"{nic['address']}/{nic['prefix_len']}"
        return out

    oa, na = addr_map(old), addr_map(new)
    addresses = [{"device": d, "interface": i, "old": oa.get((d, i)), "new": na.get((d, i))}
                 for (d, i) in sorted(oa.keys() | na.keys()) if oa.get((d, i)) != na.get((d, i))
                 and (d, i) in oa and (d, i) in na]

    def route_map(plan: dict) -> dict:
        """Per switch, its (prefix, next hop) forwarding entries under the plan's routing mode."""
        tables = switch_tables(plan["routing"], plan["switches"])
        return {name: {(e.prefix, ntoa(nh)) for e in entries for nh in e.next_hops} for name, entries in tables.items()}

    orr, nrr = route_map(old), route_map(new)
    routes = []
    for name in sorted(orr.keys() | nrr.keys()):
        a, b = orr.get(name, set()), nrr.get(name, set())
        for p, nh in sorted(b - a):
            routes.append({"switch": name, "change": "added", "prefix": p, "next_hop": nh})
        for p, nh in sorted(a - b):
            routes.append({"switch": name, "change": "removed", "prefix": p, "next_hop": nh})
    osw = {s["name"]: s for s in old["switches"]}
    nsw = {s["name"]: s for s in new["switches"]}
    switches = []
    for name in sorted(osw.keys() | nsw.keys()):
        if name not in osw:
            switches.append({"switch": name, "change": "added"})
        elif name not in nsw:
            switches.append({"switch": name, "change": "removed"})
        elif (osw[name]["rack"], osw[name]["u"]) != (nsw[name]["rack"], nsw[name]["u"]):
            switches.append({"switch": name, "change": "relocated", "from": f"{osw[name]['rack']} U{osw[name]['u']}",
                             "to": f"{nsw[name]['rack']} U{nsw[name]['u']}"})
    # the shape of each design's sizing (ZCube: S, K, m; ROFT: pods, leaves, spines, links), and the design itself
    osz, nsz = old["sizing"], new["sizing"]
    sizing_changed = {k: [osz.get(k), nsz.get(k)] for k in SHAPE_KEYS if (k in osz or k in nsz) and osz.get(k) != nsz.get(k)}
    if old.get("design", "zcube") != new.get("design", "zcube"):
        sizing_changed = {"design": [old.get("design", "zcube"), new.get("design", "zcube")], **sizing_changed}
    summary = {"cables_added": len(added), "cables_removed": len(removed), "cables_moved": len(moved),
               "addresses_changed": len(addresses), "routes_changed": len(routes), "switches_changed": len(switches)}
    changed = any(summary.values()) or bool(sizing_changed)
    return {"changed": changed, "summary": summary, "sizing_changed": sizing_changed, "cables_added": added,
            "cables_removed": removed, "cables_moved": moved, "addresses": addresses, "routes": routes, "switches": switches}
