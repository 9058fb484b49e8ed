"""Printing the results that several commands share (plan summary, render, cabling, hall, verify)."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

from zcube_deploy.cli.common import err, out, print_wide, table_width


def print_fitting(wide: Table, narrow) -> None:
    """A wide table where it fits, else the same content in narrower tables (fewer columns, or one row
    per item), so that a header is never cut. The width is ``table_width()``: the terminal's, or piped
    (a file, a CI log) COLUMNS when set, else 150. ``narrow`` is a callable: its tables are built only
    when needed."""
    if Measurement.get(out, out.options.update_width(10_000), wide).maximum <= table_width():  # its natural width
        print_wide(wide)
    else:
        for t in narrow():
            print_wide(t)


def _summary_end(t: Table, s: dict, path: Path | None) -> None:
    """The rows every design's plan summary ends with (routing, pools, invariants), the table, why this shape."""
    t.add_row("routing", s["routing"])
    t.add_row("pools", ", ".join(f"{k} {v['used']:,}/{v['size']:,}" for k, v in s["pools"].items()))
    inv = list(s["invariants"].values())
    t.add_row("invariants", f"{inv.count('passed')} passed, {inv.count('not_applicable')} not applicable, {inv.count('failed')} failed")
    out.print(t)
    out.print("[bold]why this shape:[/]")
    for r in s["sizing_reasons"]:
        out.print(f"  - {r}")
    if path:
        out.print(f"plan written to [bold]{path}[/]")


def print_roft_summary(s: dict, path: Path | None) -> None:
    t = Table(title=f"ROFT plan: {s['cluster']}", show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    t.add_row("GPUs", f"{s['gpus_installed']:,} installed / {s['gpus_capacity']:,} capacity")
    t.add_row("servers", f"{s['servers_installed']:,} installed / {s['servers_capacity']:,} capacity, {s['pods']} pod(s) of "
              f"{s['servers_per_pod']}")
    t.add_row("planes", str(s["planes"]))
    t.add_row("switches", f"{s['switches']} {s['switch_model']} ({s['leaves_per_plane']} rail leaves + {s['spines_per_plane']} spines "
              "per plane)")
    t.add_row("leaf", f"{s['host_ports_per_leaf']} host ports, {s['uplinks_per_leaf']} x {s['fabric_speed']} uplinks, "
              f"{s['links_per_pair']} per spine")
    t.add_row("host cables", f"{s['host_cables']:,}")
    t.add_row("fabric cables", f"{s['fabric_cables']:,}")
    t.add_row("cages", "; ".join(f"{r} host {c['host'][0]}-{c['host'][1]}, " * bool(c["host"][1]) + f"{r} " * (not c["host"][1])
                                 + f"fabric {c['fabric'][0]}-{c['fabric'][1]}" for r, c in s["cages"].items()))
    _summary_end(t, s, path)


def print_plan_summary(summary: dict, path: Path | None) -> None:
    s = summary
    if s.get("design") == "roft":
        print_roft_summary(s, path)
        return
    t = Table(title=f"ZCube plan: {s['cluster']}", show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    t.add_row("GPUs", f"{s['gpus_installed']:,} installed / {s['gpus_capacity']:,} capacity")
    t.add_row("servers", f"{s['servers_installed']:,} installed / {s['servers_capacity']:,} capacity")
    t.add_row("planes", str(s["planes"]))
    t.add_row("S / K / m", f"{s['S']} / {s['K']} / {s['m']}  (R = {s['R']} logical ports per switch)")
    t.add_row("switches", f"{s['switches']} {s['switch_model']} ({s['switches_per_group']} odd + {s['switches_per_group']} even per plane)"
              + ("" if s["rail_switches"] else "  [yellow]odd switches are not rail switches[/]"))
    t.add_row("host cables", f"{s['host_cables']:,}")
    t.add_row("fabric cables", f"{s['fabric_cables']:,}")
    p = s["ports"]
    t.add_row("ports", f"{p['host_used']:,} host + {p['fabric_used']:,} fabric used, {p['host_reserved_for_growth']:,} host reserved for growth, "
              f"{p['free']:,} free of {p['total']:,}")
    t.add_row("cages", f"host {p['host_cages'][0]}-{p['host_cages'][1]}, fabric {p['fabric_cages'][0]}-{p['fabric_cages'][1]}")
    _summary_end(t, s, path)


def print_render(result: dict, out_dir) -> None:
    out.print(f"rendered {result['switches']} switch configs to [bold]{Path(out_dir) / 'configs'}[/] and "
              f"{result['servers']} netplan files to [bold]{Path(out_dir) / 'hosts'}[/]; self-check passed; "
              f"manifest {Path(out_dir) / 'manifest.json'}")
    print_render_tidy(result, out_dir)


def print_render_tidy(result: dict, out_dir) -> None:
    """What a render did to the previous render's files (render/owned.py), and what in configs/ and hosts/ is not
    the tool's (a warning, on stderr)."""
    removed, foreign = result.get("removed", []), result.get("foreign", [])
    d = escape(str(Path(out_dir)))
    if removed:
        per = ", ".join(f"{n} in {sub}/" for sub, n in result["removed_by_folder"].items())
        out.print(f"removed {_files(len(removed))} of the previous render that this plan does not have ({per}; "
                  f"the previous manifest listed them)", highlight=False)
    if result.get("previous_unreadable"):
        err.print(f"[yellow]warning:[/] the previous {d}/manifest.json could not be read: no file of the previous "
                  "render was removed", highlight=False)
    if foreign:
        shown = escape(", ".join(foreign[:5])) + (f" (+{len(foreign) - 5} more)" if len(foreign) > 5 else "")
        err.print(f"[yellow]warning:[/] {_files(len(foreign))} in {d}/configs and {d}/hosts in no render manifest (not "
                  f"written by zcube): kept, but whatever applies the folder would apply them too: {shown}", highlight=False)


def _files(n: int) -> str:
    return f"{n} file" + ("" if n == 1 else "s")


def print_cabling(result: dict, out_dir) -> None:
    r = result
    t = r["bom"]["totals"]
    where = (f"{Path(out_dir) / 'cabling'}/ (summary.xlsx + {len(r['workbooks']) - 1} row workbooks)" if r["split"]
             else str(Path(out_dir) / "cabling.xlsx"))
    out.print(f"cabling: [bold]{where}[/] ({len(r['sheets']) - 3} cut sheets + Summary, BOM, Fabric); "
              f"{t['cables']:,} cables ({t['copper_cables']:,} copper, {t['aoc_cables']:,} AOC, {t['fibre_cables']:,} fibre), "
              f"{t['optical_modules']:,} optics; cables.csv, labels.csv ({r['labels']:,} labels), netbox-cables.csv, topology.dot")


def print_hall(result: dict, with_verify: bool = False) -> None:
    r = result
    extra = f"; {r['findings']} verify findings in {r['racks_with_findings']} racks" if with_verify else ""
    out.print(f"hall: [bold]{r['path']}[/] ({r['racks']} racks in {r['rows']} rows, {r['bundles']:,} {r['bundle_level']}-to-"
              f"{r['bundle_level']} cable bundles, {r['bytes'] / 2**20:.1f} MiB{extra})")


def print_catalog_changes(changes: list[str]) -> None:
    """What an accepted cabling catalog changes against the plan's (stderr: --json output stays clean)."""
    if changes:
        err.print(f"[yellow]warning[/] the cabling catalog is not the plan's ({len(changes)} difference"
                  f"{'s' if len(changes) != 1 else ''}); used as asked (--accept-catalog-change):", highlight=False)
    for line in changes:
        err.print(f"  {line}", highlight=False, markup=False)


def print_verify(result: dict) -> None:
    findings, summary, errors, paths = result["findings"], result["summary"], result["errors"], result["paths"]
    title = f"verify: {summary['switches_verified']} switches, {summary['findings']} findings"
    if summary["by_kind"]:
        t = Table(title=title, title_justify="left")
        t.add_column("kind")
        t.add_column("count", justify="right")
        for k, v in summary["by_kind"].items():
            t.add_row(k, str(v))
        out.print(t)
    else:  # nothing to count: an empty "kind | count" table said nothing the title does not
        out.print(title)
    if summary["worst_racks"]:
        out.print("worst racks: " + ", ".join(f"{r} ({n})" for r, n in summary["worst_racks"]))
    from zcube_deploy.verify.classify import notes, to_list  # imported when printing verify's result only

    shown = to_list(findings)  # (the not_checked ones are the notes below, grouped)
    for f in shown[:30]:
        out.print(f"[bold]{f['kind']}[/] {f['id']} {', '.join(f['cables'])}: {f['instruction']}")
    if len(shown) > 30:
        out.print(f"... {len(shown) - 30} more in verify.json / verify.xlsx")
    for name, e in sorted(errors.items()):
        out.print(f"[red]unreachable[/] {name}: {e}", markup=True)
    if paths:
        out.print(f"reports: {paths[0]}, {paths[1]}")
    for line in notes(summary):
        out.print(f"[yellow]note[/] {line}", markup=True, highlight=False)
    if "bgp_sessions" in summary:
        b = summary["bgp_sessions"]
        unseen = f", {b['unobserved']} not checked (state observed at neither end)" if b.get("unobserved") else ""
        out.print(f"eBGP sessions: {b['established']} of {b['planned']} planned are Established{unseen}")
    if summary.get("drained"):
        d = summary["drained"]
        out.print(f"drained (zcube drain records): {d['ports']} ports; {d['findings_set_aside']} findings on them set aside as expected "
                  f"({', '.join(f'{k} {v}' for k, v in d['by_kind'].items()) or 'none'})")
    if summary.get("not_checked_switches"):
        n, k = summary["not_checked_switches"], summary["by_kind"]["not_checked"]
        out.print(f"[yellow]not clean: planned checks could not run on {n} switch{'es' if n != 1 else ''} "
                  f"({k} not_checked finding{'s' if k != 1 else ''}; see the notes above)[/]", highlight=False)
    if not findings and not errors:
        aside = " apart from the drained ports above" if summary.get("drained") else ""
        out.print(f"[green]clean: every planned check ran and passed (every planned port sees its planned neighbour{aside})[/]")


def print_section_changes(rows: list[dict], switches: int | None = None) -> None:
    """A dry run's diffs summed up per kind of section (push/preview.py; the diff files hold every line); with
    ``switches`` (a fleet's dry run) the rows carry how many of them each kind touches."""
    title = "lines the push would add and remove, per kind of section"
    cols = ("section", "sections", "add", "remove")
    if switches is not None:
        title = f"lines to add and remove per kind of section, {switches} changing switch{'' if switches == 1 else 'es'}"
        cols = ("section", "switches", "sections", "add", "remove")
    t = Table(title=title, title_justify="left")
    for col in cols:
        t.add_column(col, justify="left" if col == "section" else "right")
    for r in rows:
        t.add_row(*(escape(str(r[c])) for c in cols))
    out.print(t)
