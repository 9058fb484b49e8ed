"""SVG and HTML for the hall page, from the model of model.py (pure: strings in, strings out).

The floor plan is one SVG; rack elevations are one SVG per rack, kept per row as JSON strings in
the page and inserted by the page's script when a rack is opened (a 64k-GPU hall has 2,176
racks and 8,704 devices: drawing them all at load would make the page slow for nothing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

FINDING = "#d40000"
U_PX = 12            # one U in an elevation
ELEV_W = 300         # width of one rack elevation
MAX_DETAIL_BUNDLES = 60   # above this, a rack's bundle table sums the bundles per peer row
PORT_COLOURS = {"host": None, "fabric": None, "reserved": "#b0b0b0", "unused": "#ffffff"}


def e(x) -> str:
    return escape(str(x), quote=True)


def _fmt(v: float) -> str:
    s = f"{v:.1f}"
    return s[:-2] if s.endswith(".0") else s


def _scale(model: dict) -> float:
    """Pixels per metre: the whole hall in about 1,000 x 800 px when it fits, racks at least 44 px wide."""
    fl = model["floor"]
    fit = min(1000.0 / max(fl["width_m"], 1.0), 680.0 / max(fl["depth_m"], 1.0))
    return max(44.0 / fl["rack_pitch_m"], min(fit, 140.0 / fl["rack_pitch_m"]))


def _stroke_width(n: int) -> float:
    return min(1.0 + 0.9 * math.log2(n + 1), 9.0)


# ------------------------------------------------------------------------------------- floor
@dataclass(frozen=True)
class FloorFrame:
    """Where the floor plan puts things: pixels per metre, margins, the racks' drawn size."""

    s: float            # pixels per metre
    left: float         # x of the floor's origin
    top: float          # y of the floor's origin
    width: float
    height: float
    tray_w: float       # an overhead tray's width
    bar_m: int          # the scale bar's length in metres
    rw: float           # a rack's drawn width (the rack pitch)
    rd: float           # a rack's drawn depth
    head_x: float       # x of the rows' head (where the trays start)
    row_level: bool     # bundles join rows, not racks

    def rx(self, r: dict) -> float:
        return self.left + r["x_m"] * self.s

    def ry(self, r: dict) -> float:
        return self.top + r["y_m"] * self.s


def floor_frame(model: dict) -> FloorFrame:
    fl = model["floor"]
    s = _scale(model)
    depth = fl["rack_depth_m"]
    row_level = model["bundle_level"] == "row"
    top = 50.0 + 0.9 * (fl["row_spacing_m"] - depth) * s
    left = 0.9 * s + 40 + (230.0 if row_level else 0.0)
    bar_m = 5 if fl["width_m"] >= 10 else 1
    return FloorFrame(s=s, left=left, top=top, width=max(left + fl["width_m"] * s + 40, left + bar_m * s + 460),
                      height=top + fl["depth_m"] * s + 60, tray_w=0.3 * s, bar_m=bar_m, rw=fl["rack_pitch_m"] * s,
                      rd=depth * s, head_x=left - 0.6 * s, row_level=row_level)


def floor_head(model: dict, f: FloorFrame) -> list[str]:
    """The <svg> element's opening, its title and the scale bar."""
    fl = model["floor"]
    left, s, bar_m = f.left, f.s, f.bar_m
    return [f'<svg xmlns="http://www.w3.org/2000/svg" id="floor" class="floor" width="{_fmt(f.width)}" height="{_fmt(f.height)}" '
            f'viewBox="0 0 {_fmt(f.width)} {_fmt(f.height)}" data-scale-px-per-m="{_fmt(s)}" data-bundle-level="{model["bundle_level"]}">',
            f'<title>{e(model["summary"]["cluster"])}: data hall floor plan</title>',
            # scale bar: 5 m (or 1 m in a small hall)
            f'<g class="scalebar"><line x1="{_fmt(left)}" y1="22" x2="{_fmt(left + bar_m * s)}" y2="22" stroke="#333" stroke-width="2"/>'
            f'<text x="{_fmt(left + bar_m * s + 6)}" y="26" font-size="12">{bar_m} m</text>'
            f'<text x="{_fmt(left + bar_m * s + 50)}" y="26" font-size="12" fill="#555">rack pitch {fl["rack_pitch_m"]:g} m, '
            f'row spacing {fl["row_spacing_m"]:g} m, rack depth drawn {fl["rack_depth_m"]:g} m</text></g>']


def floor_trays(model: dict, f: FloorFrame) -> str:
    """Overhead trays: one along each row (above the racks' rear edge) and one across the rows at their head."""
    out = ['<g class="trays">']
    rows = model["rows"]
    for row in rows:
        y = f.top + row["y_m"] * f.s - f.tray_w - 2
        x1 = f.left + row["x1_m"] * f.s  # the tray runs from the row head to the row end
        out.append(f'<rect class="tray" data-tray="row {e(row["name"])}" x="{_fmt(f.head_x)}" y="{_fmt(y)}" width="{_fmt(x1 - f.head_x)}" '
                   f'height="{_fmt(f.tray_w)}"><title>overhead tray along row {e(row["name"])}</title></rect>')
        out.append(f'<text class="rowlabel" x="{_fmt(f.head_x - f.tray_w - 8)}" y="{_fmt(f.top + row["y_m"] * f.s + f.rd / 2 + 5)}" '
                   f'text-anchor="end" font-size="16" font-weight="bold" data-row="{e(row["name"])}">{e(row["name"])}</text>')
    if len(rows) > 1:
        y0 = f.top + rows[0]["y_m"] * f.s - f.tray_w - 2
        y1 = f.top + rows[-1]["y_m"] * f.s - 2
        out.append(f'<rect class="tray" data-tray="cross" x="{_fmt(f.head_x - f.tray_w)}" y="{_fmt(y0)}" width="{_fmt(f.tray_w)}" '
                   f'height="{_fmt(y1 - y0)}"><title>overhead tray across the rows</title></rect>')
    out.append('</g>')
    return "\n".join(out)


def bundle_ends(model: dict, f: FloorFrame) -> dict[str, tuple[float, float]]:
    """Where a bundle ends: a rack's centre, or (row-level bundles) a point left of the row's head."""
    if f.row_level:
        return {row["name"]: (f.head_x - f.tray_w - 40, f.top + row["y_m"] * f.s + f.rd / 2) for row in model["rows"]}
    return {r["name"]: (f.rx(r) + f.rw / 2, f.ry(r) + f.rd / 2) for r in model["racks"]}


GROUP_OFFSET = {"odd": -1.0, "even": 1.0, "fabric": 0.0, "leaf": -1.0}  # a ROFT leaf's host cables bow as a rail switch's
LABEL_AT = {"odd": 0.9, "even": 0.84, "fabric": 0.5, "leaf": 0.9}  # where along a bundle its count stands (a ROFT leaf as a rail switch)
UTILISATION_COLOURS = ((0.5, "#2e7d32"), (0.8, "#f9a825"), (0.95, "#ef6c00"), (float("inf"), "#6a1b9a"))  # below each bound


def utilisation_colour(u: float) -> str:
    """A fabric bundle's colour under `--traffic`: green below 50 %, amber below 80 %, orange below
    95 %, purple above (red stays for verify findings)."""
    return next(c for bound, c in UTILISATION_COLOURS if u < bound)


def floor_bundles(model: dict, f: FloorFrame) -> tuple[list[str], list[str], list[str]]:
    """(paths, count labels, loop badges) of the floor plan's bundles; a bundle with findings is red,
    thicker, and its path drawn last (on top)."""
    fl, colours, rw, rd, s = model["floor"], model["colours"], f.rw, f.rd, f.s
    centre = bundle_ends(model, f)
    paths, labels, loops = [], [], []
    for b in model["bundles"]:
        util = b.get("utilisation")
        col = FINDING if b["finding_cables"] else (utilisation_colour(util) if util is not None else colours[b["group"]]["stroke"])
        cls = "bundle finding" if b["finding_cables"] else "bundle"
        attrs = (f'id="bundle-{e(b["a"])}-{e(b["b"])}-{b["group"]}" class="{cls}" data-a="{e(b["a"])}" data-b="{e(b["b"])}" '
                 f'data-group="{b["group"]}" data-cable-count="{b["count"]}"')
        if b["finding_cables"]:
            attrs += f' data-finding-cables="{e(" ".join(b["finding_cables"]))}"'
        if util is not None:
            attrs += f' data-utilisation="{util:.3f}"'
        what = "racks" if not f.row_level else "rows"
        tip = f'{b["count"]} {b["group"]} cable{"s" if b["count"] != 1 else ""} between {what} {b["a"]} and {b["b"]}'
        if b["finding_cables"]:
            tip += "; findings on " + ", ".join(b["finding_cables"][:20]) + (" ..." if len(b["finding_cables"]) > 20 else "")
        if util is not None:
            tip += f"; busiest cable at {util:.0%} of its speed (traffic model)"
        sw = _stroke_width(b["count"]) + (2 if b["finding_cables"] else 0)
        (x1, y1), (x2, y2) = centre[b["a"]], centre[b["b"]]
        if b["a"] == b["b"]:
            # cables inside one rack (or one row): a loop badge
            k = {"odd": 0, "even": 1, "fabric": 2}[b["group"]]
            cx, cy = (x1 + rw / 2 - 10, y1 - 0.12 * rd + k * 15) if not f.row_level else (x1 - 14, y1 - 14 + k * 14)
            loops.append(f'<g {attrs}><title>{e(tip)}</title><circle cx="{_fmt(cx)}" cy="{_fmt(cy)}" r="7" fill="white" stroke="{e(col)}" '
                         f'stroke-width="{_fmt(min(sw, 4))}"/><text x="{_fmt(cx - 10)}" y="{_fmt(cy + 4)}" text-anchor="end" font-size="10" '
                         f'class="count">{b["count"]}</text></g>')
            continue
        if f.row_level:
            bulge = 200.0 * math.sqrt(abs(y2 - y1) / max(fl["depth_m"] * s, 1.0)) + 12 + 6 * GROUP_OFFSET[b["group"]]
            cx, cy = min(x1, x2) - bulge, (y1 + y2) / 2
        elif abs(y1 - y2) < 1:
            # same row: from the racks' tops (where cables go up to the tray), arching over the row
            y1 = y2 = y1 - rd / 2
            aisle = (fl["row_spacing_m"] - fl["rack_depth_m"]) * s
            lift = min(0.25 * abs(x2 - x1) + 0.25 * s, 1.6 * aisle) + 0.15 * s * GROUP_OFFSET[b["group"]]
            cx, cy = (x1 + x2) / 2, y1 - lift
        else:
            # across rows: from the upper rack's bottom edge to the lower rack's top edge, bowed sideways
            if y1 > y2:
                (x1, y1), (x2, y2) = (x2, y2), (x1, y1)
            y1, y2 = y1 + rd / 2, y2 - rd / 2
            bow = 0.08 * (y2 - y1) + 0.15 * s * GROUP_OFFSET[b["group"]]
            cx, cy = (x1 + x2) / 2 + (bow if x2 >= x1 else -bow), (y1 + y2) / 2
        paths.append(f'<path {attrs} d="M{_fmt(x1)},{_fmt(y1)} Q{_fmt(cx)},{_fmt(cy)} {_fmt(x2)},{_fmt(y2)}" fill="none" '
                     f'stroke="{e(col)}" stroke-width="{_fmt(sw)}"><title>{e(tip)}</title></path>')
        if not f.row_level:
            # the count where it is readable: at the apex over a row, in the aisle above the lower rack across rows
            t = 0.5 if y1 == y2 else LABEL_AT[b["group"]]
            mx = (1 - t) ** 2 * x1 + 2 * t * (1 - t) * cx + t * t * x2
            my = (1 - t) ** 2 * y1 + 2 * t * (1 - t) * cy + t * t * y2
            labels.append(f'<text class="count" x="{_fmt(mx)}" y="{_fmt(my + 4)}" text-anchor="middle" font-size="11" '
                          f'fill="{e(col)}" data-bundle="bundle-{e(b["a"])}-{e(b["b"])}-{b["group"]}">{b["count"]}</text>')
    # finding bundles last so that they are on top
    paths.sort(key=lambda p: ' finding"' in p)
    return paths, labels, loops


def rack_tip(r: dict, model: dict) -> str:
    """A rack's hover text: where it stands, what it holds, its cabling progress and findings."""
    h = r["holds"]
    tip = [f'rack {r["name"]} (row {r["row"]}, position {r["position"]}, {r["role"]}, {r["u_height"]}U, {r["u_free"]}U free)',
           f'{h["servers"]} servers, {h["odd"]} odd switches, {h["even"]} even switches']
    if r["progress"]:
        p = r["progress"]
        tip.append(f'cabling: {p["installed"]}/{p["cables"]} installed, {p["checked"]}/{p["cables"]} checked, {p["issues"]} issues')
    if r["findings"]:
        fx = {f["id"]: f for f in model["findings"]}
        tip.append(f'{len(r["findings"])} finding(s):')
        tip += [f'- {fx[i]["instruction"]}' for i in r["findings"][:12]]
        if len(r["findings"]) > 12:
            tip.append(f'... and {len(r["findings"]) - 12} more')
    return "\n".join(tip)


def floor_rack(r: dict, model: dict, f: FloorFrame, fs: float) -> str:
    """One rack on the floor plan: its outline, name, contents, progress bar and findings badge."""
    colours, rw, rd = model["colours"], f.rw, f.rd
    x, y = f.rx(r), f.ry(r)
    h = r["holds"]
    cls = ["rack", r["role"]]
    if r["switch_rack"]:
        cls.append("switch-rack")
    if r["findings"]:
        cls.append("finding")
    attrs = (f'id="rack-{e(r["name"])}" class="{" ".join(cls)}" data-rack="{e(r["name"])}" data-row="{e(r["row"])}" '
             f'data-servers="{h["servers"]}" data-odd="{h["odd"]}" data-even="{h["even"]}" data-findings="{len(r["findings"])}"')
    if r["progress"]:
        attrs += f' data-checked="{r["progress"]["checked"]}" data-cables="{r["progress"]["cables"]}"'
    fill = "#ffd9d9" if r["findings"] else ("#fff8e6" if r["switch_rack"] else "#fbfbfb")
    stroke = FINDING if r["findings"] else ("#7a5a00" if r["switch_rack"] else "#666")
    swd = 3 if r["findings"] else (2 if r["switch_rack"] else 1)
    g = [f'<g {attrs} tabindex="0"><title>{e(rack_tip(r, model))}</title>',
         f'<rect x="{_fmt(x + 1)}" y="{_fmt(y)}" width="{_fmt(rw - 2)}" height="{_fmt(rd)}" rx="2" fill="{fill}" stroke="{stroke}" '
         f'stroke-width="{swd}"/>',
         f'<text x="{_fmt(x + rw / 2)}" y="{_fmt(y + fs + 3)}" text-anchor="middle" font-size="{_fmt(fs)}" font-weight="bold">{e(r["name"])}</text>']
    line_y = y + 2 * fs + 6
    if h["servers"]:
        g.append(f'<text x="{_fmt(x + rw / 2)}" y="{_fmt(line_y)}" text-anchor="middle" font-size="{_fmt(fs - 1)}">{h["servers"]} srv</text>')
        line_y += fs + 2
    for grp, letter in (("odd", "O"), ("even", "E")):
        if h[grp]:
            c = colours[grp]
            g.append(f'<rect x="{_fmt(x + 4)}" y="{_fmt(line_y - fs + 1)}" width="{_fmt(rw - 8)}" height="{_fmt(fs + 2)}" fill="{c["fill"]}" '
                     f'stroke="{e(c["stroke"])}" stroke-width="0.8"/><text x="{_fmt(x + rw / 2)}" y="{_fmt(line_y)}" text-anchor="middle" '
                     f'font-size="{_fmt(fs - 1)}">{h[grp]} {letter}-sw</text>')
            line_y += fs + 4
    if r["switch_rack"]:
        g.append(f'<text x="{_fmt(x + rw / 2)}" y="{_fmt(y + rd - 5)}" text-anchor="middle" font-size="{_fmt(fs - 2)}" fill="#7a5a00">'
                 f'switch rack</text>')
    elif not h["servers"]:
        g.append(f'<text x="{_fmt(x + rw / 2)}" y="{_fmt(line_y)}" text-anchor="middle" font-size="{_fmt(fs - 1)}" fill="#888">'
                 f'empty</text>')
    if r["progress"] and r["progress"]["cables"]:
        p = r["progress"]
        bw = rw - 8
        g.append(f'<g class="progress"><rect x="{_fmt(x + 4)}" y="{_fmt(y + rd - 20)}" width="{_fmt(bw)}" height="6" fill="#eee" stroke="#999" '
                 f'stroke-width="0.5"/><rect x="{_fmt(x + 4)}" y="{_fmt(y + rd - 20)}" width="{_fmt(bw * p["installed"] / p["cables"])}" '
                 f'height="6" fill="#9fd39f"/><rect x="{_fmt(x + 4)}" y="{_fmt(y + rd - 20)}" width="{_fmt(bw * p["checked"] / p["cables"])}" '
                 f'height="6" fill="#2e8b2e"/></g>')
    if r["findings"]:
        g.append(f'<circle cx="{_fmt(x + 3)}" cy="{_fmt(y + 1)}" r="8" fill="{FINDING}"/><text x="{_fmt(x + 3)}" y="{_fmt(y + 5)}" '
                 f'text-anchor="middle" font-size="11" font-weight="bold" fill="white">{len(r["findings"])}</text>')
    g.append('</g>')
    return "".join(g)


def floor_svg(model: dict) -> str:
    """The floor plan, in steps: frame, head and scale bar, trays, bundles, racks, counts on top."""
    f = floor_frame(model)
    out = floor_head(model, f)
    out.append(floor_trays(model, f))
    paths, labels, loops = floor_bundles(model, f)
    out.append('<g class="bundles">' + "".join(paths) + '</g>')
    fs = max(9.0, min(13.0, f.rw / 5.5))
    out.append('<g class="racks">')
    out.extend(floor_rack(r, model, f, fs) for r in model["racks"])
    out.append('</g>')
    out.append('<g class="counts">' + "".join(labels) + "".join(loops) + '</g>')
    out.append('</svg>')
    return "\n".join(out)


# ---------------------------------------------------------------------------------- elevation
@dataclass(frozen=True)
class ElevFrame:
    """Where one rack's elevation draws: the U count, the head's height, the devices' left edge and width."""
    uh: int
    head: int = 28
    x0: int = 28
    w: int = ELEV_W - 28 - 6

    def top_of(self, u: int, height: int) -> float:
        """The y of the top of a device at U ``u`` (its lowest U) that is ``height`` U high."""
        return self.head + (self.uh - (u + height - 1)) * U_PX


def rack_elevation_svg(rack: dict, model: dict) -> str:
    """Front view of one rack by U, in steps: head and ruler, the empty U, then each device (name, model,
    port use of a switch, its findings)."""
    fx = {f["id"]: f for f in model["findings"]}
    fr = ElevFrame(rack["u_height"])
    uh, x0 = fr.uh, fr.x0
    h = fr.head + uh * U_PX + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="elevation" id="elev-{e(rack["name"])}" data-rack="{e(rack["name"])}" '
           f'width="{ELEV_W}" height="{h}" viewBox="0 0 {ELEV_W} {h}">',
           f'<text x="{x0}" y="18" class="rn{" bad" if rack["findings"] else ""}">{e(rack["name"])}</text>'
           f'<text x="{ELEV_W - 6}" y="18" class="ru">{uh}U, {rack["u_free"]}U free</text>',
           f'<use href="#u-ruler-{uh}"/>']
    cg = model["summary"]["cages"]
    cages = f'cages: host {_span(cg["host"])}, fabric {_span(cg["fabric"])}' + (f', unused {_span(cg["unused"])}' if cg["unused"] else "") + \
        (f' ({cg["lanes_per_cage"]} x {cg["speed"]} per cage)' if cg["lanes_per_cage"] else "")
    out.extend(_elev_empty(rack, fr))
    out.extend(_elev_device(d, [fx[i] for i in model["device_findings"].get(d["name"], [])], model["colours"], cages, fr)
               for d in rack["devices"])
    out.append('</svg>')
    return "".join(out)


def _elev_empty(rack: dict, fr: ElevFrame) -> list[str]:
    """One path over every empty U of the rack (none when it is full)."""
    occupied = set()
    for d in rack["devices"]:
        occupied.update(range(d["u"], d["u"] + d["height"]))
    empty = [u for u in range(1, fr.uh + 1) if u not in occupied]
    if not empty:
        return []
    d = "".join(f"M{fr.x0 + 2},{_fmt(fr.top_of(u, 1) + 1)}h{fr.w - 4}v{U_PX - 2}h{-(fr.w - 4)}z" for u in empty)
    return [f'<path class="empty-u" data-empty-u="{_ranges(empty)}" d="{d}"><title>empty: U{e(_ranges(empty))}</title></path>']


def _elev_device(d: dict, bad: list[dict], colours: dict, cages: str, fr: ElevFrame) -> str:
    """One device of the elevation: its body with a tooltip, name, model, a switch's port bar, its finding count."""
    x0, w = fr.x0, fr.w
    y = fr.top_of(d["u"], d["height"])
    hh = d["height"] * U_PX
    tip = [f'{d["name"]} ({d["model"]}) at U{d["u"]}' + (f'-U{d["u"] + d["height"] - 1}' if d["height"] > 1 else "")]
    if d["kind"] == "switch":
        p = d["ports"]
        tip.append(f'{d["group"]} switch, plane {d["plane"]}; ports: {p["host"]} host, {p["fabric"]} fabric, '
                   f'{p["reserved"]} reserved, {p["unused"]} unused')
        tip.append(cages)
        fill = f' fill="{colours[d["group"]]["fill"]}"'
    else:
        fill = ""
    tip += [f'finding {f["kind"]}: {f["instruction"]}' for f in bad[:10]]
    cls = f'device {d["kind"]}' + (" finding" if bad else "")
    attrs = f'class="{cls}" data-device="{e(d["name"])}" data-kind="{d["kind"]}" data-u="{d["u"]}" data-height="{d["height"]}"'
    if d["kind"] == "switch":
        attrs += f' data-group="{d["group"]}"' + "".join(f' data-ports-{k}="{v}"' for k, v in d["ports"].items())
    g = [f'<g {attrs}><title>{e(chr(10).join(tip))}</title>',
         f'<rect class="body" x="{x0 + 1}" y="{_fmt(y + 0.5)}" width="{w - 2}" height="{hh - 1}"{fill}/>',
         f'<text x="{x0 + 5}" y="{_fmt(y + min(hh - 3, 12))}" class="dn">{e(d["name"])}</text>']
    if hh >= 24:
        g.append(f'<text x="{x0 + 5}" y="{_fmt(y + min(23, hh - 3))}" class="dm">{e(d["model"])}</text>')
    if d["kind"] == "switch":
        g.extend(_elev_ports(d, colours, y, hh, fr))
    if bad:
        g.append(f'<text x="{x0 + w - 6}" y="{_fmt(y + min(hh - 3, 12))}" font-size="10" text-anchor="end" fill="{FINDING}" '
                 f'font-weight="bold">{len(bad)} finding{"s" if len(bad) != 1 else ""}</text>')
    g.append('</g>')
    return "".join(g)


def _elev_ports(d: dict, colours: dict, y: float, hh: int, fr: ElevFrame) -> list[str]:
    """A switch's port-use bar (host, fabric, reserved, unused in proportion) and its counts as text."""
    p = d["ports"]
    total = sum(p.values()) or 1
    bx, bw = fr.x0 + 125, fr.w - 130
    by = y + 4
    segs = []
    cx = bx
    for k in ("host", "fabric", "reserved", "unused"):
        if not p[k]:
            continue
        c = colours["odd" if k == "host" and d["group"] == "odd" else "even"]["stroke"] if k == "host" else \
            (colours["fabric"]["stroke"] if k == "fabric" else PORT_COLOURS[k])
        ww = bw * p[k] / total
        segs.append(f'<rect class="ports-{k}" x="{_fmt(cx)}" y="{_fmt(by)}" width="{_fmt(ww)}" height="7" fill="{e(c)}" '
                    f'stroke="#555" stroke-width="0.4"/>')
        cx += ww
    g = ["".join(segs)]
    words = [f"{p[k]} {k}" for k in ("host", "fabric", "reserved", "unused") if p[k]]
    if hh >= 36:
        g.append(f'<text x="{_fmt(bx)}" y="{_fmt(by + 17)}" font-size="8.5">host {p["host"]} · fabric {p["fabric"]}</text>'
                 f'<text x="{_fmt(bx)}" y="{_fmt(by + 27)}" font-size="8.5">reserved {p["reserved"]} · unused {p["unused"]}</text>')
    elif hh >= 24:
        g.append(f'<text x="{_fmt(bx)}" y="{_fmt(by + 16)}" font-size="7.5">{" · ".join(words)}</text>')
    return g


def _span(v) -> str:
    """[1, 64] -> '1-64'; None -> '-'."""
    if not v:
        return "-"
    return f"{v[0]}-{v[1]}" if isinstance(v, (list, tuple)) and len(v) == 2 and v[0] != v[1] else str(v[0] if isinstance(v, (list, tuple)) else v)


def _ranges(us: list[int]) -> str:
    """[1, 2, 3, 7] -> '1-3,7'"""
    out, start, prev = [], us[0], us[0]
    for u in us[1:] + [None]:
        if u is not None and u == prev + 1:
            prev = u
            continue
        out.append(f"{start}-{prev}" if prev > start else str(start))
        if u is not None:
            start = prev = u
    return ",".join(out)


def ruler_defs(heights: list[int]) -> str:
    """The empty rack frame with its U numbers, once per rack height (elevations <use> it)."""
    head, x0 = 28, 28
    w = ELEV_W - x0 - 6
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="0" height="0" style="position:absolute" aria-hidden="true"><defs>']
    for uh in sorted(set(heights)):
        out.append(f'<g id="u-ruler-{uh}"><rect x="{x0}" y="{head}" width="{w}" height="{uh * U_PX}" fill="#f4f4f4" stroke="#333" '
                   f'stroke-width="1.5"/><g font-size="8" text-anchor="end" fill="#888">')
        out.append("".join(f'<text x="{x0 - 4}" y="{head + (uh - u) * U_PX + U_PX - 3}">{u}</text>' for u in range(1, uh + 1)))
        out.append('</g></g>')
    out.append('</defs></svg>')
    return "".join(out)


def rack_detail_html(rack: dict, model: dict, prev: str | None = None, nxt: str | None = None) -> str:
    """One rack's elevation with its bundles and findings: the fragment the page shows on click."""
    fx = {f["id"]: f for f in model["findings"]}
    h = rack["holds"]
    nav = (f'<a href="#rack={e(prev)}">&#9664; {e(prev)}</a>' if prev else '<span></span>') + \
        f'<span>row {e(rack["row"])}, position {rack["position"]}</span>' + \
        (f'<a href="#rack={e(nxt)}">{e(nxt)} &#9654;</a>' if nxt else '<span></span>')
    parts = [f'<div class="rack-detail{" finding" if rack["findings"] else ""}" data-rack="{e(rack["name"])}">',
             f'<div class="nav">{nav}</div>',
             rack_elevation_svg(rack, model),
             f'<div class="rack-info"><p>{h["servers"]} servers, {h["odd"]} odd and {h["even"]} even switches</p>']
    if rack["progress"]:
        p = rack["progress"]
        parts.append(f'<p>cabling: {p["installed"]}/{p["cables"]} installed, {p["checked"]}/{p["cables"]} checked, {p["issues"]} issues</p>')
    if rack["findings"]:
        parts.append('<ul class="findings">' + "".join(
            f'<li><b>{e(fx[i]["kind"])}</b> {e(fx[i]["instruction"])}</li>' for i in rack["findings"]) + '</ul>')
    bundles = rack["bundles"]
    if len(bundles) > MAX_DETAIL_BUNDLES:
        # a switch rack of a big hall: the bundles with findings one by one, the others summed per peer row
        row_of = model["_row_of"]
        per_row: dict[tuple, list[int]] = {}
        kept = [b for b in bundles if b["finding_cables"]]
        for b in bundles:
            if not b["finding_cables"]:
                acc = per_row.setdefault((row_of[b["peer"]], b["group"]), [0, 0])
                acc[0] += b["count"]
                acc[1] += 1
        bundles = kept + [{"peer": f"row {r} ({n} racks)", "group": g, "count": c, "finding_cables": []}
                          for (r, g), (c, n) in sorted(per_row.items())]
    if bundles:
        parts.append(f'<table class="bundles"><tr><th>to {"rack" if bundles is rack["bundles"] else "rack or row"}</th><th>group</th>'
                     '<th>cables</th></tr>' + "".join(
                         f'<tr class="{b["group"]}{" finding" if b["finding_cables"] else ""}" data-peer="{e(b["peer"])}" data-group="{b["group"]}" '
                         f'data-cable-count="{b["count"]}"><td>{e(b["peer"])}</td><td>{b["group"]}</td><td>{b["count"]}'
                         + (f' <span class="bad">({e(", ".join(b["finding_cables"]))})</span>' if b["finding_cables"] else "") + '</td></tr>'
                         for b in bundles) + '</table>')
    parts.append('</div></div>')
    return "".join(parts)
