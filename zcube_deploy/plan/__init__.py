"""The plan: a pure, deterministic function of (inventory, catalog), written as plan.json."""

from zcube_deploy.plan.build import STAGES, build_plan

__all__ = ["STAGES", "build_plan"]
