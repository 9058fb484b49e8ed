"""Issue 27's targets for `zcube migrate` on the bundled glm-1k-roft -> glm-1k, and why a leaf target is out of reach.

At a capacity floor of 0.75 in 4-GPU units: stages <= the tool's lower bound + 1, cable touches <= 1.05 x the lower
bound it reports, no switch bought, and as many leaves reused as any sequence allows (12 of 16: docs/migrate.md
argues why a first stage always gives at least 4 roles to spines).
"""

from __future__ import annotations

import pytest

from conftest import INVENTORIES
from zcube_deploy import designs
from zcube_deploy.inventory import load_inventory
from zcube_deploy.migrate.fabric import build_units, read_side
from zcube_deploy.migrate.moves import touches
from zcube_deploy.migrate.planner import Options, capacity, plan_migration
from zcube_deploy.migrate.report import summary
from zcube_deploy.migrate.search import Search


@pytest.fixture(scope="module")
def glm_roft():
    return designs.build_plan(load_inventory(INVENTORIES / "glm-1k-roft.yaml"))


@pytest.fixture(scope="module")
def glm_mig(glm_roft, glm1k_plan):
    return plan_migration(glm_roft, glm1k_plan, Options(0.75, "4-gpu", 0))


def test_glm1k_meets_the_issue_targets_rack_space_aside(glm_mig):
    """Planned without a cabling catalog (so without temporary places: the racks aside), the stages and touches meet
    the targets; with the racks as they are (tests/test_migrate_places.py) the temporary places' re-plugs and swaps
    add touches beyond 1.05 x the bound (docs/migrate.md)."""
    doc = summary(glm_mig, "F", "T")
    assert doc["stages"] <= doc["stages_lower_bound"] + 1 and doc["stages"] == doc["stages_lower_bound"] == 4
    assert doc["cable_touches"] <= 1.05 * doc["cable_touches_lower_bound"]
    assert doc["cable_touches"] == touches([m for stage in glm_mig.moves for m in stage])
    assert doc["switches_bought"] == 0 and doc["switches_reused"] == 16 and doc["switches_retired"] == 8
    assert doc["reused_by_role"] == {"leaf": 12, "spine": 4}


def test_every_first_stage_gives_four_roles_to_spines(glm_roft, glm1k_plan):
    """The argument of docs/migrate.md, checked by enumeration: over every first stage of at most 64 half-servers the
    search can take (every set of pieces of interchangeable units; a part of a piece needs the same roles and frees
    no more leaves), the roles the ZCube island needs exceed the leaves the ROFT island frees by at least 4, and some
    first stage attains 4."""
    src, dst = read_side(glm_roft, "F"), read_side(glm1k_plan, "T")
    units = build_units(glm_roft, glm1k_plan, 4)
    s = Search(src, dst, units, capacity(len(units), 0.75), 0)
    start = tuple(0 for _ in s.classes)
    firsts = list(s._batches(start, full_only=False))
    assert len(firsts) > 1000
    assert min(s.shortfall(f) for f in firsts) == 4
