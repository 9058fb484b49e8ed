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

``layout.placement.switches`` names switches' places outright (rack, lowest U): those switches stand
there and the rule places the others around them, never on a U an explicit place or a server holds
(docs/inventory.md; what ``zcube migrate`` suggests to keep every reused switch where it stands).
Every problem with them (unknown switch or rack, a rack that holds no switches, a U range over the
rack's height, a U a server or another explicit place holds) is collected and raised at once.
"""

from __future__ import annotations

from zcube_deploy.errors import InputErrors, PlanError, Problem, names_hint
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

    def hold(self, low: int, height: int) -> None:
        """Take U ``low`` .. ``low + height - 1`` (an explicit place: checked free by the caller)."""
        for u in range(low, low + height):
            self.free.remove(u)

    def take(self, height: int) -> int | None:
        """Highest free run of ``height`` U at or below the top; returns its lowest U."""
        free = set(self.free)
        for low in range(self.top - height + 1, 0, -1):
            if all(u in free for u in range(low, low + height)):
                for u in range(low, low + height):
                    self.free.remove(u)
                return low
        return None


def explicit_places(inv: ResolvedInventory, names: list[str], servers_at: dict[str, dict[int, str]]) -> dict[str, tuple[str, int]]:
    """``layout.placement.switches`` checked: switch name -> (rack, lowest U). ``servers_at``: rack -> U -> the
    server standing there (at capacity). Raises InputErrors naming every problem, each at its data path."""
    height = inv.switch_model.u_height
    rack_by_name = {r.name: r for r in inv.racks}
    known = set(names)
    problems: list[Problem] = []
    held: dict[tuple[str, int], str] = {}
    places: dict[str, tuple[str, int]] = {}
    for name, place in inv.spec.layout.placement.switches.items():
        path = f"layout.placement.switches.{name}"
        rack = rack_by_name.get(place.rack)
        top = place.u + height - 1
        if name not in known:
            problems.append(Problem(path, f"no switch is named {name!r}", names_hint(name, names, "switch")))
        if rack is None:
            problems.append(Problem(path + ".rack", f"no rack is named {place.rack!r}", names_hint(place.rack, list(rack_by_name), "rack")))
            continue
        if not rack.allow_switches:
            problems.append(Problem(path + ".rack", f"rack {rack.name} does not hold switches (role {rack.role}, allow_switches false)",
                                    "pick a rack that allows switches (role: network or allow_switches: true)"))
        if top > rack.u_height:
            problems.append(Problem(path + ".u", f"switch {name} at U{place.u} (height {height}U) ends at U{top}, above rack {rack.name}'s {rack.u_height}U"))
        clash = sorted({f"server {servers_at[rack.name][u]}" for u in range(place.u, top + 1) if u in servers_at.get(rack.name, {})}
                       | {f"switch {held[(rack.name, u)]}" for u in range(place.u, top + 1) if (rack.name, u) in held})
        if clash:
            problems.append(Problem(path + ".u", f"switch {name} at U{place.u}-U{top} of rack {rack.name} overlaps {', '.join(clash)}"))
        held.update({(rack.name, u): name for u in range(place.u, top + 1)})
        places[name] = (rack.name, place.u)
    if problems:
        raise InputErrors(problems, f"invalid switch places (layout.placement.switches) in {inv.source or 'the inventory'}")
    return places


def place_switches(inv: ResolvedInventory, switches: list[dict], servers_per_even: int) -> None:
    """Set ``rack`` and ``u`` on every switch record: the explicit places first, the rule's around them. Raises
    InputErrors on a bad explicit place, PlanError when the switches do not fit."""
    spec = inv.spec.layout
    height = inv.switch_model.u_height
    srv_height = inv.server_model.u_height
    slots = projected_slots(inv.spec, inv.racks, inv.servers, srv_height, inv.capacity_servers)
    servers_at: dict[str, dict[int, str]] = {}
    for k, slot in enumerate(slots):
        if slot is not None:
            who = inv.servers[k].name if k < len(inv.servers) else f"#{k + 1} (a server to come, within the capacity)"
            servers_at.setdefault(slot[0], {}).update(dict.fromkeys(range(slot[1], slot[1] + srv_height), who))
    explicit = explicit_places(inv, [s["name"] for s in switches], servers_at) if spec.placement.switches else {}
    allowed = [r for r in inv.racks if r.allow_switches]
    space = {r.name: _RackSpace(r, set(servers_at.get(r.name, {})), spec.placement.top_u) for r in allowed}
    for rack_name, u in explicit.values():
        space[rack_name].hold(u, height)
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
        if sw["name"] in explicit:
            sw["rack"], sw["u"] = explicit[sw["name"]]
            return
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
