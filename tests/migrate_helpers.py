"""Test helpers for the migration planner: a ROFT-shaped plan (contract shape, only the fields the
migration core reads) built around a ZCube plan's servers, and small plan edits."""

from __future__ import annotations

import copy


def roft_like(zplan: dict, pod_servers: int, spines: int, uplinks_per_spine: int = 1, prefix: str = "RF") -> dict:
    """A rail-optimized fat tree over ``zplan``'s servers: pods of ``pod_servers`` servers, one leaf per (pod, rail)
    holding both NIC ports of its rail (port 1 of the pod-local server i on host port i, port 2 on host port
    pod_servers + i), ``spines`` spines each joined to every leaf by ``uplinks_per_spine`` cables."""
    G = max(n["gpu"] for s in zplan["servers"] for n in s["nics"]) + 1
    names = zplan["port_map"]["host_ports"] + zplan["port_map"]["fabric_ports"] + zplan["port_map"]["unused_ports"]
    servers = sorted(zplan["servers"], key=lambda s: s["index"])
    pods = -(-len(servers) // pod_servers)
    net = [r["name"] for r in zplan["layout"]["racks"] if r["role"] == "network"] or [zplan["layout"]["racks"][-1]["name"]]
    switches, cables, out_servers = [], [], []
    leaf = {}
    for p in range(pods):
        for r in range(G):
            name = f"{prefix}-L{p}{r}"
            leaf[(p, r)] = name
            switches.append({"name": name, "group": "leaf", "pod": p, "index": r, "plane": 0, "rack": net[(p * G + r) % len(net)],
                             "u": 40 - (p * G + r) // len(net), "mgmt_address": f"172.16.1.{len(switches) + 1}", "interfaces": []})
    for k in range(spines):
        switches.append({"name": f"{prefix}-S{k:02d}", "group": "spine", "index": k, "plane": 0, "rack": net[k % len(net)],
                         "u": 10 - k // len(net), "mgmt_address": f"172.16.1.{len(switches) + 1}", "interfaces": []})
    n = 0
    for s in servers:
        p, i = divmod(s["index"], pod_servers)
        nics = []
        for nic in sorted(s["nics"], key=lambda x: (x["gpu"], x["nic_port"])):
            sw = leaf[(p, nic["gpu"])]
            port = names[i if nic["nic_port"] == 1 else pod_servers + i]
            n += 1
            cid = f"RH{n:06d}"
            nics.append({"port": nic["port"], "gpu": nic["gpu"], "nic_port": nic["nic_port"], "switch": sw, "switch_port": port,
                         "cable": cid, "plane": 0})
            cables.append({"id": cid, "kind": "host", "plane": 0, "a": {"device": s["name"], "port": nic["port"], "rack": s["rack"], "u": s["u"]},
                           "b": {"device": sw, "port": port, "rack": "", "u": 0}, "length_m": 10.0, "medium": "SMF", "part": "ZC-SMF-MPO-10M"})
        out_servers.append({"name": s["name"], "index": s["index"], "rack": s["rack"], "u": s["u"], "nics": nics})
    f = 0
    leaves = list(leaf.values())
    for li, lname in enumerate(leaves):
        for k in range(spines):
            for x in range(uplinks_per_spine):
                f += 1
                cables.append({"id": f"RF{f:05d}", "kind": "fabric", "plane": 0,
                               "a": {"device": lname, "port": names[2 * pod_servers + k * uplinks_per_spine + x], "rack": "", "u": 0},
                               "b": {"device": f"{prefix}-S{k:02d}", "port": names[li * uplinks_per_spine + x], "rack": "", "u": 0},
                               "length_m": 20.0, "medium": "SMF", "part": "ZC-SMF-MPO-20M"})
    return {"design": "roft", "switches": switches, "servers": out_servers, "cables": cables,
            "models": copy.deepcopy(zplan["models"])}


__all__ = ["roft_like"]
