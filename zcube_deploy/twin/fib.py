"""The switches' forwarding tables, read from the kernel: snapshots and a change monitor.

Convergence after a failure is read from the kernel itself: ``ip -ts monitor route`` runs in every
surviving switch's namespace while the failure happens, and the FIB has converged at the time of
the last change after which no switch forwards to a dead next hop or holds a dead switch's prefix.
No polling, so the measurement costs the routing daemons nothing.
"""

from __future__ import annotations

import re
import subprocess
import threading
from dataclasses import dataclass, field
from datetime import datetime

from zcube_deploy.twin.netns import NETNS_DIR

TS = re.compile(r"^\[(\d{4}-\d\d-\d\dT[\d:.]+)\] ?(.*)$")


def _nexthops(lines: list[str]) -> list[str]:
    """Live next hops ("via A dev D") of one route's lines (dead or linkdown members left out)."""
    out = []
    head = lines[0]
    members = [l for l in lines[1:] if l.strip().startswith("nexthop")]
    for text in (members or [head]):
        if " dead" in text or "linkdown" in text:
            continue
        m = re.search(r"via (\S+) dev (\S+)", text)
        if m:
            out.append(f"via {m.group(1)} dev {m.group(2)}")
        elif " dev " in text:
            out.append("dev " + text.split(" dev ")[1].split()[0])
        elif "blackhole" in text or "unreachable" in text:
            out.append(text.split()[0])
    return out


def _routes(text: str) -> list[tuple[str, list[str]]]:
    groups: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if line[0].isspace() and groups:
            groups[-1].append(line)
        else:
            groups.append([line])
    return [(g[0].split()[0], g) for g in groups]


def table(ns: str) -> dict[str, tuple[str, ...]]:
    """prefix -> sorted live next hops of the switch's IPv4 main table."""
    p = subprocess.run(["nsenter", f"--net={NETNS_DIR / ns}", "ip", "-4", "route", "show"], capture_output=True, text=True)
    out = {}
    for prefix, lines in _routes(p.stdout):
        if prefix in ("blackhole", "unreachable", "prohibit"):
            prefix = lines[0].split()[1]
        out[prefix if "/" in prefix else prefix + "/32"] = tuple(sorted(_nexthops(lines)))
    return out


def shape(tables: dict[str, dict[str, tuple]]) -> dict[str, dict[str, int]]:
    """switch -> prefix -> number of live next hops (which 64 of 128 equal paths BGP keeps may differ)."""
    return {sw: {p: len(nh) for p, nh in t.items()} for sw, t in tables.items()}


class Monitor:
    """``ip -4 -ts monitor route`` in one namespace, parsed when stopped."""

    def __init__(self, ns: str):
        # unbuffered: ip exits on SIGTERM without flushing stdio, which would lose the last events
        self.proc = subprocess.Popen(["nsenter", f"--net={NETNS_DIR / ns}", "stdbuf", "-oL", "ip", "-4", "-ts", "monitor", "route"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        # read as it comes: ip stamps an event when it reads it, and a full pipe (64 KiB: a few routes with 64
        # next hops) would stall it, stamping the rest late or losing them
        self._lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._lines.append(line.rstrip("\n"))

    def stop(self) -> list[tuple[float, str, bool, list[str]]]:
        """(epoch time, prefix, deleted, lines) of every route change seen."""
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self._reader.join(timeout=10)
        events, cur = [], None
        for line in self._lines:
            m = TS.match(line)
            if m:
                cur = [datetime.fromisoformat(m.group(1)).timestamp(), m.group(2)]
                events.append(cur)
            elif cur is not None:
                cur.append(line)
        parsed = []
        for ev in events:
            ts, first, rest = ev[0], ev[1], ev[2:]
            deleted = first.startswith("Deleted ")
            body = first[len("Deleted "):] if deleted else first
            if not body or "table local" in body or body.startswith(("local ", "broadcast ")):
                continue
            prefix = body.split()[0]
            if prefix in ("blackhole", "unreachable"):
                prefix = body.split()[1]
            parsed.append((ts, prefix if "/" in prefix else prefix + "/32", deleted, [body, *rest]))
        return parsed


def is_clean(tables: dict[str, dict[str, tuple]], dead: dict[str, set[str]], prefixes: set[str]) -> bool:
    """No switch holds a dead prefix with a live next hop or a live next hop to a dead address."""
    for sw, t in tables.items():
        for p, nh in t.items():
            live = [h for h in nh if h.startswith("via ")]
            if (p in prefixes and nh) or any(h.split()[1] in dead.get(sw, set()) for h in live):
                return False
    return True


def _route_key(lines: list[str]) -> tuple[str, str]:
    """(prefix, metric) of a route's first line: the kernel keys a route by prefix, TOS and metric."""
    head = lines[0].split()
    prefix = head[1] if head[0] in ("blackhole", "unreachable", "prohibit") else head[0]
    metric = head[head.index("metric") + 1] if "metric" in head else "0"
    return (prefix if "/" in prefix else prefix + "/32", metric)


def full_table(ns: str) -> dict[tuple[str, str], tuple[str, ...]]:
    """(prefix, metric) -> sorted live next hops of the switch's IPv4 main table (the state events replay onto)."""
    p = subprocess.run(["nsenter", f"--net={NETNS_DIR / ns}", "ip", "-4", "route", "show"], capture_output=True, text=True)
    return {_route_key(lines): tuple(sorted(_nexthops(lines))) for _, lines in _routes(p.stdout)}


def _dead_next_hop(t: dict[tuple[str, str], tuple], dead: set[str]) -> bool:
    return any(h.startswith("via ") and h.split()[1] in dead for nh in t.values() for h in nh)


def _dead_prefix(t: dict[tuple[str, str], tuple], prefixes: set[str]) -> bool:
    return any(p in prefixes and nh for (p, _), nh in t.items())


@dataclass(frozen=True)
class Timeline:
    """Epoch times of a FIB's convergence after a failure (None: never got there), overall or for one switch."""

    next_hops: float | None        # from then on no live next hop to a dead address
    prefixes: float | None         # from then on no dead switch's prefix held
    last_change: float | None      # the last route change of any kind
    per_switch: dict[str, Timeline] = field(default_factory=dict)


def _switch_timeline(t: dict[tuple[str, str], tuple], evs: list, d: set[str], prefixes: set[str], t_fail: float,
                     clean_at_end: bool) -> Timeline:
    """One switch's replay (see ``timeline``)."""
    next_hops = None if _dead_next_hop(t, d) else t_fail
    pfx = None if _dead_prefix(t, prefixes) else t_fail
    last = None
    for ts, _prefix, deleted, lines in evs:
        if ts < t_fail:
            continue
        key = _route_key(lines)
        if deleted:
            t.pop(key, None)
        else:
            t[key] = tuple(sorted(_nexthops(lines)))
        last = ts
        if _dead_next_hop(t, d):
            next_hops = None
        elif next_hops is None:
            next_hops = ts
        if _dead_prefix(t, prefixes):
            pfx = None
        elif pfx is None:
            pfx = ts
    if clean_at_end:
        next_hops = t_fail if next_hops is None else next_hops
        pfx = t_fail if pfx is None else pfx
    return Timeline(next_hops, pfx, last)


def timeline(start: dict[str, dict[tuple[str, str], tuple]], events: dict[str, list], dead: dict[str, set[str]],
             prefixes: set[str], t_fail: float, end_clean: dict[str, bool] | None = None) -> Timeline:
    """Replay each switch's route events onto its table read before the failure.

    Per switch and overall (the latest switch; None when one never got there): ``next_hops``, the last time
    the switch went from forwarding to a dead next hop to forwarding to none (the failure time when none of
    its routes had to change: carrier loss makes the kernel skip dead next hops at once), which is what the
    surviving traffic sees; ``prefixes``, the same for holding a dead switch's prefixes (only packets for the
    dead switch's own ports use them); ``last_change``: the last route change of any kind (what comes after
    the other two is the re-selection among surviving equal paths, not convergence). ``end_clean``: per switch,
    whether its table read at the end is clean; a switch clean at the end whose replay is not was cleaned
    without a route event: the kernel skips a ``linkdown`` next hop from the moment of the carrier loss and
    says nothing (static routes over a cut link stay that way), so it counts as clean at the failure time."""
    per = {sw: _switch_timeline(dict(start.get(sw, {})), evs, dead.get(sw, set()), prefixes, t_fail, bool(end_clean and end_clean.get(sw)))
           for sw, evs in events.items()}

    def latest(xs: list[float | None]) -> float | None:
        return None if any(x is None for x in xs) else max(xs, default=t_fail)

    return Timeline(next_hops=latest([v.next_hops for v in per.values()]), prefixes=latest([v.prefixes for v in per.values()]),
                    last_change=max([v.last_change for v in per.values() if v.last_change is not None], default=None),
                    per_switch=per)
