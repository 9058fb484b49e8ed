"""Media stage: where each cable's ends are (rack, U), how long it is, which medium and part.

Length: inside one rack, the U distance plus slack; between racks, up from each end to the
overhead tray, along the tray (across rows, then along the row), down again, plus a fixed and a
proportional slack; rounded up to the medium's next stock length.

Medium: the lanes of a split cage share one breakout cable or one optic, so a medium is chosen
per cage group (cages joined by cables, found with a union-find): the first medium in the
catalog's preference whose reach and stock lengths cover the group's longest leg. The legs of the
GPU ports not installed yet count too, where ``projected_slots`` knows their server's place: a
cage's medium is chosen for the capacity, so a server added later never changes the breakout cable
or optic its cage-mates already have (growth moves no cable, zcube.md section 3).
"""

from __future__ import annotations

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.inventory import ResolvedInventory
from zcube_deploy.inventory.servers import projected_slots
from zcube_deploy.plan.placement import rack_distance


def _find(parent: dict, x):
    root = x
    while parent.get(root, root) != root:
        root = parent[root]
    while parent.get(x, x) != root:
        parent[x], x = root, parent[x]
    return root


def run_length_m(ua: int, ub: int, horiz_m: float | None, height_a: int, height_b: int, u_pitch: float, lm) -> float:
    """The estimated run between U ``ua`` and U ``ub`` (before rounding to a stock length): in one rack
    (``horiz_m`` None) the U distance plus slack; between racks ``horiz_m`` apart along the tray, up from each end
    (racks of ``height_a`` / ``height_b`` U) to the tray, along it, down again, plus the length model's slack."""
    if horiz_m is None:
        return abs(ua - ub) * u_pitch + lm.same_rack_slack_m
    up = (height_a - ua) * u_pitch + (height_b - ub) * u_pitch + 2 * lm.tray_above_rack_m
    return (horiz_m + up) * (1 + lm.slack_percent / 100) + lm.slack_m


def cables_with_media(inv: ResolvedInventory, acc: dict) -> dict:
    """The wiring's cables, each a new row with its ends' rack and U, length, medium and part."""
    cat = inv.cabling
    lm = cat.length_model
    lay = inv.spec.layout
    racks = {r.name: r for r in inv.racks}
    where: dict[str, tuple[str, int]] = {s.name: (s.rack, s.u) for s in inv.servers}
    for sw in acc["switches"]:
        where[sw["name"]] = (sw["rack"], sw["u"])
    cage_of = acc["port_map"]["cage_of"]
    speed = acc["port_map"]["speed"]
    u_pitch = lay.u_pitch_m
    dist_cache: dict[tuple[str, str], float] = {}

    def length(a: tuple[str, int], b: tuple[str, int]) -> float:
        (ra, ua), (rb, ub) = a, b
        if ra == rb:
            return run_length_m(ua, ub, None, 0, 0, u_pitch, lm)
        key = (ra, rb)
        horiz = dist_cache.get(key)
        if horiz is None:
            horiz = dist_cache[key] = rack_distance(racks[ra], racks[rb], lay.rack_pitch_m, lay.row_spacing_m)
        return run_length_m(ua, ub, horiz, racks[ra].u_height, racks[rb].u_height, u_pitch, lm)

    parent: dict = {}
    legs = []
    for c in acc["cables"]:
        a, b = c["a"], c["b"]
        wa, wb = where[a["device"]], where[b["device"]]
        c = {**c, "a": {**a, "rack": wa[0], "u": wa[1]}, "b": {**b, "rack": wb[0], "u": wb[1]}}
        est = length(wa, wb)
        cb = (b["device"], cage_of[b["port"]][1])
        if c["kind"] == "fabric":
            ca = (a["device"], cage_of[a["port"]][1])
            ra, rb = _find(parent, ca), _find(parent, cb)
            if ra != rb:
                parent[ra] = rb
        legs.append((c, est, cb))
    longest: dict = {}
    for est, cb in _future_legs(inv, acc, where, length):
        root = _find(parent, cb)
        if est > longest.get(root, 0.0):
            longest[root] = est
    for _c, est, cb in legs:
        root = _find(parent, cb)
        if est > longest.get(root, 0.0):
            longest[root] = est
    choice: dict = {}
    problems: list[Problem] = []
    for root, est in longest.items():
        for name in cat.media_preference:
            med = cat.media[name]
            if est <= med.reach_m and est <= med.lengths_m[-1]:
                choice[root] = name
                break
        else:
            problems.append(Problem("cabling_catalog.media_preference",
                                    f"a run of {est:.1f} m (switch {root[0]} cage {root[1]}) exceeds every preferred medium",
                                    "add a longer medium or stock length, or move the switch closer"))
    if problems:
        raise InputErrors(problems[:5], "cables do not fit the cabling catalog")
    cables = []
    parts: dict[tuple[str, float], str] = {}  # (medium, stock length) -> part number: a few dozen, for ~10^5 cables
    for c, est, cb in legs:
        name = choice[_find(parent, cb)]
        med = cat.media[name]
        stock = next(x for x in med.lengths_m if x >= est - 1e-9)
        c["length_m"] = stock
        c["estimate_m"] = round(est, 2)
        c["medium"] = name
        part = parts.get((name, stock))
        if part is None:
            part = parts[(name, stock)] = med.part.format(speed=speed, length=f"{stock:g}", kind=med.kind)
        c["part"] = part
        cables.append(c)
    return {"cables": cables}


def _future_legs(inv: ResolvedInventory, acc: dict, where: dict, length) -> list[tuple[float, tuple[str, int]]]:
    """(estimated length, switch cage) of every host port the capacity's GPUs not installed yet will use,
    where the place of their server is known (the wiring rule of zcube.md section 3)."""
    sz = acc["sizing"]
    if isinstance(sz, dict):  # a ROFT's sizing (designs/roft): its growth's cages are not projected (docs/roft.md)
        return []
    G, S, K = sz.gpus_per_server, sz.S, sz.K
    installed = len(inv.servers)
    if inv.capacity_servers <= installed:
        return []
    slots = projected_slots(inv.spec, inv.racks, inv.servers, inv.server_model.u_height, inv.capacity_servers)
    by_key = {(s["plane"], s["group"], s["index"]): s["name"] for s in acc["switches"]}
    host, cage_of = acc["host_port_names"], acc["port_map"]["cage_of"]
    out = []
    for g in range(installed * G, inv.capacity_servers * G):
        slot = slots[g // G]
        if slot is None:
            continue
        for plane in range(inv.planes):
            for group, idx, port in (("odd", g % S, g // S), ("even", g // K, g % K)):
                name = by_key[(plane, group, idx)]
                out.append((length(slot, where[name]), (name, cage_of[host[port]][1])))
    return out

