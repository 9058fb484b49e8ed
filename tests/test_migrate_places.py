"""zcube migrate when TO's switches stand where FROM's serving switches stand: stages ordered around the clashes
when an order exists, else temporary places (zcube_deploy/migrate/places.py, docs/migrate.md).

The bundled pair (inventories/glm-1k-roft.yaml -> inventories/glm-1k.yaml) and roft-small -> zcube-small-inplace
(tests/inventories/) have the clash; the proof that no order exists is checked by enumeration on the small pair.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
from collections import Counter

import openpyxl
import pytest

from conftest import ROOT, run_zcube
from migrate_helpers import check_move_sheet_ids, check_ports_emptied_before_plugged
from zcube_deploy.catalog.cabling import plan_catalog
from zcube_deploy.designs import build_plan
from zcube_deploy.inventory import load_inventory
from zcube_deploy.migrate.fabric import read_side
from zcube_deploy.migrate.invariants import check_cable_lengths, check_cable_parts, check_migration
from zcube_deploy.migrate.places import occupants
from zcube_deploy.migrate.planner import Options, _units, capacity, plan_migration
from zcube_deploy.migrate.racks import switch_work
from zcube_deploy.migrate.search import Search

SMALL = ROOT / "tests" / "inventories"


def _plan(path):
    return build_plan(load_inventory(path))


@pytest.fixture(scope="module")
def glm_pair():
    return _plan(ROOT / "inventories" / "glm-1k-roft.yaml"), _plan(ROOT / "inventories" / "glm-1k.yaml")


@pytest.fixture(scope="module")
def glm_mig(glm_pair):
    roft, zc = glm_pair
    return plan_migration(roft, zc, Options(0.75, "4-gpu", 0), catalog=plan_catalog(zc, None, accept_changed=True)[0])


@pytest.fixture(scope="module")
def small_pair():
    return _plan(SMALL / "roft-small.yaml"), _plan(SMALL / "zcube-small-inplace.yaml")


def test_glm1k_in_place_stands_roles_in_temporary_places_and_holds_every_invariant(glm_mig):
    mig = glm_mig
    assert mig.places_met == "none exists"  # the search, ordering the stages around the clashes, was exhaustive
    assert not mig.rack_conflicts and all(not p for p in check_migration(mig).values())
    assert len(mig.batches) == mig.lower["stages"] == 4
    assert mig.temp and all(tp.rack in ("CN1", "DN1") and tp.since < tp.until <= 4 for tp in mig.temp.values())
    racked = {(w.new.rack, w.new.u) for work in mig.work for w in work if w.action == "rack"}
    assert {(tp.rack, tp.u) for tp in mig.temp.values()} <= racked
    replugs = [m for stage in mig.moves for m in stage if m.action == "replug" or m.temporary]
    assert replugs and {m.stage for m in replugs} == {tp.until for tp in mig.temp.values()}


def test_reused_cables_are_the_part_the_port_needs(glm_mig, glm_pair):
    """The bundled pair's FROM fabric DACs are 400G (ZC-DAC-400G-*), TO's are 200G: none is reused (they are removed),
    and every cable plugged from a FROM cable has TO's part family there."""
    mig, roft = glm_mig, glm_pair[0]
    reused = [m for stage in mig.moves for m in stage if m.new is not None and m.old_cable]
    assert reused and not [m for m in reused if "400G" in mig.src.parts[m.old_cable][0]]
    removed = {m.old_cable for stage in mig.moves for m in stage if m.action == "remove"}
    dacs = {c["id"] for c in roft["cables"] if c["part"].startswith("ZC-DAC-400G")}
    assert dacs and dacs <= removed
    assert not check_cable_parts(mig)


def test_a_cable_plugged_into_a_port_of_another_speed_or_too_short_breaks_the_invariant(glm_mig):
    """Known-bad: the cable a move reuses is made a 400G DAC (the TO port is a 200G DAC's), or shorter than planned."""
    mig = glm_mig
    m = next(m for stage in mig.moves for m in stage if m.action == "move" and mig.dst.parts[m.cable][2] == "DAC")
    part, length, medium = mig.dst.parts[m.cable]
    for bad in ((part.replace("200G", "400G"), length, medium), (part, length - 0.5, medium)):
        src = dataclasses.replace(mig.src, parts={**mig.src.parts, m.old_cable: bad})
        problems = check_cable_parts(dataclasses.replace(mig, src=src))
        assert problems and all(m.cable in p.path for p in problems)


def test_a_stand_in_too_short_for_where_its_ends_stand_breaks_the_lengths_invariant(glm_mig):
    """Known-bad: a cable laid to a temporary place (the bundled pair: SMF stand-ins to CN1) made 1 m long, or its
    temporary place moved to the far rack of the hall (the laid length no longer covers the run), or the stand-in a DAC
    again (the run is beyond a DAC's reach): cable_lengths, which re-measures each run from the racks and U the ends
    stand in that stage, names the cable."""
    mig = glm_mig
    assert not check_cable_lengths(mig)
    stage, i = next((t, i) for t, moves in enumerate(mig.moves) for i, m in enumerate(moves)
                    if m.new is not None and m.new.device in mig.temp and m.cable in mig.laid and mig.laid[m.cable].swap)
    m = mig.moves[stage][i]
    for bad in (dataclasses.replace(m, length_m=1.0), dataclasses.replace(m, medium="DAC")):
        moves = [list(ms) for ms in mig.moves]
        moves[stage][i] = bad
        problems = check_cable_lengths(dataclasses.replace(mig, moves=moves))
        assert problems and all(m.cable in p.path for p in problems), problems
    far = max(mig.geometry.racks, key=lambda r: (mig.geometry.racks[r].row_index, mig.geometry.racks[r].position))
    role = m.new.device
    moved = {**mig.temp, role: dataclasses.replace(mig.temp[role], rack=far)}
    problems = check_cable_lengths(dataclasses.replace(mig, temp=moved))
    assert problems and any(m.cable in p.path for p in problems)


def test_a_role_racked_where_a_serving_switch_stands_is_refused_by_the_invariant(glm_mig, glm_pair):
    """Known-bad: the same migration's rack work planned without its temporary places racks roles where ROFT leaves
    that still serve stand; the rack_space invariant (U by U, apart from the planner) finds each."""
    mig = glm_mig
    roft, zc = glm_pair
    work, conflicts = switch_work(roft, zc, mig.src, mig.dst, mig.bind, mig.need_stage, mig.free_stage, len(mig.batches),
                                  mig.space, [], {})
    assert conflicts
    bad = dataclasses.replace(mig, work=work, temp={})
    found = [p.message for p in check_migration(bad)["rack_space"]]
    assert any(" where RO-L" in m and "stand" in m for m in found), found
    # the temporary places dropped from the migration, the work kept: a role is not where the stage says it is
    lost = dataclasses.replace(mig, temp={})
    assert any("does not stand at its place" in p.message for p in check_migration(lost)["rack_space"])
    # a temporary place moved into a compute rack (no switch allowed there)
    t, k = next((t, k) for t, w in enumerate(mig.work) for k, x in enumerate(w) if x.action == "rack" and x.switch == mig.bind[min(mig.temp)])
    r = mig.work[t][k]
    moved = dataclasses.replace(r, new=dataclasses.replace(r.new, rack="A01", u=40))
    bad = dataclasses.replace(mig, work=[w if i != t else w[:k] + [moved] + w[k + 1:] for i, w in enumerate(mig.work)])
    assert any("allows no switch" in p.message for p in check_migration(bad)["rack_space"])


def _independent_place_check(roft: dict, zc: dict, moved: set[int], units) -> bool:
    """Whether, with the units in ``moved`` on TO, every role in service has its place free: no FROM leaf the
    remaining units use and, when the FROM island needs a spine (two or more leaves), not every spine stands on a
    place of a role in service. Re-derived from the plans (rack, U, U height), apart from places.py and search.py."""
    h = zc["models"]["switch"]["u_height"]
    to_sw = {n["switch"] for s in zc["servers"] for n in s["nics"] for u in moved if (s["name"], n["port"]) in units[u].ports}
    from_sw = {n["switch"] for s in roft["servers"] for n in s["nics"] for u in range(len(units))
               if u not in moved and (s["name"], n["port"]) in units[u].ports}
    where = {s["name"]: (s["rack"], s["u"]) for s in roft["switches"] + zc["switches"]}

    def clash(a: str, b: str) -> bool:
        (ra, ua), (rb, ub) = where[a], where[b]
        return ra == rb and ua < ub + h and ub < ua + h

    if any(clash(r, y) for r in to_sw for y in from_sw):
        return False
    spines = [s["name"] for s in roft["switches"] if s["group"] == "spine"]
    free_spines = [y for y in spines if not any(clash(r, y) for r in to_sw)]
    return len(from_sw) < 2 or bool(free_spines)


def test_no_order_frees_the_places_in_time_on_the_small_pair_by_enumeration(small_pair):
    """The argument docs/migrate.md gives for glm-1k, checked by enumeration on roft-small -> zcube-small-inplace
    (8 units of 4 GPUs, at most 4 out at once, so 2 stages): every first stage puts some role in service where a
    switch the ROFT island still needs stands; the place-ordering search, exhaustive, finds none either; without the
    places a sequence exists (the enumeration is not vacuous)."""
    roft, zc = small_pair
    units = _units(roft, zc, "4-gpu")
    cap = capacity(len(units), 0.5)
    assert (len(units), cap) == (8, 4)
    firsts = [set(c) for n in range(1, cap + 1) for c in itertools.combinations(range(len(units)), n) if len(units) - n <= cap]
    assert firsts and not any(_independent_place_check(roft, zc, s, units) for s in firsts)
    src, dst = read_side(roft, "FROM"), read_side(zc, "TO")
    occ = occupants(src, dst, zc["models"]["switch"]["u_height"])
    around = Search(src, dst, units, cap, 0, occ).run()
    assert not around.batches and around.proven
    assert Search(src, dst, units, cap, 0).run().batches


def test_small_in_place_pair_is_planned_with_temporary_places(small_pair):
    roft, zc = small_pair
    mig = plan_migration(roft, zc, Options(0.5, "4-gpu", 0), catalog=plan_catalog(zc, None, accept_changed=True)[0])
    assert mig.places_met == "none found"  # spines stand on places: which one the ROFT island keeps is the search's choice
    assert mig.temp and all(not p for p in check_migration(mig).values())


def test_an_order_around_the_clashes_is_taken_when_one_exists():
    """roft-small -> zcube-small: TO's switches stand where ROFT's leaves stand, and an order frees each place in
    time (every role taken in place): no temporary place, no switch re-racked."""
    roft, zc = _plan(SMALL / "roft-small.yaml"), _plan(SMALL / "zcube-small.yaml")
    mig = plan_migration(roft, zc, Options(0.5, "4-gpu", 0), catalog=plan_catalog(zc, None, accept_changed=True)[0])
    assert mig.places_met == "ordered" and not mig.temp
    assert all(not p for p in check_migration(mig).values())
    assert not any(w.action == "rack" for work in mig.work for w in work)


def test_cli_migrates_the_bundled_pair_with_temporary_places(tmp_path):
    """Issue 27's "done when": `zcube migrate` on the bundled glm-1k-roft -> glm-1k gives the stages with their
    workbooks; a stage plan has each role in a temporary place at that place, its cables as laid there."""
    for name, inv in (("roft", "glm-1k-roft.yaml"), ("out", "glm-1k.yaml")):
        r = run_zcube("plan", str(ROOT / "inventories" / inv), "-o", str(tmp_path / name))
        assert r.returncode == 0, r.stderr
    r = run_zcube("migrate", str(tmp_path / "roft"), str(tmp_path / "out"), "-o", str(tmp_path / "mig"), "--unit", "4-gpu")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "leaving temporary places" in r.stdout
    doc = json.loads((tmp_path / "mig" / "migrate.json").read_text())
    assert doc["stages"] == doc["stages_lower_bound"] == 4 and doc["places"] == "none exists"
    assert 0 < doc["cable_touches_temporary"] < doc["cable_touches"]
    assert doc["cable_touches"] >= doc["cable_touches_lower_bound"]
    assert doc["cable_touches_temporary"] == sum(s["cable_touches_temporary"] for s in doc["stage_reports"])
    for t in range(1, 5):
        d = tmp_path / "mig" / f"stage-{t:02d}"
        assert (d / "moves.xlsx").is_file() and (d / "labels.csv").is_file() and (d / "configs").is_dir()
        plan = json.loads((d / "plan.json").read_text())
        at = {s["name"]: (s["rack"], s["u"]) for s in plan["switches"]}
        for tp in doc["temporary_places"]:
            if tp["from_stage"] <= t < tp["moves_in_stage"]:
                assert at[tp["role"]] == (tp["rack"], tp["u"])
                ends = [e for c in plan["cables"] for e in (c["a"], c["b"]) if e["device"] == tp["role"]]
                assert ends and all((e["rack"], e["u"]) == (tp["rack"], tp["u"]) for e in ends)
            elif t >= tp["moves_in_stage"]:
                assert at[tp["role"]] != (tp["rack"], tp["u"])
    for t in range(1, 5):  # the parts sheet's new cables: each cable once (two install rows, one per end)
        rows = list(csv.DictReader((tmp_path / "mig" / f"stage-{t:02d}" / "moves.csv").open()))
        want = Counter(p for _, p in {(r["cable"], r["part"]) for r in rows if r["action"] == "install" and not r["was"]})
        sheet = openpyxl.load_workbook(tmp_path / "mig" / f"stage-{t:02d}" / "moves.xlsx")[f"Stage {t:02d} parts"]
        cell = next(row[3] for row in sheet.iter_rows(values_only=True) if row[2] == "new cables")
        assert cell == (", ".join(f"{n} x {p}" for p, n in sorted(want.items())) or "none")
    first = min(tp["moves_in_stage"] for tp in doc["temporary_places"])
    moves = (tmp_path / "mig" / f"stage-{first:02d}" / "moves.csv").read_text()
    assert "from its temporary place" in moves
    _labels_name_where_the_far_end_stands(tmp_path / "mig")
    _optics_follow_the_stage_plans(tmp_path)
    _every_cable_row_names_its_part(tmp_path / "mig")
    assert check_move_sheet_ids(tmp_path / "mig", json.loads((tmp_path / "roft" / "plan.json").read_text())) > 10000
    assert check_ports_emptied_before_plugged(tmp_path / "mig") > 100


def _cage_optics(plan: dict, cat) -> dict[str, dict[int, bool]]:
    """Switch -> cage -> whether a cable there needs an optic in the cage (its medium has optics), from ``plan``'s cables."""
    from zcube_deploy.plan.roles import port_map_for

    groups = {s["name"]: s["group"] for s in plan["switches"]}
    out: dict[str, dict[int, bool]] = {}
    for c in plan["cables"]:
        for e in (c["a"], c["b"]):
            if e["device"] in groups:
                cage = port_map_for(plan, groups[e["device"]])["cage_of"][e["port"]][1]
                out.setdefault(e["device"], {})[cage] = out.get(e["device"], {}).get(cage, False) or cat.media[c["medium"]].optics
    return out


def _optics_follow_the_stage_plans(root):
    """The optics the rebreak rows fit, keep, swap and take out, replayed cage by cage from what FROM's plan has in each
    switch, give after every stage exactly the optics the stage's plan.json needs: a role's cage holds one when the
    cable it holds (or, empty yet, the first it takes in a later stage's plan) has a medium with optics, a stand-in laid
    to a temporary place included (glm-1k: the DACs of ZC-O005/O007 laid as SMF until stage 3 need an optic meanwhile,
    and another rebreak row takes it out when the DACs come; the far ends in ZC-E002/E004 too)."""
    import re

    from zcube_deploy.catalog.cabling import load_cabling_catalog

    cat = load_cabling_catalog()
    doc = json.loads((root / "mig" / "migrate.json").read_text())
    stages = range(1, doc["stages"] + 1)
    plans = {t: json.loads((root / "mig" / f"stage-{t:02d}" / "plan.json").read_text()) for t in stages}
    holds = {t: _cage_optics(plans[t], cat) for t in stages}
    ledger = {(x, cage) for x, cages in _cage_optics(json.loads((root / "roft" / "plan.json").read_text()), cat).items()
              for cage, optic in cages.items() if optic}
    switch_of = {r["role"]: r["switch"] for r in doc["roles"]}
    changed = set()
    for t in stages:
        for r in csv.DictReader((root / "mig" / f"stage-{t:02d}" / "moves.csv").open()):
            if r["action"] != "rebreak":
                continue
            a, _, b = r["plug_port"].removeprefix("cages ").partition("-")
            cages = range(int(a), int(b or a) + 1)
            for verb, n in re.findall(r"(fit optic|keep optic|swap optic|take out optic) (\d+) x", r["part"]):
                assert int(n) == len(cages), (t, r["plug_device"], r["plug_port"], r["part"])  # a run: one part action
                for cage in cages:
                    key = (r["was"], cage)
                    assert (key in ledger) == (verb != "fit optic"), (t, key, verb)
                    (ledger.discard if verb == "take out optic" else ledger.add)(key)
                    changed.add((t, r["plug_device"]))
        for role, x in switch_of.items():
            if role not in holds[t]:
                continue  # not in service yet
            for cage in range(1, 129):
                first = next((holds[s][role][cage] for s in stages if s >= t and cage in holds[s].get(role, {})), False)
                assert ((x, cage) in ledger) == first, (t, role, x, cage, first)
    assert {(3, r) for r in ("ZC-O005", "ZC-O007", "ZC-E002", "ZC-E004")} <= changed  # the stand-ins' optics out in stage 3


def _every_cable_row_names_its_part(mig):
    """Every cable row of every stage names the part of the cable handled; a cable re-plugged as its switch leaves a
    temporary place, or a stand-in removed, is the part it was plugged as (a ROFT cable: FROM's part)."""
    doc = json.loads((mig / "migrate.json").read_text())
    plugged: dict[str, tuple[int, str]] = {}
    seen = 0
    for t in range(1, doc["stages"] + 1):
        rows = list(csv.DictReader((mig / f"stage-{t:02d}" / "moves.csv").open()))
        for r in rows:
            if r["kind"] == "switch" or r["action"] == "relabel":
                continue
            assert r["part"], (t, r["step"], r["action"], r["cable"] or r["was"])
            if r["action"] in ("unplug", "plug") and r["cable"] in plugged and plugged[r["cable"]][0] < t:
                assert r["part"] == plugged[r["cable"]][1], (t, r["step"])
                seen += 1
        for r in rows:
            if r["action"] in ("move", "plug", "install") and r["cable"] not in plugged:
                plugged[r["cable"]] = (t, r["part"])
    assert seen


def _labels_name_where_the_far_end_stands(mig):
    """Every label a stage prints names the rack its far end stands in after that stage (a role in a temporary place:
    that place's rack, read from the stage's plan.json), and every cable whose far end left a temporary place in the
    stage without being unplugged at this end gets a relabel row at this end (its old label named the place left)."""
    doc = json.loads((mig / "migrate.json").read_text())
    for t in range(1, doc["stages"] + 1):
        d = mig / f"stage-{t:02d}"
        plan = json.loads((d / "plan.json").read_text())
        rack_of = {s["name"]: s["rack"] for s in plan["switches"]} | {s["name"]: s["rack"] for s in plan["servers"]}
        checked = 0
        for row in csv.DictReader((d / "labels.csv").open(newline="")):
            far_rack, far_device = row["line2"].removeprefix("> ").split()[:2]
            if far_device in rack_of:
                assert rack_of[far_device] == far_rack, (d.name, row)
                checked += 1
        assert checked
        moves = list(csv.DictReader((d / "moves.csv").open()))
        leaving = {tp["role"] for tp in doc["temporary_places"] if tp["moves_in_stage"] == t}
        relabelled = {(r["cable"], r["plug_device"]) for r in moves if r["action"] == "relabel"}
        replugged = {r["cable"] for r in moves if r["action"] == "plug" and r["plug_device"] in leaving}
        stays = {(r["cable"], r["stays_device"]) for r in moves if r["cable"] in replugged and r["stays_device"]}
        assert stays <= relabelled and len(relabelled) >= len(stays), (d.name, sorted(stays - relabelled)[:3])
        if leaving:
            assert relabelled, d.name
