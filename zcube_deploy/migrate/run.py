"""`zcube migrate`: read both plans, plan the migration, check its invariants, write DIR (the edges).

DIR/stage-NN/ holds each stage's moves (moves.csv, moves.xlsx), labels.csv and report (stagefiles.py);
DIR/migrate.json the summary (report.py). DIR is written whole or not at all (outdir.whole_folder: into a hidden
sibling that replaces DIR at the end), so an interrupted run leaves an earlier migration there as it was. A
migration whose invariants do not hold is a bug in the planner: it is refused (exit 1), never written.
When roles are re-racked or stand in temporary places, DIR/suggested-places.yaml says where TO's switches
could stand instead (suggest.py), and TO re-planned with it is migrated to, for its figures (``replanned``).
"""

from __future__ import annotations

from pathlib import Path

from zcube_deploy.cabling.sheets import CableRows
from zcube_deploy.catalog.cabling import plan_catalog
from zcube_deploy.designs import build_plan
from zcube_deploy.errors import InputErrors, InvariantViolation, PlanError, Problem
from zcube_deploy.inventory.load import inventory_digest, parse_inventory_text, resolve_inventory
from zcube_deploy.ipv4 import dotted_mask
from zcube_deploy.outdir import whole_folder
from zcube_deploy.migrate.invariants import check_migration
from zcube_deploy.migrate.parts import CageParts
from zcube_deploy.migrate.planner import RANKED_CABLES, Migration, Options, plan_migration
from zcube_deploy.migrate.report import summary
from zcube_deploy.migrate.stagefiles import Labels, walking_rows, write_labels_csv, write_move_workbook, write_moves_csv, write_report
from zcube_deploy.migrate.stageplan import stage_plan, stage_plans_blocked
from zcube_deploy.migrate.suggest import SUGGESTED_PLACES, places_section, places_yaml, suggest_places
from zcube_deploy.plan.io import read_plan, write_canonical, write_plan
from zcube_deploy.platforms import platform_module
from zcube_deploy.render import render_all


def plan_and_check(plan_from: dict, plan_to: dict, from_path: str, to_path: str, opts: Options, catalog=None) -> tuple[Migration, dict]:
    """The migration between two plans, its invariants checked; (migration, migrate.json). ``catalog``: TO's cabling
    catalog (the bundled one when None), for the cables of temporary places."""
    if catalog is None:
        catalog = plan_catalog(plan_to, None, accept_changed=True)[0]
    mig = plan_migration(plan_from, plan_to, opts, from_path, to_path, catalog)
    if mig.rack_conflicts:
        raise InputErrors([Problem(f"{to_path}: switches", c) for c in mig.rack_conflicts[:10]]
                          + [Problem(to_path, f"{len(mig.rack_conflicts)} role(s) would be racked where a switch still serves",
                                     "give TO's switches places the as-built fabric leaves free during the migration (e.g. "
                                     "allow_switches: false on the racks FROM fills; inventories/glm-1k-beside-roft.yaml)")],
                          "the racks cannot hold both fabrics")
    broken = [Problem(f"{name}: {p.path}", p.message) for name, problems in check_migration(mig).items() for p in problems]
    if broken:
        raise InvariantViolation(broken[:20], "the migration breaks its own invariants (a bug in the planner)")
    return mig, summary(mig, from_path, to_path, stage_plans_blocked(plan_from, plan_to))


def _all_ports(plan: dict) -> dict:
    """``plan`` with every role's ports in ``port_map.cage_of`` (a ROFT's spines have their own port map), so every
    port has its short name on labels."""
    maps = plan.get("port_maps") or {}
    if not maps:
        return plan
    cage_of = dict(plan["port_map"]["cage_of"])
    for pm in maps.values():
        cage_of.update(pm["cage_of"])
    return {**plan, "port_map": {**plan["port_map"], "cage_of": cage_of}}


def write_consoles(plan: dict, roles: list[str], d: Path) -> None:
    """DIR/stage-NN/console/ROLE.txt for each role taken in the stage: the lines a technician pastes at the console of
    the switch taking it, before the stage's push (the platform's console bootstrap: the role's hostname and
    management address, the management gateway; no access line: the switch keeps its site lines). From then on the
    switch answers at the role's management address, the one the stage plan gives it."""
    if not roles:
        return
    (d / "console").mkdir()
    pm = platform_module(plan["cluster"]["platform"])
    settings = plan["settings"]
    by_name = {s["name"]: s for s in plan["switches"]}
    for role in roles:
        lines = pm.console_bootstrap(role, plan["models"]["switch"]["mgmt_interface"], by_name[role]["mgmt_address"],
                                     dotted_mask(settings["mgmt_prefix_len"]), settings.get("mgmt_gateway"), [])
        (d / "console" / f"{role}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def replanned(plan_from: dict, plan_to: dict, from_path: str, opts: Options, places: dict, nic_cables: int) -> dict:
    """TO's inventory re-planned with ``places`` as its ``layout.placement.switches`` and the migration planned to
    it: its figures, or ``computed: false`` and why (TO's inventory not found from here or changed since TO was
    planned, the plans too large to plan twice, or the re-planned pair refused)."""
    src = plan_to.get("inputs", {}).get("inventory")
    if nic_cables > RANKED_CABLES:
        return {"computed": False, "why": f"not computed: {nic_cables:,} NIC-port cables (above {RANKED_CABLES:,} migrate does not "
                                          "plan twice); re-plan TO with the file and migrate to it"}
    if not src or not Path(src).is_file():
        return {"computed": False, "why": f"not computed: TO's inventory {src} is not found from here (the path is as given to "
                                          "`zcube plan`, relative to the folder it ran in)"}
    text = Path(src).read_text(encoding="utf-8")
    if inventory_digest(src) != plan_to["inputs"].get("inventory_sha256"):
        return {"computed": False, "why": f"not computed: TO's inventory {src} changed since TO was planned"}
    data = parse_inventory_text(text, src)
    data.setdefault("layout", {}).setdefault("placement", {})["switches"] = places
    try:
        inv = resolve_inventory(data, base=Path(src).parent, source=f"{src} with {SUGGESTED_PLACES}")
        mig, doc = plan_and_check(plan_from, build_plan(inv), from_path, f"{src} with {SUGGESTED_PLACES}", opts)
    except (InputErrors, PlanError) as exc:
        return {"computed": False, "why": f"not computed: {exc}"}
    return {"computed": True, "inventory": src, "stages": doc["stages"], "cable_touches": doc["cable_touches"],
            "cable_touches_lower_bound": doc["cable_touches_lower_bound"], "cable_touches_temporary": doc["cable_touches_temporary"],
            "temporary_places": len(doc["temporary_places"]), "switches_reracked": doc["switches_reracked"],
            "switches_bought": doc["switches_bought"], "places": doc["places"]}


def write_suggestion(mig: Migration, plan_from: dict, plan_to: dict, paths: tuple[str, str], out: Path,
                     named: Path | None = None) -> dict | None:
    """DIR/suggested-places.yaml when a role is re-racked or stands in a temporary place (suggest.py), and what
    migrate.json says of it (None, and no file, when nothing is to suggest). ``named``: the folder migrate.json names
    (DIR, where ``out`` is the folder being written that becomes DIR; default ``out``)."""
    path = out / SUGGESTED_PLACES
    path.unlink(missing_ok=True)
    suggested = suggest_places(mig)
    if suggested is None:
        return None
    section = places_section(suggested)
    again = replanned(plan_from, plan_to, paths[0], mig.options, section, len(mig.dst.host))
    if again["computed"]:
        figures = (f"Re-planned with it: {again['cable_touches']} cable touches (lower bound {again['cable_touches_lower_bound']}), "
                   f"{again['temporary_places']} temporary places, {again['switches_reracked']} switches re-racked")
    else:
        figures = again["why"].capitalize()
    header = [f"Suggested by `zcube migrate {paths[0]} {paths[1]}`: each TO role at the place of the FROM switch the",
              "migration gives it, so that no reused switch is re-racked or stands in a temporary place. Paste the",
              "`switches:` block under `layout.placement:` of TO's inventory (it replaces any there; docs/inventory.md)",
              f"and re-plan. {figures}."]
    path.write_text(places_yaml(suggested, header), encoding="utf-8")
    return {"file": str((named or out) / SUGGESTED_PLACES), "roles": len(section), "at_from_place": sum(1 for s in suggested if s.moved),
            "as_to": [{"role": s.role, "why": s.why} for s in suggested if s.kind == "to"],
            "left_to_rule": [{"role": s.role, "why": s.why} for s in suggested if s.kind == "rule"],
            "replanned": again}


def stage_dir(out: Path, t: int) -> Path:
    return out / f"stage-{t:02d}"


MIGRATION_FILES = ("migrate.json", SUGGESTED_PLACES)


def check_output(out_dir: str | Path) -> None:
    """DIR is replaced as a whole: refused (exit 2, before any planning) when it holds anything but a migration's
    files (migrate.json, suggested-places.yaml, stage-NN folders): a plan's folder given as DIR would be lost."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputErrors(Problem("-o/--output", f"{out_dir} is a file, not a folder"), "cannot write the migration")
    other = sorted(p.name for p in out.iterdir() if p.name not in MIGRATION_FILES
                   and not (p.is_dir() and p.name.startswith("stage-") and p.name[6:].isdigit())) if out.is_dir() else []
    if other:
        raise InputErrors(Problem("-o/--output", f"{out_dir} holds files a migration does not write ({', '.join(other[:5])}"
                                                 f"{', ...' if len(other) > 5 else ''}): the new migration replaces the folder whole",
                                  "give a new or empty folder, or one an earlier `zcube migrate` wrote"), "cannot write the migration")


def _write_stages(out: Path, plan_from: dict, plan_to: dict, mig: Migration, doc: dict, cat) -> None:
    """DIR/stage-NN/ of every stage: the stage plan rendered and its console files (when stage plans are written),
    the moves (csv, workbook), labels and report."""
    cat_from, _ = plan_catalog(plan_from, None, accept_changed=True)
    old = Labels(CableRows(_all_ports(plan_from), cat_from), CageParts.of_plan(plan_from, cat_from))
    new = Labels(CableRows(plan_to, cat), CageParts.of_plan(plan_to, cat))
    form_factor = plan_to["models"]["switch"]["cage_form_factor"]
    rank = {r["name"]: i for i, r in enumerate(plan_to["layout"]["racks"])}
    blocked = doc["stage_plans"]["why_not"]
    prev = new
    for t in range(1, len(mig.batches) + 1):
        d = stage_dir(out, t)
        d.mkdir()
        here = new.staged(None, CageParts(mig.cages[t - 1], form_factor, cat))  # what the cages hold after the stage
        if blocked is None:
            plan = stage_plan(plan_from, plan_to, mig, t)
            write_plan(plan, d)
            render_all(plan, d, jobs=1)
            write_consoles(plan, sorted(r for r, s in mig.need_stage.items() if s == t), d)
            if mig.temp:  # labels name where the far end stands in this stage (a temporary place while a role is in one)
                here = new.staged(CableRows(plan, cat), here.cages)
        rows = walking_rows(mig.moves[t - 1], mig.work[t - 1], old, here, rank, mig.bind, prev)
        prev = here
        write_moves_csv(rows, d / "moves.csv")
        write_labels_csv(rows, cat, d / "labels.csv")
        write_move_workbook(rows, cat, plan_to["cluster"]["name"], t, d / "moves.xlsx")
        write_report(doc["stage_reports"][t - 1], d / "report.json", d / "report.txt")


def write_migration(from_path: str, to_path: str, out_dir: str | Path, opts: Options) -> dict:
    """Plan, check and write every stage's folder, then DIR/migrate.json; returns migrate.json. DIR is written whole
    (into a sibling folder that replaces it at the end): an interrupted run leaves DIR as it was."""
    check_output(out_dir)
    plan_from, plan_to = read_plan(from_path), read_plan(to_path)
    cat, _ = plan_catalog(plan_to, None, accept_changed=True)
    mig, doc = plan_and_check(plan_from, plan_to, from_path, to_path, opts, cat)
    with whole_folder(out_dir) as out:
        _write_stages(out, plan_from, plan_to, mig, doc, cat)
        doc["suggested_places"] = write_suggestion(mig, plan_from, plan_to, (from_path, to_path), out, Path(out_dir))
        write_canonical(doc, out / "migrate.json")
    return doc


__all__ = ["check_output", "plan_and_check", "replanned", "write_suggestion", "write_migration"]
