"""`zcube lab drift`: hand edits typed on a running lab's switches, so the audit can be tried (docs/audit.md).

The platform's simulator draws the edits over the rendered configs (seeded, one of audit's kinds each: a port
shut, a stray or missing route, a changed, stray or missing line in a planned port) and types them over SSH in
config mode, as an operator would. What was typed goes to ``drifts.json`` beside the lab's lab.json: the findings
`zcube audit` must then report (switch, kind, section), so a user can compare. A switch that could not be reached
is said so per drift (``applied: false``), never counted as drifted.
"""

from __future__ import annotations

import json
from pathlib import Path

from zcube_deploy.access import endpoints as lab_endpoints
from zcube_deploy.access import lab_credentials
from zcube_deploy.audit.run import AuditOptions, intended_configs
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.plan.io import wiring_identity
from zcube_deploy.platforms import platform_module, simulator
from zcube_deploy.push.targets import render_manifest
from zcube_deploy.safety import write_private


def drift_kinds(plan: dict) -> tuple[str, ...]:
    """The kinds of hand edit the plan's platform's simulator can type (DRIFT_FAULT_KINDS)."""
    return tuple(simulator(plan["cluster"]["platform"]).DRIFT_FAULT_KINDS)


def parse_kinds(text: str, known: tuple[str, ...]) -> tuple[str, ...]:
    """'all' or a comma-separated list of ``known`` kinds (exit 2 naming the unknown ones)."""
    items = [k.strip() for k in text.split(",") if k.strip()]
    if items == ["all"]:
        return known
    bad = [k for k in items if k not in known]
    if bad or not items:
        raise InputErrors(Problem("--kind", f"{text!r}: unknown kind {', '.join(bad) or '(empty)'}", f"all, or some of {', '.join(known)}"))
    return tuple(dict.fromkeys(items))


def seed_drifts(plan: dict, lab_path: str, configs_dir: Path, count: int, kinds: str = "all", seed: int = 0,
                dry_run: bool = False) -> dict:
    """Draw ``count`` drifts over the plan's rendered configs and type them on the lab (unless ``dry_run``).

    Returns the drifts.json document: {"cluster", "seed", "drifts": [{switch, kind, section, lines, applied}],
    "unreachable": {switch: why}}; written beside lab.json (not on a dry run)."""
    sim = simulator(plan["cluster"]["platform"])
    chosen = parse_kinds(kinds, tuple(sim.DRIFT_FAULT_KINDS))
    endpoints, _ = lab_endpoints(lab_path, None, (wiring_identity(plan),))
    names = sorted(s["name"] for s in plan["switches"])
    missing = [n for n in names if n not in endpoints]
    if missing:
        raise InputErrors(Problem(lab_path, f"the lab does not run {len(missing)} of the plan's switches ({', '.join(missing[:5])}"
                                            f"{', ...' if len(missing) > 5 else ''})", "give the lab.json of a lab started from this plan"))
    intended = intended_configs(AuditOptions(configs_dir), names, platform_module(plan["cluster"]["platform"]).CONFIG_SUFFIX)
    _, problems = render_manifest(plan, configs_dir)
    if problems:
        raise InputErrors(problems, "cannot seed drifts")
    try:
        drifts = sim.plan_drifts(plan, intended, count, seed=seed, kinds=chosen)
    except ValueError as exc:  # more drifts asked for than distinct edits fit the switches
        raise InputErrors(Problem("--count", str(exc), "ask for fewer")) from None
    unreachable = {} if dry_run else sim.apply_drifts_each(endpoints, lab_credentials(), drifts)
    doc = {"cluster": plan["cluster"]["name"], "seed": seed, "kinds": list(chosen), "dry_run": dry_run,
           "drifts": [{"switch": d.switch, "kind": d.kind, "section": d.section, "lines": list(d.lines),
                       "applied": not dry_run and d.switch not in unreachable} for d in drifts],
           "unreachable": dict(sorted(unreachable.items()))}
    if not dry_run:
        write_private(Path(lab_path).parent / "drifts.json", json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return doc


__all__ = ["drift_kinds", "parse_kinds", "seed_drifts"]
