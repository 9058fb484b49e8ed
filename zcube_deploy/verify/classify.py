"""The observed-state check of `zcube verify` (pure): what the switches report against the plan, one
classifier per finding kind. (Design comparison, `zcube compare`, is analysis/designs.py.)

``classify(plan, observed)`` -> findings, over typed observations (verify/observation.py; the dicts
verify/observe.py produces are read into them). The kinds (vocabulary.FindingKind, docs/verify-kinds.md):

- per switch: ``hostname`` (configured hostname not the plan's), ``management`` (the management
  interface lacks the plan's address), ``route`` (installed routes differ from what the routing mode
  predicts: static routes in mode static, shortest-AS-path B routes in mode bgp);
- per planned switch port, in plan order, the first classifier that applies: ``duplicate`` (two
  neighbours on one port), none (the planned far end is seen: ok), ``down`` (no link), ``missing``
  (up, no neighbour), ``wrong_peer`` (a neighbour that is nobody of the plan), ``swapped`` (two cables
  whose ends are exchanged: one finding), ``wrong_peer`` (another planned cable's far end on this port:
  move that cable home; or a planned device's port that ends no planned cable: unplug it; plus
  ``missing`` for this port's own cable when its far end is nowhere);
- per unplanned switch port: ``wrong_peer`` (a planned cable plugged into the unused port),
  ``unexpected`` (anything else seen there);
- ``bgp`` (mode bgp: a planned eBGP session not Established, with its likely cause: verify/bgp.py);
- a server silent on several planned ports becomes one ``missing`` finding (its LLDP agent).

Every finding names the cable(s), both ends with rack and U, one plain instruction, and the physical
fix as data (vocabulary.FixOp; used by the lab and the demo). Finding IDs are stable: the same fault
gets the same ID on every run.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from ipaddress import IPv4Network

from zcube_deploy.ipv4 import ntoa
from zcube_deploy.platforms import DEFAULT_PLATFORM, platform_module
from zcube_deploy.topology import forwarding
from zcube_deploy.verify import bgp
from zcube_deploy.verify.observation import Neighbour, Observation, as_observations
from zcube_deploy.vocabulary import Check, DownCause, Fact, FixOp
from zcube_deploy.vocabulary import FindingKind as K

KINDS = tuple(K)

End = tuple[str, str]  # (device, port)


def _fid(kind: str, *parts: str) -> str:
    return "V" + hashlib.sha1("|".join((kind,) + tuple(sorted(parts))).encode()).hexdigest()[:10]


# ------------------------------------------------------------------ the plan, indexed once
class Context:
    """The plan as the classifiers read it, the observations in scope, and the identity of LLDP neighbours."""

    def __init__(self, plan: dict, observed: Mapping[str, Observation], scope: set[str] | None = None):
        self.plan = plan
        plat = platform_module((plan.get("cluster") or {}).get("platform") or DEFAULT_PLATFORM)
        # the platform's name of a port as LLDP reports it (abbreviations), and its BGP summary command
        # (cached: a few hundred distinct port ids, read once per LLDP neighbour)
        self.port_name: Callable[[str], str] = lru_cache(maxsize=4096)(getattr(plat, "port_name", str))
        self.bgp_sessions_command: str = getattr(plat, "BGP_SESSIONS_COMMAND", "its BGP session summary")
        self.obs = observed
        self.scope = set(observed) if scope is None else scope & set(observed)
        # the switches whose LLDP neighbours and link state were collected: the cabling classifiers' world
        self.lldp_scope = {sw for sw in self.scope if observed[sw].lacks(Fact.LLDP, Fact.LINK) is None}
        self.cable = {c["id"]: c for c in plan["cables"]}
        self.switches = {s["name"]: s for s in plan["switches"]}
        self.servers = {s["name"]: s for s in plan["servers"]}
        self.mac = {}
        for s in plan["servers"]:
            for n in s["nics"]:
                if n.get("mac"):
                    self.mac[n["mac"].replace(":", "").lower()] = (s["name"], n["port"])
        # observed hostname -> plan switch name (a wrongly named switch must not cascade into wrong peers)
        names = Counter(o.hostname for o in observed.values())
        self.alias = {o.hostname: name for name, o in observed.items() if o.hostname and names[o.hostname] == 1}
        self.by_mgmt = {s["mgmt_address"]: s["name"] for s in plan["switches"] if s.get("mgmt_address")}
        self.where = {s["name"]: (s["rack"], s["u"]) for s in plan["switches"]}
        self.where.update({s["name"]: (s["rack"], s["u"]) for s in plan["servers"]})
        self._pools: list | None = None
        self.unplugged: set[frozenset[End]] = set()  # both ends of the off-plan cables classify_off_plan_port reports
        # check -> {reason: [switch]}: switches a per-switch check could not run on (not_checked findings)
        self.not_checked: dict[str, dict[str, list[str]]] = {}
        self._in_pools: dict[str, bool] = {}  # prefix -> inside the plan's pools (the same prefixes on every switch)
        self._ident: dict[Neighbour, End | None] = {}
        # switch -> its planned ports that do not see exactly their planned far end, as :meth:`unmatched_ports` found
        # them elsewhere (audit's pool workers); port_views takes them when :meth:`aliases_plain` holds
        self.unmatched: dict[str, frozenset[str]] = {}
        self.route_gaps: dict[str, RouteGap] = {}  # switch -> :func:`route_gap`, found the same way (mode static)

    def observing(self, observed: Mapping[str, Observation], scope: set[str] | None = None) -> Context:
        """This context's plan indexes (built once) with ``observed`` in scope, as ``Context(plan, observed, scope)``
        gives it (the identities found so far are kept: they depend on the aliases, which :meth:`aliases_plain`
        tests; none are found while there are no observations)."""
        ctx = Context.__new__(Context)
        ctx.__dict__.update({k: v for k, v in self.__dict__.items() if k not in ("end_of", "seen_at")})
        ctx.obs = observed
        ctx.scope = set(observed) if scope is None else scope & set(observed)
        ctx.lldp_scope = {sw for sw in ctx.scope if observed[sw].lacks(Fact.LLDP, Fact.LINK) is None}
        names = Counter(o.hostname for o in observed.values())
        ctx.alias = {o.hostname: name for name, o in observed.items() if o.hostname and names[o.hostname] == 1}
        ctx.unplugged, ctx.not_checked, ctx._ident = set(), {}, {}
        ctx.unmatched, ctx.route_gaps = dict(self.unmatched), dict(self.route_gaps)
        return ctx

    def per_switch(self, sw: str, o: Observation) -> tuple[frozenset[str], RouteGap | None]:
        """What the checks read of ``sw`` alone, found on this context of no observations (audit's pool workers; the
        parent puts them in ``unmatched`` and ``route_gaps``): its :meth:`unmatched_ports` and, when it routes
        statically and its routes were observed, its :func:`route_gap`, else None."""
        s = self.switches[sw]
        static = forwarding.switch_mode(self.plan.get("routing") or {"mode": "static"}, s) != forwarding.BGP
        gap = route_gap(self, sw, o, planned_static_routes(self.plan, [s])[sw]) if static and o.lacks(Fact.ROUTES) is None else None
        return self.unmatched_ports(sw, o), gap

    def aliases_plain(self) -> bool:
        """Does every observed hostname that names a switch (an alias) name that very switch? Then a neighbour's
        identity is what a context of no observations gives (no aliases): :meth:`unmatched_ports` found elsewhere hold."""
        return all(h == name for h, name in self.alias.items())

    def unmatched_ports(self, sw: str, o: Observation) -> frozenset[str]:
        """The planned ports of ``sw`` that do not see exactly their planned far end (port_views' test of the ports
        it skips), read from ``o``, ``sw``'s observation: per switch, so in audit's pool workers on a context of no
        observations (its identities those of no aliases; see :meth:`aliases_plain`)."""
        lldp, far, identity = o.lldp, self.far, self.identity
        out = []
        for itf in self.switches[sw]["interfaces"]:
            port = itf["name"]
            ns = lldp.get(port, ())
            if not (len(ns) == 1 and identity(ns[0]) == far(itf["cable"], sw, port)):
                out.append(port)
        return frozenset(out)

    # end_of and seen_at are built on first use: a fabric as planned needs neither (every port sees its planned far
    # end: port_views skips it), and at 512 switches they were a third of the checks' time
    @cached_property
    def end_of(self) -> dict[End, tuple[str, str]]:
        """(device, port) -> (cable id, 'a'|'b')."""
        out: dict[End, tuple[str, str]] = {}
        for c in self.plan["cables"]:
            out[(c["a"]["device"], c["a"]["port"])] = (c["id"], "a")
            out[(c["b"]["device"], c["b"]["port"])] = (c["id"], "b")
        return out

    @cached_property
    def seen_at(self) -> dict[End, list[End]]:
        """identity -> the switch ports in scope seeing it."""
        out: dict[End, list[End]] = defaultdict(list)
        for sw in sorted(self.lldp_scope):
            for port, ns in self.obs[sw].lldp.items():
                for n in ns:
                    ident = self.identity(n)
                    if ident is not None:
                        out[ident].append((sw, port))
        return out

    def skip(self, check: Check, sw: str, why: str) -> None:
        """``check`` could not run on ``sw`` (``why``): a not_checked finding, never a pass."""
        self.not_checked.setdefault(check, {}).setdefault(why, []).append(sw)

    def identity(self, n: Neighbour) -> End | None:
        """(device, port) of the plan that an LLDP neighbour is, or None when it is nobody of the plan."""
        try:
            return self._ident[n]
        except KeyError:
            r = self._ident[n] = self._identity(n)
            return r

    def _identity(self, n: Neighbour) -> End | None:
        name = n.system_name
        mgmt = n.management_address
        if mgmt and mgmt in self.by_mgmt:  # a switch: its management address says which, whatever its hostname
            return self.by_mgmt[mgmt], self.port_name(n.port_id)
        if name in self.switches or name in self.alias:
            dev = name if name in self.switches and name not in self.alias else self.alias.get(name, name)
            return dev, self.port_name(n.port_id)
        if name in self.servers:
            if n.port_id_type.lower().startswith("mac"):
                return self.mac.get(n.port_id.replace(":", "").replace(".", "").replace("-", "").lower())
            return name, n.port_id
        return None

    def end(self, device: str, port: str) -> dict:
        rack, u = self.where.get(device, ("?", 0))
        return {"device": device, "port": port, "rack": rack, "u": u}

    def far(self, cid: str, device: str, port: str) -> End:
        """The end of cable ``cid`` that is not (device, port) (not an end of it: its A end, as a cable seen from
        elsewhere)."""
        c = self.cable[cid]
        a, b = c["a"], c["b"]
        if b["device"] == device and b["port"] == port:
            return a["device"], a["port"]
        if a["device"] == device and a["port"] == port:
            return b["device"], b["port"]
        return a["device"], a["port"]

    def at(self, device: str, port: str = "") -> str:
        rack, u = self.where.get(device, ("?", 0))
        return f"rack {rack} U{u}"

    def in_pools(self, prefix: str) -> bool:
        r = self._in_pools.get(prefix)
        if r is None:
            if self._pools is None:
                a = self.plan.get("addressing") or {}
                self._pools = [IPv4Network(a[k]) for k in ("host_pool", "fabric_pool", "loopback_pool") if a.get(k)]
            net = IPv4Network(prefix)
            r = self._in_pools[prefix] = not self._pools or any(net.subnet_of(p) for p in self._pools)
        return r

    def move_home(self, cid: str, home: End) -> dict:
        """The fix op that puts cable ``cid``'s switch end back into its planned port ``home``."""
        return {"op": FixOp.MOVE, "cable": cid, "end": _switch_end(self.cable[cid], *home), "to": {"device": home[0], "port": home[1]}}

    def connect(self, cid: str) -> dict:
        return {"op": FixOp.CONNECT, "cable": cid, "a": self.cable[cid]["a"], "b": self.cable[cid]["b"]}


def finding(kind: K, cables: list[str], ends: list[dict], what: str, instruction: str, fix: list[dict], **extra) -> dict:
    key_ends = [f"{e['device']} {e['port']}" for e in ends[:1]]
    return {"id": _fid(kind, *(cables or key_ends)), "kind": kind, "cables": cables, "ends": ends, "what": what,
            "instruction": instruction, "fix": fix, **extra}


def _switch_end(cable: dict, device: str, port: str) -> str:
    return "a" if (cable["a"]["device"], cable["a"]["port"]) == (device, port) else "b"


def _ip_sort(addr: str) -> tuple[int, ...]:
    return tuple(int(x) for x in addr.split("."))


# ------------------------------------------------------------------ per switch
def classify_hostname(ctx: Context) -> list[dict]:
    out = []
    for sw in sorted(ctx.scope):
        if (why := ctx.obs[sw].lacks(Fact.HOSTNAME)) is not None:
            ctx.skip(Check.HOSTNAME, sw, why)
            continue
        h = ctx.obs[sw].hostname
        if h != sw:
            out.append(finding(K.HOSTNAME, [], [ctx.end(sw, "")], f"{sw} is configured as {h!r}; the plan names it {sw}",
                               f"push the planned config to {sw} (zcube push --only {sw}) so its hostname is {sw}", [],
                               expected=sw, observed=h))
    return out


# why the management check could not run on a switch for lack of plan data (else: why its addresses were not observed)
NO_MGMT_PLAN = "the plan has no management interface or prefix length (models.switch.mgmt_interface, settings.mgmt_prefix_len)"
NO_MGMT_ADDRESS = "the plan gives the switch no management address"
NO_SESSIONS = "no BGP session state was observed"


def classify_management(ctx: Context) -> list[dict]:
    """The management address (push never changes it: a difference is for the operator to resolve).
    A switch that cannot be checked (no addresses observed, no management data in the plan) is a
    not_checked finding with the reason."""
    mgmt_if = ((ctx.plan.get("models") or {}).get("switch") or {}).get("mgmt_interface")
    plen = (ctx.plan.get("settings") or {}).get("mgmt_prefix_len")
    out = []
    for sw in sorted(ctx.scope):
        addrs = ctx.obs[sw].addresses
        want = ctx.switches[sw].get("mgmt_address")
        why = (NO_MGMT_PLAN if not mgmt_if or plen is None else NO_MGMT_ADDRESS if not want else ctx.obs[sw].lacks(Fact.ADDRESSES))
        if why is not None:
            ctx.skip(Check.MANAGEMENT, sw, why)
            continue
        have = list(addrs.get(mgmt_if, ()))
        if f"{want}/{plen}" not in have:
            out.append(finding(K.MANAGEMENT, [], [ctx.end(sw, mgmt_if)],
                               f"{sw} {mgmt_if} has {', '.join(have) or 'no address'}; the plan gives {want}/{plen}",
                               f"correct the management address of {sw} on the console or in the inventory "
                               f"(zcube push never changes {mgmt_if})", [], expected=f"{want}/{plen}", observed=have))
    return out


def classify_static_routes(ctx: Context) -> list[dict]:
    """Mode static: every rendered route (the same-group fallbacks included) installed, nothing else in the pools."""
    out = []
    checked = []
    for sw in sorted(ctx.scope):
        if (why := ctx.obs[sw].lacks(Fact.ROUTES)) is not None:
            ctx.skip(Check.ROUTES, sw, why)
        else:
            checked.append(sw)
    tables = planned_static_routes(ctx.plan, [ctx.switches[sw] for sw in checked if sw not in ctx.route_gaps])
    for sw in checked:
        missing, extra, wanted, had = ctx.route_gaps.get(sw) or route_gap(ctx, sw, ctx.obs[sw], tables[sw])
        if missing or extra:
            ex = (missing or extra)[0]
            out.append(finding(K.ROUTE, [], [ctx.end(sw, "")],
                               f"{sw}: {len(missing)} planned static routes not installed, {len(extra)} unplanned installed "
                               f"(e.g. {ex[0]} via {ex[1]})",
                               f"re-push {sw} (zcube push --only {sw}) and check its fabric links", [],
                               expected=wanted, observed=had, routes_missing=[list(r) for r in missing[:20]],
                               routes_extra=[list(r) for r in extra[:20]]))
    return out


RouteGap = tuple[list[tuple[str, str]], list[tuple[str, str]], int, int]


def route_gap(ctx: Context, sw: str, o: Observation, want: set[tuple[str, str]]) -> RouteGap:
    """(the planned static routes ``want`` of ``sw`` not installed, the unplanned ones installed, both sorted, how many
    are planned, how many in the plan's pools are installed), from ``sw``'s observation ``o``."""
    # routes outside the plan's pools (management, an operator's own) are not the plan's business
    have = {r for r in o.static_routes if ctx.in_pools(r[0])}
    # routes over a fabric link without link are the cabling finding's (unless link state was not collected)
    down_hops = set() if o.lacks(Fact.LINK) else {itf["peer"]["address"] for itf in ctx.switches[sw]["interfaces"]
                                                  if itf["kind"] == "fabric" and not o.is_up(itf["name"])}
    return sorted(r for r in want - have if r[1] not in down_hops), sorted(have - want), len(want), len(have)


def planned_static_routes(plan: dict, switches: list[dict]) -> dict[str, set[tuple[str, str]]]:
    """Per switch: the (prefix, next hop) pairs the plan's forwarding state gives it in mode static, read
    through topology/forwarding.py's ``switch_tables`` (the one interface to forwarding state)."""
    text: dict[int, str] = {}  # the same next hops and networks recur on every switch: convert each once

    def s(n: int) -> str:
        r = text.get(n)
        if r is None:
            r = text[n] = ntoa(n)
        return r

    tables = forwarding.switch_tables(plan.get("routing") or {"mode": "static"}, switches)
    return {sw: {(f"{s(e[0])}/{e[1]}", s(h)) for e in rows for h in e[2]} for sw, rows in tables.items()}


def classify_bgp_routes(ctx: Context, down_cables: set[str]) -> list[dict]:
    """Mode bgp: installed B routes against the plan's shortest AS paths over the sessions that are up."""
    out = []
    sources = set()
    for sw in sorted(ctx.scope):
        o = ctx.obs[sw]
        why = o.lacks(Fact.ROUTES, Fact.BGP_SESSIONS) or (NO_SESSIONS if o.bgp is None else None)
        if why is not None:  # (the B routes expected depend on the sessions that are up)
            ctx.skip(Check.ROUTES, sw, why)
        else:
            sources.add(sw)
    want_all = bgp.expected_routes(ctx.plan, sources, down_cables)
    for sw in sorted(sources):
        want, have = want_all[sw], ctx.obs[sw].bgp_routes
        missing = sorted(p for p in want if p not in have)
        wrong = sorted(p for p in want if p in have and (not set(have[p]) <= want[p][0] or len(have[p]) != want[p][1]))
        extra = sorted(p for p in have if p not in want)
        if not (missing or wrong or extra):
            continue
        ex = (missing or wrong or extra)[0]
        detail = (f"{ex}: no B route" if missing else f"{ex}: B route via {', '.join(have[ex])}, expected {want[ex][1]} of "
                  f"{', '.join(sorted(want[ex][0], key=_ip_sort))}" if wrong else f"{ex}: not in the plan")
        out.append(finding(K.ROUTE, [], [ctx.end(sw, "")],
                           f"{sw}: {len(missing)} planned prefixes without a B route, {len(wrong)} with other next hops than "
                           f"the shortest AS paths of the plan, {len(extra)} unplanned (e.g. {detail})",
                           f"check the BGP sessions of {sw} ({ctx.bgp_sessions_command}) and re-push it (zcube push --only {sw})", [],
                           expected=len(want), observed=len(have), routes_missing=missing[:20], routes_wrong=wrong[:20],
                           routes_extra=extra[:20]))
    return out


def classify_bgp(ctx: Context, cable_findings: list[dict]) -> tuple[list[dict], set[str]]:
    """Mode bgp: planned sessions not Established (or Established without BFD Up), with their likely cause;
    returns the findings and the cables whose session is down."""
    by_cable = {c: f for f in cable_findings if f["kind"] in bgp.CABLE_KINDS for c in f["cables"]}
    peers = bgp.planned_peers(ctx.plan)
    for sw in sorted(ctx.scope):  # a switch without session state: its sessions are judged from their other ends only
        o = ctx.obs[sw]
        if (why := o.lacks(Fact.BGP_SESSIONS) or (NO_SESSIONS if o.bgp is None else None)) is not None:
            ctx.skip(Check.BGP, sw, why)
        if (why := o.lacks(Fact.BFD)) is not None:
            ctx.skip(Check.BFD, sw, why)
    out, down = [], set()
    for s in bgp.planned_sessions(ctx.plan, ctx.scope):
        a, b = s["a"], s["b"]
        states = [bgp.session_state(ctx.obs, a, b), bgp.session_state(ctx.obs, b, a)]
        if all(st in (None, "Established") for st in states):
            why = bgp.bfd_problem(s, ctx.obs) if any(states) else None
            if why is None:
                continue  # Established where observed (or observed at neither end: a not_checked finding says so)
            cause, ref = bgp.BgpCause.BFD, None
        else:
            down.add(s["cable"])
            cause, why, ref = bgp.likely_cause(s, ctx.obs, by_cable, peers)
        dev = b["device"] if why.split()[0] == b["device"] else a["device"]
        seen = ", ".join(f"{e['device']}: {st or 'not observed'}" for e, st in zip((a, b), states))
        out.append(finding(K.BGP, [s["cable"]], [ctx.end(a["device"], a["port"]), ctx.end(b["device"], b["port"])],
                           f"eBGP session {a['device']} {a['address']} (AS {a['asn']}) - {b['device']} {b['address']} (AS {b['asn']}) "
                           + (f"is Established but its BFD is not Up: {why}" if cause == bgp.BgpCause.BFD else f"is not Established ({seen}): {why}"),
                           bgp.INSTRUCTION[cause].format(ref=ref, dev=dev, cable=s["cable"], a=f"{a['device']} {a['port']}",
                                                         b=f"{b['device']} {b['port']}"),
                           [], cause=cause, refers_to=ref, expected="Established" + (", BFD Up" if cause == bgp.BgpCause.BFD else ""),
                           observed=seen))
    return out, down


# ------------------------------------------------------------------ per planned switch port
@dataclass(frozen=True, slots=True)
class PortView:
    """One planned switch port as observed: its cable, the planned far end, link, neighbours and who they are."""
    switch: str
    port: str
    cable: str
    expected: End  # the far end of the port's planned cable
    up: bool
    neighbours: tuple[Neighbour, ...]
    idents: tuple[End | None, ...]  # the plan's identity of each neighbour
    elsewhere: tuple[End, ...]  # other switch ports in scope that see the expected far end

    def exp_text(self) -> str:
        return f"{self.expected[0]} {self.expected[1]}"


# A port classifier returns None when it does not apply (the next one is asked), else the findings and
# the cables they explain (not classified again from another port). The first that applies wins.
PortClassifier = Callable[[Context, PortView, set], "tuple[list[dict], set[str]] | None"]


def classify_duplicate(ctx: Context, v: PortView, done: set[str]) -> tuple[list[dict], set[str]] | None:
    if len(v.neighbours) <= 1:
        return None
    others = [f"{n.system_name} {n.port_id}" for n in v.neighbours]
    fix = [{"op": FixOp.UNPLUG_EXCEPT, "device": v.switch, "port": v.port, "keep": v.cable}]
    return [finding(K.DUPLICATE, [v.cable], [ctx.end(v.switch, v.port), ctx.end(*v.expected)],
                    f"{v.switch} {v.port} sees {len(v.neighbours)} neighbours ({', '.join(others)}); only {v.exp_text()} belongs",
                    f"at {ctx.at(v.switch)} on {v.switch} {v.port}: keep cable {v.cable} to {v.exp_text()} and remove the other cable(s)",
                    fix, expected=v.exp_text(), observed=others)], set()


def classify_ok(ctx: Context, v: PortView, done: set[str]) -> tuple[list[dict], set[str]] | None:
    """The planned far end is seen (no finding), or it is seen on another port (classified from there)."""
    if v.expected in v.idents or (not v.neighbours and v.elsewhere):
        return [], set()
    return None


def classify_down(ctx: Context, v: PortView, done: set[str]) -> tuple[list[dict], set[str]] | None:
    """No link. Its ``cause`` (vocabulary.DownCause): ``shut`` when the switch says an end of the cable is shut
    in its running config (push it: no cable work, no physical fix), ``link`` when both ends' switches say
    neither is, ``unknown`` when a reader does not tell (or the far switch was not observed): both named."""
    if v.neighbours or v.up:
        return None
    cause, shut_end = down_cause(ctx, v)
    ends = [ctx.end(v.switch, v.port), ctx.end(*v.expected)]
    what = f"{v.switch} {v.port} has no link (cable {v.cable} to {v.exp_text()})"
    if cause == DownCause.SHUT:
        dev, port = shut_end
        return [finding(K.DOWN, [v.cable], ends, f"{what}: {dev} {port} is shut in its running config",
                        f"no cable work: {dev} {port} is shut in its running config (zcube audit: port_shut); "
                        f"push {dev}'s config (zcube push --only {dev}) or bring the port up by hand",
                        [], cause=cause, expected=v.exp_text(), observed=f"shut: {dev} {port}")], {v.cable}
    physical = (f"check cable {v.cable} between {v.switch} {v.port} ({ctx.at(v.switch)}) and {v.exp_text()} "
                f"({ctx.at(v.expected[0])}): install it if absent, else reseat it and replace the cable or optics")
    if cause == DownCause.UNKNOWN:
        physical = (f"the switches do not say whether an end is shut in its running config: if one is (zcube audit: "
                    f"port_shut), push that switch (zcube push --only SWITCH); else {physical}")
    fix = [{"op": FixOp.RESEAT, "device": v.switch, "port": v.port}, ctx.connect(v.cable)]
    return [finding(K.DOWN, [v.cable], ends, what, physical, fix, cause=cause, expected=v.exp_text(),
                    observed="link down")], {v.cable}


def down_cause(ctx: Context, v: PortView) -> tuple[DownCause, End | None]:
    """(cause, the end shut in its config or None) of a planned port without link: its own switch's word and,
    for a cable between two switches, the far switch's (a server end is never shut by a switch's config)."""
    ends = [(v.switch, v.port)] + ([v.expected] if v.expected[0] in ctx.switches else [])
    said = [ctx.obs[d].is_shut(p) if d in ctx.obs else None for d, p in ends]
    for end, shut in zip(ends, said):
        if shut:
            return DownCause.SHUT, end
    return (DownCause.UNKNOWN if None in said else DownCause.LINK), None


def classify_missing(ctx: Context, v: PortView, done: set[str]) -> tuple[list[dict], set[str]] | None:
    """Up, no neighbour: a silent server (its LLDP agent) or a cable that does not reach its far end."""
    if v.neighbours:
        return None
    exp = v.expected
    fix = [{"op": FixOp.LLDP_ON, "server": exp[0]}] if exp[0] in ctx.servers else []
    return [finding(K.MISSING, [v.cable], [ctx.end(v.switch, v.port), ctx.end(*exp)],
                    f"{v.switch} {v.port} is up but has no LLDP neighbour; expected {v.exp_text()} (cable {v.cable})",
                    f"check that LLDP runs on {exp[0]} ({ctx.at(exp[0])}) and that cable {v.cable} on {v.switch} {v.port} "
                    f"goes to {v.exp_text()}", fix, expected=v.exp_text(), observed="no neighbour")], {v.cable}


def missing_displaced(ctx: Context, v: PortView, other: str, ident: End) -> dict:
    """``missing`` for a port's own cable when another cable holds its port and its far end is nowhere
    (``other``: that cable's ID, '' for an unplanned cable)."""
    held = f"cable {other}" if other else f"an unplanned cable from {ident[0]} {ident[1]}"
    away = f"moving cable {other} away" if other else "unplugging it"
    return finding(K.MISSING, [v.cable], [ctx.end(v.switch, v.port), ctx.end(*v.expected)],
                   f"{v.switch} {v.port} should carry cable {v.cable} to {v.exp_text()}; it holds {held} instead",
                   f"after {away}, connect cable {v.cable}: {v.exp_text()} ({ctx.at(v.expected[0])}) to "
                   f"{v.switch} {v.port} ({ctx.at(v.switch)})", [ctx.connect(v.cable)], expected=v.exp_text(),
                   observed=f"{ident[0]} {ident[1]}")


def classify_unknown_peer(ctx: Context, v: PortView, done: set[str]) -> tuple[list[dict], set[str]] | None:
    """wrong_peer: the port sees a neighbour that is nobody of the plan (a wrong hostname, a stray device)."""
    if v.idents[0] is not None:
        return None
    n = v.neighbours[0]
    return [finding(K.WRONG_PEER, [v.cable], [ctx.end(v.switch, v.port), ctx.end(*v.expected)],
                    f"{v.switch} {v.port} should see {v.exp_text()} (cable {v.cable}) but sees {n.system_name} {n.port_id}, "
                    "which is not in the plan",
                    f"at {ctx.at(v.switch)}: trace cable {v.cable} from {v.switch} {v.port}; it must end at {v.exp_text()} "
                    f"({ctx.at(v.expected[0])}); if it does, that server's hostname or LLDP agent is wrong",
                    [{"op": FixOp.FIX_HOSTNAME, "cable": v.cable}], expected=v.exp_text(),
                    observed=f"{n.system_name} {n.port_id}")], {v.cable}


def _foreign(ctx: Context, v: PortView) -> tuple[str, End, End] | None:
    """(cable D, D's far end seen here, D's planned switch port) when the port sees the far end of another planned cable."""
    ident = v.idents[0]
    other = ctx.end_of.get(ident)
    if other is None:
        return None
    return other[0], ident, ctx.far(other[0], *ident)


def classify_off_plan_port(ctx: Context, v: PortView, done: set[str]) -> tuple[list[dict], set[str]] | None:
    """wrong_peer: the port sees a planned device on a port that ends no planned cable (a server's spare NIC,
    a switch's unused port): unplug that cable here; plus ``missing`` for this port's own cable when its
    far end is nowhere (else the far end is classified where it is seen)."""
    ident = v.idents[0]
    if ident in ctx.end_of:
        return None
    sw, port = v.switch, v.port
    ctx.unplugged.add(frozenset({(sw, port), ident}))  # this cable is reported here, not again from its other end
    # the cable in the port is none of the plan's: the finding is the port's (its ID too), the port's own
    # cable is the ``missing`` finding (or the finding where its far end is seen)
    out = [finding(K.WRONG_PEER, [], [ctx.end(sw, port), ctx.end(*v.expected), ctx.end(*ident)],
                   f"{sw} {port} should see {v.exp_text()} (cable {v.cable}) but sees {ident[0]} {ident[1]}, "
                   "a port that ends no planned cable",
                   f"at {ctx.at(sw)}: unplug the cable in {sw} {port} (its other end is at {ident[0]} {ident[1]}, "
                   f"{ctx.at(ident[0])}); cable {v.cable} to {v.exp_text()} belongs there",
                   [{"op": FixOp.UNPLUG, "device": sw, "port": port}], expected=v.exp_text(), observed=f"{ident[0]} {ident[1]}")]
    if v.elsewhere:  # our cable's far end is plugged in elsewhere: classified from there
        return out, set()
    return out + [missing_displaced(ctx, v, "", ident)], {v.cable}


def classify_swapped(ctx: Context, v: PortView, done: set[str]) -> tuple[list[dict], set[str]] | None:
    """swapped: this port sees cable D's far end and D's planned port sees ours (one finding for both)."""
    fo = _foreign(ctx, v)
    if fo is None:
        return None  # not another planned cable's far end (classify_off_plan_port)
    did, ident, d_home = fo
    if did in done:
        return [], set()
    if not (d_home[0] in ctx.lldp_scope and v.expected in [ctx.identity(n) for n in ctx.obs[d_home[0]].neighbours(d_home[1])]):
        return None
    sw, port, cid, exp = v.switch, v.port, v.cable, v.expected
    fix = [ctx.move_home(cid, (sw, port)), ctx.move_home(did, d_home)]
    return [finding(K.SWAPPED, sorted([cid, did]), [ctx.end(sw, port), ctx.end(*d_home)],
                    f"cables {cid} and {did} are exchanged: {sw} {port} sees {ident[0]} {ident[1]}, "
                    f"{d_home[0]} {d_home[1]} sees {exp[0]} {exp[1]}",
                    f"swap cables {cid} and {did}: at {ctx.at(sw)} plug {cid} ({exp[0]} {exp[1]}) into {sw} {port} "
                    f"and at {ctx.at(d_home[0])} plug {did} ({ident[0]} {ident[1]}) into {d_home[0]} {d_home[1]}",
                    fix, expected=f"{exp[0]} {exp[1]}", observed=f"{ident[0]} {ident[1]}")], {cid, did}


def classify_wrong_port(ctx: Context, v: PortView, done: set[str]) -> tuple[list[dict], set[str]] | None:
    """wrong_peer: cable D is plugged into this port; move it home (and ``missing`` for our own cable if its far end is nowhere)."""
    did, ident, d_home = _foreign(ctx, v)
    sw, port = v.switch, v.port
    out = [finding(K.WRONG_PEER, [did], [ctx.end(sw, port), ctx.end(*d_home), ctx.end(*ident)],
                   f"cable {did} ({ident[0]} {ident[1]}) is plugged into {sw} {port}; the plan puts it on {d_home[0]} {d_home[1]}",
                   f"move cable {did} at {ctx.at(sw)} from {sw} {port} to {d_home[0]} {d_home[1]}"
                   + (f" ({ctx.at(d_home[0])})" if d_home[0] != sw else ""),
                   [ctx.move_home(did, d_home)], expected=v.exp_text(), observed=f"{ident[0]} {ident[1]}")]
    if v.elsewhere:
        return out, {did}
    return out + [missing_displaced(ctx, v, did, ident)], {did, v.cable}


PORT_CLASSIFIERS: tuple[PortClassifier, ...] = (classify_duplicate, classify_ok, classify_down, classify_missing,
                                                classify_unknown_peer, classify_off_plan_port, classify_swapped,
                                                classify_wrong_port)


def port_views(ctx: Context, sw: str, skip_ok: bool = False, unmatched: frozenset[str] | None = None) -> Iterable[PortView]:
    """The planned ports of ``sw`` as observed; ``skip_ok``: not the ports that see exactly their planned far
    end (most of them: no classifier has anything to say there, classify_duplicate and classify_ok decide);
    ``unmatched`` (with ``skip_ok``): the others, found before (:meth:`Context.unmatched_ports`), or None."""
    o = ctx.obs[sw]
    lldp, far, identity = o.lldp, ctx.far, ctx.identity  # (a quarter of a million ports at 512 switches)
    unmatched = unmatched if skip_ok else None
    for itf in ctx.switches[sw]["interfaces"]:
        port, cid = itf["name"], itf["cable"]
        if unmatched is not None and port not in unmatched:
            continue
        exp = far(cid, sw, port)
        ns = lldp.get(port, ())  # (o.neighbours)
        if skip_ok and unmatched is None and len(ns) == 1 and identity(ns[0]) == exp:
            continue
        yield PortView(sw, port, cid, exp, o.is_up(port), ns, tuple(ctx.identity(n) for n in ns),
                       tuple(p for p in ctx.seen_at.get(exp, ()) if p != (sw, port)))


def classify_planned_ports(ctx: Context, done: set[str]) -> list[dict]:
    out: list[dict] = []
    for sw in sorted(ctx.scope - ctx.lldp_scope):
        ctx.skip(Check.CABLING, sw, ctx.obs[sw].lacks(Fact.LLDP, Fact.LINK))
    found = ctx.unmatched if ctx.aliases_plain() else {}  # (by audit's workers, on a context of no aliases)
    for sw in sorted(ctx.lldp_scope):
        for v in port_views(ctx, sw, skip_ok=True, unmatched=found.get(sw)):
            if v.cable in done:
                continue
            for c in PORT_CLASSIFIERS:
                r = c(ctx, v, done)
                if r is not None:
                    out += r[0]
                    done |= r[1]
                    break
    return out


# ------------------------------------------------------------------ per unplanned switch port
def classify_unplanned_ports(ctx: Context, done: set[str]) -> list[dict]:
    """wrong_peer for a planned cable plugged into an unused port, unexpected for anything else seen there."""
    planned_ports = {(s, i["name"]) for s in ctx.lldp_scope for i in ctx.switches[s]["interfaces"]}
    reported: set[frozenset] = set()
    out = []
    for sw in sorted(ctx.lldp_scope):
        for port, ns in sorted(ctx.obs[sw].lldp.items()):
            if (sw, port) in planned_ports:
                continue
            for n in ns:
                ident = ctx.identity(n)
                if frozenset({(sw, port), ident}) in ctx.unplugged:
                    continue  # the cable classify_off_plan_port unplugs at its other end
                if ident is not None and ident in ctx.end_of:
                    did = ctx.end_of[ident][0]
                    if did in done:
                        continue
                    d_home = ctx.far(did, *ident)
                    out.append(finding(K.WRONG_PEER, [did], [ctx.end(sw, port), ctx.end(*d_home), ctx.end(*ident)],
                                       f"cable {did} ({ident[0]} {ident[1]}) is plugged into the unused port {sw} {port}",
                                       f"move cable {did} at {ctx.at(sw)} from {sw} {port} to {d_home[0]} {d_home[1]}",
                                       [ctx.move_home(did, d_home)], expected="nothing", observed=f"{ident[0]} {ident[1]}"))
                    done.add(did)
                    continue
                far = ident or (n.system_name, n.port_id)
                key = frozenset({(sw, port), far})
                if key in reported:
                    continue
                reported.add(key)
                out.append(classify_unexpected(ctx, sw, port, far))
    return out


def classify_unexpected(ctx: Context, sw: str, port: str, far: End) -> dict:
    return finding(K.UNEXPECTED, [], [ctx.end(sw, port), ctx.end(*far)],
                   f"{sw} {port} is empty in the plan but sees {far[0]} {far[1]}",
                   f"remove the unplanned cable at {ctx.at(sw)} from {sw} {port} (its other end is at {far[0]} {far[1]})",
                   [{"op": FixOp.UNPLUG, "device": sw, "port": port}], expected="nothing", observed=f"{far[0]} {far[1]}")


def group_silent_servers(ctx: Context, findings: list[dict]) -> list[dict]:
    """A server silent on several planned ports is one ``missing`` finding (its LLDP agent), not one per port."""
    def silent_server(f: dict) -> str | None:
        return f["fix"][0]["server"] if f["kind"] == K.MISSING and f["fix"] and f["fix"][0]["op"] == FixOp.LLDP_ON else None

    silent: dict[str, list[dict]] = defaultdict(list)
    for f in findings:
        if (s := silent_server(f)) is not None:
            silent[s].append(f)
    out = [f for f in findings if (s := silent_server(f)) is None or len(silent[s]) == 1]
    for server, fs in sorted(silent.items()):
        if len(fs) < 2:
            continue
        planned = [c["id"] for c in ctx.plan["cables"] if c["kind"] == "host" and c["a"]["device"] == server
                   and c["b"]["device"] in ctx.lldp_scope]
        cables = sorted(c for f in fs for c in f["cables"])
        rack, u = ctx.where.get(server, ("?", 0))
        whole = sorted(planned) == cables
        out.append(finding(K.MISSING, cables, [ctx.end(server, "")] + [f["ends"][0] for f in fs],
                           f"{len(fs)} switch ports that should see {server} are up but have no LLDP neighbour"
                           + (" (all of its ports)" if whole else ""),
                           f"at rack {rack} U{u}: start the LLDP agent (lldpd) on {server}"
                           + ("" if whole else f" and check cables {', '.join(cables)}"),
                           [{"op": FixOp.LLDP_ON, "server": server}], expected=server, observed="no neighbour"))
    return out


# ------------------------------------------------------------------ the whole check
def classify(plan: dict, observed: Mapping[str, Observation | Mapping], scope: set[str] | None = None) -> list[dict]:
    """Findings for the switches in ``scope`` (default: every observed one), sorted by rack, U (top first), device, port."""
    return check(plan, observed, scope)[0]


def check(plan: dict, observed: Mapping[str, Observation | Mapping],
          scope: set[str] | None = None, drained: Mapping[str, set[str]] | None = None,
          planned: Context | None = None) -> tuple[list[dict], dict[str, dict[str, list[str]]]]:
    """(the findings of :func:`classify`, the switches a check could not run on: {check: {reason: [switch]}},
    only the checks that skipped a switch). ``drained`` (switch -> ports shut by `zcube drain`): a drained
    port that reads up is a ``drained_up`` finding (:func:`classify_drained_up`). ``planned``: a context of
    ``plan`` and no observations built before (its indexes and the unmatched ports audit's workers found)."""
    ctx = planned.observing(as_observations(observed), scope) if planned is not None else Context(plan, as_observations(observed), scope)
    findings = _classify(ctx)
    if drained:
        findings += classify_drained_up(ctx, drained)
    return findings, {k: v for k, v in ctx.not_checked.items() if v}


def classify_drained_up(ctx: Context, drained: Mapping[str, set[str]]) -> list[dict]:
    """A port a drain record says is shut that reads up: somebody brought it back by hand during the drain, so
    traffic may use a switch the operator believes is out of service. (A switch whose link state was not
    collected has its cabling check's not_checked finding already.)"""
    out = []
    for sw in sorted(set(drained) & ctx.scope):
        o = ctx.obs[sw]
        if o.lacks(Fact.LINK) is not None:
            continue
        for port in sorted(drained[sw]):
            if not o.is_up(port):
                continue
            cid = ctx.end_of.get((sw, port), ("", ""))[0]
            ends = [ctx.end(sw, port)] + ([ctx.end(*ctx.far(cid, sw, port))] if cid else [])
            out.append(finding(K.DRAINED_UP, [cid] if cid else [], ends,
                               f"{sw} {port} is up, but a drain record beside the plan (drains/) has it shut",
                               f"shut {sw} {port} again (the drain's config: `zcube audit` lists its lines as the fix of its "
                               f"config drift on {sw}), or, if the work is over, `zcube undrain` the element that drained it",
                               [], expected="shut (drained)", observed="link up"))
    return out


def _classify(ctx: Context) -> list[dict]:
    plan = ctx.plan
    done: set[str] = set()
    findings = classify_hostname(ctx) + classify_management(ctx)
    findings += classify_planned_ports(ctx, done)
    findings += classify_unplanned_ports(ctx, done)
    # each switch by its own routing mode (a migration stage: eBGP leaves and spines beside static ZCube switches)
    routing = plan.get("routing") or {"mode": "static"}
    full = ctx.scope
    bgp_scope = {sw for sw in full if forwarding.switch_mode(routing, ctx.switches[sw]) == forwarding.BGP}
    try:
        if bgp_scope or routing["mode"] == forwarding.BGP:
            ctx.scope = bgp_scope
            sessions, down = classify_bgp(ctx, findings)
            findings += sessions + classify_bgp_routes(ctx, down)
        if full - bgp_scope or routing["mode"] != forwarding.BGP:
            ctx.scope = full - bgp_scope
            findings += classify_static_routes(ctx)
    finally:
        ctx.scope = full
    findings = group_silent_servers(ctx, findings) + not_checked_findings(ctx)
    findings.sort(key=lambda f: (f["ends"][0]["rack"], -int(f["ends"][0]["u"] or 0), f["ends"][0]["device"], f["ends"][0]["port"], f["kind"]))
    return findings


def not_checked_findings(ctx: Context) -> list[dict]:
    """One ``not_checked`` finding per switch and reason: the checks that could not run there and why (a
    recording without one command is one finding naming every check that command feeds)."""
    checks: dict[tuple[str, str], list[str]] = defaultdict(list)  # (switch, why) -> checks
    for check_name, reasons in ctx.not_checked.items():
        for why, switches in reasons.items():
            for sw in switches:
                checks[(sw, why)].append(check_name)
    out = []
    for (sw, why), names in sorted(checks.items()):
        names = [c for c in Check if c in names]  # in the order the checks run
        what = " and ".join(f"the {c} check" for c in names)
        todo = (f"give the plan what it lacks (re-plan from an inventory that has it) and verify {sw} again" if why in (NO_MGMT_PLAN, NO_MGMT_ADDRESS)
                else f"collect what is missing from {sw} (verify it live, or record it again with --record) and verify again")
        f = finding(K.NOT_CHECKED, [], [ctx.end(sw, "")], f"{what} of {sw} could not run: {why}", todo, [],
                    checks=list(names), reason=why)
        f["id"] = _fid(K.NOT_CHECKED, sw, *names)
        out.append(f)
    return out


def summarize(findings: list[dict], not_checked: dict[str, dict[str, list[str]]] | None = None) -> dict:
    """Counts by kind and the five racks with most findings; ``not_checked`` (from :func:`check`), when a
    check skipped switches: {check: [{"reason", "switches": count, "names": every one of them}]} (a check not
    run names every switch it did not check; :func:`notes` shortens the list for a terminal)."""
    by_kind = Counter(f["kind"] for f in findings)
    by_rack = Counter(f["ends"][0]["rack"] for f in findings)
    out = {"findings": len(findings), "by_kind": dict(sorted(by_kind.items())), "worst_racks": by_rack.most_common(5)}
    if by_kind[K.NOT_CHECKED]:
        out["not_checked_switches"] = len({f["ends"][0]["device"] for f in findings if f["kind"] == K.NOT_CHECKED})
    if not_checked:
        out[K.NOT_CHECKED] = {k: [{"reason": why, "switches": len(names), "names": sorted(names)}
                                  for why, names in sorted(v.items())] for k, v in sorted(not_checked.items())}
    return out


def to_list(findings: list[dict]) -> list[dict]:
    """The findings the terminal lists one by one: all but not_checked (those are :func:`notes`, grouped)."""
    return [f for f in findings if f["kind"] != K.NOT_CHECKED]


def notes(summary: dict, shown: int | None = 20) -> list[str]:
    """One plain sentence per check that did not run on some switches, naming the first ``shown`` of them (the
    terminal; None: every one, as verify.xlsx does) and saying where the others are (verify.json names all)."""
    out = []
    for check_name, rows in (summary.get(K.NOT_CHECKED) or {}).items():
        for r in rows:
            names = r["names"] if shown is None else r["names"][:shown]
            more = f" and {r['switches'] - len(names)} more (verify.json names every one)" if r["switches"] > len(names) else ""
            out.append(f"the {check_name} check was not run on {r['switches']} switch{'es' if r['switches'] != 1 else ''} "
                       f"({', '.join(names)}{more}): {r['reason']}")
    return out
