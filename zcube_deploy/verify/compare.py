"""Compare what the switches report with the plan, port by port (the pure core of `zcube verify`).

Kinds: ok, missing (port up, no neighbour), down (no link), wrong_peer (a cable's far end is on
another port, or a port sees someone else), swapped (two cables whose ends are exchanged: one
finding), unexpected (a neighbour on a port the plan leaves empty), duplicate (two neighbours on
one port), hostname (a switch's configured hostname is not the plan's), route (installed routes differ
from what the plan's routing mode predicts: the static routes in mode static, the shortest-AS-path
B routes in mode bgp), bgp (a planned eBGP session is not Established, with its likely cause:
verify/bgp.py). Every finding names the cable(s), both ends with rack and U, one
plain instruction, and the physical fix as data (used by the lab and the demo). Finding IDs are
stable: the same fault gets the same ID on every run.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from ipaddress import IPv4Network

from zcube_deploy.platforms.ruijie_rgos.names import long_name

KINDS = ("missing", "down", "wrong_peer", "swapped", "unexpected", "duplicate", "hostname", "management", "route", "bgp")


def _fid(kind: str, *parts: str) -> str:
    return "V" + hashlib.sha1("|".join((kind,) + tuple(sorted(parts))).encode()).hexdigest()[:10]


class Compare:
    def __init__(self, plan: dict, observed: dict[str, dict], scope: set[str] | None = None):
        self.plan = plan
        self.obs = observed
        self.scope = set(observed) if scope is None else scope & set(observed)
        self.cable = {c["id"]: c for c in plan["cables"]}
        self.end_of: dict[tuple[str, str], tuple[str, str]] = {}  # (device, port) -> (cable id, 'a'|'b')
        for c in plan["cables"]:
            self.end_of[(c["a"]["device"], c["a"]["port"])] = (c["id"], "a")
            self.end_of[(c["b"]["device"], c["b"]["port"])] = (c["id"], "b")
        self.switches = {s["name"]: s for s in plan["switches"]}
        self.servers = {s["name"]: s for s in plan["servers"]}
        self.mac = {}
        for s in plan["servers"]:
            for n in s["nics"]:
                if n.get("mac"):
                    self.mac[n["mac"].replace(":", "").lower()] = (s["name"], n["port"])
        # observed hostname -> plan switch name (a wrongly named switch must not cascade into wrong peers)
        names = Counter(o.get("hostname") for o in observed.values())
        self.alias = {o["hostname"]: name for name, o in observed.items() if o.get("hostname") and names[o["hostname"]] == 1}
        self.by_mgmt = {s["mgmt_address"]: s["name"] for s in plan["switches"] if s.get("mgmt_address")}
        self.where = {s["name"]: (s["rack"], s["u"]) for s in plan["switches"]}
        self.where.update({s["name"]: (s["rack"], s["u"]) for s in plan["servers"]})

    # ---- identities
    def identity(self, n: dict) -> tuple[str, str] | None:
        """(device, port) of the plan that an LLDP neighbour is, or None when it is nobody of the plan."""
        name = n["system_name"]
        mgmt = n.get("management_address")
        if mgmt and mgmt in self.by_mgmt:  # a switch: its management address says which, whatever its hostname
            return self.by_mgmt[mgmt], long_name(n["port_id"])
        if name in self.switches or name in self.alias:
            dev = name if name in self.switches and name not in self.alias else self.alias.get(name, name)
            return dev, long_name(n["port_id"])
        if name in self.servers:
            if n.get("port_id_type", "").lower().startswith("mac"):
                return self.mac.get(n["port_id"].replace(":", "").replace(".", "").replace("-", "").lower())
            return name, n["port_id"]
        return None

    def end(self, device: str, port: str) -> dict:
        rack, u = self.where.get(device, ("?", 0))
        return {"device": device, "port": port, "rack": rack, "u": u}

    def far(self, cid: str, device: str, port: str) -> tuple[str, str]:
        c = self.cable[cid]
        a, b = (c["a"]["device"], c["a"]["port"]), (c["b"]["device"], c["b"]["port"])
        return b if a == (device, port) else a

    def _at(self, device: str, port: str) -> str:
        rack, u = self.where.get(device, ("?", 0))
        return f"rack {rack} U{u}"

    def _in_pools(self, prefix: str) -> bool:
        if self._pools is None:
            a = self.plan.get("addressing") or {}
            self._pools = [IPv4Network(a[k]) for k in ("host_pool", "fabric_pool", "loopback_pool") if a.get(k)]
        net = IPv4Network(prefix)
        return not self._pools or any(net.subnet_of(p) for p in self._pools)

    _pools: list | None = None

    # ---- the comparison
    def run(self) -> list[dict]:
        findings: list[dict] = []
        seen_at: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)  # identity -> switch ports seeing it
        unknown_at: dict[tuple[str, str], list[dict]] = {}
        for sw in sorted(self.scope):
            o = self.obs[sw]
            for port, ns in o["lldp"].items():
                for n in ns:
                    ident = self.identity(n)
                    if ident is None:
                        unknown_at.setdefault((sw, port), []).append(n)
                    else:
                        seen_at[ident].append((sw, port))
        explained_ports: set[tuple[str, str]] = set()
        done_cables: set[str] = set()

        # hostname
        for sw in sorted(self.scope):
            h = self.obs[sw].get("hostname")
            if h != sw:
                findings.append(self._f("hostname", [], [self.end(sw, "")], f"{sw} is configured as {h!r}; the plan names it {sw}",
                                        f"push the planned config to {sw} (zcube push --only {sw}) so its hostname is {sw}", [],
                                        expected=sw, observed=h))

        # management address (push never changes it: a difference is for the operator to resolve)
        mgmt_if = (self.plan.get("models", {}).get("switch") or {}).get("mgmt_interface")
        plen = (self.plan.get("settings") or {}).get("mgmt_prefix_len")
        for sw in sorted(self.scope):
            addrs = self.obs[sw].get("addresses")
            want = self.switches[sw].get("mgmt_address")
            if not addrs or not mgmt_if or not want or plen is None:
                continue  # recordings without a running config, or no management in the plan
            have = addrs.get(mgmt_if, [])
            if f"{want}/{plen}" not in have:
                findings.append(self._f("management", [], [self.end(sw, mgmt_if)],
                                        f"{sw} {mgmt_if} has {', '.join(have) or 'no address'}; the plan gives {want}/{plen}",
                                        f"correct the management address of {sw} on the console or in the inventory "
                                        f"(zcube push never changes {mgmt_if})", [], expected=f"{want}/{plen}", observed=have))

        # planned switch ports in scope
        for sw in sorted(self.scope):
            o = self.obs[sw]
            for itf in self.switches[sw]["interfaces"]:
                port = itf["name"]
                cid = itf["cable"]
                if cid in done_cables:
                    continue
                exp = self.far(cid, sw, port)
                state = o["interfaces"].get(port)
                ns = o["lldp"].get(port, [])
                idents = [self.identity(n) for n in ns]
                if len(ns) > 1:
                    others = [f"{n['system_name']} {n['port_id']}" for n in ns]
                    fix = [{"op": "unplug_except", "device": sw, "port": port, "keep": cid}]
                    findings.append(self._f("duplicate", [cid], [self.end(sw, port), self.end(*exp)],
                                            f"{sw} {port} sees {len(ns)} neighbours ({', '.join(others)}); only {exp[0]} {exp[1]} belongs",
                                            f"at {self._at(sw, port)} on {sw} {port}: keep cable {cid} to {exp[0]} {exp[1]} and remove the other cable(s)",
                                            fix, expected=f"{exp[0]} {exp[1]}", observed=others))
                    explained_ports.add((sw, port))
                    continue
                if exp in idents:
                    continue  # ok
                # the expected far end is somewhere else: handled from that side (wrong_peer / swapped)
                elsewhere = [p for p in seen_at.get(exp, []) if p != (sw, port)]
                if not ns:
                    if elsewhere:
                        continue
                    up = bool(state and state["up"])
                    if not up:
                        fix = [{"op": "reseat", "device": sw, "port": port},
                               {"op": "connect", "cable": cid, "a": self.cable[cid]["a"], "b": self.cable[cid]["b"]}]
                        findings.append(self._f("down", [cid], [self.end(sw, port), self.end(*exp)],
                                                f"{sw} {port} has no link (cable {cid} to {exp[0]} {exp[1]})",
                                                f"check cable {cid} between {sw} {port} ({self._at(sw, port)}) and {exp[0]} {exp[1]} "
                                                f"({self._at(*exp)}): install it if absent, else reseat it and replace the cable or optics",
                                                fix, expected=f"{exp[0]} {exp[1]}", observed="link down"))
                    else:
                        fix = [{"op": "lldp_on", "server": exp[0]}] if exp[0] in self.servers else []
                        findings.append(self._f("missing", [cid], [self.end(sw, port), self.end(*exp)],
                                                f"{sw} {port} is up but has no LLDP neighbour; expected {exp[0]} {exp[1]} (cable {cid})",
                                                f"check that LLDP runs on {exp[0]} ({self._at(*exp)}) and that cable {cid} on {sw} {port} "
                                                f"goes to {exp[0]} {exp[1]}", fix, expected=f"{exp[0]} {exp[1]}", observed="no neighbour"))
                    done_cables.add(cid)
                    continue
                ident = idents[0]
                if ident is None:
                    n = ns[0]
                    fix = [{"op": "fix_hostname", "cable": cid}]
                    findings.append(self._f("wrong_peer", [cid], [self.end(sw, port), self.end(*exp)],
                                            f"{sw} {port} should see {exp[0]} {exp[1]} (cable {cid}) but sees {n['system_name']} {n['port_id']}, "
                                            "which is not in the plan",
                                            f"at {self._at(sw, port)}: trace cable {cid} from {sw} {port}; it must end at {exp[0]} {exp[1]} "
                                            f"({self._at(*exp)}); if it does, that server's hostname or LLDP agent is wrong",
                                            fix, expected=f"{exp[0]} {exp[1]}", observed=f"{n['system_name']} {n['port_id']}"))
                    done_cables.add(cid)
                    continue
                # we see the far end of another planned cable D
                other = self.end_of.get(ident)
                if other is None:
                    continue
                did = other[0]
                d_home = self.far(did, *ident)  # where D's switch end belongs
                if did in done_cables:
                    continue
                # swapped: D's home port sees our expected far end
                if d_home[0] in self.scope and exp in [self.identity(n) for n in self.obs[d_home[0]]["lldp"].get(d_home[1], [])]:
                    fix = [{"op": "move", "cable": cid, "end": _switch_end(self.cable[cid], sw, port), "to": {"device": sw, "port": port}},
                           {"op": "move", "cable": did, "end": _switch_end(self.cable[did], *d_home), "to": {"device": d_home[0], "port": d_home[1]}}]
                    findings.append(self._f("swapped", sorted([cid, did]), [self.end(sw, port), self.end(*d_home)],
                                            f"cables {cid} and {did} are exchanged: {sw} {port} sees {ident[0]} {ident[1]}, "
                                            f"{d_home[0]} {d_home[1]} sees {exp[0]} {exp[1]}",
                                            f"swap cables {cid} and {did}: at {self._at(sw, port)} plug {cid} ({exp[0]} {exp[1]}) into {sw} {port} "
                                            f"and at {self._at(*d_home)} plug {did} ({ident[0]} {ident[1]}) into {d_home[0]} {d_home[1]}",
                                            fix, expected=f"{exp[0]} {exp[1]}", observed=f"{ident[0]} {ident[1]}"))
                    done_cables.update((cid, did))
                    explained_ports.update({(sw, port), d_home})
                    continue
                # D's far end is on our port: move D to its home
                fix = [{"op": "move", "cable": did, "end": _switch_end(self.cable[did], *d_home), "to": {"device": d_home[0], "port": d_home[1]}}]
                findings.append(self._f("wrong_peer", [did], [self.end(sw, port), self.end(*d_home), self.end(*ident)],
                                        f"cable {did} ({ident[0]} {ident[1]}) is plugged into {sw} {port}; the plan puts it on {d_home[0]} {d_home[1]}",
                                        f"move cable {did} at {self._at(sw, port)} from {sw} {port} to {d_home[0]} {d_home[1]}"
                                        + (f" ({self._at(*d_home)})" if d_home[0] != sw else ""),
                                        fix, expected=f"{exp[0]} {exp[1]}", observed=f"{ident[0]} {ident[1]}"))
                done_cables.add(did)
                explained_ports.add((sw, port))
                # and our own cable: its far end is nowhere to be seen
                if not elsewhere:
                    fix = [{"op": "connect", "cable": cid, "a": self.cable[cid]["a"], "b": self.cable[cid]["b"]}]
                    findings.append(self._f("missing", [cid], [self.end(sw, port), self.end(*exp)],
                                            f"{sw} {port} should carry cable {cid} to {exp[0]} {exp[1]}; it holds cable {did} instead",
                                            f"after moving cable {did} away, connect cable {cid}: {exp[0]} {exp[1]} ({self._at(*exp)}) to "
                                            f"{sw} {port} ({self._at(sw, port)})", fix, expected=f"{exp[0]} {exp[1]}", observed=f"{ident[0]} {ident[1]}"))
                    done_cables.add(cid)

        # neighbours on ports the plan leaves empty
        planned_ports = {(s, i["name"]) for s in self.scope for i in self.switches[s]["interfaces"]}
        reported: set[frozenset] = set()
        for sw in sorted(self.scope):
            for port, ns in sorted(self.obs[sw]["lldp"].items()):
                if (sw, port) in planned_ports:
                    continue
                for n in ns:
                    ident = self.identity(n)
                    if ident is not None and ident in self.end_of:
                        did = self.end_of[ident][0]
                        if did in done_cables:
                            continue
                        d_home = self.far(did, *ident)
                        fix = [{"op": "move", "cable": did, "end": _switch_end(self.cable[did], *d_home), "to": {"device": d_home[0], "port": d_home[1]}}]
                        findings.append(self._f("wrong_peer", [did], [self.end(sw, port), self.end(*d_home), self.end(*ident)],
                                                f"cable {did} ({ident[0]} {ident[1]}) is plugged into the unused port {sw} {port}",
                                                f"move cable {did} at {self._at(sw, port)} from {sw} {port} to {d_home[0]} {d_home[1]}",
                                                fix, expected="nothing", observed=f"{ident[0]} {ident[1]}"))
                        done_cables.add(did)
                        continue
                    key = frozenset({(sw, port), ident or (n["system_name"], n["port_id"])})
                    if key in reported:
                        continue
                    reported.add(key)
                    far = ident or (n["system_name"], n["port_id"])
                    fix = [{"op": "unplug", "device": sw, "port": port}]
                    findings.append(self._f("unexpected", [], [self.end(sw, port), self.end(*far)],
                                            f"{sw} {port} is empty in the plan but sees {far[0]} {far[1]}",
                                            f"remove the unplanned cable at {self._at(sw, port)} from {sw} {port} (its other end is at {far[0]} {far[1]})",
                                            fix, expected="nothing", observed=f"{far[0]} {far[1]}"))

        bgp_mode = (self.plan.get("routing") or {}).get("mode") == "bgp"
        if bgp_mode:
            findings += self._bgp(findings)
        # installed static routes (mode static)
        for sw in sorted(self.scope if not bgp_mode else ()):
            # every rendered route, the same-group fallbacks included (they are installed like the others)
            want = {(r["prefix"], r["next_hop"]) for r in self.switches[sw]["routes"]}
            # routes outside the plan's pools (management, an operator's own) are not the plan's business
            have = {tuple(r) for r in self.obs[sw]["static_routes"] if self._in_pools(r[0])}
            down_hops = set()
            o = self.obs[sw]
            for itf in self.switches[sw]["interfaces"]:
                if itf["kind"] == "fabric" and not (o["interfaces"].get(itf["name"]) or {}).get("up", False):
                    down_hops.add(itf["peer"]["address"])
            missing = sorted(r for r in want - have if r[1] not in down_hops)
            extra = sorted(have - want)
            if missing or extra:
                ex = (missing or extra)[0]
                findings.append(self._f("route", [], [self.end(sw, "")],
                                        f"{sw}: {len(missing)} planned static routes not installed, {len(extra)} unplanned installed (e.g. {ex[0]} via {ex[1]})",
                                        f"re-push {sw} (zcube push --only {sw}) and check its fabric links", [],
                                        expected=len(want), observed=len(have), routes_missing=[list(r) for r in missing[:20]],
                                        routes_extra=[list(r) for r in extra[:20]]))
        findings = self._group_silent_servers(findings)
        findings.sort(key=lambda f: (f["ends"][0]["rack"], -int(f["ends"][0]["u"] or 0), f["ends"][0]["device"], f["ends"][0]["port"], f["kind"]))
        return findings

    def _bgp(self, findings: list[dict]) -> list[dict]:
        """Mode bgp: planned sessions not Established (kind bgp), then B routes against the plan's best paths."""
        from zcube_deploy.verify import bgp

        by_cable = {c: f for f in findings if f["kind"] in bgp.CABLE_KINDS for c in f["cables"]}
        peers = bgp.planned_peers(self.plan)
        out, down = [], set()
        for s in bgp.planned_sessions(self.plan, self.scope):
            a, b = s["a"], s["b"]
            states = [bgp.session_state(self.obs, a, b), bgp.session_state(self.obs, b, a)]
            if all(st in (None, "Established") for st in states):
                why = bgp.bfd_problem(s, self.obs) if any(states) else None
                if why is None:
                    continue  # Established where observed (or no BGP output at all: a recording made before)
                cause, ref = "bfd", None
            else:
                down.add(s["cable"])
                cause, why, ref = bgp.likely_cause(s, self.obs, by_cable, peers)
            dev = b["device"] if why.split()[0] == b["device"] else a["device"]
            seen = ", ".join(f"{e['device']}: {st or 'not observed'}" for e, st in zip((a, b), states))
            out.append(self._f("bgp", [s["cable"]], [self.end(a["device"], a["port"]), self.end(b["device"], b["port"])],
                               f"eBGP session {a['device']} {a['address']} (AS {a['asn']}) - {b['device']} {b['address']} (AS {b['asn']}) "
                               + (f"is Established but its BFD is not Up: {why}" if cause == "bfd" else f"is not Established ({seen}): {why}"),
                               bgp.INSTRUCTION[cause].format(ref=ref, dev=dev, cable=s["cable"], a=f"{a['device']} {a['port']}",
                                                             b=f"{b['device']} {b['port']}"),
                               [], cause=cause, refers_to=ref, expected="Established" + (", BFD Up" if cause == "bfd" else ""),
                               observed=seen))
        # installed B routes
        sources = {sw for sw in self.scope if self.obs[sw].get("bgp") is not None}
        want_all = bgp.expected_routes(self.plan, sources, down)
        for sw in sorted(sources):
            want, have = want_all[sw], self.obs[sw].get("bgp_routes", {})
            missing = sorted(p for p in want if p not in have)
            wrong = sorted(p for p in want if p in have and (not set(have[p]) <= want[p][0] or len(have[p]) != want[p][1]))
            extra = sorted(p for p in have if p not in want)
            if not (missing or wrong or extra):
                continue
            ex = (missing or wrong or extra)[0]
            detail = (f"{ex}: no B route" if missing else f"{ex}: B route via {', '.join(have[ex])}, expected {want[ex][1]} of "
                      f"{', '.join(sorted(want[ex][0], key=_ip_sort))}" if wrong else f"{ex}: not in the plan")
            out.append(self._f("route", [], [self.end(sw, "")],
                               f"{sw}: {len(missing)} planned prefixes without a B route, {len(wrong)} with other next hops than "
                               f"the shortest AS paths of the plan, {len(extra)} unplanned (e.g. {detail})",
                               f"check the BGP sessions of {sw} (show ip bgp summary) and re-push it (zcube push --only {sw})", [],
                               expected=len(want), observed=len(have), routes_missing=missing[:20], routes_wrong=wrong[:20],
                               routes_extra=extra[:20]))
        return out

    def _group_silent_servers(self, findings: list[dict]) -> list[dict]:
        """A server whose every planned port is up but silent is one finding (its LLDP agent), not one per port."""
        silent: dict[str, list[dict]] = defaultdict(list)
        for f in findings:
            if f["kind"] == "missing" and f["fix"] and f["fix"][0]["op"] == "lldp_on":
                silent[f["fix"][0]["server"]].append(f)
        out = [f for f in findings if not (f["kind"] == "missing" and f["fix"] and f["fix"][0]["op"] == "lldp_on"
                                           and len(silent[f["fix"][0]["server"]]) > 1)]
        for server, fs in sorted(silent.items()):
            if len(fs) < 2:
                continue
            planned = [c["id"] for c in self.plan["cables"] if c["kind"] == "host" and c["a"]["device"] == server
                       and c["b"]["device"] in self.scope]
            cables = sorted(c for f in fs for c in f["cables"])
            rack, u = self.where.get(server, ("?", 0))
            whole = sorted(planned) == cables
            out.append(self._f("missing", cables, [self.end(server, "")] + [f["ends"][0] for f in fs],
                               f"{len(fs)} switch ports that should see {server} are up but have no LLDP neighbour"
                               + (" (all of its ports)" if whole else ""),
                               f"at rack {rack} U{u}: start the LLDP agent (lldpd) on {server}"
                               + ("" if whole else f" and check cables {', '.join(cables)}"),
                               [{"op": "lldp_on", "server": server}], expected=server, observed="no neighbour"))
        return out

    def _f(self, kind: str, cables: list[str], ends: list[dict], what: str, instruction: str, fix: list[dict], **extra) -> dict:
        key_ends = [f"{e['device']} {e['port']}" for e in ends[:1]]
        return {"id": _fid(kind, *(cables or key_ends)), "kind": kind, "cables": cables, "ends": ends, "what": what,
                "instruction": instruction, "fix": fix, **extra}


def _ip_sort(addr: str) -> tuple[int, ...]:
    return tuple(int(x) for x in addr.split("."))


def _switch_end(cable: dict, device: str, port: str) -> str:
    return "a" if (cable["a"]["device"], cable["a"]["port"]) == (device, port) else "b"


def compare(plan: dict, observed: dict[str, dict], scope: set[str] | None = None) -> list[dict]:
    return Compare(plan, observed, scope).run()


def summarize(findings: list[dict]) -> dict:
    by_kind = Counter(f["kind"] for f in findings)
    by_rack = Counter(f["ends"][0]["rack"] for f in findings)
    return {"findings": len(findings), "by_kind": dict(sorted(by_kind.items())), "worst_racks": by_rack.most_common(5)}
