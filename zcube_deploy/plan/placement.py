"""Switch placement: which rack and U each switch goes in (zcube.md, architecture.md).

Even (single-rail, ToR-like) switches go to the allowed rack nearest the first server they
serve; odd (rail) switches fill the network racks in order. Switches are stacked from the top of
the rack (or ``layout.placement.top_u``) downwards into free U; servers keep their U.

Stable under growth (zcube.md section 3: no existing cable moves): placement reads where the
servers will be at capacity (``projected_slots``: the installed ones, then where the server
generator puts the next ones), never how many are installed today. An even switch whose first
server's place is not known (servers listed or read from CSV, beyond the installed ones) goes to
the network racks after every other switch, so that placing it later near its servers moves no
other switch; it is the only one that can move, and ``zcube expand`` says so.
"""

from __future__ import annotations

from zcube_deploy.errors import PlanError, Problem
from zcube_deploy.inventory import Rack, ResolvedInventory
from zcube_deploy.inventory.servers import projected_slots


def rack_distance(a: Rack, b: Rack, pitch_m: float, row_spacing_m: float) -> float:
    """Horizontal tray distance between two racks: across rows, then along the row."""
    return abs(a.row_index - b.row_index) * row_spacing_m + abs(a.position - b.position) * pitch_m


class _RackSpace:
    def __init__(self, rack: Rack, occupied: set[int], top_u: int | None):
        self.rack = rack
        self.free = [u for u in range(1, rack.u_height + 1) if u not in occupied]
        self.top = min(top_u or rack.u_height, rack.u_height)

    def take(self, height: int) -> int | None:
        """Highest free run of ``height`` U at or below the top; returns its lowest U."""
        free = set(self.free)
        for low in range(self.top - height + 1, 0, -1):
            if all(u in free for u in range(low, low + height)):
                for u in range(low, low + height):
                    self.free.remove(u)
                return low
        return None


def place_switches(inv: ResolvedInventory, switches: list[dict], servers_per_even: int) -> None:
    """Set ``rack`` and ``u`` on every switch record. Raises PlanError when they do not fit."""
    spec = inv.spec.layout
    height = inv.switch_model.u_height
    srv_height = inv.server_model.u_height
    slots = projected_slots(inv.spec, inv.racks, inv.servers, srv_height, inv.capacity_servers)
    occupied: dict[str, set[int]] = {}
    for slot in slots:
        if slot is not None:
            occupied.setdefault(slot[0], set()).update(range(slot[1], slot[1] + srv_height))
    allowed = [r for r in inv.racks if r.allow_switches]
    space = {r.name: _RackSpace(r, occupied.get(r.name, set()), spec.placement.top_u) for r in allowed}
    rack_by_name = {r.name: r for r in inv.racks}
    network = [r for r in allowed if r.role == "network"] or allowed
    problems: list[Problem] = []

    def dist(a: Rack, b: Rack) -> float:
        return rack_distance(a, b, spec.rack_pitch_m, spec.row_spacing_m)

    def nearest(anchor: Rack | None, pool: list[Rack]) -> list[Rack]:
        if anchor is None:
            return pool
        return sorted(pool, key=lambda r: (dist(anchor, r), r.row_index, r.position, r.name))

    centre = None
    known = [slot[0] for slot in slots if slot is not None and slot[0] in rack_by_name]
    if known:
        racks_used = sorted({rack_by_name[name] for name in known}, key=lambda r: (r.row_index, r.position))
        centre = racks_used[len(racks_used) // 2]

    def put(sw: dict, order: list[Rack]) -> None:
        for rack in order:
            u = space[rack.name].take(height)
            if u is not None:
                sw["rack"], sw["u"] = rack.name, u
                return
        problems.append(Problem("layout", f"no room for switch {sw['name']} ({height}U) in the racks allowed to hold switches",
                                "allow more racks to hold switches (role: network or allow_switches: true) or free U"))

    evens = [s for s in switches if s["group"] == "even"]
    odds = [s for s in switches if s["group"] == "odd"]
    unanchored = []
    for sw in sorted(evens, key=lambda s: (s["index"], s["plane"])):
        if spec.placement.even != "near_servers":
            put(sw, network)
            continue
        first = sw["index"] * servers_per_even
        slot = slots[first] if first < len(slots) else None
        if slot is None or slot[0] not in rack_by_name:
            unanchored.append(sw)
        else:
            put(sw, nearest(rack_by_name[slot[0]], allowed))
    for sw in sorted(odds, key=lambda s: (s["plane"], s["index"])):
        if spec.placement.odd == "near_servers":
            put(sw, nearest(centre, allowed))
        else:
            put(sw, network)
    for sw in unanchored:
        put(sw, network)
    if problems:
        raise PlanError(problems[:1] + ([Problem("layout", f"... and {len(problems) - 1} more switches do not fit")] if len(problems) > 1 else []),
                        "cannot place switches")
