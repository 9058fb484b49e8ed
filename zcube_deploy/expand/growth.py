"""Growth: does a new plan keep every row of the old one? (issue 26 item 4; zcube.md section 3)

An expansion may only add: new servers, their cables and the switch ports those cables use. This
module compares two plans row by row, by each row's own key (a cable by its ID, a switch by its
name, an interface by its name, a server by its name, a route by prefix and next hop), and never
asks the planner: a row of the old plan that the new one lacks or holds differently is a problem.
Every problem is collected (the caller refuses with all of them, exit 2).

What must stay, exactly as it was:

- the fabric-wide facts: the design, the cluster, the sizing (S, K, m, planes, capacity, ports),
  the port map, the addressing pools and aggregates, the routing section, the settings;
- every rack of the old layout (name, row, position, role, height);
- every switch: its rack and U, addresses, ASN, host block, every interface row (address, peer,
  cable) and every static route;
- every server: rack, U, index and every NIC port (address, gateway, routes, switch port, cable);
- every cable: both ends (device, port, rack, U), its length, medium and part.

What may change: the counts and the installed figures (``sizing.installed_*``), the inputs' hashes,
the checks' details, ``addressing.used``; and rows may be added.
"""

from __future__ import annotations

from dataclasses import dataclass

from zcube_deploy.errors import Problem

# sections compared whole, except the keys listed (they count what is installed)
FABRIC_SECTIONS: dict[str, tuple[str, ...]] = {
    "cluster": (),
    "sizing": ("installed_servers", "installed_gpus"),
    "port_map": (),
    "addressing": ("used",),
    "routing": (),
    "settings": (),
}
HINT = ("an expansion only adds servers at the end (GPU indices follow the inventory's order), keeps the "
        "capacity, pools, routing and layout, and stays within topology.capacity_servers")


@dataclass(frozen=True)
class Growth:
    """What the new plan adds to the old one (the names of what is new), and what it would break."""

    problems: list[Problem]
    new_servers: list[str]
    new_cables: list[str]
    new_interfaces: dict[str, list[str]]  # switch -> interface names it gains
    new_routes: dict[str, int]  # switch -> static routes it gains (none when the capacity is kept)

    @property
    def changed_switches(self) -> list[str]:
        """The switches the expansion touches: those that gain an interface or a route."""
        return sorted(set(self.new_interfaces) | set(self.new_routes))


def _fields(old: dict, new: dict, skip: tuple[str, ...] = ()) -> list[str]:
    """``key: old -> new`` for every key that differs (a key only one side has counts as differing)."""
    keys = sorted((old.keys() | new.keys()) - set(skip))
    return [f"{k}: {_short(old.get(k, '(none)'))} -> {_short(new.get(k, '(none)'))}" for k in keys if old.get(k) != new.get(k)]


def _short(value) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _changed(path: str, what: str, fields: list[str]) -> Problem:
    return Problem(path, f"{what} would change: " + "; ".join(fields[:4]) + (f"; and {len(fields) - 4} more fields" if len(fields) > 4 else ""))


def _gone(path: str, what: str) -> Problem:
    return Problem(path, f"{what} would go")


def _fabric(old: dict, new: dict, problems: list[Problem]) -> None:
    if old.get("design", "zcube") != new.get("design", "zcube"):
        problems.append(_changed("design", "the design", [f"{old.get('design', 'zcube')} -> {new.get('design', 'zcube')}"]))
    for section, skip in FABRIC_SECTIONS.items():
        diff = _fields(old.get(section) or {}, new.get(section) or {}, skip)
        if diff:
            problems.append(_changed(section, f"the plan's {section}", diff))
    layout_o, layout_n = dict(old["layout"]), dict(new["layout"])
    diff = _fields({k: v for k, v in layout_o.items() if k != "racks"}, {k: v for k, v in layout_n.items() if k != "racks"})
    if diff:
        problems.append(_changed("layout", "the layout", diff))
    racks = {r["name"]: r for r in layout_n["racks"]}
    for r in layout_o["racks"]:
        if r["name"] not in racks:
            problems.append(_gone(f"layout.racks[{r['name']}]", f"rack {r['name']}"))
        elif racks[r["name"]] != r:
            problems.append(_changed(f"layout.racks[{r['name']}]", f"rack {r['name']}", _fields(r, racks[r["name"]])))


def _kept(path: str, old_rows: list[dict], new_rows: list[dict], key, what, problems: list[Problem]) -> list:
    """Each row of ``old_rows`` (by ``key``) still in ``new_rows`` unchanged, else a problem at ``path[key]``
    (``what(row)`` names it); returns the keys ``new_rows`` adds, in their order."""
    now = {key(r): r for r in new_rows}
    had = set()
    for r in old_rows:
        k = key(r)
        had.add(k)
        if k not in now:
            problems.append(_gone(f"{path}[{k}]", what(r)))
        elif now[k] != r:
            problems.append(_changed(f"{path}[{k}]", what(r), _fields(_flat(r), _flat(now[k]))))
    return [k for k in now if k not in had]


def _switches(old: dict, new: dict, problems: list[Problem]) -> tuple[dict[str, list[str]], dict[str, int]]:
    by_name = {s["name"]: s for s in new["switches"]}
    gained: dict[str, list[str]] = {}
    routes_gained: dict[str, int] = {}
    for sw in old["switches"]:
        name = sw["name"]
        path = f"switches[{name}]"
        now = by_name.get(name)
        if now is None:
            problems.append(_gone(path, f"switch {name}"))
            continue
        diff = _fields(sw, now, ("interfaces", "routes"))
        if diff:
            problems.append(_changed(path, f"switch {name}", diff))
        added = _kept(f"{path}.interfaces", sw["interfaces"], now["interfaces"], lambda i: i["name"],
                      lambda i, n=name: f"{n} {i['name']} ({i['cable']})", problems)
        if added:
            gained[name] = sorted(added)
        routes = _kept(f"{path}.routes", sw["routes"], now["routes"], lambda r: f"{r['prefix']} via {r['next_hop']}",
                       lambda r, n=name: f"route {r['prefix']} via {r['next_hop']} on {n}", problems)
        if routes:
            routes_gained[name] = len(routes)
    return gained, routes_gained


def _flat(row: dict, prefix: str = "") -> dict:
    """A nested row as ``a.b`` keys, so that a changed field is named where it is."""
    out: dict = {}
    for k, v in row.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


def _servers(old: dict, new: dict, problems: list[Problem]) -> list[str]:
    by_name = {s["name"]: s for s in new["servers"]}
    for srv in old["servers"]:
        path = f"servers[{srv['name']}]"
        now = by_name.get(srv["name"])
        if now is None:
            problems.append(_gone(path, f"server {srv['name']}"))
            continue
        diff = _fields(srv, now, ("nics",))
        if diff:
            problems.append(_changed(path, f"server {srv['name']}", diff))
        _kept(f"{path}.nics", srv["nics"], now["nics"], lambda n: n["port"], lambda n, s=srv["name"]: f"{s} {n['port']}", problems)
    known = {s["name"] for s in old["servers"]}
    return [s["name"] for s in new["servers"] if s["name"] not in known]


def _cables(old: dict, new: dict, problems: list[Problem]) -> list[str]:
    return _kept("cables", old["cables"], new["cables"], lambda c: c["id"],
                 lambda c: f"cable {c['id']} ({c['a']['device']} {c['a']['port']} <-> {c['b']['device']} {c['b']['port']})", problems)


def compare_growth(old: dict, new: dict) -> Growth:
    """Every row of ``old`` kept in ``new`` (problems for each one that moves or goes) and what ``new`` adds."""
    problems: list[Problem] = []
    _fabric(old, new, problems)
    gained, routes = _switches(old, new, problems)
    servers = _servers(old, new, problems)
    cables = _cables(old, new, problems)
    return Growth(problems, servers, cables, gained, routes)
