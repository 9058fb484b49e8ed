"""The management guard: refuse a change that would cut the session's own management path (pure).

Push reaches a switch through its management address. A remediation that removed or changed the
interface holding that address, its address, or a route through the management network, or that
put an overlapping address on another interface, would cut the session mid-push (and every later
one). Such a switch is refused: nothing is sent, the reason is in the report.

The check compares the device before and after the change, both as neutral layer-3 facts that the
platform parses (``l3_facts``): the interface holding each management address, its prefix, and every
route whose next hop lies in a management subnet.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface, ip_address


def after_change(running_tree_text: str, intended_text: str, owns, parse) -> str:
    """The config the device would have after push: running outside the scope + intended inside it."""
    keep = [c for c in parse(running_tree_text).children if not owns(c.text)]
    take = [c for c in parse(intended_text).children if owns(c.text)]
    out: list[str] = []
    for c in keep + take:
        out.extend(_lines(c))
    return "\n".join(out) + "\n"


def _lines(child) -> list[str]:
    out = [" " * (child.depth() - 1) + child.text]
    for sub in child.children:
        out.extend(_lines(sub))
    return out


def management_unchecked(before: dict, mgmt_addresses: list[str]) -> str | None:
    """Why the guard cannot check this switch (no interface of ``before`` holds a management address), or None.

    >>> management_unchecked({"interfaces": {"mgmt": ["172.16.0.11/24"]}, "routes": []}, ["172.16.0.11"]) is None
    True
    >>> management_unchecked({"interfaces": {}, "routes": []}, ["127.0.0.1", "172.16.0.11"])
    'the management guard could not run: no interface of the running config holds 127.0.0.1 or 172.16.0.11'
    """
    addrs = set()
    for a in mgmt_addresses:
        try:
            addrs.add(ip_address(a))
        except ValueError:
            continue
    if any(IPv4Interface(text).ip in addrs for lst in before["interfaces"].values() for text in lst):
        return None
    return f"the management guard could not run: no interface of the running config holds {' or '.join(mgmt_addresses)}"


def management_problems(before: dict, after: dict, mgmt_addresses: list[str]) -> list[str]:
    """Why the change from ``before`` to ``after`` (l3_facts) would cut management; [] when it would not."""
    problems: list[str] = []
    addrs = []
    for a in mgmt_addresses:
        try:
            addrs.append(ip_address(a))
        except ValueError:
            continue
    held = {}  # address -> (interface, IPv4Interface)
    for name, lst in before["interfaces"].items():
        for text in lst:
            itf = IPv4Interface(text)
            if itf.ip in addrs:
                held[itf.ip] = (name, itf)
    if not held:
        return problems
    mgmt_nets = [itf.network for _, itf in held.values()]
    for ip, (name, itf) in sorted(held.items()):
        now = after["interfaces"].get(name)
        if now is None:
            problems.append(f"it would remove interface {name}, which holds the management address {ip}")
        elif str(itf) not in now:
            problems.append(f"it would change the address of {name} ({itf} -> {', '.join(now) or 'none'}), "
                            f"the management interface")
    for name, lst in after["interfaces"].items():
        if name in {n for n, _ in held.values()}:
            continue
        for text in lst:
            net = IPv4Interface(text).network
            if text not in before["interfaces"].get(name, []) and any(net.overlaps(m) for m in mgmt_nets):
                problems.append(f"it would put {text} on {name}, overlapping the management subnet "
                                f"{', '.join(str(m) for m in mgmt_nets)}")
    mgmt_routes = [r for r in before["routes"] if any(IPv4Address(r[1]) in m for m in mgmt_nets)]
    after_routes = set(map(tuple, after["routes"]))
    for net, nh in mgmt_routes:
        if (net, nh) not in after_routes:
            problems.append(f"it would remove the route {net} via {nh}, which goes through the management network")
    return problems
