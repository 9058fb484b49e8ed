"""The lab's physical layer: cables between ports (from the plan), faults applied to them, link state.

Pure data: no SSH here. A switch port sees an LLDP neighbour only when a cable is present and
both ends are up (admin up on switches, not forced down, the peer's LLDP agent on).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from typing_extensions import NotRequired, TypedDict

from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config

from zcube_deploy.errors import Problem
from zcube_deploy.plan.model import validation_problems
from zcube_deploy.vocabulary import FaultKind, FixOp

End = tuple[str, str]  # (device, port)


# ---- the shape of each physical action (a verify.json finding's `fix` entries), checked before any is applied
@with_config(ConfigDict(strict=True, extra="ignore"))  # a plan cable's end may carry more than device and port
class _End(TypedDict):
    device: str
    port: str


_OP = ConfigDict(strict=True, extra="forbid")


@with_config(_OP)
class _Move(TypedDict):
    op: str
    cable: str
    to: _End
    end: NotRequired[Literal["a", "b"]]


@with_config(_OP)
class _Connect(TypedDict):
    op: str
    cable: str
    a: _End
    b: _End


@with_config(_OP)
class _Cable(TypedDict):
    op: str
    cable: str


@with_config(_OP)
class _Port(TypedDict):
    op: str
    device: str
    port: str


@with_config(_OP)
class _Server(TypedDict):
    op: str
    server: str


@with_config(_OP)
class _PortKeep(TypedDict):
    op: str
    device: str
    port: str
    keep: str


OPERATION_SHAPES: dict[FixOp, TypeAdapter] = {
    FixOp.MOVE: TypeAdapter(_Move), FixOp.CONNECT: TypeAdapter(_Connect), FixOp.REMOVE: TypeAdapter(_Cable),
    FixOp.RESEAT: TypeAdapter(_Port), FixOp.LLDP_ON: TypeAdapter(_Server), FixOp.FIX_HOSTNAME: TypeAdapter(_Cable),
    FixOp.UNPLUG: TypeAdapter(_Port), FixOp.UNPLUG_EXCEPT: TypeAdapter(_PortKeep)}


def operation_problems(ops: object, where: str) -> list[Problem]:
    """Every shape problem of a list of physical actions (``where``: the data path of the list), none if good."""
    if not isinstance(ops, list):
        return [Problem(where, f"expected a list of operations, found {type(ops).__name__}")]
    problems: list[Problem] = []
    for i, op in enumerate(ops):
        at = f"{where}[{i}]"
        kind = op.get("op") if isinstance(op, dict) else None
        if not isinstance(kind, str) or kind not in OPERATION_SHAPES:
            problems.append(Problem(at, f"not a wiring operation: 'op' is {kind!r}" if isinstance(op, dict) else
                                    f"expected a mapping, found {type(op).__name__}", f"op: one of {', '.join(FixOp)}"))
            continue
        try:
            OPERATION_SHAPES[FixOp(kind)].validate_python(op)
        except ValidationError as exc:
            problems += [Problem(p.path, p.message) for p in validation_problems(exc, at)]
    return problems


@dataclass(slots=True)
class Cable:
    id: str
    a: End
    b: End
    planned: bool = True


@dataclass
class Wiring:
    cables: dict[str, Cable] = field(default_factory=dict)
    switches: set[str] = field(default_factory=set)
    servers: set[str] = field(default_factory=set)
    forced_down: set[End] = field(default_factory=set)
    lldp_off: set[str] = field(default_factory=set)  # servers whose LLDP agent sends nothing
    announced_name: dict[str, str] = field(default_factory=dict)  # cable id -> hostname the NIC end announces
    # end -> the cable plugged there (its ID), or a tuple of IDs when there are several (an extra cable): one
    # string per end instead of a list for the 393,216 ends of a 64k fabric
    _at: dict[End, str | tuple[str, ...]] = field(default_factory=dict)
    generation: int = 0  # bumped by every change (reindex, apply): caches of the protocol model key on it

    @classmethod
    def from_plan(cls, plan: dict) -> Wiring:
        w = cls()
        w.switches = {s["name"] for s in plan["switches"]}
        w.servers = {s["name"] for s in plan["servers"]}
        for c in plan["cables"]:
            w.cables[c["id"]] = Cable(c["id"], (c["a"]["device"], c["a"]["port"]), (c["b"]["device"], c["b"]["port"]))
        w.reindex()
        return w

    def copy(self) -> Wiring:
        return copy.deepcopy(self)

    def reindex(self) -> None:
        self.generation += 1
        at: dict[End, str | tuple[str, ...]] = {}
        for c in self.cables.values():
            for end in (c.a, c.b):
                had = at.get(end)
                at[end] = c.id if had is None else ((had,) if isinstance(had, str) else had) + (c.id,)
        self._at = at

    def ids_at(self, end: End) -> tuple[str, ...]:
        """The IDs of the cables plugged into ``end``, in cable order."""
        ids = self._at.get(end, ())
        return (ids,) if isinstance(ids, str) else ids

    def cables_at(self, end: End) -> list[Cable]:
        return [self.cables[i] for i in self.ids_at(end)]

    def far_ends(self, end: End) -> list[End]:
        """The other ends of the cables plugged into ``end`` (:meth:`peers` without the cables; asked for every port
        of a switch by each of its show outputs)."""
        ids = self._at.get(end)
        if ids is None:
            return []
        out = []
        for i in ((ids,) if isinstance(ids, str) else ids):
            c = self.cables[i]
            out.append(c.b if c.a == end else c.a)
        return out

    def peers(self, end: End) -> list[tuple[Cable, End]]:
        out = []
        for c in self.cables_at(end):
            out.append((c, c.b if c.a == end else c.a))
        return out

    # ---- edits (faults and fixes)
    def swap(self, x: str, y: str) -> None:
        """Exchange the switch-side (B) ends of two cables."""
        cx, cy = self.cables[x], self.cables[y]
        cx.b, cy.b = cy.b, cx.b
        self.reindex()

    def move(self, cable: str, to: End, end: str = "b") -> None:
        c = self.cables[cable]
        if end == "a":
            c.a = to
        else:
            c.b = to
        self.reindex()

    def remove(self, cable: str) -> None:
        del self.cables[cable]
        self.reindex()

    def add(self, cable_id: str, a: End, b: End, planned: bool = False) -> None:
        self.cables[cable_id] = Cable(cable_id, a, b, planned)
        self.reindex()

    def apply(self, op: dict) -> None:
        """Apply one physical action (what a technician does after `zcube verify`).

        ops: vocabulary.FixOp (their fields are documented there; their shapes are ``OPERATION_SHAPES``).
        """
        self.generation += 1
        try:
            action = _ACTIONS[FixOp(op["op"])]
        except ValueError:
            raise ValueError(f"unknown wiring operation {op['op']!r}") from None
        action(self, op)

    def apply_all(self, ops: object, where: str = "operations") -> int:
        """Apply a whole list of physical actions, or none: every shape is checked first, then the list is
        applied to a copy, and only a list that applies whole replaces this wiring. Raises ValueError naming
        every problem (a bad list changes nothing)."""
        problems = operation_problems(ops, where)
        if problems:
            raise ValueError("; ".join(str(p) for p in problems))
        trial = self.copy()
        for i, op in enumerate(ops):  # type: ignore[arg-type]  # a list: checked above
            try:
                trial.apply(op)
            except KeyError as exc:
                raise ValueError(f"{where}[{i}]: {op['op']}: no cable {exc} in the lab's wiring (nothing applied)") from None
        vars(self).update(vars(trial))
        return len(ops)  # type: ignore[arg-type]

    def _unplug_except(self, op: dict) -> None:
        for c in self.cables_at((op["device"], op["port"])):
            if c.id != op["keep"]:
                del self.cables[c.id]
        self.reindex()

    def remove_at(self, end: End) -> list[str]:
        """Remove every cable plugged into ``end`` (an unexpected neighbour); returns their IDs."""
        ids = list(self.ids_at(end))
        for i in ids:
            del self.cables[i]
        self.reindex()
        return ids

    def as_dict(self, stream: bool = False) -> dict:
        """The effective wiring as data; ``stream=True`` gives the cables as an iterator (for writing)."""
        rows = ({"id": c.id, "a": {"device": c.a[0], "port": c.a[1]}, "b": {"device": c.b[0], "port": c.b[1]}, "planned": c.planned}
                for c in sorted(self.cables.values(), key=lambda c: c.id))
        return {
            "cables": rows if stream else list(rows),
            # the ports and servers under a `down` / `lldp_off` fault (keys of lab.json's wiring)
            FaultKind.DOWN: [{"device": d, "port": p} for d, p in sorted(self.forced_down)],
            FaultKind.LLDP_OFF: sorted(self.lldp_off),
            "announced_name": dict(sorted(self.announced_name.items())),
        }


# what each physical action does to the wiring (FixOp -> action)
_ACTIONS: dict[FixOp, Callable[[Wiring, dict], object]] = {
    FixOp.MOVE: lambda w, op: w.move(op["cable"], (op["to"]["device"], op["to"]["port"]), op.get("end", "b")),
    FixOp.CONNECT: lambda w, op: w.add(op["cable"], (op["a"]["device"], op["a"]["port"]), (op["b"]["device"], op["b"]["port"]),
                                       planned=True),
    FixOp.REMOVE: lambda w, op: w.remove(op["cable"]) if op["cable"] in w.cables else None,
    FixOp.RESEAT: lambda w, op: w.forced_down.discard((op["device"], op["port"])),
    FixOp.LLDP_ON: lambda w, op: w.lldp_off.discard(op["server"]),
    FixOp.FIX_HOSTNAME: lambda w, op: w.announced_name.pop(op["cable"], None),
    FixOp.UNPLUG: lambda w, op: w.remove_at((op["device"], op["port"])),
    FixOp.UNPLUG_EXCEPT: Wiring._unplug_except,
}
