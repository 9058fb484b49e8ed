"""The roles of a fabric's switches as the design-aware checks read them: switch name -> (role, plane), from a
plan's ``switches`` or from render's manifest.json (``roles``), with the members of each role per plane. Pure."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field


@dataclass
class SwitchRoles:
    """Switch name -> (role, plane); ``members(role, plane)`` the switches of a role on a plane, sorted."""

    of: dict[str, tuple[str, int]]
    _members: dict[tuple[str, int], tuple[str, ...]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        by: dict[tuple[str, int], list[str]] = defaultdict(list)
        for name, (role, plane) in self.of.items():
            by[(role, plane)].append(name)
        self._members = {k: tuple(sorted(v)) for k, v in by.items()}

    def members(self, role: str, plane: int) -> tuple[str, ...]:
        return self._members.get((role, plane), ())

    @classmethod
    def from_switches(cls, switches: list[dict]) -> SwitchRoles:
        """From a plan's switch rows (``group`` is the role)."""
        return cls({s["name"]: (s["group"], int(s["plane"])) for s in switches})


__all__ = ["SwitchRoles"]
