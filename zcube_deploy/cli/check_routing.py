"""`zcube check-routing DIR`: prove routing from the rendered files alone."""

from __future__ import annotations

import sys

import click

from zcube_deploy.cli.common import cli, handle_errors, out, print_json


def print_proof(directory: str, r: dict) -> None:
    out.print(f"routing proof from {directory} ({r['mode']}): {r['switches']} switches, {r['ports']} NIC ports")
    out.print(f"  NIC port pairs their tables route: {r['pairs_total']:,}; walked {r['checked']:,}; "
              f"delivered {r['delivered']:,}; at most {r['max_switches']} switches per path; path lengths {r['path_lengths']}")
    from zcube_deploy.render.routing_proof import island_lines  # start-up time (the designs' planners)

    for line in island_lines(r):
        out.print(f"  {line}")
    if r.get("not_read"):
        shown = ", ".join(r["not_read"][:5]) + (f" (+{len(r['not_read']) - 5} more)" if len(r["not_read"]) > 5 else "")
        n = len(r["not_read"])
        out.print(f"  not read: {n} file{'' if n == 1 else 's'} in configs/ and hosts/ that manifest.json does not list: {shown}",
                  markup=False, highlight=False)
    for f in r["failures"]:
        out.print(f"  [red]FAIL[/] {f}")
    out.print("[green]routing proof passed[/]" if r["ok"] else "[red]routing proof FAILED[/]")


@cli.command("check-routing")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--samples", type=int, default=None, help="walk this many seeded random pairs (default: all when <= 200,000)")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@handle_errors
def check_routing_cmd(directory: str, samples: int | None, seed: int, as_json: bool) -> None:
    """Prove routing from the rendered files alone: walk packets between the NIC ports of each island (a design's
    switches) against its design's paths."""
    from zcube_deploy.render.routing_proof import prove_routing  # start-up time (the designs' planners)

    r = prove_routing(directory, samples=samples, seed=seed)
    if as_json:
        print_json(r)
    else:
        print_proof(directory, r)
    if not r["ok"]:
        sys.exit(1)
