"""Lower bounds a staged migration cannot beat, computed without the stage search.

- Stages: every unit leaves service once and at most ``cap`` units are out at a time, so at least
  ceil(units / cap) stages (capacity floor arithmetic, as FatClique counts steps).
- Cable touches: roles.touch_lower_bound (the most cables any role assignment keeps, with no
  stage deadlines).

Pure.
"""

from __future__ import annotations


def stage_lower_bound(n_units: int, cap: int) -> int:
    """ceil(n_units / cap); 0 units need 0 stages."""
    if n_units == 0:
        return 0
    if cap <= 0:
        raise ValueError("no unit may leave service: no stage is possible")
    return -(-n_units // cap)


__all__ = ["stage_lower_bound"]
