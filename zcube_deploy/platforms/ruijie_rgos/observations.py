"""What an RGOS switch reports, parsed into verify's neutral structure (pure: text in, dict out)."""

from __future__ import annotations

import re
from functools import lru_cache

from zcube_deploy.platforms.ruijie_rgos.fastparse import (
    interface_status,
    ip_route,
    running_config,
    running_reading,
)
from zcube_deploy.platforms.ruijie_rgos.names import long_name
from zcube_deploy.platforms.ruijie_rgos.parsers import parse
from zcube_deploy.platforms.ruijie_rgos.show_lldp import lldp_rows

ADMIN_DOWN_STATUS = "disabled"  # `show interface status`'s Status of a port shut in its config ("down": no link)

# a port's long name (pure; every switch of a fabric reports the same few hundred port names: each read once a process)
_long_name = lru_cache(maxsize=8192)(long_name)


def observe(outputs: dict[str, str]) -> dict:
    """{command: raw text} -> {"hostname", "interfaces": {name: {"up", "vlan", "shut"}}, "lldp": {port: [..]}, "static_routes": [...]}

    ``shut``: the port is shut in its config (administratively down): `show interface status` prints
    ``disabled`` in its Status column, where a port without link reads ``down``."""
    run = outputs.get("show running-config", "")
    m = re.search(r"^hostname (\S+)", run.replace("\r", ""), re.MULTILINE)
    hostname = m.group(1) if m else None
    interfaces = {_long_name(r["interface"]): {"up": r["status"].lower() == "up", "vlan": r["vlan"],
                                               "shut": r["status"].lower() == ADMIN_DOWN_STATUS}
                  for r in interface_status(outputs.get("show interface status", ""))}  # the TextFSM template's rows, faster
    lldp: dict[str, list[dict]] = {}
    for r in lldp_rows(outputs.get("show lldp neighbors detail", "")):  # the TextFSM template's rows, read whole (show_lldp.py)
        lldp.setdefault(_long_name(r["local_interface"]), []).append({
            "system_name": r["system_name"], "port_id": r["port_id"], "port_id_type": r["port_id_type"],
            "chassis_id": r["chassis_id"], "management_address": r["management_address"]})
    rib = ip_route(outputs.get("show ip route", ""))  # the TextFSM template's rows, faster (fastparse.py)
    routes = sorted({(f"{r['network']}/{r['prefix_length']}", r["nexthop_ip"]) for r in rib if r["protocol"].startswith("S")})
    bgp_routes: dict[str, list[str]] = {}
    for r in rib:
        if r["protocol"].startswith("B") and r["nexthop_ip"]:
            bgp_routes.setdefault(f"{r['network']}/{r['prefix_length']}", []).append(r["nexthop_ip"])

    # the config's addresses and BGP part, and its sections, which audit's drift of the same text reads next (fastparse.py)
    _, addresses, bgp_config = running_reading(run)
    return {"hostname": hostname, "interfaces": interfaces, "lldp": lldp, "static_routes": [list(r) for r in routes],
            "addresses": addresses if run else {}, "bgp": observe_bgp(outputs, bgp_config),
            "bgp_routes": {k: sorted(set(v)) for k, v in sorted(bgp_routes.items())}}


def observe_bgp(outputs: dict[str, str], config: dict | None = None) -> dict | None:
    """Sessions (show ip bgp summary), BFD (show bfd neighbors) and the BGP part of the running config
    (``config``: fastparse.running_config's, when the caller has it); None when `show ip bgp summary` was
    not collected (an old recording)."""
    if "show ip bgp summary" not in outputs:
        return None
    rows = parse("show ip bgp summary", outputs["show ip bgp summary"])
    sessions = {}
    for r in rows:
        st = r["state_pfxrcd"]
        sessions[r["neighbor"]] = {"remote_as": _as_int(r["remote_as"]), "state": "Established" if st.isdigit() else st,
                                   "prefixes": int(st) if st.isdigit() else None}
    local_as = _as_int(rows[0]["local_as"]) if rows else None
    bfd = {r["neigh_addr"]: {"state": r["state"], "local": r["our_addr"]}
           for r in parse("show bfd neighbors", outputs.get("show bfd neighbors", ""))}
    if config is None:
        config = running_config(outputs.get("show running-config", ""))[1]
    return {"local_as": local_as if local_as is not None else config["asn"], "sessions": sessions, "bfd": bfd, "config": config}


def _as_int(text: str) -> int | None:
    """'4200000001' or asdot '64086.59905' -> int."""
    if not text:
        return None
    if "." in text:
        hi, lo = text.split(".", 1)
        return int(hi) * 65536 + int(lo)
    return int(text)
