"""Pure cabling views: cut-sheet rows per rack, labels, the bill of materials (no openpyxl here)."""

from __future__ import annotations

from collections import Counter, defaultdict

from zcube_deploy.catalog.cabling import CablingCatalog
from zcube_deploy.errors import InputErrors, Problem


def group_of(cable: dict) -> str:
    return "fabric" if cable["kind"] == "fabric" else cable["group"]


class CableRows:
    """Row values of every cable (computed once), the racks each touches, and labels."""

    def __init__(self, plan: dict, cat: CablingCatalog):
        self.plan = plan
        self.cat = cat
        cage_of = plan["port_map"]["cage_of"]
        self.short = {name: v[0] for name, v in cage_of.items()}
        self.order = {name: (v[1], v[2]) for name, v in cage_of.items()}
        fmt = cat.labels.end
        limit = cat.labels.max_length
        too_long: list[Problem] = []
        self.rows: list[dict] = []
        for c in plan["cables"]:
            a, b = c["a"], c["b"]
            ap, bp = self.short.get(a["port"], a["port"]), self.short.get(b["port"], b["port"])
            label_a = fmt.format(id=c["id"], here_device=a["device"], here_port=ap, far_device=b["device"], far_port=bp,
                                 here_rack=a["rack"], here_u=a["u"], far_rack=b["rack"], far_u=b["u"])
            label_b = fmt.format(id=c["id"], here_device=b["device"], here_port=bp, far_device=a["device"], far_port=ap,
                                 here_rack=b["rack"], here_u=b["u"], far_rack=a["rack"], far_u=a["u"])
            if len(too_long) < 5:
                for lab in (label_a, label_b):
                    if len(lab) > limit:
                        too_long.append(Problem("cabling_catalog.labels", f"label {lab!r} of cable {c['id']} has {len(lab)} characters > {limit}",
                                                "shorten labels.end or raise labels.max_length"))
                        break
            self.rows.append({
                "cable": c["id"], "group": group_of(c), "plane": c["plane"],
                "a_rack": a["rack"], "a_u": a["u"], "a_device": a["device"], "a_port": a["port"],
                "b_rack": b["rack"], "b_u": b["u"], "b_device": b["device"], "b_port": b["port"],
                "medium": c["medium"], "length_m": c["length_m"], "part": c["part"],
                "label_a": label_a, "label_b": label_b, "installed": None, "checked": None,
            })
        if too_long:
            raise InputErrors(too_long, "cable labels are too long")

    def sheet_key(self, rack: str) -> str:
        if self.cat.sheets.per == "row":
            return self._row_of[rack]
        return rack

    def by_sheet(self) -> dict[str, list[dict]]:
        """Rows per cut sheet (rack or row), each cable in exactly the sheets of the racks it touches."""
        racks = self.plan["layout"]["racks"]
        self._row_of = {r["name"]: r["row"] for r in racks}
        order = [r["name"] for r in racks] if self.cat.sheets.per == "rack" else list(dict.fromkeys(r["row"] for r in racks))
        sheets: dict[str, list[tuple]] = defaultdict(list)
        for row in self.rows:
            ka, kb = self.sheet_key(row["a_rack"]), self.sheet_key(row["b_rack"])
            for key, side in ((ka, "a"), (kb, "b")) if ka != kb else ((ka, "a"),):
                sort = (-row[f"{side}_u"], row[f"{side}_device"], self.order.get(row[f"{side}_port"], (0, 0)), row[f"{side}_port"], row["cable"])
                sheets[key].append((sort, row))
        return {k: [r for _, r in sorted(sheets[k], key=lambda x: x[0])] for k in order if k in sheets}

    def fabric(self) -> list[dict]:
        return [r for r in self.rows if r["group"] == "fabric"]


def bill_of_materials(plan: dict, cat: CablingCatalog) -> dict:
    """Switches, cables by medium and length, optics by part; totals equal the plan's counts."""
    model = plan["models"]["switch"]
    cage_of = plan["port_map"]["cage_of"]
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
                 "total_usd": sw_price * n_sw if sw_price is not None else None}]
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
