"""`zcube hall`: one self-contained HTML page of the data hall (floor plan, rack elevations, summary,
status overlays). overlays.py reads and checks the overlay files, model.py builds what to draw
(pure), draw.py draws it and page.py assembles the page (pure), this module writes DIR/hall/index.html.
"""

from __future__ import annotations

from pathlib import Path

from zcube_deploy.cabling.sheets import bill_of_materials
from zcube_deploy.catalog.cabling import load_cabling_catalog
from zcube_deploy.hall.model import build_hall_model
from zcube_deploy.hall.overlays import load_analysis, load_traffic, load_verify
from zcube_deploy.hall.page import render_page
from zcube_deploy.plan.model import projection

# what the hall reads of a plan (switch interfaces are not needed: port use comes from the cables)
PLAN_FIELDS = projection(
    layout=None, cables=None, port_map=None, models=None, sizing=None, counts=None,
    cluster=None, addressing=None, inputs=None, tool_version=None, routing=None,
    switches={"name", "group", "plane", "rack", "u", "model"},
    servers={"name", "rack", "u", "model"},
)


def write_hall(plan: dict, out_dir: str | Path, *, cabling: str | Path | None = None, verify: str | Path | None = None,
               analyze: str | Path | None = None, traffic: str | Path | None = None, catalog_path: str | Path | None = None) -> dict:
    """Write DIR/hall/index.html; returns what it drew."""
    cat = load_cabling_catalog(Path(catalog_path) if catalog_path else None)
    status = None
    if cabling:
        from zcube_deploy.cabling.status import read_status  # start-up time: openpyxl loads only for a cabling overlay

        status = read_status(cabling)
    ver = load_verify(verify, plan) if verify else None
    ana = load_analysis(analyze) if analyze else None
    tra = load_traffic(traffic, plan) if traffic else None
    colours = {g: c.model_dump() for g, c in cat.colours.items()}
    model = build_hall_model(plan, colours, bill_of_materials(plan, cat), status=status, verify=ver, analysis=ana, traffic=tra)
    html = render_page(model)
    out = Path(out_dir) / "hall"
    out.mkdir(parents=True, exist_ok=True)
    path = out / "index.html"
    path.write_text(html, encoding="utf-8")
    return {"path": str(path), "bytes": len(html.encode("utf-8")), "racks": len(model["racks"]), "rows": len(model["rows"]),
            "bundles": len(model["bundles"]), "bundle_level": model["bundle_level"], "findings": len(model["findings"]),
            "racks_with_findings": sum(1 for r in model["racks"] if r["findings"]),
            "bundles_with_utilisation": sum(1 for b in model["bundles"] if b.get("utilisation") is not None)}
