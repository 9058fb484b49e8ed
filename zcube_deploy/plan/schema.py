"""JSON Schemas that `zcube schema` prints: the plan (from the one plan model, plan/model.py) and
the inventory (from its pydantic model)."""

from __future__ import annotations

from zcube_deploy.inventory.models import Inventory
from zcube_deploy.plan.model import plan_json_schema


def plan_schema() -> dict:
    return plan_json_schema()


def inventory_schema() -> dict:
    return Inventory.model_json_schema()
