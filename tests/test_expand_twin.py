"""An expansion pushed into the twin under continuous probes (issue 26 item 4's twin target).

lab-64 planned for 8 servers with 4 installed, its twin up (root, network namespaces, FRR; skipped with
the reason printed where that cannot be done), then grown to 8 servers while the prober pings existing
GPU pairs: 0 echoes lost and every new port pair sampled answering. Known-bad: the same expansion
pushed by rewriting each changed switch's existing ports too ("bounce") loses echoes, so the
measurement sees loss when there is some.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from zcube_deploy.expand.twin import frr_changes, measure_expansion
from zcube_deploy.inventory import resolve_inventory
from zcube_deploy.plan import build_plan
from zcube_deploy.plan.io import write_plan
from zcube_deploy.twin import build


def _plans(tmp: Path) -> tuple[dict, dict, Path, Path]:
    data = yaml.safe_load((ROOT / "inventories" / "lab-64.yaml").read_text())
    data["topology"]["capacity_servers"] = 8
    plans = []
    for count in (4, 8):
        data["servers"]["generate"]["count"] = count
        plan = build_plan(resolve_inventory(data, base=ROOT / "inventories"))
        plans.append((plan, write_plan(plan, tmp / f"p{count}")))
    return plans[0][0], plans[1][0], plans[0][1], plans[1][1]


def test_frr_changes_are_the_new_ports_only(tmp_path):
    old, new, _, _ = _plans(tmp_path)
    names = build.port_names(new)
    changes, problems = frr_changes(old, new, names)
    assert problems == [] and len(changes) == 12
    blocks = [ln for cmds in changes.values() for ln in cmds if ln.startswith("interface ")]
    assert len(blocks) == 64 and all(cmds.count("no shutdown") == cmds.count("exit") for cmds in changes.values())
    # known-bad: an old section that changes is named
    moved = json.loads(json.dumps(new))
    moved["switches"][0]["interfaces"][0]["address"] = "10.9.9.9"
    _, problems = frr_changes(old, moved, names)
    assert len(problems) == 1 and "would change in the FRR config" in problems[0]


def _unavailable() -> str | None:
    try:
        return build.netns.missing_support() or build.runtime.missing()
    except OSError as exc:
        return str(exc)


@pytest.mark.xdist_group("twin")  # namespaces, FRR, ARP sysctls: one twin at a time (docs/tests.md)
@pytest.mark.parametrize("order", ["add", "bounce"])
def test_expansion_in_the_twin(tmp_path, order):
    why = _unavailable()
    if why:
        print(f"twin test skipped: {why}")
        pytest.skip(why)
    old, new, old_path, new_path = _plans(tmp_path)
    d = tmp_path / "twin"
    build.up(old, str(old_path), d, log=lambda *_: None)
    try:
        m = measure_expansion(old, new, str(new_path), d, order=order)
    finally:
        build.down(d, log=lambda *_: None)
    assert build.netns.existing_namespaces() == [n for n in build.netns.existing_namespaces() if not n.startswith(build.load(d)["prefix"])]
    assert (m["servers_added"], m["cables_added"], m["switches_pushed"]) == (4, 64, 12)
    assert m["new_pairs_reached"] == m["new_pairs_tried"] == 64
    assert m["echoes_sent"] > 10 * m["existing_pairs_probed"]
    if order == "add":
        assert m["echoes_lost"] == 0, m["probe"]["lossy_pairs"][:5]
    else:
        assert m["echoes_lost_during_expansion"] > 0
