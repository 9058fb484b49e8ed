"""Each stage's technician files: the moves in walking order (moves.csv, a printable move workbook), the labels
to print (labels.csv) and the stage report (report.json, report.txt).

A move row says what a technician does: at the unplug end (rack, U, device, port, the label there now)
disconnect the cable; at the plug end (rack, U, device, port, the label to put on) connect it; for a
NIC-port cable the server end stays. Rows go in walking order of where the work starts (racks in
layout order, U from the top, device, port), as the cut sheets do. Label texts are the cabling
catalog's (cabling/sheets.py CableRows of each plan); every cell goes through xlsx.neutral.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

from zcube_deploy.cabling.sheets import CableRows
from zcube_deploy.cabling.workbook import task_sheet
from zcube_deploy.catalog.cabling import CablingCatalog
from zcube_deploy.migrate.moves import End, Move
from zcube_deploy.migrate.parts import VERBS, CageParts, parts_text, rebreak_counts
from zcube_deploy.migrate.racks import SwitchWork
from zcube_deploy.xlsx import neutral_row, new_workbook, save_workbook

MOVE_COLUMNS = ["step", "action", "kind", "cable", "was", "unplug_rack", "unplug_u", "unplug_device", "unplug_port", "unplug_label",
                "plug_rack", "plug_u", "plug_device", "plug_port", "plug_label", "stays_device", "stays_port", "medium", "length_m",
                "part", "id_now", "new_id"]  # id_now, new_id: the move sheet's "ID now" and "New ID" (last: the columns before keep their places)
SHEET_COLUMNS = [("Step", 6), ("Do", 8), ("ID now", 9), ("Rack", 6), ("U", 4), ("Device", 10), ("Port", 10), ("Label now", 30),
                 ("New ID", 9), ("Rack", 6), ("U", 4), ("Device", 10), ("Port", 10), ("New label", 30), ("Part", 19)]  # 189 wide with the ticks: 8.2 pt on A4
SHEET_GROUPS = [("UNPLUG: the end that comes out, as it is labelled now", 2, 7),
                ("PLUG: where it goes in, and the label to put on", 8, 13)]  # over SHEET_COLUMNS (first, last)
SHEET_LEGEND = ("Do: remove; move (unplug here, plug there); unplug/plug (a move in two: the end hangs, labelled); install (a new "
                "cable, or with an ID now the cable from the stock that carries it); relabel (the cable stays: its label changes); "
                "unrack/rack (the switch); rebreak (cages anew: the optics and breakout parts to fit); console (paste its file). "
                "ID now: the ID on the cable's label as it is (a switch row: the switch); New ID: the ID of the label it gets "
                "(a switch row: the role it takes)")
LABEL_COLUMNS = ["cable", "end", "line1", "line2", "barcode", "colour", "rack", "u", "device", "port"]


class Labels:
    """Label lines of each cable end of one plan, by (cable id, device, port); each cable's part; the parts at each
    switch cage (``cages``, for the rebreak rows)."""

    def __init__(self, rows: CableRows | None, cages: CageParts | None = None):
        self.ends: dict[tuple[str, str, str], tuple[str, tuple[str, str], str, str]] = {}
        self.order = rows.order if rows else {}
        self.short = rows.short if rows else {}
        self.part = {r.cable: r.part for r in rows.rows} if rows else {}
        self.cages = cages
        for r in rows.rows if rows else []:
            self.ends[(r.cable, r.a_device, r.a_port)] = ("A", r.label_a, r.group, r.a_short)
            self.ends[(r.cable, r.b_device, r.b_port)] = ("B", r.label_b, r.group, r.b_short)

    def staged(self, rows: CableRows | None, cages: CageParts | None = None) -> Labels:
        """These labels with each end the stage plan's ``rows`` carry labelled as that plan has it: where its far end
        stands in the stage (a role in a temporary place: that place, not its own), and ``cages``: what the cages hold
        after the stage (parts.CageParts of the stage); the rest (order, parts) as here."""
        out = Labels(None, cages or self.cages)
        out.order, out.short, out.part = self.order, self.short, self.part
        out.ends = dict(self.ends) if rows else self.ends
        for r in rows.rows if rows else []:
            for key, label in (((r.cable, r.a_device, r.a_port), ("A", r.label_a, r.group, r.a_short)),
                               ((r.cable, r.b_device, r.b_port), ("B", r.label_b, r.group, r.b_short))):
                if key in out.ends:
                    out.ends[key] = label
        return out

    def at(self, cable: str | None, end: End | None) -> tuple[str, tuple[str, str], str, str] | None:
        if cable is None or end is None:
            return None
        return self.ends.get((cable, end.device, end.port))


def _text(label) -> str:
    return " / ".join(label[1]) if label else ""


PHASES = ("unplug", "take out", "rack", "switch", "plug")  # the order of a stage's work (see walking_rows)


def _split(m: Move, worked: set[str], bind: dict[str, str], apart: bool = False) -> list[tuple[int, str, Move]]:
    """(phase, action, move) rows of one cable move: before the switches' work when its unplugged end is on a switch
    worked on in the stage, after it when its plugged end is; both (unplug, then plug: the end hangs, labelled, in
    between) when both are, or when the move is ``apart`` (its port shared with another row: :func:`_apart`)."""
    if m.action == "remove":
        return [(0, "remove", m)]
    if m.action == "install":
        return [(4, "install", m)]
    old = bind.get(m.old.device, m.old.device) in worked
    new = bind.get(m.new.device, m.new.device) in worked
    if (old and new) or apart:
        return [(0, "unplug", m), (4, "plug", m)]
    return [(0 if old else 4, "move", m)]


def _apart(keyed: list[tuple], bind: dict[str, str]) -> set[int]:
    """The moves (by id()) to do in two rows because a row of the stage, in walking order (``keyed``, sorted), plugs
    into a port a later row empties: the plugging row a move of the first phase (its plug then goes to the last), or
    else the emptying row a move of the last phase (its unplug then goes to the first). A port by the switch playing a
    role (``bind``) and its name (a switch broken out anew in the stage has its rows split by phase already)."""
    def at(e: End) -> tuple[str, str]:
        return bind.get(e.device, e.device), e.port

    empties: dict[tuple[str, str], tuple[int, int, str, Move]] = {}
    for i, (key, action, m) in enumerate(keyed):
        if action in ("remove", "unplug", "move") and at(m.old) not in empties:
            empties[at(m.old)] = (i, key[0], action, m)
    out = set()
    for i, (key, action, m) in enumerate(keyed):
        later = empties.get(at(m.new)) if action in ("plug", "install", "move") else None
        if later is None or later[0] < i or later[3] is m:
            continue
        if action == "move" and key[0] == 0:
            out.add(id(m))
        elif later[2] == "move":
            out.add(id(later[3]))
    return out


def walking_rows(moves: list[Move], work: list[SwitchWork], old: Labels, new: Labels, rack_rank: dict[str, int],
                 bind: dict[str, str], prev: Labels | None = None) -> list[dict]:
    """The stage's work as rows, phase by phase (PHASES): cables unplugged from the switches worked on in the stage
    (and removed cables), switches taken out, switches racked, cages broken out anew and console files pasted, then
    cables plugged (moved, installed). Within a phase, walking order of where each row is done (racks in layout
    order, U from the top, device, port). ``bind``: role -> the switch playing it. ``new``: the labels as they are
    after the stage, ``prev`` as they were before it (default ``new``): a cable re-plugged as its role leaves a
    temporary place is unplugged under its old label, and the end that stays gets a ``relabel`` row (its label named
    the temporary place)."""
    prev = prev or new
    apart: set[int] = set()
    while True:  # a move in two where a row would plug into a port a later row empties (at most a few rounds)
        keyed = _keyed(moves, work, old, new, rack_rank, bind, apart)
        more = _apart(keyed, bind) - apart
        if not more:
            break
        apart |= more
    return [_switch_row(step, w, old if w.before == 0 else prev, new) if isinstance(w, SwitchWork)
            else _relabel_row(step, w, prev, new) if action == "relabel" else _cable_row(step, action, w, old, new, prev)
            for step, (_, action, w) in enumerate(keyed, start=1)]


def _keyed(moves: list[Move], work: list[SwitchWork], old: Labels, new: Labels, rack_rank: dict[str, int], bind: dict[str, str],
           apart: set[int]) -> list[tuple]:
    """The stage's rows as (sort key, action, move or switch work), sorted (walking_rows); the moves in ``apart`` in two."""
    worked = {w.switch for w in work}
    keyed = []
    for m in moves:
        if m.action == "replug" and m.stays is not None:
            here = m.stays
            keyed.append(((4, rack_rank.get(here.rack, len(rack_rank)), here.rack, -here.u, here.device,
                           old.order.get(here.port) or new.order.get(here.port) or (0, 0), here.port, "relabel", m.cable, ""), "relabel", m))
        for phase, action, mv in _split(m, worked, bind, id(m) in apart):
            here = mv.new if action in ("plug", "install") or (action == "move" and phase == 4) else (mv.old or mv.new)
            port_order = old.order.get(here.port) or new.order.get(here.port) or (0, 0)
            keyed.append(((phase, rack_rank.get(here.rack, len(rack_rank)), here.rack, -here.u, here.device, port_order, here.port,
                           action, mv.cable, mv.old_cable or ""), action, mv))
    for w in work:
        phase = {"unrack": 1, "rack": 2}.get(w.action, 3)
        here = w.old or w.new
        keyed.append(((phase, rack_rank.get(here.rack, len(rack_rank)), here.rack, -here.u, here.device, (w.cages[0] if w.cages else 0, 0), here.port,
                       w.action, "", w.switch), w.action, w))
    keyed.sort(key=lambda x: x[0])
    return keyed


def _relabel_row(step: int, m: Move, prev: Labels, new: Labels) -> dict:
    """The end of a re-plugged cable that stays plugged: its label (which named the temporary place its far end
    leaves) taken off and the new one put on; nothing is unplugged."""
    was, will, e = prev.at(m.cable, m.stays), new.at(m.cable, m.stays), m.stays
    return {"step": step, "action": "relabel", "kind": m.kind, "cable": m.cable, "was": "",
            "unplug_rack": "", "unplug_u": "", "unplug_device": "", "unplug_port": "", "unplug_label": _text(was),
            "plug_rack": e.rack, "plug_u": e.u, "plug_device": e.device, "plug_port": e.port, "plug_label": _text(will),
            "stays_device": "", "stays_port": "", "medium": m.medium, "length_m": m.length_m, "part": "",
            "_short_old": "", "_short_new": will[3] if will else new.short.get(e.port, e.port), "_new_label": will,
            "id_now": m.cable, "new_id": m.cable}


def _switch_row(step: int, w: SwitchWork, old: Labels, new: Labels) -> dict:
    """One switch row; a rebreak row's part cell and counts from the cages' parts (parts.py): ``old`` holds what they
    held before (FROM's, or the stage before's for a role in service: SwitchWork.before), ``new`` what they hold
    after the stage."""
    counts = rebreak_counts(w, old.cages, new.cages) if w.action == "rebreak" and old.cages and new.cages else None
    return {"step": step, "action": w.action, "kind": "switch", "cable": "", "was": w.switch,
            "unplug_rack": w.old.rack if w.old else "", "unplug_u": w.old.u if w.old else "", "unplug_device": w.old.device if w.old else "",
            "unplug_port": "", "unplug_label": w.detail if w.old else "",
            "plug_rack": w.new.rack if w.new else "", "plug_u": w.new.u if w.new else "", "plug_device": w.new.device if w.new else "",
            "plug_port": w.new.port if w.new else "", "plug_label": w.detail if w.new else "",
            "stays_device": "", "stays_port": "", "medium": w.medium, "length_m": "",
            "part": parts_text(counts, old.cages.known) if counts is not None else "", "_parts": counts,
            "_short_old": "", "_short_new": w.new.port if w.new else "", "_new_label": None,
            "id_now": w.switch, "new_id": w.new.device if w.new else ""}


def _part(m: Move, old: Labels, new: Labels) -> str:
    """The part of the cable a row handles: FROM's when it was one (a re-plugged or stand-in cable that was FROM's: the
    move names it, its TO id may be another FROM cable's), a cable laid to a temporary place's own part, else TO's."""
    if m.part or m.action == "replug" or m.temporary and m.action == "remove":
        return m.part
    return old.part.get(m.old_cable, "") if m.old_cable else new.part.get(m.cable, "")


def _cable_row(step: int, action: str, m: Move, old: Labels, new: Labels, prev: Labels) -> dict:
    """One cable row; an ``unplug`` row has the end unplugged only, a ``plug`` row the end plugged only. ``id_now``: the
    ID on the cable's label when the technician takes it (FROM's; TO's for a cable laid to a temporary place; a cable
    from the stock: the one it had), ``new_id``: the ID of the label it gets (TO's; none when it is removed)."""
    laid = m.action == "replug" or (m.temporary and m.action == "remove")  # laid (and labelled) in an earlier stage
    held = m.cable if laid else m.old_cable or ""
    was = (prev if laid else old).at(held, m.old) if action != "plug" else None
    will = new.at(m.cable, m.new) if action != "unplug" else None
    src = m.old if action != "plug" else None
    dst = m.new if action != "unplug" else None
    return {
        "step": step, "action": action, "kind": m.kind, "cable": m.cable if action != "remove" else "", "was": m.old_cable or "",
        "unplug_rack": src.rack if src else "", "unplug_u": src.u if src else "", "unplug_device": src.device if src else "",
        "unplug_port": src.port if src else "", "unplug_label": _text(was),
        "plug_rack": dst.rack if dst else "", "plug_u": dst.u if dst else "", "plug_device": dst.device if dst else "",
        "plug_port": dst.port if dst else "", "plug_label": _text(will),
        "stays_device": m.stays.device if m.stays and action != "unplug" else "", "stays_port": m.stays.port if m.stays and action != "unplug" else "",
        "medium": m.medium, "length_m": m.length_m,
        "part": _part(m, old, new),
        "_short_old": (was[3] if was else old.short.get(src.port, src.port)) if src else "",
        "_short_new": (will[3] if will else new.short.get(dst.port, dst.port)) if dst else "",
        "_new_label": will, "id_now": held, "new_id": m.cable if m.action != "remove" else "",
    }


def write_moves_csv(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(MOVE_COLUMNS)
        for r in rows:
            w.writerow(neutral_row([f"{r[k]:g}" if isinstance(r[k], float) else r[k] for k in MOVE_COLUMNS]))


def write_labels_csv(rows: list[dict], cat: CablingCatalog, path: Path) -> int:
    """One row per label to put on (each plugged end), in the moves' walking order (as cabling's labels.csv)."""
    colour = {g: c.label for g, c in cat.colours.items()}
    n = 0
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\r\n")
        w.writerow(LABEL_COLUMNS)
        for r in rows:
            label = r["_new_label"]
            if label is None:
                continue
            end, (line1, line2), group, short = label
            w.writerow(neutral_row((r["cable"], end, line1, line2, r["cable"], colour.get(group, ""), r["plug_rack"], r["plug_u"],
                                    r["plug_device"], short)))
            n += 1
    return n


PARTS_COLUMNS = [("Step", 6), ("Switch", 10), ("Cages", 12), ("Parts", 100)]


def parts_sheet_rows(rows: list[dict]) -> list[tuple]:
    """The stage's parts list: each rebreak row in full (step, the role, its cages, its parts), then the stage's totals
    (optics by what is done with them, breakout legs, new cables to bring: the cables installed that were none of
    FROM's, each counted once, not per end's install row), each by part."""
    out: list[tuple] = []
    total = {v: Counter() for v in VERBS}
    for r in rows:
        if r["action"] == "rebreak":
            out.append((r["step"], r["plug_device"], r["plug_port"], r["part"]))
            for v in VERBS:
                total[v].update((r["_parts"] or {}).get(v, Counter()))
    new_cables = Counter(part for _, part in {(r["cable"], r["part"]) for r in rows if r["action"] == "install" and not r["was"]})
    out.append(("", "stage", "all", parts_text(total) if any(total.values()) else "no cage changes"))
    out.append(("", "stage", "new cables", ", ".join(f"{n} x {p}" for p, n in sorted(new_cables.items())) or "none"))
    return out


def write_move_workbook(rows: list[dict], cat: CablingCatalog, cluster: str, stage: int, path: Path) -> None:
    """The moves as a printable sheet (cut-sheet layout, every text wrapped in full: a label on its two lines) with Done
    and Checked tick columns, the unplug and plug halves of a row under their group headings, each with its cable ID
    (the one on the cable now, the one it gets); and the stage's parts list (each rebreak row's parts, then the
    totals) on a second sheet."""
    wb = new_workbook()
    def lines(r: dict, key: str) -> str:  # a label's two lines as it prints them; a switch row's text as it is
        return r[key] if r["kind"] == "switch" else r[key].replace(" / ", "\n")

    values = [(r["step"], r["action"], r["id_now"], r["unplug_rack"], r["unplug_u"], r["unplug_device"], r["_short_old"],
               lines(r, "unplug_label"), r["new_id"], r["plug_rack"], r["plug_u"], r["plug_device"], r["_short_new"], lines(r, "plug_label"),
               r["part"]) for r in rows]
    task_sheet(wb, f"Stage {stage:02d} moves", SHEET_COLUMNS, values, cat, cluster, legend=SHEET_LEGEND, groups=SHEET_GROUPS)
    task_sheet(wb, f"Stage {stage:02d} parts", PARTS_COLUMNS, parts_sheet_rows(rows), cat, cluster, ticks=("Done",),
               legend="each rebreak row's parts (the Part column of the moves sheet), then the stage's totals")
    save_workbook(wb, path)


def write_report(report: dict, path_json: Path, path_txt: Path) -> None:
    path_json.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    lines = [f"stage {report['stage']:02d}",
             f"units out of service: {report['units_out']} ({report['units_in_service']} serve, {report['capacity_kept']:.0%} of capacity)",
             f"cables: {report['cables_moved']} moved, {report['cables_removed']} removed, {report['cables_installed']} installed "
             f"({report['cable_touches']} touches)",
             f"technician hours: {report['technician_hours']:.1f}",
             "switches leaving the FROM island: " + (", ".join(report["switches_leaving_from"]) or "none"),
             "switch work: " + ", ".join(f"{n} {a}" for a, n in report.get("switch_work", {}).items()),
             "roles taken: " + (", ".join(f"{r['role']} <- {r['switch']}{' (re-racked)' if r['reracked'] else ''}"
                                          for r in report["roles_taken"]) or "none"),
             "units out: " + ", ".join(report["units_out_list"])]
    path_txt.write_text("\n".join(lines) + "\n", encoding="utf-8")


__all__ = ["LABEL_COLUMNS", "Labels", "MOVE_COLUMNS", "walking_rows", "write_labels_csv", "write_move_workbook", "write_moves_csv",
           "write_report"]
