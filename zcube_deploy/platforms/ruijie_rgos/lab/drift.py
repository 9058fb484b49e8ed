"""Drift faults: hand edits of a configured lab RGOS switch, each of a known audit kind (docs/audit.md).

:func:`plan_drifts` draws ``count`` edits over the switches' rendered configs (pure, seeded), each
with the kind ``zcube audit`` must report; :func:`apply_drifts` makes them over SSH the way an
operator would (``configure terminal`` on the switch), so the lab's running configs drift exactly
as a real switch's would. Kinds (one edit each, never two on the same line):

- ``port_shut``: ``shutdown`` on a planned port;
- ``stray_route``: a static route inside the plan's pools that the plan does not have;
- ``missing_route``: a planned static route removed;
- ``config_changed``: a planned port's description changed;
- ``config_stray``: a line added inside a planned port (``load-interval N``);
- ``config_missing``: a planned port's description removed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from ipaddress import IPv4Network

MAX_MISSES = 20_000
DRIFT_FAULT_KINDS = ("port_shut", "stray_route", "missing_route", "config_changed", "config_stray", "config_missing")


@dataclass(frozen=True)
class Drift:
    switch: str
    kind: str
    section: str  # the top-level line the audit names (the port, or the route line)
    lines: tuple[str, ...]  # what the operator types in config mode


def _sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    head = None
    for raw in text.splitlines():
        if not raw.strip() or raw.startswith("!"):
            continue
        if raw[0] == " " and head is not None:
            out[head].append(raw.strip())
        elif raw[0] != " ":
            head = raw.rstrip()
            out.setdefault(head, [])
    return out


def plan_drifts(plan: dict, intended: dict[str, str], count: int, seed: int = 0,
                kinds: tuple[str, ...] = DRIFT_FAULT_KINDS) -> list[Drift]:
    """``count`` drifts over the switches of ``intended`` (switch -> rendered config), kinds in turn."""
    rng = random.Random(seed)
    pool = IPv4Network(plan["addressing"]["host_pool"])
    fabric = IPv4Network(plan["addressing"]["fabric_pool"])
    planned_prefixes = {ln.split()[2] for text in intended.values() for ln in text.splitlines() if ln.startswith("ip route ")}
    used: set[tuple[str, str]] = set()
    ports = {sw: [h for h, c in _sections(t).items() if h.startswith("interface ") and any(x.startswith("description ") for x in c) and "no shutdown" in c
                  and "Mgmt" not in h and "Loopback" not in h] for sw, t in sorted(intended.items())}
    routes = {sw: [ln for ln in t.splitlines() if ln.startswith("ip route ")] for sw, t in sorted(intended.items())}
    switches = sorted(intended)
    out: list[Drift] = []
    attempts = found_at = found = 0  # draws; the draw that found the last new edit, and how many edits then
    while len(out) < count and attempts < count * 50 and attempts - found_at < MAX_MISSES:
        if len(out) > found:  # MAX_MISSES draws in a row without a new edit: the switches hold no more distinct ones
            found, found_at = len(out), attempts
        attempts += 1
        kind = kinds[len(out) % len(kinds)]
        sw = rng.choice(switches)
        if kind == "stray_route":
            net = IPv4Network((int(pool.network_address) + 16 * rng.randrange(pool.num_addresses // 16), 28))
            if str(net.network_address) in planned_prefixes:  # a pool the plan fills: a host route inside a planned /28
                net = IPv4Network((int(net.network_address) + 1 + rng.randrange(14), 32))
            hop = str(fabric.network_address + 2 * rng.randrange(fabric.num_addresses // 2) + 1)
            line = f"ip route {net.network_address} {net.netmask} {hop}"
            if str(net.network_address) in planned_prefixes or (sw, line) in used:
                continue
            used.add((sw, line))
            out.append(Drift(sw, kind, line, (line,)))
            continue
        if kind == "missing_route":
            if not routes[sw]:
                continue
            line = rng.choice(routes[sw])
            if (sw, line) in used:
                continue
            used.add((sw, line))
            out.append(Drift(sw, kind, line, (f"no {line}",)))
            continue
        if not ports[sw]:
            continue
        port = rng.choice(ports[sw])
        if (sw, port) in used:  # one edit per port: two on one port would be read as one block
            continue
        used.add((sw, port))
        edit = {"port_shut": " shutdown", "config_changed": f" description drift-{len(out)}",
                "config_stray": f" load-interval {rng.choice((30, 60, 90))}", "config_missing": " no description"}[kind]
        out.append(Drift(sw, kind, port, (port, edit, "exit")))
    if len(out) < count:
        raise ValueError(f"only {len(out)} distinct drifts fit these switches (asked for {count})")
    return out


def apply_drifts_each(endpoints: dict[str, tuple[str, int]], credentials: tuple[str, str, str], drifts: list[Drift]) -> dict[str, str]:
    """:func:`apply_drifts` switch by switch: a switch that cannot be reached or refuses the session is left out
    (its drifts not typed) and named with the reason; the others are drifted. Returns {switch: why} of those left out."""
    # start-up time: netmiko's exceptions load only when drifts are typed on switches
    from netmiko.exceptions import NetmikoAuthenticationException, NetmikoTimeoutException
    from paramiko.ssh_exception import SSHException

    by_switch: dict[str, list[Drift]] = {}
    for d in drifts:
        by_switch.setdefault(d.switch, []).append(d)
    failed: dict[str, str] = {}
    for sw, mine in sorted(by_switch.items()):
        try:
            apply_drifts(endpoints, credentials, mine)
        except (NetmikoTimeoutException, NetmikoAuthenticationException, SSHException, OSError, EOFError) as exc:
            failed[sw] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no answer'}"
    return failed


def apply_drifts(endpoints: dict[str, tuple[str, int]], credentials: tuple[str, str, str], drifts: list[Drift]) -> None:
    """Type the drifts on the switches over SSH (netmiko ``ruijie_os``), one session per switch.

    The session is the driver's netmiko ``ruijie_os`` class, which reads the prompt to check the config mode where
    netmiko waits 2 s of silence (four such checks a session: entering and leaving config mode, disconnecting)."""
    # start-up time: netmiko (through the driver) loads only when drifts are typed on switches
    from zcube_deploy.platforms.ruijie_rgos.driver import RuijieSSH

    by_switch: dict[str, list[str]] = {}
    for d in drifts:
        by_switch.setdefault(d.switch, []).extend(d.lines)
    user, password, secret = credentials
    for sw, lines in sorted(by_switch.items()):
        host, port = endpoints[sw]
        with RuijieSSH(host=host, port=port, username=user, password=password, secret=secret,
                        allow_agent=False, use_keys=False, ssh_config_file=None, conn_timeout=10) as c:
            c.enable()
            c.send_config_set(lines, read_timeout=60)
