"""The plan: a pure, deterministic function of (inventory, catalog), written as plan.json.

``build_plan`` and ``STAGES`` are loaded on first use: a command that only reads a plan (render,
push, verify) imports ``zcube_deploy.plan.io`` and ``.model`` without the planner and what it
imports (about a fifth of a second at the start of every such command).
"""

from __future__ import annotations

__all__ = ["STAGES", "build_plan"]


def __getattr__(name: str):
    if name in __all__:
        from zcube_deploy.plan import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
