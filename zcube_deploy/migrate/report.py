"""migrate.json and the stage reports: what a migration costs, stage by stage (pure).

Every figure is counted from the migration's own stages and moves; the lower bounds are the ones
bounds.py and roles.py computed without the stage search. Technician hours are the cables each
stage handles at the crew rate, an uncalibrated input (lifecycle.md: no public cables-per-hour figure).
"""

from __future__ import annotations

from zcube_deploy.migrate.moves import Move, replugged, touches
from zcube_deploy.migrate.planner import Migration
from zcube_deploy.migrate.roles import physicals, reracked

MIGRATE_SCHEMA = 1


def _count(moves: list[Move], action: str) -> int:
    return len({(m.kind, m.cable, m.old_cable) for m in moves if m.action == action})


def stage_report(mig: Migration, t: int) -> dict:
    """One stage: units out, capacity kept, cables moved, switches freed and taking roles, technician hours."""
    n = len(mig.units)
    batch = mig.batches[t - 1]
    moves = mig.moves[t - 1]
    before = sum(len(b) for b in mig.batches[:t - 1])
    phys = {p.name: p for p in physicals(mig.src, mig.options.spares)}
    taken = sorted(r for r, s in mig.need_stage.items() if s == t)
    freed = sorted(s for s, f in mig.free_stage.items() if f == t and s in mig.src.switches)
    touched = touches(moves)
    return {
        "stage": t,
        "units_out": len(batch),
        "units_out_list": [mig.units[u].label for u in batch],
        "units_in_service": n - len(batch),
        "capacity_kept": round((n - len(batch)) / n, 4) if n else 1.0,
        "units_on_from_after": n - before - len(batch),
        "units_on_to_after": before + len(batch),
        "cables_moved": _count(moves, "move"),
        "cables_removed": _count(moves, "remove"),
        "cables_installed": _count(moves, "install"),
        "cable_touches": touched,
        "cable_touches_temporary": replugged(moves),
        "technician_hours": round(touched / mig.options.crew_rate, 2),
        "switches_leaving_from": freed,
        "roles_taken": [{"role": r, "switch": mig.bind[r], "reracked": reracked(phys[mig.bind[r]], mig.dst, r)} for r in taken],
        "switch_work": {a: sum(1 for w in (mig.work[t - 1] if mig.work else []) if w.action == a)
                        for a in ("unrack", "rack", "rebreak", "console")},
    }


def summary(mig: Migration, from_path: str, to_path: str, stage_plans_why_not: str | None = None) -> dict:
    """migrate.json (``stage_plans_why_not``: why the stages' plan.json could not be written, None when they were)."""
    phys = {p.name: p for p in physicals(mig.src, mig.options.spares)}
    used = set(mig.bind.values())
    all_moves = [m for stage in mig.moves for m in stage]
    touched_to = {m.cable for m in all_moves if m.action in ("move", "install")}
    to_cables = {h.cable for h in mig.dst.host.values()} | {c.id for c in mig.dst.fabric}
    total = touches(all_moves)  # each physical cable once, even when two stages handle it
    lower = mig.lower["touches"]
    roles = [{"role": r, "group": mig.dst.switches[r].role, "switch": x, "was": phys[x].role or "spare",
              "reracked": reracked(phys[x], mig.dst, r), "first_stage": mig.need_stage[r]} for r, x in sorted(mig.bind.items())]
    retired = [{"switch": s, "was": mig.src.switches[s].role, "stage": min(mig.free_stage[s], len(mig.batches))}
               for s in mig.src.switches if s not in used]
    return {
        "schema": MIGRATE_SCHEMA,
        "from": {"plan": from_path, "design": mig.src.design, "switches": len(mig.src.switches)},
        "to": {"plan": to_path, "design": mig.dst.design, "switches": len(mig.dst.switches)},
        "capacity_floor": mig.options.capacity_floor,
        "unit": mig.options.unit,
        "units": len(mig.units),
        "units_out_at_most": mig.cap,
        "spares": mig.options.spares,
        "crew_rate_cables_per_hour": mig.options.crew_rate,
        "crew_rate_calibrated": False,
        "stages": len(mig.batches),
        "stages_lower_bound": mig.lower["stages"],
        "stages_fewest_proven": mig.proven,
        "cable_touches": total,
        "cable_touches_temporary": replugged(all_moves),
        "cable_touches_lower_bound": lower["touches"],
        "cable_touches_bound": lower,
        "cables_kept": len(to_cables - touched_to),
        "switches_reused": sum(1 for x in used if not phys[x].spare),
        "switches_retired": len(retired),
        "switches_bought": sum(1 for x in used if phys[x].spare),
        "switches_reracked": sum(1 for r in roles if r["reracked"] and r["was"] != "spare"),
        "reused_by_role": {role: sum(1 for r in roles if r["was"] == role) for role in sorted({r["was"] for r in roles})},
        "technician_hours": round(sum(touches(m) for m in mig.moves) / mig.options.crew_rate, 2),
        "roles": roles,
        "retired": retired,
        "places": mig.places_met,
        "temporary_places": [{"role": r, "switch": mig.bind[r], "rack": tp.rack, "u": tp.u, "from_stage": tp.since, "moves_in_stage": tp.until}
                             for r, tp in sorted(mig.temp.items())],
        "stage_plans": {"written": stage_plans_why_not is None, "why_not": stage_plans_why_not},
        "stage_reports": [stage_report(mig, t) for t in range(1, len(mig.batches) + 1)],
    }


def summary_rows(doc: dict) -> list[tuple[str, ...]]:
    """The stage table: one row per stage, then the totals."""
    reports = doc["stage_reports"]
    rows = [(str(s["stage"]), str(s["units_out"]), f"{s['capacity_kept']:.0%}", str(s["cables_moved"]), str(s["cables_removed"]),
             str(s["cables_installed"]), str(s["cable_touches"]), f"{s['technician_hours']:.1f}", str(len(s["roles_taken"])))
            for s in reports]
    rows.append(("all", str(doc["units"]), f"{min((s['capacity_kept'] for s in reports), default=1.0):.0%}",
                 str(sum(s["cables_moved"] for s in reports)), str(sum(s["cables_removed"] for s in reports)),
                 str(sum(s["cables_installed"] for s in reports)), str(doc["cable_touches"]), f"{doc['technician_hours']:.1f}",
                 str(len(doc["roles"]))))
    return rows


def title(doc: dict) -> str:
    """The stage table's title: "migration in 4 stages (4-gpu units, floor 75%)" (1 stage: singular)."""
    n = doc["stages"]
    return f"migration in {n} stage{'' if n == 1 else 's'} ({doc['unit']} units, floor {doc['capacity_floor']:.0%})"


ALL_ROW = ("all: touches (and hours) count each cable once over the migration (one removed in a stage and laid again "
           "from the stock in a later one is one touch), not the stages' sum; moved, removed and new are sums")


def bound_line(doc: dict) -> str:
    """The totals against their lower bounds, in words."""
    lb = doc["cable_touches_lower_bound"]
    ratio = f", x{doc['cable_touches'] / lb:.2f}" if lb else ""
    proven = "fewest proven" if doc["stages_fewest_proven"] else "not proven fewest"
    temp = doc.get("cable_touches_temporary") or 0
    away = f"; {temp} of them by {len(doc['temporary_places'])} switch(es) leaving temporary places" if temp else ""
    return (f"stages: {doc['stages']} (lower bound {doc['stages_lower_bound']}, {proven}); "
            f"cable touches: {doc['cable_touches']} (lower bound {lb}{ratio}{away})")


def suggestion_line(doc: dict) -> str | None:
    """What DIR/suggested-places.yaml would save, in words (None when nothing is suggested): the figures of TO re-planned
    with it, as migrate computed them, or why they were not computed."""
    sp = doc.get("suggested_places")
    if not sp:
        return None
    again = sp["replanned"]
    head = f"re-plan TO with {sp['file']} ({sp['at_from_place']} role(s) moved to their switch's place)"
    if not again["computed"]:
        return f"{head}: {again['why']}"
    lb = again["cable_touches_lower_bound"]
    ratio = f", x{again['cable_touches'] / lb:.2f}" if lb else ""
    return (f"{head}: {again['temporary_places']} temporary places (now {len(doc['temporary_places'])}), "
            f"{again['switches_reracked']} re-racked ({doc['switches_reracked'] - again['switches_reracked']} fewer), "
            f"cable touches {again['cable_touches']} (lower bound {lb}{ratio}; now {doc['cable_touches']})")


__all__ = ["ALL_ROW", "MIGRATE_SCHEMA", "bound_line", "suggestion_line", "stage_report", "summary", "summary_rows", "title"]
