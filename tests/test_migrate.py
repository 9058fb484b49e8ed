"""zcube migrate: the planning core (stages, roles, bounds), its invariants with a known-bad case each, the CLI.

The ROFT side is built by tests/migrate_helpers.roft_like around a ZCube plan's servers (the contract's
plan shape: leaves per (pod, rail), spines); the CLI runs on two real ZCube plans of lab-64 apart
(a ZCube-to-ZCube re-cabling is a migration too).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re

import pytest

from conftest import INVENTORIES, ROOT, run_zcube
from migrate_helpers import check_move_sheet_ids, check_ports_emptied_before_plugged, roft_like
from test_cli_tables import unreadable
from zcube_deploy.errors import InputErrors
from zcube_deploy.migrate.bounds import stage_lower_bound
from zcube_deploy.migrate.invariants import check_migration
from zcube_deploy.migrate.moves import touches
from zcube_deploy.migrate.planner import Options, capacity, plan_migration
from zcube_deploy.migrate.report import summary


@pytest.fixture(scope="module")
def glm_roft(glm1k_plan):
    return roft_like(glm1k_plan, pod_servers=64, spines=8, uplinks_per_spine=16)


@pytest.fixture(scope="module")
def glm_4gpu(glm_roft, glm1k_plan):
    return plan_migration(glm_roft, glm1k_plan, Options(0.75, "4-gpu", 0))


def test_capacity_and_stage_bound():
    assert capacity(128, 0.75) == 32
    assert capacity(256, 0.75) == 64
    assert capacity(10, 0.75) == 2  # 8 of 10 serve (0.8 >= 0.75); 3 out would leave 0.7
    assert stage_lower_bound(128, 32) == 4 and stage_lower_bound(129, 32) == 5 and stage_lower_bound(0, 5) == 0


def test_glm_servers_at_075_say_what_would_make_it_possible(glm_roft, glm1k_plan):
    """A ZCube island needs all 8 odd switches from its first server on, the ROFT keeps its 16 leaves while both
    pods serve and one spine: 7 switches free against 9 needed. Every remedy is named at once."""
    with pytest.raises(InputErrors) as exc:
        plan_migration(glm_roft, glm1k_plan, Options(0.75, "server", 0))
    text = "\n".join(str(p) for p in exc.value.problems)
    assert "frees 7 FROM switch(es)" in text and "needs 9 switches" in text
    assert "--spares 3" in text and "--capacity-floor 0.50" in text and "--unit 4-gpu" in text


def test_glm_4gpu_meets_the_floor_in_the_fewest_stages(glm_4gpu):
    mig = glm_4gpu
    assert len(mig.batches) == mig.lower["stages"] == 4 and mig.proven
    assert all(len(b) <= 64 for b in mig.batches)
    assert sum(touches(m) for m in mig.moves) >= mig.lower["touches"]["touches"]
    assert len(mig.bind) == 16 and not any(x.startswith("spare") for x in mig.bind.values())
    assert all(not problems for name, problems in check_migration(mig).items() if name != "rack_space")
    # roft_like stacks its leaves in the network racks' top U: the racks cannot hold it (test_rack_space_* below)
    assert check_migration(mig)["rack_space"] and mig.rack_conflicts


def test_spares_are_used_only_when_given(glm_roft, glm1k_plan):
    mig = plan_migration(glm_roft, glm1k_plan, Options(0.75, "server", 3))
    assert len(mig.batches) == 4
    assert sum(1 for x in mig.bind.values() if x.startswith("spare")) == 3
    assert all(not problems for name, problems in check_migration(mig).items() if name != "rack_space")
    _spares_are_broken_out_from_empty_cages(mig, glm_roft, glm1k_plan)


def _spares_are_broken_out_from_empty_cages(mig, plan_from, plan_to):
    """A spare taking a role is new: its rebreak rows say so (not "FROM's port map is not in its plan"), cover every cage
    the role's port map breaks out or the role's cables use, and only fit optics (its cages hold none)."""
    from zcube_deploy.catalog.cabling import load_cabling_catalog
    from zcube_deploy.migrate.parts import CageParts, rebreak_counts
    from zcube_deploy.plan.roles import port_map_for
    from zcube_deploy.render.views import split_cages

    cat = load_cabling_catalog()
    before = CageParts.of_plan(plan_from, cat)
    form = plan_to["models"]["switch"]["cage_form_factor"]
    group = {s["name"]: s["group"] for s in plan_to["switches"]}
    spares = {r: x for r, x in mig.bind.items() if x.startswith("spare")}
    for role, x in spares.items():
        t = mig.need_stage[role]
        rows = [w for w in mig.work[t - 1] if w.action == "rebreak" and w.switch == x]
        assert rows and all(w.detail.startswith("a spare, new") and "port map is not" not in w.detail for w in rows), rows
        pm = port_map_for(plan_to, group[role])
        used = {pm["cage_of"][e["port"]][1] for c in plan_to["cables"] for e in (c["a"], c["b"]) if e["device"] == role}
        assert sorted(c for w in rows for c in w.cages) == sorted(used | set(split_cages(pm)))
        optics = sum(1 for c in used if any(cat.media[m].optics for m, _ in mig.cages[t - 1][role][c]))
        counts = [rebreak_counts(w, before, CageParts(mig.cages[t - 1], form, cat)) for w in rows]
        assert all(not n[v] for n in counts for v in ("keep optic", "swap optic", "take out optic"))
        assert sum(sum(n["fit optic"].values()) for n in counts) == optics > 0


def test_summary_is_deterministic(glm_roft, glm1k_plan, glm_4gpu):
    again = plan_migration(copy.deepcopy(glm_roft), copy.deepcopy(glm1k_plan), Options(0.75, "4-gpu", 0))
    a = json.dumps(summary(glm_4gpu, "F", "T"), sort_keys=True)
    assert a == json.dumps(summary(again, "F", "T"), sort_keys=True)
    doc = json.loads(a)
    for key in ("stages", "stages_lower_bound", "cable_touches", "cable_touches_lower_bound", "switches_reused", "switches_retired"):
        assert isinstance(doc[key], int), key
    assert doc["switches_reused"] + doc["switches_retired"] == 24 and doc["switches_bought"] == 0


# ---------------------------------------------------------------- each invariant fails on a known-bad migration
def _broken(mig, **changes):
    return dataclasses.replace(mig, **changes)


def test_invariant_units_known_bad(glm_4gpu):
    bad = _broken(glm_4gpu, batches=[glm_4gpu.batches[0] + glm_4gpu.batches[0][:1]] + glm_4gpu.batches[1:])
    assert check_migration(bad)["units"]


def test_invariant_floor_known_bad(glm_4gpu):
    b = glm_4gpu.batches
    bad = _broken(glm_4gpu, batches=[b[0] + b[1][:1], b[1][1:]] + b[2:])
    assert check_migration(bad)["floor"] and not check_migration(glm_4gpu)["floor"]


def test_invariant_one_role_known_bad(glm_4gpu):
    """A role taken in stage 1 by a switch the FROM island still uses then."""
    busy = next(r for r, x in sorted(glm_4gpu.bind.items()) if glm_4gpu.free_stage[x] > 1)
    bad = _broken(glm_4gpu, need_stage={**glm_4gpu.need_stage, busy: 1})
    assert any(busy in p.message for p in check_migration(bad)["one_role"])


def test_invariant_reachable_known_bad(glm_4gpu):
    """Every spine released in stage 1: the ROFT's rail leaves cannot reach each other."""
    cores = {s: 1 for s in glm_4gpu.src.cores}
    bad = _broken(glm_4gpu, free_stage={**glm_4gpu.free_stage, **cores})
    assert check_migration(bad)["reachable"] and not check_migration(glm_4gpu)["reachable"]


def test_invariant_wiring_known_bad(glm_4gpu):
    """A move dropped (a cable left behind), and a move that names the wrong port."""
    first = glm_4gpu.moves[0]
    dropped = _broken(glm_4gpu, moves=[first[1:]] + glm_4gpu.moves[1:])
    assert check_migration(dropped)["wiring"]
    m = next(m for stage in glm_4gpu.moves for m in stage if m.action == "move" and m.kind == "host")
    wrong = dataclasses.replace(m, old=dataclasses.replace(m.old, port=m.old.port + "x"))
    bad = _broken(glm_4gpu, moves=[[wrong if x is m else x for x in stage] for stage in glm_4gpu.moves])
    assert any("to take out" in p.message for p in check_migration(bad)["wiring"])


@pytest.fixture(scope="module")
def bundled_roft():
    from zcube_deploy.inventory import load_inventory
    from zcube_deploy.designs import build_plan

    return build_plan(load_inventory(ROOT / "inventories" / "glm-1k-roft.yaml"))


@pytest.fixture(scope="module")
def beside(bundled_roft):
    """The bundled glm-1k ROFT to glm-1k-beside-roft (the ZCube in the network racks the ROFT leaves free)."""
    from zcube_deploy.inventory import load_inventory
    from zcube_deploy.plan import build_plan

    return plan_migration(bundled_roft, build_plan(load_inventory(ROOT / "inventories" / "glm-1k-beside-roft.yaml")),
                          Options(0.75, "4-gpu", 0))


def test_glm1k_in_place_without_a_catalog_is_a_rack_conflict(bundled_roft, glm1k_plan):
    """glm-1k's odd switches sit where the ROFT's leaves stand; planned without a cabling catalog (no temporary place
    can be laid out) the planner says so (rack_conflicts: the CLI's exit 2) and the invariant, replaying the rack work
    U by U, finds the clash: a role racked where a switch the ROFT island still uses stands (tests/test_migrate_places.py
    plans it with temporary places)."""
    mig = plan_migration(bundled_roft, glm1k_plan, Options(0.75, "4-gpu", 0))
    assert mig.rack_conflicts and not mig.temp
    found = [p.message for p in check_migration(mig)["rack_space"]]
    assert any(re.search(r"racked at AN1 U\d+ where RO-L\d+ stand", m) for m in found), found


def test_rack_space_holds_beside_roft_and_its_known_bad_cases(beside):
    mig = beside
    assert not mig.rack_conflicts and all(not p for p in check_migration(mig).values())
    reracked = {w.switch for work in mig.work for w in work if w.action == "rack"}
    assert len(reracked) == 16  # every role in CN1/DN1, every switch playing one came from AN1/BN1
    for work in mig.work:  # every switch taken out before any is racked
        actions = [w.action for w in work if w.action in ("unrack", "rack")]
        assert actions == sorted(actions, key=("unrack", "rack").index)
    # a rack row left out: the role is in service where its switch does not stand
    t, k = next((t, k) for t, work in enumerate(mig.work) for k, w in enumerate(work) if w.action == "rack")
    dropped = _broken(mig, work=[w if i != t else w[:k] + w[k + 1:] for i, w in enumerate(mig.work)])
    assert any("does not stand at its place" in p.message for p in check_migration(dropped)["rack_space"])
    # a switch racked onto a server's U
    r = mig.work[t][k]
    srv, (rack, u) = next(iter(sorted(mig.space.servers.items())))
    onto = dataclasses.replace(r, new=dataclasses.replace(r.new, rack=rack, u=u))
    bad = _broken(mig, work=[w if i != t else w[:k] + [onto] + w[k + 1:] for i, w in enumerate(mig.work)])
    assert any(f"where {srv}" in p.message for p in check_migration(bad)["rack_space"])
    # a re-racked switch's taking out left out: it is racked while it still stands elsewhere
    u = next((t, k) for t, work in enumerate(mig.work) for k, w in enumerate(work)
             if w.action == "unrack" and any(x.action == "rack" and x.switch == w.switch for x in work))
    kept = _broken(mig, work=[w if i != u[0] else w[:u[1]] + w[u[1] + 1:] for i, w in enumerate(mig.work)])
    assert check_migration(kept)["rack_space"]


# ---------------------------------------------------------------- the CLI on two real plans
OLD = {"ZC-{G}{number:03d}": "OLD-{G}{number:03d}", "172.16.0.11": "172.16.0.101", "10.0.0.0/22": "10.16.0.0/22",
       "10.200.0.0/24": "10.210.0.0/24", "10.201.0.0/24": "10.211.0.0/24", "cluster: lab64": "cluster: lab64old"}


@pytest.fixture(scope="module")
def two_plans(tmp_path_factory):
    d = tmp_path_factory.mktemp("migrate")
    text = (INVENTORIES / "lab-64.yaml").read_text()
    for a, b in OLD.items():
        assert a in text, a
        text = text.replace(a, b)
    (d / "old.yaml").write_text(text)
    for name, inv in (("old", d / "old.yaml"), ("new", INVENTORIES / "lab-64.yaml")):
        r = run_zcube("plan", str(inv), "-o", str(d / name))
        assert r.returncode == 0, r.stderr
    return d


def test_cli_writes_migrate_json(two_plans):
    d = two_plans
    r = run_zcube("migrate", str(d / "old" / "plan.json"), str(d / "new" / "plan.json"), "-o", str(d / "out"), "--capacity-floor", "0")
    assert r.returncode == 0, r.stderr
    doc = json.loads((d / "out" / "migrate.json").read_text())
    assert doc["stages"] == 1 == doc["stages_lower_bound"]
    # the same fabric under new names: every switch keeps its place and every cable stays (nothing to touch)
    assert doc["cable_touches"] == doc["cable_touches_lower_bound"] == 0 and doc["switches_reused"] == 16
    assert "migration in 1 stage (" in r.stdout
    first = (d / "out" / "migrate.json").read_bytes()
    run_zcube("migrate", str(d / "old" / "plan.json"), str(d / "new" / "plan.json"), "-o", str(d / "out"), "--capacity-floor", "0")
    assert (d / "out" / "migrate.json").read_bytes() == first


def test_cli_exit_2_with_every_problem(two_plans):
    d = two_plans
    r = run_zcube("migrate", str(d / "old" / "plan.json"), str(d / "new" / "plan.json"), "-o", str(d / "bad"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "--spares" in r.stderr and "--capacity-floor" in r.stderr
    assert not (d / "bad" / "migrate.json").exists()
    r = run_zcube("migrate", str(d / "old" / "plan.json"), str(d / "old" / "plan.json"), "-o", str(d / "bad"),
                  "--capacity-floor", "1.5", "--crew-rate", "0")
    assert r.returncode == 2 and "--capacity-floor" in r.stderr and "--crew-rate" in r.stderr
    r = run_zcube("migrate", str(d / "old" / "plan.json"), str(d / "old" / "plan.json"), "-o", str(d / "bad"), "--capacity-floor", "0")
    assert r.returncode == 2 and re.search(r"name\(s\) also in FROM", r.stderr)


def test_the_stage_table_is_readable_at_80_columns(glm_4gpu, monkeypatch):
    from rich.console import Console
    from rich.table import Table

    from zcube_deploy.cli.migrate import print_migration

    printed: list = []
    monkeypatch.setattr(Console, "print", lambda self, *objs, **kw: printed.extend(o for o in objs if isinstance(o, Table)))

    print_migration(summary(glm_4gpu, "F", "T"), "DIR")
    assert printed
    for t in printed:
        assert not unreadable(t), unreadable(t)


# ---------------------------------------------------------------- ROFT to ZCube on real plans (roft-small -> zcube-small)
@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """roft-small and zcube-small planned, then migrated at a floor of 0.5 in 4-GPU units (out: DIR)."""
    d = tmp_path_factory.mktemp("small")
    for name, inv in (("roft", "roft-small.yaml"), ("zcube", "zcube-small.yaml")):
        r = run_zcube("plan", str(ROOT / "tests" / "inventories" / inv), "-o", str(d / name))
        assert r.returncode == 0, r.stderr
    r = run_zcube("migrate", str(d / "roft" / "plan.json"), str(d / "zcube" / "plan.json"), "-o", str(d / "out"),
                  "--unit", "4-gpu", "--capacity-floor", "0.5")
    assert r.returncode == 0, r.stderr
    return d


def test_small_stages_and_files(small):
    doc = json.loads((small / "out" / "migrate.json").read_text())
    assert doc["stages"] == doc["stages_lower_bound"] == 2 and doc["stage_plans"]["written"]
    assert doc["switches_reused"] == 16 and doc["switches_retired"] == 2 and doc["switches_bought"] == 0
    for t in (1, 2):
        d = small / "out" / f"stage-{t:02d}"
        for name in ("plan.json", "manifest.json", "moves.csv", "labels.csv", "moves.xlsx", "report.json", "report.txt"):
            assert (d / name).is_file(), (t, name)
        plan = json.loads((d / "plan.json").read_text())
        assert plan["design"] == "stage"
        assert sorted(p.stem for p in (d / "configs").glob("*.cfg")) == sorted(s["name"] for s in plan["switches"])
        moves = (d / "moves.csv").read_text().splitlines()
        assert moves[0].startswith("step,action,kind,cable,was,unplug_rack") and moves[0].endswith(",part,id_now,new_id")
        assert len(moves) - 1 >= json.loads((d / "report.json").read_text())["cable_touches"]


def test_small_moves_in_working_order(small):
    """A switch's own work (taken out, racked, cages broken out anew, console) comes after every cable unplugged from
    it and before every cable plugged into it; each switch taking a role has its cages and console rows."""
    import csv

    doc = json.loads((small / "out" / "migrate.json").read_text())
    phys = {r["role"]: r["switch"] for r in doc["roles"]}
    for t in range(1, doc["stages"] + 1):
        with open(small / "out" / f"stage-{t:02d}" / "moves.csv", newline="") as fh:
            rows = list(csv.DictReader(fh))
        work: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            if r["kind"] == "switch":
                work.setdefault(r["was"], []).append(i)
        taken = {r["switch"] for r in doc["roles"] if r["first_stage"] == t}
        assert taken and taken <= set(work)
        assert all({"rebreak", "console"} <= {rows[i]["action"] for i in work[x]} for x in taken)
        for i, r in enumerate(rows):
            if r["kind"] == "switch":
                continue
            out, into = phys.get(r["unplug_device"], r["unplug_device"]), phys.get(r["plug_device"], r["plug_device"])
            assert out not in work or i < min(work[out]), (t, r)
            assert into not in work or i > max(work[into]), (t, r)


def test_small_last_stage_is_the_target(small):
    """After the last stage the fabric is TO's: the same switches, interfaces, NIC ports and cables."""
    last = json.loads((small / "out" / "stage-02" / "plan.json").read_text())
    want = json.loads((small / "zcube" / "plan.json").read_text())
    for key in ("switches", "servers", "cables", "counts", "routing", "sizing", "addressing"):
        assert last[key] == want[key], key


def test_small_first_stage_holds_both_islands(small):
    plan = json.loads((small / "out" / "stage-01" / "plan.json").read_text())
    roles = {s["group"] for s in plan["switches"]}
    assert roles == {"leaf", "spine", "odd", "even"}
    # push's managed scope takes the FROM island's pools too (its aggregates, e.g. `ip route ... Null 0`, are in them)
    roft = json.loads((small / "roft" / "plan.json").read_text())["addressing"]
    assert plan["addressing"]["other_pools"] == sorted(roft[k] for k in ("host_pool", "fabric_pool", "loopback_pool"))
    nic_switch = {n["switch"] for s in plan["servers"] for n in s["nics"]}
    assert nic_switch <= {s["name"] for s in plan["switches"]}
    by_name = {s["name"]: s["group"] for s in plan["switches"]}
    for c in plan["cables"]:  # no cable joins the two islands
        if c["kind"] == "fabric":
            assert {by_name[c["a"]["device"]], by_name[c["b"]["device"]]} in ({"leaf", "spine"}, {"odd", "even"}), c["id"]


def _physical_cables(plan: dict, roles: dict[str, str]) -> set[frozenset]:
    return {frozenset({(roles.get(c[e]["device"], c[e]["device"]), c[e]["port"]) for e in ("a", "b")}) for c in plan["cables"]}


def test_lab_operations_take_the_wiring_stage_by_stage(small):
    """moves.csv replayed on the lab's wiring (as `zcube lab fix --stage` sends it) gives, after every stage, exactly
    the stage plan's cables (roles named by the switches playing them); a move left out is seen."""
    from zcube_deploy.lab.stage import stage_inputs
    from zcube_deploy.lab.wiring import Wiring
    from zcube_deploy.migrate.labops import stage_operations

    wiring = Wiring.from_plan(json.loads((small / "roft" / "plan.json").read_text()))
    for t in (1, 2):
        d = small / "out" / f"stage-{t:02d}"
        rows, roles, taken, stage = stage_inputs(str(d))
        assert stage == t and taken
        ops, problems = stage_operations(rows, roles, "moves.csv")
        assert not problems and ops
        if t == 1:
            short = wiring.copy()
            short.apply_all([op for op in ops if op != next(o for o in ops if o["op"] == "connect")])
            assert {frozenset({c.a, c.b}) for c in short.cables.values()} != _physical_cables(json.loads((d / "plan.json").read_text()), roles)
        wiring.apply_all(ops)
        want = _physical_cables(json.loads((d / "plan.json").read_text()), roles)
        assert {frozenset({c.a, c.b}) for c in wiring.cables.values()} == want, t


def test_stage_operations_name_bad_rows():
    from zcube_deploy.migrate.labops import role_aliases, stage_operations

    ops, problems = stage_operations([{"step": "1", "action": "jump"}], {}, "m.csv")
    assert not ops and "m.csv:2" in problems[0].path
    _, problems = role_aliases({"A": {"host": "h", "port": 1}}, {"ZC-O001": "spare-1"}, ["ZC-O001"])
    assert problems and "spare" in problems[0].hint


def test_stage_plans_read_back_and_mix_routing_modes(small, tmp_path):
    """A stage plan is a plan: `zcube render` reads it back. With TO in mode static, the ROFT island's switches carry
    their own routing_mode (bgp) in the stage plan, the last stage none."""
    r = run_zcube("render", str(small / "out" / "stage-01" / "plan.json"), "-o", str(tmp_path / "r1"))
    assert r.returncode == 0, r.stderr
    text = (ROOT / "tests" / "inventories" / "zcube-small.yaml").read_text()
    (tmp_path / "static.yaml").write_text(text.replace("  mode: bgp\n", "  mode: static\n"))
    assert run_zcube("plan", str(tmp_path / "static.yaml"), "-o", str(tmp_path / "static")).returncode == 0
    r = run_zcube("migrate", str(small / "roft" / "plan.json"), str(tmp_path / "static" / "plan.json"), "-o", str(tmp_path / "m"),
                  "--unit", "4-gpu", "--capacity-floor", "0.5")
    assert r.returncode == 0, r.stderr
    first = json.loads((tmp_path / "m" / "stage-01" / "plan.json").read_text())
    assert first["routing"]["mode"] == "static"
    assert {s.get("routing_mode") for s in first["switches"] if s["group"] in ("leaf", "spine")} == {"bgp"}
    assert all("routing_mode" not in s for s in first["switches"] if s["group"] in ("odd", "even"))
    last = json.loads((tmp_path / "m" / "stage-02" / "plan.json").read_text())
    assert all("routing_mode" not in s for s in last["switches"])
    r = run_zcube("render", str(tmp_path / "m" / "stage-01" / "plan.json"), "-o", str(tmp_path / "r2"))
    assert r.returncode == 0, r.stderr


def _cage_media(plan: dict, device: str) -> dict[int, str]:
    from zcube_deploy.plan.roles import port_map_for

    group = next(s["group"] for s in plan["switches"] if s["name"] == device)
    cage_of = port_map_for(plan, group)["cage_of"]
    return {cage_of[e["port"]][1]: c["medium"] for c in plan["cables"] for e in (c["a"], c["b"]) if e["device"] == device}


def test_rebreak_rows_name_the_parts(small):
    """Every rebreak row of the move workbook (opened back) and of moves.csv names its parts from the cabling catalog:
    summed over a role's rows, the optics fitted and taken out are exactly the cages whose medium gains or loses
    optics (FROM's cables at the switch against TO's at the role: a cage whose breakout stays but whose medium changes
    counts too), each the catalog's part for the cage form factor; the breakout legs are the role's copper cables'
    parts in those cages. Known-bad: a cage whose medium changes under the same breakout (roft-small's leaves,
    cages 1-2: SMF to none) must have its row."""
    import csv

    import openpyxl

    from zcube_deploy.catalog.cabling import load_cabling_catalog
    from zcube_deploy.plan.roles import port_map_for

    cat = load_cabling_catalog()
    roft, zc = (json.loads((small / n / "plan.json").read_text()) for n in ("roft", "zcube"))
    optic = cat.optics.switch_cage[zc["models"]["switch"]["cage_form_factor"]].part
    doc = json.loads((small / "out" / "migrate.json").read_text())
    seen_stays = False
    for t in range(1, doc["stages"] + 1):
        d = small / "out" / f"stage-{t:02d}"
        ws = openpyxl.load_workbook(d / "moves.xlsx").worksheets[0]
        head = [c.value for c in ws[2]]  # row 1: the unplug / plug group headings
        book = [dict(zip(head, (c.value for c in row), strict=True)) for row in ws.iter_rows(min_row=3)]
        with open(d / "moves.csv", newline="") as fh:
            rows = list(csv.DictReader(fh))
        assert [r["part"] or None for r in rows] == [r["Part"] for r in book]
        parts = [row for row in openpyxl.load_workbook(d / "moves.xlsx")[f"Stage {t:02d} parts"].iter_rows(min_row=2, values_only=True)]
        assert [p[:4] for p in parts[:-2]] == [(int(r["step"]), r["plug_device"], r["plug_port"], r["part"]) for r in rows if r["action"] == "rebreak"]
        stage_counts = {"fit optic": 0, "take out optic": 0}
        for role in sorted(r["role"] for r in doc["roles"] if r["first_stage"] == t):
            x = next(r["switch"] for r in doc["roles"] if r["role"] == role)
            mine = [r for r in rows if r["action"] == "rebreak" and r["plug_device"] == role]
            assert mine and all(r["part"] for r in mine), role
            seen_stays |= any("stays" in r["plug_label"] for r in mine)
            old, new = _cage_media(roft, x), _cage_media(zc, role)
            has = {c for c, m in old.items() if cat.media[m].optics}
            needs = {c for c, m in new.items() if cat.media[m].optics}
            counts = {"fit optic": 0, "take out optic": 0}
            for r in mine:
                for verb in counts:
                    counts[verb] += sum(int(n) for n, part in re.findall(rf"{verb} (\d+) x ([^,;]+)", r["part"]) if part == optic)
            assert counts == {"fit optic": len(needs - has), "take out optic": len(has - needs)}, role
            stage_counts = {k: stage_counts[k] + v for k, v in counts.items()}
            covered = set()
            for r in mine:
                a, _, b = r["plug_port"].removeprefix("cages ").partition("-")
                covered |= set(range(int(a), int(b or a) + 1))
            cage_of = port_map_for(zc, next(s["group"] for s in zc["switches"] if s["name"] == role))["cage_of"]
            legs = sorted(c["part"] for c in zc["cables"] if not cat.media[c["medium"]].optics
                          for e in (c["a"], c["b"]) if e["device"] == role and cage_of[e["port"]][1] in covered)
            listed = sorted(p for r in mine for n, p in re.findall(r"(\d+) x (ZC-DAC[^,;]+)", r["part"]) for _ in range(int(n)))
            assert listed == legs, role
        # the parts sheet's totals: the optics of every role taken in the stage, and the new cables to bring
        total, new_cables = parts[-2][3], parts[-1][3]
        for verb, n in stage_counts.items():
            assert sum(int(k) for k in re.findall(rf"{verb} (\d+) x {optic}", total)) == n, (t, verb, total)
        fresh = [p for _, p in {(r["cable"], r["part"]) for r in rows if r["action"] == "install" and not r["was"]}]  # each cable once
        want = [f"{fresh.count(p)} x {p}" for p in sorted(set(fresh))]
        assert (new_cables.split(", ") if new_cables != "none" else []) == want
    assert seen_stays
    # a cable row names the cable it handles: an installed new cable TO's part, a moved one FROM's
    with open(small / "out" / "stage-01" / "moves.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    parts_from, parts_to = ({c["id"]: c["part"] for c in p["cables"]} for p in (roft, zc))
    for r in rows:
        if r["kind"] != "switch":
            assert r["part"] == (parts_from[r["was"]] if r["was"] else parts_to[r["cable"]]), r


def test_moves_csv_is_the_same_bytes_run_again(small, tmp_path):
    """`zcube migrate` run again on the same plans writes each stage's moves.csv (id_now and new_id included) and
    labels.csv byte for byte as before."""
    r = run_zcube("migrate", str(small / "roft" / "plan.json"), str(small / "zcube" / "plan.json"), "-o", str(tmp_path / "again"),
                  "--unit", "4-gpu", "--capacity-floor", "0.5")
    assert r.returncode == 0, r.stderr
    for t in (1, 2):
        for name in ("moves.csv", "labels.csv"):
            first, again = (small / "out" / f"stage-{t:02d}" / name).read_bytes(), (tmp_path / "again" / f"stage-{t:02d}" / name).read_bytes()
            assert first == again, (t, name)
        assert (small / "out" / f"stage-{t:02d}" / "moves.csv").read_text().split("\n", 1)[0].endswith(",id_now,new_id"), t


def test_move_sheets_say_which_end_comes_out_and_which_id_is_on_the_cable(small):
    """The move sheet's two halves of a row sit under merged group headings (UNPLUG over the end that comes out, PLUG
    over where it goes), both header rows repeat on every printed page; each row names the ID on the cable's label now
    and the one it gets, followed port by port over the stages against FROM's labels and labels.csv
    (migrate_helpers.check_move_sheet_ids; known-bad: the ID column showing TO's ID, as it did, fails on the first
    unplug of a cable whose ID changes); moves.csv's id_now and new_id are the sheet's two IDs on every row."""
    import openpyxl

    roft = json.loads((small / "roft" / "plan.json").read_text())
    assert check_move_sheet_ids(small / "out", roft) > 100
    ws = openpyxl.load_workbook(small / "out" / "stage-01" / "moves.xlsx").worksheets[0]
    head = [c.value for c in ws[2]]
    groups = {str(r): ws.cell(r.min_row, r.min_col).value for r in ws.merged_cells.ranges}
    unplug, plug = (next(k for k, v in groups.items() if v.startswith(w)) for w in ("UNPLUG", "PLUG"))
    assert head[2:14] == ["ID now", "Rack", "U", "Device", "Port", "Label now", "New ID", "Rack", "U", "Device", "Port", "New label"]
    assert (unplug, plug) == ("C1:H1", "I1:N1")  # over ID now .. Label now, New ID .. New label
    assert ws.print_title_rows == "$1:$2" and ws.freeze_panes == "A3"


def test_no_row_plugs_into_a_port_a_later_row_empties(small, tmp_path):
    """Followed in order, each stage's rows empty a port before any row plugs a cable into it: a move into a port
    another cable leaves later in the walk, or out of one another cable comes to, is done in two rows (unplug in the
    first phase, plug in the last). Known-bad: without the split (stagefiles._apart empty) stage 1 of roft-small ->
    zcube-small moves H000049 into gpu04 ens1f0np0 at step 89, five steps before the cable there is moved out."""
    assert check_ports_emptied_before_plugged(small / "out") > 0
    for name in ("roft-small", "zcube-small-inplace"):
        r = run_zcube("plan", str(ROOT / "tests" / "inventories" / f"{name}.yaml"), "-o", str(tmp_path / name))
        assert r.returncode == 0, r.stderr
    r = run_zcube("migrate", str(tmp_path / "roft-small"), str(tmp_path / "zcube-small-inplace"), "-o", str(tmp_path / "mig"),
                  "--unit", "4-gpu", "--capacity-floor", "0.5")
    assert r.returncode == 0, r.stderr
    assert check_ports_emptied_before_plugged(tmp_path / "mig") > 0


def test_stage_host_files_name_each_island(small):
    """In a stage plan a server's instances can sit on both islands: its host file says so and gives each fabric's words
    with the roles of its ports; a server wholly on one island has that island's words only."""
    plan = json.loads((small / "out" / "stage-01" / "plan.json").read_text())
    kinds = set()
    for srv in plan["servers"]:
        roles = {n["group"] for n in srv["nics"]}
        head = (small / "out" / "stage-01" / "hosts" / f"{srv['name']}.yaml").read_text().split("network:")[0]
        if roles >= {"leaf", "odd"}:
            assert "ROFT and ZCube NIC ports" in head and "ROFT ports (leaf): each port" in head
            assert "ZCube ports (even, odd): each port" in head
        elif roles == {"leaf"}:
            assert "ROFT NIC ports" in head and "odd" not in head
        else:
            assert "ZCube NIC ports" in head and "rail leaf" not in head
        kinds.add(frozenset(roles))
    assert frozenset({"leaf", "odd", "even"}) in kinds


def test_analyze_a_stage_island_by_island(small, tmp_path):
    """`zcube analyze` of a stage plan: each island on its own (its GPUs, all its pairs reach with nothing failed, its
    design's failure analysis), the pairs across the islands not checked (out of scope), never lost nor reached.
    Known-bad: a ROFT leaf whose uplinks are gone leaves its island's pairs unreachable: reported, exit 1 over the
    CLI's rule (``problems``), that island not analysed, the other still is."""
    from zcube_deploy.analysis.report import analyze_plan

    stage = small / "out" / "stage-01" / "plan.json"
    r = run_zcube("analyze", str(stage), "-o", str(tmp_path / "a"), "--samples", "3", "--probabilities", "0.01")
    assert r.returncode == 0, r.stderr
    assert "across the islands: not checked: out of scope" in r.stdout
    doc = json.loads((tmp_path / "a" / "analyze.json").read_text())
    plan = json.loads(stage.read_text())
    on = {d: {(s["name"], n["gpu"]) for s in plan["servers"] for n in s["nics"]
              if next(w["group"] for w in plan["switches"] if w["name"] == n["switch"]) in roles}
          for d, roles in (("roft", {"leaf", "spine"}), ("zcube", {"odd", "even"}))}
    assert set(doc["islands"]) == {"roft", "zcube"} and not doc["problems"]
    for d, isl in doc["islands"].items():
        reach = isl["reachability"]
        assert reach["gpus"] == len(on[d]) == isl["analysis"]["plan"]["gpus"] > 0, d
        assert reach["unreachable_routed"] == reach["unreachable_any_path"] == 0 and reach["gpu_pairs"] == len(on[d]) * (len(on[d]) - 1) // 2
    assert doc["cross_island"]["gpu_pairs"] == len(on["roft"]) * len(on["zcube"]) and doc["cross_island"]["checked"] is False
    assert doc["plan"]["gpus"] == len(on["roft"]) + len(on["zcube"])
    leaf = next(s["name"] for s in plan["switches"] if s["group"] == "leaf")
    cut = {**plan, "cables": [c for c in plan["cables"] if not (c["kind"] == "fabric" and leaf in (c["a"]["device"], c["b"]["device"]))]}
    bad = analyze_plan(cut, [0.01], 3, 1)
    assert bad["problems"] and all(p.startswith("ROFT island") for p in bad["problems"])
    assert bad["islands"]["roft"]["analysis"] is None and bad["islands"]["roft"]["reachability"]["unreachable_routed"] > 0
    assert bad["islands"]["zcube"]["analysis"] is not None and bad["cross_island"]["checked"] is False


def test_analyze_exits_1_when_an_island_of_a_stage_does_not_reach_itself(small, tmp_path, monkeypatch):
    """The CLI's side of the island check: a ROFT island counted with unreachable pairs (the count made to say so) is
    printed as not analysed, with why, and the command exits 1; the ZCube island is still analysed."""
    from click.testing import CliRunner

    from zcube_deploy.analysis import report
    from zcube_deploy.cli import cli

    real = report.healthy_reachability

    def broken(island, design):
        got = real(island, design)
        return {**got, "unreachable_routed": 7} if design == "roft" else got

    monkeypatch.setattr(report, "healthy_reachability", broken)
    r = CliRunner().invoke(cli, ["analyze", str(small / "out" / "stage-01" / "plan.json"), "-o", str(tmp_path / "a"),
                                 "--samples", "2", "--probabilities", "0.01"], env={"COLUMNS": "200"})  # (the wide table)
    assert r.exit_code == 1, r.output
    assert "not analysed: ROFT island: 7 of" in " ".join(r.output.split()) and "ZCube (any path)" in r.output
    doc = json.loads((tmp_path / "a" / "analyze.json").read_text())
    assert doc["islands"]["roft"]["analysis"] is None and doc["islands"]["zcube"]["analysis"] is not None


def test_title_next_stage_hint_and_all_row_wording():
    """1 stage is singular; past the last stage no stage-NN is hinted; the table says "all" counts each cable once."""
    from zcube_deploy.migrate.labops import next_stage
    from zcube_deploy.migrate.report import ALL_ROW, title

    doc = {"stages": 1, "unit": "server", "capacity_floor": 0.75}
    assert title(doc).startswith("migration in 1 stage (") and title({**doc, "stages": 4}).startswith("migration in 4 stages (")
    record = {"migration": "/m", "applied": [1, 2]}
    last = next_stage(record, "/m", 2, "/m/stage-02", stages=2)
    assert last is not None and "stage-03" not in last.hint and "none is left" in last.hint
    assert "stage-03 next" in next_stage(record, "/m", 2, "/m/stage-02", stages=3).hint
    assert "once" in ALL_ROW and "sum" in ALL_ROW
