"""Self-check after rendering: parse each switch config back (hier_config) and compare with the plan.

A mismatch is an error: the rendered file must carry exactly the plan's interfaces, addresses
and routes (nothing missing, nothing extra).
"""

from __future__ import annotations

from zcube_deploy.devices.hconfig import parse_config
from zcube_deploy.plan.ipam import dotted_mask


def check_switch_config(text: str, sw: dict, unused: list[str], mgmt_interface: str, mgmt_prefix_len: int,
                        bgp: dict | None = None) -> list[str]:
    cfg = parse_config(text)
    problems: list[str] = []
    name = sw["name"]
    host = [c.text for c in cfg.get_children(startswith="hostname ")]
    if host != [f"hostname {name}"]:
        problems.append(f"{name}: hostname lines {host}")
    expected = {i["name"]: f"ip address {i['address']} {dotted_mask(i['prefix_len'])}" for i in sw["interfaces"]}
    expected[mgmt_interface] = f"ip address {sw['mgmt_address']} {dotted_mask(mgmt_prefix_len)}"
    expected["Loopback 0"] = f"ip address {sw['loopback']} 255.255.255.255"
    routed = {i["name"] for i in sw["interfaces"]}
    seen: dict[str, list[str]] = {}
    shut: set[str] = set()
    for itf in cfg.get_children(startswith="interface "):
        iname = itf.text[len("interface "):]
        children = [c.text for c in itf.children]
        seen[iname] = [c for c in children if c.startswith("ip address ")]
        if "shutdown" in children:
            shut.add(iname)
        if iname in routed and "no switchport" not in children:
            problems.append(f"{name} {iname}: not a routed port (no 'no switchport')")
    for iname, line in expected.items():
        if seen.get(iname) != [line]:
            problems.append(f"{name} {iname}: expected '{line}', found {seen.get(iname, 'no such interface')}")
    for iname, lines in seen.items():
        if iname not in expected and lines:
            problems.append(f"{name} {iname}: address {lines} not in the plan")
    for iname in routed & shut:
        problems.append(f"{name} {iname}: planned link is shut down")
    missing_shut = [u for u in unused if u not in shut]
    if missing_shut:
        problems.append(f"{name}: {len(missing_shut)} unused ports not shut, e.g. {missing_shut[0]}")
    want = {f"ip route {r['prefix'].split('/')[0]} {dotted_mask(int(r['prefix'].split('/')[1]))} {r['next_hop']}" for r in sw["routes"]}
    if bgp is not None:
        want |= set(bgp["discard_routes"])
        problems += _check_bgp(cfg, sw, bgp)
    have = [c.text for c in cfg.get_children(startswith="ip route ")]
    if len(have) != len(set(have)):
        problems.append(f"{name}: duplicate static routes")
    for r in sorted(want - set(have))[:5]:
        problems.append(f"{name}: missing '{r}'")
    for r in sorted(set(have) - want)[:5]:
        problems.append(f"{name}: unexpected '{r}'")
    return problems


def _check_bgp(cfg, sw: dict, bgp: dict) -> list[str]:
    """Mode bgp: one `router bgp <asn>`, exactly one neighbour per fabric /31 peer with the peer's
    ASN and BFD, BFD on every fabric port, the host block and loopback announced."""
    name = sw["name"]
    problems = []
    routers = cfg.get_children(startswith="router bgp ")
    routers = list(routers)
    if [r.text for r in routers] != [f"router bgp {sw['asn']}"]:
        return [f"{name}: expected one 'router bgp {sw['asn']}', found {[r.text for r in routers]}"]
    lines = [c.text for c in routers[0].all_children()]
    want = set()
    for n in bgp["neighbors"]:
        want |= {f"neighbor {n['address']} remote-as {n['remote_as']}", f"neighbor {n['address']} fall-over bfd"}
    have = {x for x in lines if x.startswith("neighbor ")}
    for x in sorted(want - have)[:5]:
        problems.append(f"{name}: missing '{x}' under router bgp")
    for x in sorted(have - want)[:5]:
        problems.append(f"{name}: unexpected '{x}' under router bgp")
    peers = {i["peer"]["address"] for i in sw["interfaces"] if i["kind"] == "fabric"}
    if {n["address"] for n in bgp["neighbors"]} != peers:
        problems.append(f"{name}: BGP neighbours differ from the fabric /31 peers")
    for x in bgp["networks"]:
        if x not in lines:
            problems.append(f"{name}: missing '{x}' under router bgp")
    fabric = {i["name"] for i in sw["interfaces"] if i["kind"] == "fabric"}
    for itf in cfg.get_children(startswith="interface "):
        iname = itf.text[len("interface "):]
        has_bfd = any(c.text.startswith("bfd interval ") for c in itf.children)
        if (iname in fabric) != has_bfd:
            problems.append(f"{name} {iname}: {'no BFD on a fabric port' if iname in fabric else 'BFD on a non-fabric port'}")
    return problems
