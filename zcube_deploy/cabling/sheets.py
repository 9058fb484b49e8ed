"""Pure cabling views: cut-sheet rows per rack, labels, the bill of materials (no openpyxl here)."""

from __future__ import annotations

from collections import Counter, defaultdict
from operator import itemgetter

from zcube_deploy.catalog.cabling import CablingCatalog
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.plan.roles import cage_of as all_cages


# a role without a colour of its own in the cabling catalog takes the colour of the role it is like: a ROFT rail leaf's
# host cables the rail (odd) colour (a spine has fabric cables only)
COLOUR_LIKE = {"leaf": "odd"}


def catalog_for_plan(cat: CablingCatalog, plan: dict) -> CablingCatalog:
    """``cat`` with the row colours of the plan's cable groups: the catalog's (odd, even, fabric) for a ZCube plan as they
    are; for a plan with ROFT switches the groups it has (leaf, fabric; all four in a migration stage)."""
    # the switches' roles and the cables' groups (a plan cut to some cables, as expand's new cables, has no switches)
    roles = {sw["group"] for sw in plan["switches"]} | {c["group"] for c in plan["cables"] if c["kind"] == "host"}
    if not roles - set(cat.colours):
        return cat
    keep = {g: c for g, c in cat.colours.items() if g == "fabric" or g in roles}
    keep.update({r: cat.colours[COLOUR_LIKE[r]] for r in sorted(roles) if r in COLOUR_LIKE})
    return cat.model_copy(update={"colours": keep})


def group_of(cable: dict) -> str:
    return "fabric" if cable["kind"] == "fabric" else cable["group"]


MAX_LABEL_PROBLEMS = 20


class CableRow:
    """One cable's values on the sheets and exports (slots: a 64k-GPU hall has 196,608 of them)."""

    __slots__ = ("cable", "group", "plane", "a_rack", "a_u", "a_device", "a_port", "a_short",
                 "b_rack", "b_u", "b_device", "b_port", "b_short", "medium", "length_m", "part", "label_a", "label_b")
    installed = None  # the technician's columns start empty
    checked = None

    def __init__(self, *values) -> None:
        for k, v in zip(self.__slots__, values, strict=True):
            setattr(self, k, v)

    def __getitem__(self, key: str):
        return getattr(self, key)



class CableRows:
    """Row values of every cable (computed once), the racks each touches, and the label text of each end.

    Ports appear twice: the full platform name (``a_port``, for CSVs and the NetBox import) and the
    platform's short form carried by the plan (``a_short``, e.g. ``TH0/113:2``) for cut sheets and labels.
    """

    def __init__(self, plan: dict, cat: CablingCatalog):
        self.plan = plan
        self.cat = cat
        cage_of = all_cages(plan)
        self.short = {name: v[0] for name, v in cage_of.items()}
        self.order = {name: (v[1], v[2]) for name, v in cage_of.items()}
        line1, line2 = cat.labels.line1, cat.labels.line2
        limit = cat.labels.max_length
        too_long: list[Problem] = []
        n_too_long = 0
        short = self.short
        self.rows: list[dict] = []
        for c in plan["cables"]:
            a, b = c["a"], c["b"]
            ap, bp = short.get(a["port"], a["port"]), short.get(b["port"], b["port"])
            lines = []
            for end, here, hp, far, fp in (("A", a, ap, b, bp), ("B", b, bp, a, ap)):
                f = {"id": c["id"], "end": end, "here_device": here["device"], "here_port": hp, "far_device": far["device"],
                     "far_port": fp, "here_rack": here["rack"], "here_u": here["u"], "far_rack": far["rack"], "far_u": far["u"]}
                lines.append((line1.format(**f), line2.format(**f)))
            bad = [(e, n, t) for e, ls in zip("AB", lines) for n, t in enumerate(ls, start=1) if len(t) > limit]
            if bad:
                n_too_long += 1
                if len(too_long) < MAX_LABEL_PROBLEMS:
                    e, n, t = bad[0]
                    too_long.append(Problem(f"cabling_catalog.labels.line{n}",
                                            f"cable {c['id']} end {e}: label line {t!r} has {len(t)} characters > {limit}",
                                            "shorten labels.line1/line2 or raise labels.max_length (what the label tape holds)"))
            self.rows.append(CableRow(c["id"], group_of(c), c["plane"], a["rack"], a["u"], a["device"], a["port"], ap,
                                      b["rack"], b["u"], b["device"], b["port"], bp, c["medium"], c["length_m"], c["part"],
                                      lines[0], lines[1]))
        if too_long:
            if n_too_long > len(too_long):
                too_long.append(Problem("cabling_catalog.labels", f"... and {n_too_long - len(too_long)} more cable(s) with a label line too long"))
            raise InputErrors(too_long, f"cable labels are too long ({n_too_long} cable(s))")

    def port_key(self) -> list[tuple[str, str]]:
        """(short keyword, long keyword) pairs of the port names on the sheets, from the plan's own short forms."""
        pairs = set()
        for full, short in self.short.items():
            kw, _, num = full.partition(" ")
            if num and short.endswith(num) and short != full:
                pairs.add((short[: len(short) - len(num)], kw))
        return sorted(pairs)

    def _end_keys(self):
        """Per cable, the walking-order key of its A and B end: rack (layout order), U from the top, device, port,
        cable, end. Computed when needed, not kept (196,608 of them in a 64k-GPU hall)."""
        rank = {r["name"]: i for i, r in enumerate(self.plan["layout"]["racks"])}
        last = len(rank)
        get = self.order.get
        none = (0, 0)
        for r in self.rows:
            yield ((rank.get(r.a_rack, last), r.a_rack, -r.a_u, r.a_device, get(r.a_port, none), r.a_port, r.cable, "A"),
                   (rank.get(r.b_rack, last), r.b_rack, -r.b_u, r.b_device, get(r.b_port, none), r.b_port, r.cable, "B"), r)

    def labels(self):
        """One label per cable end, in walking order: rack (layout order), U from the top, device, port.
        Yields (cable, end, line1, line2, group, rack, U, device, short port)."""
        ends = []
        for ka, kb, r in self._end_keys():
            ends.append((ka, r))
            ends.append((kb, r))
        ends.sort(key=itemgetter(0))
        for k, r in ends:
            if k[-1] == "A":
                yield (r.cable, "A", r.label_a[0], r.label_a[1], r.group, k[1], -k[2], k[3], r.a_short)
            else:
                yield (r.cable, "B", r.label_b[0], r.label_b[1], r.group, k[1], -k[2], k[3], r.b_short)

    def sheet_key(self, rack: str) -> str:
        if self.cat.sheets.per == "row":
            return self._row_of[rack]
        return rack

    def by_sheet(self) -> dict[str, list[dict]]:
        """Rows per cut sheet (rack or row), each cable in exactly the sheets of the racks it touches, in
        walking order of its end there (rack, U from the top, device, port)."""
        racks = self.plan["layout"]["racks"]
        self._row_of = {r["name"]: r["row"] for r in racks}
        order = [r["name"] for r in racks] if self.cat.sheets.per == "rack" else list(dict.fromkeys(r["row"] for r in racks))
        sheets: dict[str, list[tuple]] = defaultdict(list)
        per_row = self.cat.sheets.per == "row"
        row_of = self._row_of
        for ka, kb, row in self._end_keys():  # within a sheet: by rack (one, or a row's in layout order), then U from the top
            sa, sb = (row_of[ka[1]], row_of[kb[1]]) if per_row else (ka[1], kb[1])
            sheets[sa].append((ka, row))
            if sb != sa:
                sheets[sb].append((kb, row))
        first = itemgetter(0)
        return {k: [r for _, r in sorted(sheets[k], key=first)] for k in order if k in sheets}

    def fabric(self) -> list[dict]:
        return [r for r in self.rows if r.group == "fabric"]


def bill_of_materials(plan: dict, cat: CablingCatalog) -> dict:
    """Switches, cables by medium and length, optics by part; totals equal the plan's counts."""
    model = plan["models"]["switch"]
    cage_of = all_cages(plan)
    cables = Counter()
    for c in plan["cables"]:
        cables[(c["medium"], c["length_m"], c["part"])] += 1
    optic_cages = set()
    nic_optics = 0
    for c in plan["cables"]:
        if not cat.media[c["medium"]].optics:
            continue
        for end in (c["a"], c["b"]):
            if end["port"] in cage_of:
                optic_cages.add((end["device"], cage_of[end["port"]][1]))
            else:
                nic_optics += 1
    ff = model["cage_form_factor"]
    switch_optic = cat.optics.switch_cage.get(ff)
    rows_cables = []
    for (medium, length, part), n in sorted(cables.items(), key=lambda x: (x[0][0], x[0][1])):
        price = cat.media[medium].unit_price_usd
        rows_cables.append({"item": "cable", "medium": medium, "kind": cat.media[medium].kind, "length_m": length, "part": part,
                            "quantity": n, "unit_price_usd": price, "total_usd": price * n if price is not None else None})
    optics = []
    if optic_cages:
        if switch_optic is None:
            raise InputErrors(Problem("cabling_catalog.optics.switch_cage", f"no optic for cage form factor {ff}"))
        optics.append({"item": "optic", "where": f"switch cage ({ff})", "part": switch_optic.part, "quantity": len(optic_cages),
                       "unit_price_usd": switch_optic.unit_price_usd,
                       "total_usd": switch_optic.unit_price_usd * len(optic_cages) if switch_optic.unit_price_usd is not None else None})
    if nic_optics:
        o = cat.optics.nic_port
        optics.append({"item": "optic", "where": "NIC port", "part": o.part, "quantity": nic_optics, "unit_price_usd": o.unit_price_usd,
                       "total_usd": o.unit_price_usd * nic_optics if o.unit_price_usd is not None else None})
    n_sw = len(plan["switches"])
    sw_price = model.get("unit_price_usd")
    switches = [{"item": "switch", "model": model["name"], "quantity": n_sw, "unit_price_usd": sw_price,
                 "total_usd": sw_price * n_sw if sw_price is not None else None}] if n_sw else []  # as cables, optics: no 0 row
    totals = {
        "switches": n_sw,
        "cables": sum(cables.values()),
        "host_cables": plan["counts"]["host_cables"],
        "fabric_cables": plan["counts"]["fabric_cables"],
        "copper_cables": sum(n for (m, _, _), n in cables.items() if cat.media[m].kind == "copper"),
        "aoc_cables": sum(n for (m, _, _), n in cables.items() if cat.media[m].kind == "aoc"),
        "fibre_cables": sum(n for (m, _, _), n in cables.items() if cat.media[m].kind == "fibre"),
        "optical_modules": len(optic_cages) + nic_optics,
        "cable_metres": round(sum(c["length_m"] for c in plan["cables"]), 1),
    }
    money = [r["total_usd"] for r in switches + rows_cables + optics]
    totals["total_usd"] = sum(money) if all(m is not None for m in money) else None
    assert totals["cables"] == plan["counts"]["cables"]
    return {"switches": switches, "cables": rows_cables, "optics": optics, "totals": totals}
