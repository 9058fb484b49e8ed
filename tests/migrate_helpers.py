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


def check_move_sheet_ids(mig, plan_from: dict) -> int:
    """Each stage's move sheet (moves.xlsx) names, on every row, the cable ID the technician finds on the cable's label
    ("ID now") and the one it is to get ("New ID"), moves.csv's id_now and new_id say the same, and labels.csv agrees;
    returns the rows checked.

    The labels are followed port by port over the stages, independently of the writer: as built every end of a FROM
    cable carries FROM's ID; an end unplugged carries the label of the port it leaves as the stage starts (checked,
    then the port is empty), the other half of a move in two and a cable from the stock the ID they had; an end plugged or relabelled
    gets the label labels.csv lists for it, in order, whose ID is the row's New ID (the first half of a move in two
    names the ID its second half puts on; a removed cable none). Switches by the switch playing a
    role (migrate.json), so a port keeps its label when its switch takes a role."""
    import csv
    import json

    from openpyxl import load_workbook

    doc = json.loads((mig / "migrate.json").read_text())
    phys = {r["role"]: r["switch"] for r in doc["roles"]}
    on = {(e["device"], e["port"]): c["id"] for c in plan_from["cables"] for e in (c["a"], c["b"])}  # (switch, port) -> ID there
    checked = 0
    for t in range(1, doc["stages"] + 1):
        d = mig / f"stage-{t:02d}"
        rows = list(csv.DictReader((d / "moves.csv").open(newline="")))
        labels = iter(list(csv.DictReader((d / "labels.csv").open(newline=""))))
        ws = load_workbook(d / "moves.xlsx").worksheets[0]
        head = [c.value for c in ws[2]]
        now, new = head.index("ID now"), head.index("New ID")
        book = list(ws.iter_rows(min_row=3, values_only=True))
        assert len(book) == len(rows), d
        halves: dict[str, str] = {}  # cable -> the ID on it, unplugged and hanging
        for r, cells in zip(rows, book, strict=True):  # the ends unplugged find the labels as the stage starts
            if r["kind"] != "switch" and r["unplug_device"]:
                key = (phys.get(r["unplug_device"], r["unplug_device"]), r["unplug_port"])
                assert (cells[now] or "") == on.pop(key), (d.name, r["step"], r["action"], cells[now], key)
                halves[r["cable"]] = cells[now]
        for r, cells in zip(rows, book, strict=True):
            held, gets = cells[now] or "", cells[new] or ""
            assert (r.get("id_now"), r.get("new_id")) == (held, gets), (d.name, r["step"], "moves.csv's id_now, new_id")
            if r["kind"] == "switch":
                assert (held, gets) == (r["was"], r["plug_device"]), (d.name, r["step"])
                continue
            if r["action"] == "plug":
                assert held == halves[r["cable"]], (d.name, r["step"])
            elif r["action"] == "install":
                assert held == r["was"], (d.name, r["step"])
            elif r["action"] == "relabel":
                assert held == on[(phys.get(r["plug_device"], r["plug_device"]), r["plug_port"])], (d.name, r["step"])
            if r["plug_device"]:
                label = next(labels)
                assert gets == r["cable"] == label["cable"] == label["line1"].split()[0], (d.name, r["step"], gets, label)
                assert label["device"] == r["plug_device"], (d.name, r["step"])
                on[(phys.get(r["plug_device"], r["plug_device"]), r["plug_port"])] = gets
            else:  # the first half of a move in two: the ID its second half puts on; a cable removed: none
                assert gets == (r["cable"] if r["action"] == "unplug" else "") and r["action"] in ("unplug", "remove"), (d.name, r["step"])
            checked += 1
        assert next(labels, None) is None, d
    return checked


def check_ports_emptied_before_plugged(mig) -> int:
    """No row of a stage's moves.csv plugs a cable into a port that a later row of the stage empties (a technician
    following the sheet would find the port taken); returns the plugs into a port the stage empties (checked)."""
    import csv
    import json

    doc = json.loads((mig / "migrate.json").read_text())
    phys = {r["role"]: r["switch"] for r in doc["roles"]}
    checked = 0
    for t in range(1, doc["stages"] + 1):
        rows = list(csv.DictReader((mig / f"stage-{t:02d}" / "moves.csv").open(newline="")))
        emptied: dict[tuple[str, str], int] = {}
        for i, r in enumerate(rows):
            if r["kind"] != "switch" and r["action"] in ("remove", "unplug", "move"):
                emptied.setdefault((phys.get(r["unplug_device"], r["unplug_device"]), r["unplug_port"]), i)
        for i, r in enumerate(rows):
            if r["kind"] != "switch" and r["action"] in ("plug", "install", "move"):
                j = emptied.get((phys.get(r["plug_device"], r["plug_device"]), r["plug_port"]))
                if j is not None and j != i:
                    assert j < i, f"stage {t}: step {r['step']} ({r['action']} {r['cable']}) plugs into {r['plug_device']} " \
                                  f"{r['plug_port']}, which step {rows[j]['step']} ({rows[j]['action']}) empties later"
                    checked += 1
    return checked
