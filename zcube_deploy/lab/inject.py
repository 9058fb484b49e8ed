"""Fault injection for the lab: cabling faults on the wiring, device faults on the SSH servers.
(Failure analysis of a fabric, `zcube analyze`, is analysis/failures.py.)

A faults file (YAML) is a mapping with two optional lists::

    cabling:
      - swap: [H000001, H000003]                 # exchange the switch-side (B) ends
      - move: {cable: H000005, to: {device: ZC-O001, port: PORT}}     # PORT: a port name as in plan.json
      - remove: H000007
      - extra: {a: {device: ZC-O001, port: ...}, b: {device: ZC-E002, port: ...}}
      - down: {device: ZC-E002, port: ...}
      - wrong_host: {cable: H000009, name: gpu-spare}
      - lldp_off: gpu0003                        # the server's LLDP agent sends nothing
    devices:
      ZC-O001: {refuse_login: true}
      ZC-E002: {banner_delay: 3}                 # or no_banner: true
      ZC-O003: {drop_after: 40}                  # close the session after 40 commands
      ZC-E004: {reject_lines: [LINE]}            # a config line (or its first words) the switch rejects
      ZC-E008: {reject_lines: [LINE], sublines: global}   # a lenient CLI: a rejected `interface X`'s
                                                 # sub-lines are taken in global mode (valid global ones land)
      ZC-O005: {delay: 0.2}                      # seconds before every answer
      ZC-E006: {write_fault: drop}               # saves, then drops the session before the answer
      ZC-O007: {write_fault: fail}               # the save answers an error and saves nothing
      ZC-O009: {write_fault: fail_once}          # the switch's first save fails, later ones save

``random:N`` draws N cabling faults of every kind, seeded. Each applied fault comes with the
finding `zcube verify` is expected to report for it.
"""

from __future__ import annotations

import random
from pathlib import Path

import yaml

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.lab.core import DeviceFaults, LabModel
from zcube_deploy.vocabulary import FaultKind as F
from zcube_deploy.vocabulary import FindingKind as K

CABLING_KINDS = tuple(F)


def load_faults(spec: str | None, plan: dict, seed: int = 0) -> dict:
    """`FILE` or `random:N` -> {"cabling": [...], "devices": {...}}."""
    if not spec:
        return {"cabling": [], "devices": {}}
    if spec.startswith("random:"):
        try:
            n = int(spec.split(":", 1)[1])
        except ValueError:
            raise InputErrors(Problem("--faults", f"{spec!r}: expected random:N")) from None
        return {"cabling": random_faults(plan, n, seed), "devices": {}}
    try:
        data = yaml.safe_load(Path(spec).read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise InputErrors(Problem("--faults", f"cannot read {spec}: {exc.strerror}")) from None
    except yaml.YAMLError as exc:
        raise InputErrors(Problem("--faults", f"{spec} is not valid YAML: {exc}")) from None
    if not isinstance(data, dict) or set(data) - {"cabling", "devices"}:
        raise InputErrors(Problem("--faults", "expected a mapping with 'cabling' and/or 'devices'"))
    return {"cabling": list(data.get("cabling") or []), "devices": dict(data.get("devices") or {})}


def random_faults(plan: dict, n: int, seed: int) -> list[dict]:
    """N cabling faults cycling through every kind, on distinct cables and ports, seeded."""
    rng = random.Random(seed)
    used_cables: set[str] = set()
    used_ports: set[tuple[str, str]] = set()
    host = [c for c in plan["cables"] if c["kind"] == "host"]
    by_switch: dict[str, list[dict]] = {}
    for c in host:
        by_switch.setdefault(c["b"]["device"], []).append(c)
    used_by: dict[str, set[str]] = {}
    for c in plan["cables"]:
        for end in (c["a"], c["b"]):
            used_by.setdefault(end["device"], set()).add(end["port"])
    free_ports = {}
    for sw in plan["switches"]:
        used = used_by.get(sw["name"], set())
        free_ports[sw["name"]] = [p for p in plan["port_map"]["host_ports"] + plan["port_map"]["fabric_ports"] if p not in used]
    servers = [s["name"] for s in plan["servers"]]
    kinds = list(CABLING_KINDS)
    rng.shuffle(kinds)
    out: list[dict] = []

    def fresh_cable(pool: list[dict]) -> dict | None:
        cands = [c for c in pool if c["id"] not in used_cables and (c["b"]["device"], c["b"]["port"]) not in used_ports
                 and c["a"]["device"] not in lldp_off_servers]
        return rng.choice(cands) if cands else None

    lldp_off_servers: set[str] = set()
    attempts = 0
    while len(out) < n and attempts < n * 20:
        kind = kinds[attempts % len(kinds)]
        attempts += 1
        if kind == F.SWAP:
            sw = rng.choice(sorted(by_switch))
            cands = [c for c in by_switch[sw] if c["id"] not in used_cables and c["a"]["device"] not in lldp_off_servers]
            if len(cands) < 2:
                continue
            x, y = rng.sample(cands, 2)
            if x["a"]["device"] == y["a"]["device"] and x["a"]["port"] == y["a"]["port"]:
                continue
            out.append({F.SWAP: [x["id"], y["id"]]})
            used_cables.update((x["id"], y["id"]))
        elif kind == F.MOVE:
            # a cable plugged into the port of another cable of the same switch, that one left out:
            # the classic "wrong port" (a move to a spare port would land on a shut port: a 'down')
            sw = rng.choice(sorted(by_switch))
            cands = [c for c in by_switch[sw] if c["id"] not in used_cables and c["a"]["device"] not in lldp_off_servers
                     and (sw, c["b"]["port"]) not in used_ports]
            if len(cands) < 2:
                continue
            c, d = rng.sample(cands, 2)
            out.append({F.REMOVE: d["id"]})
            out.append({F.MOVE: {"cable": c["id"], "to": {"device": sw, "port": d["b"]["port"]}}})
            used_cables.update((c["id"], d["id"]))
            used_ports.update({(sw, c["b"]["port"]), (sw, d["b"]["port"])})
        elif kind in (F.REMOVE, F.DOWN, F.WRONG_HOST):
            c = fresh_cable(host)
            if not c:
                continue
            used_cables.add(c["id"])
            if kind == F.REMOVE:
                out.append({F.REMOVE: c["id"]})
            elif kind == F.DOWN:
                out.append({F.DOWN: {"device": c["b"]["device"], "port": c["b"]["port"]}})
            else:
                out.append({F.WRONG_HOST: {"cable": c["id"], "name": f"{c['a']['device']}-spare"}})
        elif kind == F.EXTRA:
            # a stray device patched into a port that already has its planned cable: two LLDP
            # neighbours on one port. (An extra cable between two spare ports stays dark: spare
            # ports are shut by the rendered config, so verify cannot see it after a push.)
            c = fresh_cable(host)
            if not c:
                continue
            used_cables.add(c["id"])
            used_ports.add((c["b"]["device"], c["b"]["port"]))
            out.append({F.EXTRA: {"a": {"device": f"lab-stray{len(out) + 1}", "port": "eth0"},
                                  "b": {"device": c["b"]["device"], "port": c["b"]["port"]}}})
        elif kind == F.LLDP_OFF:
            busy = {c["a"]["device"] for c in host if c["id"] in used_cables}
            cands = [s for s in servers if s not in busy and s not in lldp_off_servers]
            if not cands:
                continue
            s = rng.choice(cands)
            lldp_off_servers.add(s)
            used_cables.update(c["id"] for c in host if c["a"]["device"] == s)
            out.append({F.LLDP_OFF: s})
    return out


def apply_faults(model: LabModel, faults: dict) -> list[dict]:
    """Apply faults to the lab model; return the expected verify findings, one per fault."""
    problems: list[Problem] = []
    expected: list[dict] = []
    w = model.wiring
    plan_cables = {c["id"]: c for c in model.plan["cables"]}
    extra_n = 0
    for i, f in enumerate(faults.get("cabling", [])):
        where = f"faults.cabling[{i}]"
        if not isinstance(f, dict) or len(f) != 1:
            problems.append(Problem(where, "each fault is a mapping with one key", f"one of {', '.join(CABLING_KINDS)}"))
            continue
        (kind, arg), = f.items()
        try:
            if kind == F.SWAP:
                x, y = arg
                w.swap(x, y)
                expected.append({"kind": K.SWAPPED, "cables": sorted([x, y]), "fault": f})
            elif kind == F.MOVE:
                to = (arg["to"]["device"], arg["to"]["port"])
                _check_port(model, to)
                w.move(arg["cable"], to)
                expected.append({"kind": K.WRONG_PEER, "cables": [arg["cable"]], "fault": f, "_to": to})
            elif kind == F.REMOVE:
                gone = w.cables[arg]
                w.remove(arg)
                expected.append({"kind": K.DOWN, "cables": [arg], "fault": f, "_port": gone.b})
            elif kind == F.EXTRA:
                a, b = (arg["a"]["device"], arg["a"]["port"]), (arg["b"]["device"], arg["b"]["port"])
                for end in (a, b):
                    if end[0] in model.switches:
                        _check_port(model, end)
                extra_n += 1
                occupied = sorted(c.id for end in (a, b) for c in w.cables_at(end))
                w.add(f"X{extra_n:03d}", a, b)
                expected.append({"kind": K.DUPLICATE if occupied else K.UNEXPECTED, "cables": occupied, "fault": f})
            elif kind == F.DOWN:
                end = (arg["device"], arg["port"])
                _check_port(model, end)
                w.forced_down.add(end)
                cables = sorted(c.id for c in w.cables_at(end))
                expected.append({"kind": K.DOWN, "cables": cables, "fault": f})
            elif kind == F.WRONG_HOST:
                if arg["cable"] not in plan_cables or plan_cables[arg["cable"]]["kind"] != "host":
                    raise KeyError(arg["cable"])
                w.announced_name[arg["cable"]] = str(arg["name"])
                expected.append({"kind": K.WRONG_PEER, "cables": [arg["cable"]], "fault": f})
            elif kind == F.LLDP_OFF:
                if arg not in w.servers:
                    raise KeyError(arg)
                w.lldp_off.add(arg)
                cables = sorted(c["id"] for c in model.plan["cables"] if c["kind"] == "host" and c["a"]["device"] == arg)
                expected.append({"kind": K.MISSING, "cables": cables, "fault": f})
            else:
                problems.append(Problem(where, f"unknown fault {kind!r}", f"one of {', '.join(CABLING_KINDS)}"))
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(Problem(where, f"{kind}: {exc!s} is not a cable, device or port of this plan"))
    for name, spec in (faults.get("devices") or {}).items():
        if name not in model.switches:
            problems.append(Problem(f"faults.devices.{name}", "no such switch in the plan"))
            continue
        try:
            spec = dict(spec or {})
            if "reject_line" in spec:
                spec["reject_lines"] = [spec.pop("reject_line")]
            model.faults[name] = DeviceFaults(**spec)
        except TypeError as exc:
            problems.append(Problem(f"faults.devices.{name}", str(exc),
                                    "refuse_login, banner_delay, no_banner, drop_after, reject_lines, delay, ask_password_change, "
                                    "write_fault (fail, drop, fail_once), sublines (reject, global)"))
    if problems:
        raise InputErrors(problems, "invalid faults")
    # what each fault looks like once the plan's config is pushed (planned ports up, others shut)
    planned = {(e["device"], e["port"]) for c in model.plan["cables"] for e in (c["a"], c["b"])}
    for e in expected:
        to = e.pop("_to", None)
        if to is not None and to not in planned:
            e["kind"] = K.DOWN  # moved onto a shut spare port: no link, no neighbour
        port = e.pop("_port", None)
        if port is not None and w.cables_at(port):
            e["kind"] = K.MISSING  # its port is up with another cable in it
    if (model.plan.get("routing") or {}).get("mode") == "bgp":  # a fabric cable fault also takes its eBGP session down
        kinds = {c["id"]: c["kind"] for c in model.plan["cables"]}
        expected += [{"kind": K.BGP, "cables": [cid], "fault": e["fault"]} for e in list(expected) if e["kind"] != K.BGP
                     for cid in e["cables"] if kinds.get(cid) == "fabric"]
    return expected


def _check_port(model: LabModel, end: tuple[str, str]) -> None:
    st = model.switches.get(end[0])
    if st is None or end[1] not in st.interfaces:
        raise KeyError(f"{end[0]} {end[1]}")
