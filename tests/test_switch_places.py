"""``layout.placement.switches``: explicit switch places (docs/inventory.md). The named switches stand where the
inventory says, the rule places the others around them, and every bad place is reported at once (exit 2, data path).
The corpus case tests/bad_inventories/switch_places.yaml holds all six problems in one file; here each alone."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import INVENTORIES, ROOT
from zcube_deploy.errors import InputErrors
from zcube_deploy.inventory import resolve_inventory
from zcube_deploy.designs import build_plan


def _lab64() -> dict:
    """lab-64 with a rack A04 that holds no switches (a compute rack without servers)."""
    data = yaml.safe_load((INVENTORIES / "lab-64.yaml").read_text())
    data["layout"]["rows"][0]["racks"].append({"name": "A04", "role": "compute"})
    return data


def _plan(data: dict) -> dict:
    return build_plan(resolve_inventory(data, base=INVENTORIES, source="lab-64+places"))


def _with_places(places: dict, data: dict | None = None) -> dict:
    data = copy.deepcopy(data or _lab64())
    data["layout"]["placement"]["switches"] = places
    return data


def _held(plan: dict) -> dict[tuple[str, int], str]:
    """(rack, U) -> the device standing there; fails on a U held twice."""
    height_sw, height_srv = plan["models"]["switch"]["u_height"], plan["models"]["server"]["u_height"]
    held: dict[tuple[str, int], str] = {}
    for dev, h in [(s, height_sw) for s in plan["switches"]] + [(s, height_srv) for s in plan["servers"]]:
        for u in range(dev["u"], dev["u"] + h):
            assert (dev["rack"], u) not in held, f"{dev['name']} and {held[(dev['rack'], u)]} both at {dev['rack']} U{u}"
            held[(dev["rack"], u)] = dev["name"]
    return held


def test_explicit_places_are_kept_and_the_rule_places_the_rest_around_them():
    before = {s["name"]: (s["rack"], s["u"]) for s in _plan(_lab64())["switches"]}
    # ZC-O003 where the rule puts ZC-O001 (A03 U47), ZC-E002 in the network rack, low
    plan = _plan(_with_places({"ZC-O003": {"rack": "A03", "u": 47}, "ZC-E002": {"rack": "A03", "u": 3}}))
    after = {s["name"]: (s["rack"], s["u"]) for s in plan["switches"]}
    assert after["ZC-O003"] == ("A03", 47) and after["ZC-E002"] == ("A03", 3)
    assert after["ZC-O001"] != ("A03", 47)  # the rule went around the explicit place
    _held(plan)  # no U holds two devices
    # cable lengths follow the places: ZC-E002 far from its servers now has longer host cables
    length = {c["id"]: c["length_m"] for c in plan["cables"] if "length_m" in c}
    base = {c["id"]: c["length_m"] for c in _plan(_lab64())["cables"] if "length_m" in c}
    e002 = [c["id"] for c in plan["cables"] if "ZC-E002" in (c["a"]["device"], c["b"]["device"]) and c["kind"] == "host"]
    assert e002 and all(length[c] >= base[c] for c in e002) and any(length[c] > base[c] for c in e002)
    assert before != after


def test_an_inventory_without_the_section_plans_as_before():
    """(The goldens of tests/golden hold the bundled inventories' plans byte for byte.)"""
    a, b = _plan(_lab64()), _plan(_with_places({}))
    assert a["inputs"]["inventory_sha256"] != b["inputs"]["inventory_sha256"]  # the text differs ...
    assert {**a, "inputs": None} == {**b, "inputs": None}  # ... the plan does not


@pytest.mark.parametrize("place, path, words", [
    ({"ZC-O099": {"rack": "A03", "u": 1}}, "layout.placement.switches.ZC-O099", "no switch is named"),
    ({"ZC-O001": {"rack": "A09", "u": 1}}, "layout.placement.switches.ZC-O001.rack", "no rack is named"),
    ({"ZC-O001": {"rack": "A04", "u": 40}}, "layout.placement.switches.ZC-O001.rack", "does not hold switches"),
    ({"ZC-O001": {"rack": "A03", "u": 48}}, "layout.placement.switches.ZC-O001.u", "above rack A03's 48U"),
    ({"ZC-O001": {"rack": "A01", "u": 9}}, "layout.placement.switches.ZC-O001.u", "overlaps server gpu01"),
    ({"ZC-O001": {"rack": "A03", "u": 20}, "ZC-O003": {"rack": "A03", "u": 21}}, "layout.placement.switches.ZC-O003.u",
     "overlaps switch ZC-O001"),
])
def test_each_bad_place_is_refused_at_its_data_path(place, path, words):
    with pytest.raises(InputErrors) as err:
        _plan(_with_places(place))
    assert [(p.path, words in p.message) for p in err.value.problems] == [(path, True)], err.value.problems


def test_a_roft_places_its_switches_too():
    data = yaml.safe_load((INVENTORIES / "glm-1k-roft.yaml").read_text())
    data["layout"]["placement"]["switches"] = {"RO-S01": {"rack": "CN1", "u": 1}}
    plan = build_plan(resolve_inventory(data, base=INVENTORIES, source="glm-1k-roft+places"))
    assert {s["name"]: (s["rack"], s["u"]) for s in plan["switches"]}["RO-S01"] == ("CN1", 1)
    _held(plan)
def test_the_bundled_inplace_inventory_is_glm1k_with_switch_places_only():
    """inventories/glm-1k-inplace.yaml: glm-1k's servers, switches and addresses; only switch places differ."""
    def without_places(path):
        data = yaml.safe_load(path.read_text())
        data["layout"]["placement"].pop("switches", None)
        return data

    assert without_places(INVENTORIES / "glm-1k-inplace.yaml") == without_places(INVENTORIES / "glm-1k.yaml")
    data = yaml.safe_load((INVENTORIES / "glm-1k-inplace.yaml").read_text())
    plan = build_plan(resolve_inventory(data, base=INVENTORIES, source=str(ROOT / "inventories/glm-1k-inplace.yaml")))
    places = {s["name"]: {"rack": s["rack"], "u": s["u"]} for s in plan["switches"]}
    assert {n: places[n] for n in data["layout"]["placement"]["switches"]} == data["layout"]["placement"]["switches"]
    _held(plan)
