"""The hall page: its own Jinja environment (autoescape on) and the page assembled from the drawings.

The template (templates/hall/index.html.j2) escapes every value it prints; only the drawings made
in draw.py (already escaped there) and the JSON kept in <script> elements are passed as Markup.
Both escape with the standard library's ``html.escape`` (``&quot;``, ``&#x27;``), so a text reads
the same bytes in the SVG and in the HTML around it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from html import escape

import jinja2
from markupsafe import Markup

from zcube_deploy.hall.draw import floor_svg, rack_detail_html, ruler_defs
from zcube_deploy.resources import data_dir


def _escaped(value) -> Markup:
    """Every value the template prints, escaped as the drawings escape (Markup stays as it is)."""
    if hasattr(value, "__html__"):
        return value
    return Markup(escape(str(value), quote=True))


@lru_cache(maxsize=None)
def environment() -> jinja2.Environment:
    """The hall's templates (templates/hall/): autoescape on, StrictUndefined, block lines trimmed."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates") / "hall")),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        finalize=_escaped,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _script_json(obj) -> Markup:
    """JSON safe inside a <script type="application/json"> element."""
    return Markup(json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/"))


def render_page(model: dict) -> str:
    """The whole self-contained page."""
    model = {**model, "device_findings": _device_findings(model), "_row_of": {r["name"]: r["row"] for r in model["racks"]}}
    rows = []
    for row in model["rows"]:
        racks = sorted((r for r in model["racks"] if r["row"] == row["name"]), key=lambda r: (r["position"], r["name"]))
        names = [r["name"] for r in racks]
        details = {r["name"]: rack_detail_html(r, model, names[i - 1] if i else None, names[i + 1] if i + 1 < len(names) else None)
                   for i, r in enumerate(racks)}
        rows.append({"name": row["name"], "findings": row["findings"], "json": _script_json(details)})
    device_index = {d["name"]: r["name"] for r in model["racks"] for d in r["devices"]}
    racks_index = {r["name"]: r["row"] for r in model["racks"]}
    return environment().get_template("index.html.j2").render(
        m=model, s=model["summary"], floor=Markup(floor_svg(model)), rows=rows,
        rulers=Markup(ruler_defs([r["u_height"] for r in model["racks"]])),
        device_index=_script_json(device_index), racks_index=_script_json(racks_index))


def _device_findings(model: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in model["findings"]:
        for d in f["devices"]:
            out.setdefault(d, []).append(f["id"])
    return out
