"""Switch placement: which rack and U each switch goes in (zcube.md, architecture.md).

Even (single-rail, ToR-like) switches go to the allowed rack nearest the first server they
serve; odd (rail) switches fill the network racks in order. Switches are stacked from the top of
the rack (or ``layout.placement.top_u``) downwards into free U; servers keep their U.
"""

from __future__ import annotations

from zcube_deploy.errors import PlanError, Problem
from zcube_deploy.inventory import Rack, ResolvedInventory


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
    occupied: dict[str, set[int]] = {}
    for s in inv.servers:
        occupied.setdefault(s.rack, set()).update(range(s.u, s.u + srv_height))
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
    if inv.servers:
        racks_used = sorted({rack_by_name[s.rack] for s in inv.servers}, key=lambda r: (r.row_index, r.position))
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
    for sw in sorted(evens, key=lambda s: (s["index"], s["plane"])):
        anchor = None
        if spec.placement.even == "near_servers":
            first = sw["index"] * servers_per_even
            if first < len(inv.servers):
                anchor = rack_by_name[inv.servers[first].rack]
        put(sw, nearest(anchor, allowed) if anchor else network)
    for sw in sorted(odds, key=lambda s: (s["plane"], s["index"])):
        if spec.placement.odd == "near_servers":
            put(sw, nearest(centre, allowed))
        else:
            put(sw, network)
    if problems:
        raise PlanError(problems[:1] + ([Problem("layout", f"... and {len(problems) - 1} more switches do not fit")] if len(problems) > 1 else []),
                        "cannot place switches")
