"""`zcube migrate FROM_PLAN TO_PLAN -o DIR`: move a running fabric to another in verified stages (docs/migrate.md)."""

from __future__ import annotations

import click
from rich.table import Table

from zcube_deploy.cli.common import cli, handle_errors, out

STAGE_COLUMNS = ("stage", "units out", "serving", "moved", "removed", "new", "touches", "hours", "roles")


def print_migration(doc: dict, out_dir: str) -> None:
    from zcube_deploy.migrate.report import ALL_ROW, bound_line, suggestion_line, summary_rows, title  # start-up time (the planner, numpy)

    t = Table(title=title(doc), title_justify="left", caption=ALL_ROW, caption_justify="left")
    for col in STAGE_COLUMNS:
        t.add_column(col, justify="left" if col == "stage" else "right")
    for row in summary_rows(doc):
        t.add_row(*row)
    out.print(t)
    out.print(bound_line(doc))
    reused = ", ".join(f"{n} {role}" for role, n in doc["reused_by_role"].items())
    out.print(f"switches: {doc['switches_reused']} reused ({reused}), {doc['switches_retired']} retired, "
              f"{doc['switches_bought']} bought, {doc['switches_reracked']} re-racked; cables kept in place: {doc['cables_kept']}")
    out.print(f"technician hours at {doc['crew_rate_cables_per_hour']:g} cables/hour (uncalibrated): {doc['technician_hours']:.1f}")
    suggestion = suggestion_line(doc)
    if suggestion:
        out.print(suggestion)
    if doc["stage_plans"]["why_not"]:
        out.print(f"[yellow]stage plans not written[/]: {doc['stage_plans']['why_not']}")
    out.print(f"wrote {out_dir}/migrate.json and {doc['stages']} stage folder(s) {out_dir}/stage-NN")


@cli.command("migrate")
@click.argument("from_plan", type=click.Path())
@click.argument("to_plan", type=click.Path())
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False))
@click.option("--capacity-floor", type=float, default=0.75, show_default=True, help="share of the units serving at every stage")
@click.option("--unit", default="server", show_default=True, help="serving unit: server, or N-gpu (instances of N GPUs)")
@click.option("--spares", type=int, default=0, show_default=True, help="spare switches of the same model to use")
@click.option("--crew-rate", type=float, default=30.0, show_default=True, help="cables a crew re-plugs per hour (uncalibrated)")
@handle_errors
def migrate_cmd(from_plan: str, to_plan: str, out_dir: str, capacity_floor: float, unit: str, spares: int, crew_rate: float) -> None:
    """Plan the move from FROM_PLAN (as built) to TO_PLAN in stages of whole serving units; write DIR."""
    from zcube_deploy.migrate.planner import Options
    from zcube_deploy.migrate.run import write_migration

    doc = write_migration(from_plan, to_plan, out_dir, Options(capacity_floor, unit, spares, crew_rate))
    print_migration(doc, out_dir)
