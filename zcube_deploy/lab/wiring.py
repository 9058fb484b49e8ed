"""The lab's physical layer: cables between ports (from the plan), faults applied to them, link state.

Pure data: no SSH here. A switch port sees an LLDP neighbour only when a cable is present and
both ends are up (admin up on switches, not forced down, the peer's LLDP agent on).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from zcube_deploy.vocabulary import FaultKind, FixOp

End = tuple[str, str]  # (device, port)


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
    _at: dict[End, list[str]] = field(default_factory=dict)
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
        at: dict[End, list[str]] = {}
        for c in self.cables.values():
            at.setdefault(c.a, []).append(c.id)
            at.setdefault(c.b, []).append(c.id)
        self._at = at

    def cables_at(self, end: End) -> list[Cable]:
        return [self.cables[i] for i in self._at.get(end, ())]

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

        ops: vocabulary.FixOp (their fields are documented there).
        """
        kind = op["op"]
        self.generation += 1
        if kind == FixOp.MOVE:
            self.move(op["cable"], (op["to"]["device"], op["to"]["port"]), op.get("end", "b"))
        elif kind == FixOp.CONNECT:
            self.add(op["cable"], (op["a"]["device"], op["a"]["port"]), (op["b"]["device"], op["b"]["port"]), planned=True)
        elif kind == FixOp.REMOVE:
            if op["cable"] in self.cables:
                self.remove(op["cable"])
        elif kind == FixOp.RESEAT:
            self.forced_down.discard((op["device"], op["port"]))
        elif kind == FixOp.LLDP_ON:
            self.lldp_off.discard(op["server"])
        elif kind == FixOp.FIX_HOSTNAME:
            self.announced_name.pop(op["cable"], None)
        elif kind == FixOp.UNPLUG:
            self.remove_at((op["device"], op["port"]))
        elif kind == FixOp.UNPLUG_EXCEPT:
            for c in self.cables_at((op["device"], op["port"])):
                if c.id != op["keep"]:
                    del self.cables[c.id]
            self.reindex()
        else:
            raise ValueError(f"unknown wiring operation {kind!r}")

    def remove_at(self, end: End) -> list[str]:
        """Remove every cable plugged into ``end`` (an unexpected neighbour); returns their IDs."""
        ids = list(self._at.get(end, ()))
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
