"""`zcube hall`: one self-contained HTML page of the data hall (floor plan, rack elevations, summary,
status overlays). model.py builds what to draw (pure), draw.py draws it (pure), this module reads
the overlay files and writes DIR/hall/index.html.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.plan.model import projection

# what the hall reads of a plan (switch interfaces are not needed: port use comes from the cables)
PLAN_FIELDS = projection(
    layout=None, cables=None, port_map=None, models=None, sizing=None, counts=None,
    cluster=None, addressing=None, inputs=None, tool_version=None, routing=None,
    switches={"name", "group", "plane", "rack", "u", "model"},
    servers={"name", "rack", "u", "model"},
)


def _read_json(p: Path, flag: str, hint: str):
    """An overlay file's JSON, or one clear problem naming the option that gave it."""
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputErrors(Problem(flag, f"{p}: no such file", hint)) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputErrors(Problem(flag, f"{p}: not a readable JSON file ({exc})")) from None


def load_verify(path: str | Path, plan: dict) -> dict:
    """A verify.json (as `zcube verify -o DIR` writes it), checked against the plan's cluster."""
    p = Path(path)
    doc = _read_json(p, "--verify", "run `zcube verify PLAN ... -o DIR` to write DIR/verify.json")
    problems = []
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        raise InputErrors(Problem("--verify", f"{p}: not a verify.json (no findings list)", "give the verify.json that `zcube verify -o DIR` writes"))
    for i, f in enumerate(doc["findings"]):
        if not isinstance(f, dict) or not all(k in f for k in ("id", "kind", "cables", "ends", "instruction")):
            problems.append(Problem(f"--verify: findings[{i}]", "a finding needs id, kind, cables, ends and instruction"))
            if len(problems) >= 5:
                break
    if problems:
        raise InputErrors(problems, f"{p} is not a verify.json")
    cluster = plan["cluster"].get("name")
    if doc.get("cluster") not in (None, cluster):
        raise InputErrors(Problem("--verify", f"{p} is for cluster {doc.get('cluster')!r}, the plan is {cluster!r}"))
    return doc


def load_analysis(path: str | Path) -> dict:
    """The figures the page shows from analyze.json, and unreachability.png next to it (base64)."""
    p = Path(path)
    doc = _read_json(p, "--analyze", "run `zcube analyze PLAN -o DIR` to write DIR/analyze.json")
    if not isinstance(doc, dict) or "random_link_failures" not in doc:
        raise InputErrors(Problem("--analyze", f"{p}: not an analyze.json (no random_link_failures)"))
    rows = [{"p": r["p"], "zcube": r["zcube"]["mean"], "clos": r["dual_plane_clos"]["mean"]} for r in doc["random_link_failures"]]
    png = p.parent / "unreachability.png"
    return {"rows": rows, "png_base64": base64.b64encode(png.read_bytes()).decode("ascii") if png.is_file() else None}


def write_hall(plan: dict, out_dir: str | Path, *, cabling: str | Path | None = None, verify: str | Path | None = None,
               analyze: str | Path | None = None, catalog_path: str | Path | None = None) -> dict:
    """Write DIR/hall/index.html; returns what it drew."""
    from zcube_deploy.cabling.sheets import bill_of_materials
    from zcube_deploy.catalog.cabling import load_cabling_catalog
    from zcube_deploy.hall.draw import render_page
    from zcube_deploy.hall.model import build_hall_model

    cat = load_cabling_catalog(Path(catalog_path) if catalog_path else None)
    status = None
    if cabling:
        from zcube_deploy.cabling.status import read_status

        status = read_status(cabling)
    ver = load_verify(verify, plan) if verify else None
    ana = load_analysis(analyze) if analyze else None
    colours = {g: c.model_dump() for g, c in cat.colours.items()}
    model = build_hall_model(plan, colours, bill_of_materials(plan, cat), status=status, verify=ver, analysis=ana)
    html = render_page(model)
    out = Path(out_dir) / "hall"
    out.mkdir(parents=True, exist_ok=True)
    path = out / "index.html"
    path.write_text(html, encoding="utf-8")
    return {"path": str(path), "bytes": len(html.encode("utf-8")), "racks": len(model["racks"]), "rows": len(model["rows"]),
            "bundles": len(model["bundles"]), "bundle_level": model["bundle_level"], "findings": len(model["findings"]),
            "racks_with_findings": sum(1 for r in model["racks"] if r["findings"])}
