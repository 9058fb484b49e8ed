"""The plan summary that `zcube plan` prints (pure: a dict from the plan)."""

from __future__ import annotations


def plan_summary(plan: dict) -> dict:
    if "leaves_per_plane" in plan["sizing"]:
        return roft_summary(plan)
    sz, counts, pm, ad = plan["sizing"], plan["counts"], plan["port_map"], plan["addressing"]
    R = sz["logical_ports"]
    used_host = counts["host_cables"]
    switches = counts["switches"]
    used_fabric = 2 * counts["fabric_cables"]
    return {
        "cluster": plan["cluster"]["name"],
        "design": plan.get("design", "zcube"),
        "gpus_installed": sz["installed_gpus"],
        "gpus_capacity": sz["capacity_gpus"],
        "servers_installed": sz["installed_servers"],
        "servers_capacity": sz["capacity_gpus"] // sz["gpus_per_server"],
        "planes": sz["planes"],
        "S": sz["S"], "K": sz["K"], "m": sz["m"], "R": R,
        "rail_switches": sz["rail"],
        "sizing_reasons": sz["reasons"],
        "switches_per_group": sz["S"],
        "switches": switches,
        "switch_model": plan["cluster"]["switch_model"],
        "host_cables": counts["host_cables"],
        "fabric_cables": counts["fabric_cables"],
        "static_routes": counts["static_routes"],
        "routing_mode": plan["routing"]["mode"],
        "routing": routing_text(plan),
        "ports": {
            "total": switches * R,
            "host_used": used_host,
            "host_reserved_for_growth": switches * sz["K"] - used_host,
            "fabric_used": used_fabric,
            "free": switches * R - switches * sz["K"] - used_fabric,
            "host_cages": pm["host_cages"], "fabric_cages": pm["fabric_cages"],
        },
        "pools": {k: {"used": ad["used"][k], "size": ad["size"][k]} for k in ad["used"]},
        "invariants": {c["name"]: c["status"] for c in plan["checks"]},
        "invariants_passed": all(c["status"] != "failed" for c in plan["checks"]),
    }


def roft_summary(plan: dict) -> dict:
    """A ROFT plan's summary (docs/roft.md): the common figures and its shape of pods, leaves and spines."""
    sz, counts, ad, maps = plan["sizing"], plan["counts"], plan["addressing"], plan["port_maps"]
    return {
        "cluster": plan["cluster"]["name"],
        "design": "roft",
        "gpus_installed": sz["installed_gpus"],
        "gpus_capacity": sz["capacity_gpus"],
        "servers_installed": sz["installed_servers"],
        "servers_capacity": sz["capacity_servers"],
        "planes": sz["planes"],
        **{k: sz[k] for k in ("pods", "servers_per_pod", "leaves_per_plane", "spines_per_plane", "uplinks_per_leaf", "links_per_pair",
                              "fabric_speed", "host_ports_per_leaf")},
        "sizing_reasons": sz["reasons"],
        "switches": counts["switches"],
        "switch_model": plan["cluster"]["switch_model"],
        "host_cables": counts["host_cables"],
        "fabric_cables": counts["fabric_cables"],
        "routing_mode": plan["routing"]["mode"],
        "routing": routing_text(plan),
        "cages": {role: {"host": pm["host_cages"], "fabric": pm["fabric_cages"]} for role, pm in maps.items()},
        "pools": {k: {"used": ad["used"][k], "size": ad["size"][k]} for k in ad["used"]},
        "invariants": {c["name"]: c["status"] for c in plan["checks"]},
        "invariants_passed": all(c["status"] != "failed" for c in plan["checks"]),
    }


def shape_text(sz: dict) -> str:
    """The fabric's shape in one line (a ZCube's S, K, m; a ROFT's pods, leaves and spines)."""
    if "leaves_per_plane" in sz:
        return (f"{sz['pods']} pod(s) of {sz['servers_per_pod']} servers, {sz['leaves_per_plane']} rail leaves + {sz['spines_per_plane']} "
                f"spines per plane, {sz['links_per_pair']} x {sz['fabric_speed']} links per leaf/spine pair, {sz['planes']} plane(s)")
    return f"S={sz['S']} switches per group, K={sz['K']} host ports, m={sz['m']} links per odd/even pair, {sz['planes']} plane(s)"


def routing_text(plan: dict) -> str:
    """One line for the summary: the routing mode and what it means when something fails."""
    rt, counts = plan["routing"], plan["counts"]
    if rt["mode"] == "bgp":
        bfd = rt["bfd"]
        return (f"bgp: eBGP + BFD ({bfd['interval_ms']} ms x {bfd['multiplier']}) on {counts['bgp_sessions']:,} fabric /31 sessions, "
                f"ASNs {rt['asn_base']}-{rt['asn_last']}, ECMP up to {rt['maximum_paths']} paths; reroutes around failed links and switches")
    sgf = "with" if rt["same_group_fallback"] else "without"
    return (f"static: {counts['static_routes']:,} switch static routes ({sgf} same-group fallback); NOTHING reroutes around a "
            "failed link or switch (only hosts fall back to their other NIC port); use routing.mode: bgp")
