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
from bisect import bisect_left
from pathlib import Path
from collections.abc import Callable
from typing import Annotated, Any, Literal

import yaml
from pydantic import ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.lab.core import DeviceFaults, LabModel
from zcube_deploy.plan.model import validation_problems
from zcube_deploy.vocabulary import FaultKind as F
from zcube_deploy.vocabulary import FindingKind as K

CABLING_KINDS = tuple(F)
MAX_PROBLEMS = 20  # problems listed at most; the rest are counted

# ---- the shape of a faults file (checked whole, before any fault is applied)
_STRICT = ConfigDict(strict=True, extra="forbid")
Text = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")]  # one printable line
Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")]  # a hostname a NIC may announce


@with_config(ConfigDict(strict=True, extra="ignore"))  # a cable end copied from plan.json also has its rack and U
class _End(TypedDict):
    device: Text
    port: Text


@with_config(_STRICT)
class _Move(TypedDict):
    cable: Text
    to: _End


@with_config(_STRICT)
class _Extra(TypedDict):
    a: _End
    b: _End


@with_config(_STRICT)
class _WrongHost(TypedDict):
    cable: Text
    name: Name


# a cabling fault is a mapping with one key, its kind; the value's shape by kind
CABLING_SHAPES: dict[F, TypeAdapter] = {
    F.SWAP: TypeAdapter(Annotated[list[Text], Field(min_length=2, max_length=2)], config=_STRICT),
    F.MOVE: TypeAdapter(_Move), F.REMOVE: TypeAdapter(Text, config=_STRICT), F.EXTRA: TypeAdapter(_Extra),
    F.DOWN: TypeAdapter(_End), F.WRONG_HOST: TypeAdapter(_WrongHost), F.LLDP_OFF: TypeAdapter(Text, config=_STRICT)}


@with_config(_STRICT)
class _DeviceFaults(TypedDict, total=False):
    refuse_login: bool
    banner_delay: Annotated[float, Field(ge=0, le=600)]
    no_banner: bool
    drop_after: Annotated[int, Field(ge=0)] | None
    reject_lines: list[Text]
    reject_line: Text  # one line: the same as reject_lines: [LINE]
    delay: Annotated[float, Field(ge=0, le=60)]
    ask_password_change: bool
    write_fault: Literal["fail", "drop", "fail_once"] | None
    sublines: Literal["reject", "global"]


DEVICE_SHAPE = TypeAdapter(_DeviceFaults | None)


def _shape_problems(exc: ValidationError, where: str) -> list[Problem]:
    return [Problem(p.path, p.message) for p in validation_problems(exc, where, limit=MAX_PROBLEMS)]


def fault_problems(data: object) -> list[Problem]:
    """Every shape problem of a faults document (data paths from its top), none if it is well formed."""
    if not isinstance(data, dict):
        return [Problem("", f"expected a mapping with 'cabling' and/or 'devices', found {type(data).__name__}")]
    problems = [Problem(str(k), "unknown section", "'cabling' (a list) and 'devices' (a mapping)") for k in data
                if k not in ("cabling", "devices")]
    cabling, devices = data.get("cabling") or [], data.get("devices") or {}
    if not isinstance(cabling, list):
        problems.append(Problem("cabling", f"expected a list of faults, found {type(cabling).__name__}"))
        cabling = []
    for i, f in enumerate(cabling):
        where = f"cabling[{i}]"
        kind = next(iter(f)) if isinstance(f, dict) and len(f) == 1 else None
        if not isinstance(kind, str) or kind not in CABLING_SHAPES:
            problems.append(Problem(where, f"not a cabling fault: {_short(f)}", f"a mapping with one key, one of {', '.join(CABLING_KINDS)}"))
            continue
        try:
            CABLING_SHAPES[F(kind)].validate_python(f[kind])
        except ValidationError as exc:
            problems += _shape_problems(exc, f"{where}.{kind}")
    if not isinstance(devices, dict):
        problems.append(Problem("devices", f"expected a mapping of switch names, found {type(devices).__name__}"))
        devices = {}
    for name, spec in devices.items():
        if not isinstance(name, str):
            problems.append(Problem(f"devices.{name!r}", "a switch name is text"))
            continue
        try:
            DEVICE_SHAPE.validate_python(spec)
        except ValidationError as exc:
            problems += _shape_problems(exc, f"devices.{name}")
    return problems


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _refuse(problems: list[Problem], source: str) -> InputErrors:
    shown = problems[:MAX_PROBLEMS] + ([Problem("", f"... and {len(problems) - MAX_PROBLEMS} more")] if len(problems) > MAX_PROBLEMS else [])
    return InputErrors(shown, f"invalid faults {source} (no fault applied)")


def load_faults(spec: str | None, plan: dict, seed: int = 0) -> dict:
    """`FILE` or `random:N` -> {"cabling": [...], "devices": {...}}; a file is checked whole (InputErrors)."""
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
    except UnicodeDecodeError as exc:
        raise InputErrors(Problem(spec, f"not UTF-8 text: {exc.reason} at byte {exc.start}", "a faults file is YAML")) from None
    except yaml.YAMLError as exc:
        raise InputErrors(Problem(spec, f"not valid YAML: {exc}")) from None
    except RecursionError:
        raise InputErrors(Problem(spec, "nested too deeply to be a faults file")) from None
    return checked_faults(data, f"file {spec}")


def checked_faults(data: object, source: str = "faults") -> dict:
    """A faults document, checked whole and normalised to {"cabling": [...], "devices": {...}}."""
    problems = fault_problems(data)
    if problems:
        raise _refuse(problems, source)
    assert isinstance(data, dict)  # noqa: S101 - fault_problems said so
    return {"cabling": list(data.get("cabling") or []), "devices": dict(data.get("devices") or {})}


class _Pool:
    """Items in a fixed order, some taken out as the draw goes: ``choice`` draws from those left exactly as
    ``rng.choice`` would from the list of them (same length, same order), in O(log n), not O(n)."""

    def __init__(self, items: list) -> None:
        self.items = items
        self.left = list(range(len(items)))  # positions of the items left, ascending

    def discard(self, pos: int) -> None:
        i = bisect_left(self.left, pos)
        if i < len(self.left) and self.left[i] == pos:
            del self.left[i]

    def choice(self, rng: random.Random):
        return self.items[rng.choice(self.left)] if self.left else None


def max_random_faults(plan: dict) -> int:
    """The most cabling faults ``random:N`` can put into ``plan``: each one takes at least one host cable of its own."""
    return sum(1 for c in plan["cables"] if c["kind"] == "host")


def random_faults(plan: dict, n: int, seed: int) -> list[dict]:
    """N cabling faults cycling through every kind, on distinct cables and ports, seeded.

    N is bounded by :func:`max_random_faults`; a draw that cannot place N faults on this plan (the
    cables a kind needs are all taken) is refused, never returned short. Raises InputErrors.
    """
    most = max_random_faults(plan)
    if not 0 <= n <= most:
        raise InputErrors(Problem("--faults", f"random:{n}: this plan holds at most {most} cabling faults (one per host cable)",
                                  f"give random:N with N from 0 to {most}"))
    out = _draw(plan, n, seed)
    if len(out) < n:
        raise InputErrors(Problem("--faults", f"random:{n}: only {len(out)} faults of distinct cables and ports fit this plan "
                                  f"with seed {seed}", f"give a smaller N (at most {len(out)}) or another --seed"))
    return out


def _draw(plan: dict, n: int, seed: int) -> list[dict]:
    """The draw of :func:`random_faults`: a kind per attempt, in a seeded order (the table DRAWS), 20 attempts per
    fault at most."""
    d = _Draw(plan, seed)
    kinds = list(CABLING_KINDS)
    d.rng.shuffle(kinds)
    attempts = 0
    while len(d.out) < n and attempts < n * 20:
        kind = kinds[attempts % len(kinds)]
        attempts += 1
        DRAWS[kind](d, kind)
    return d.out


class _Draw:
    """The state of a random draw: what is used (cables, ports, servers without LLDP) and the pools left."""

    def __init__(self, plan: dict, seed: int) -> None:
        self.rng = random.Random(seed)
        self.used_cables: set[str] = set()
        self.used_ports: set[tuple[str, str]] = set()
        self.host = host = [c for c in plan["cables"] if c["kind"] == "host"]
        self.by_switch: dict[str, list[dict]] = {}
        for c in host:
            self.by_switch.setdefault(c["b"]["device"], []).append(c)
        self.switches = sorted(self.by_switch)
        servers = [s["name"] for s in plan["servers"]]
        # what is left to draw from, as the kinds below filter it: host cables (unused, port unused, server's LLDP on)
        # and servers (none of their cables used, LLDP on)
        self.cable_pool, self.server_pool = _Pool(host), _Pool(servers)
        self.server_pos = {s: i for i, s in enumerate(servers)}
        self.at_port: dict[tuple[str, str], list[int]] = {}
        self.of_server: dict[str, list[int]] = {}
        for i, c in enumerate(host):
            self.at_port.setdefault((c["b"]["device"], c["b"]["port"]), []).append(i)
            self.of_server.setdefault(c["a"]["device"], []).append(i)
        self.pos = {c["id"]: i for i, c in enumerate(host)}
        self.lldp_off_servers: set[str] = set()
        self.out: list[dict] = []

    def use_cables(self, *cables: dict) -> None:
        for c in cables:
            self.used_cables.add(c["id"])
            self.cable_pool.discard(self.pos[c["id"]])
            if c["a"]["device"] in self.server_pos:
                self.server_pool.discard(self.server_pos[c["a"]["device"]])

    def use_port(self, end: tuple[str, str]) -> None:
        self.used_ports.add(end)
        for i in self.at_port.get(end, ()):
            self.cable_pool.discard(i)

    def _switch_cables(self, sw: str, port_free: bool) -> list[dict]:
        return [c for c in self.by_switch[sw] if c["id"] not in self.used_cables and c["a"]["device"] not in self.lldp_off_servers
                and (not port_free or (sw, c["b"]["port"]) not in self.used_ports)]

    # one method per kind (the table DRAWS): add its fault(s) to out, or nothing when none fits
    def swap(self, kind: F) -> None:
        cands = self._switch_cables(self.rng.choice(self.switches), port_free=False)
        if len(cands) < 2:
            return
        x, y = self.rng.sample(cands, 2)
        if x["a"]["device"] == y["a"]["device"] and x["a"]["port"] == y["a"]["port"]:
            return
        self.out.append({F.SWAP: [x["id"], y["id"]]})
        self.use_cables(x, y)

    def move(self, kind: F) -> None:
        """A cable plugged into the port of another cable of the same switch, that one left out: the classic
        "wrong port" (a move to a spare port would land on a shut port: a 'down')."""
        sw = self.rng.choice(self.switches)
        cands = self._switch_cables(sw, port_free=True)
        if len(cands) < 2:
            return
        c, d = self.rng.sample(cands, 2)
        self.out.append({F.REMOVE: d["id"]})
        self.out.append({F.MOVE: {"cable": c["id"], "to": {"device": sw, "port": d["b"]["port"]}}})
        self.use_cables(c, d)
        self.use_port((sw, c["b"]["port"]))
        self.use_port((sw, d["b"]["port"]))

    def one_cable(self, kind: F) -> None:
        """remove, down, wrong_host: one fresh host cable each."""
        c = self.cable_pool.choice(self.rng)
        if not c:
            return
        self.use_cables(c)
        self.out.append({kind: _ONE_CABLE[kind](c)})

    def extra(self, kind: F) -> None:
        """A stray device patched into a port that already has its planned cable: two LLDP neighbours on one port.
        (An extra cable between two spare ports stays dark: spare ports are shut by the rendered config, so verify
        cannot see it after a push.)"""
        c = self.cable_pool.choice(self.rng)
        if not c:
            return
        self.use_cables(c)
        self.use_port((c["b"]["device"], c["b"]["port"]))
        self.out.append({F.EXTRA: {"a": {"device": f"lab-stray{len(self.out) + 1}", "port": "eth0"},
                                   "b": {"device": c["b"]["device"], "port": c["b"]["port"]}}})

    def lldp_off(self, kind: F) -> None:
        s = self.server_pool.choice(self.rng)
        if s is None:
            return
        self.lldp_off_servers.add(s)
        self.server_pool.discard(self.server_pos[s])
        self.use_cables(*(self.host[i] for i in self.of_server.get(s, ())))
        self.out.append({F.LLDP_OFF: s})


# the fault of a kind that takes one cable, from that cable
_ONE_CABLE: dict[F, Callable[[dict], object]] = {
    F.REMOVE: lambda c: c["id"], F.DOWN: lambda c: {"device": c["b"]["device"], "port": c["b"]["port"]},
    F.WRONG_HOST: lambda c: {"cable": c["id"], "name": f"{c['a']['device']}-spare"}}

# the table of how `random:N` draws each cabling fault kind
DRAWS: dict[F, Callable[[_Draw, F], None]] = {
    F.SWAP: _Draw.swap, F.MOVE: _Draw.move, F.REMOVE: _Draw.one_cable, F.EXTRA: _Draw.extra, F.DOWN: _Draw.one_cable,
    F.WRONG_HOST: _Draw.one_cable, F.LLDP_OFF: _Draw.lldp_off}


class _Injection:
    """What applying cabling faults shares: the model, its wiring, the plan's cables, the extra cables' count."""

    def __init__(self, model: LabModel) -> None:
        self.model, self.w = model, model.wiring
        self.plan_cables = {c["id"]: c for c in model.plan["cables"]}
        self.extra_n = 0

    def port(self, end: tuple[str, str]) -> tuple[str, str]:
        _check_port(self.model, end)
        return end

    # one method per fault kind (the table CABLING below): apply it, return its expected finding (without "fault")
    def swap(self, arg: list[str]) -> dict:
        x, y = arg
        self.w.swap(x, y)
        return {"kind": K.SWAPPED, "cables": sorted([x, y])}

    def move(self, arg: dict) -> dict:
        to = self.port((arg["to"]["device"], arg["to"]["port"]))
        self.w.move(arg["cable"], to)
        return {"kind": K.WRONG_PEER, "cables": [arg["cable"]], "_to": to}

    def remove(self, arg: str) -> dict:
        gone = self.w.cables[arg]
        self.w.remove(arg)
        return {"kind": K.DOWN, "cables": [arg], "_port": gone.b}

    def extra(self, arg: dict) -> dict:
        a, b = (arg["a"]["device"], arg["a"]["port"]), (arg["b"]["device"], arg["b"]["port"])
        for end in (a, b):
            if end[0] in self.model.switches:
                self.port(end)
        self.extra_n += 1
        occupied = sorted(c.id for end in (a, b) for c in self.w.cables_at(end))
        self.w.add(f"X{self.extra_n:03d}", a, b)
        return {"kind": K.DUPLICATE if occupied else K.UNEXPECTED, "cables": occupied}

    def down(self, arg: dict) -> dict:
        end = self.port((arg["device"], arg["port"]))
        self.w.forced_down.add(end)
        return {"kind": K.DOWN, "cables": sorted(c.id for c in self.w.cables_at(end))}

    def wrong_host(self, arg: dict) -> dict:
        if arg["cable"] not in self.plan_cables or self.plan_cables[arg["cable"]]["kind"] != "host":
            raise KeyError(arg["cable"])
        self.w.announced_name[arg["cable"]] = str(arg["name"])
        return {"kind": K.WRONG_PEER, "cables": [arg["cable"]]}

    def lldp_off(self, arg: str) -> dict:
        if arg not in self.w.servers:
            raise KeyError(arg)
        self.w.lldp_off.add(arg)
        cables = sorted(c["id"] for c in self.model.plan["cables"] if c["kind"] == "host" and c["a"]["device"] == arg)
        return {"kind": K.MISSING, "cables": cables}


# the table of cabling fault kinds: kind -> how it is applied (its shape in a faults file: CABLING_SHAPES)
CABLING: dict[F, Callable[[_Injection, Any], dict]] = {
    F.SWAP: _Injection.swap, F.MOVE: _Injection.move, F.REMOVE: _Injection.remove, F.EXTRA: _Injection.extra,
    F.DOWN: _Injection.down, F.WRONG_HOST: _Injection.wrong_host, F.LLDP_OFF: _Injection.lldp_off}


def apply_faults(model: LabModel, faults: dict, source: str = "faults") -> list[dict]:
    """Apply faults (checked first: :func:`checked_faults`) to the lab model; return the expected verify findings,
    one per fault. A fault naming a cable, device or port the plan does not have raises InputErrors, all at once."""
    faults = checked_faults(faults, source)
    problems: list[Problem] = []
    expected: list[dict] = []
    inj = _Injection(model)
    w = model.wiring
    for i, f in enumerate(faults.get("cabling", [])):
        (kind, arg), = f.items()
        try:
            expected.append({**CABLING[F(kind)](inj, arg), "fault": f})
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(Problem(f"cabling[{i}]", f"{kind}: {exc!s} is not a cable, device or port of this plan"))
    for name, spec in (faults.get("devices") or {}).items():
        if name not in model.switches:
            problems.append(Problem(f"devices.{name}", "no such switch in the plan"))
            continue
        spec = dict(spec or {})
        if "reject_line" in spec:
            spec["reject_lines"] = list(spec.get("reject_lines", [])) + [spec.pop("reject_line")]
        model.faults[name] = DeviceFaults(**spec)
    if problems:
        raise _refuse(problems, source)
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
