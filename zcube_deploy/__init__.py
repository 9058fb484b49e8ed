"""zcube-deploy: plan, render, cable, push and verify ZCube GPU-cluster fabrics.

The public Python API: the same work as the `zcube` commands, without printing. Each function
takes a plan as the dict :func:`plan_inventory` returns or as the path of a plan.json (or of the
folder holding it). User errors raise :class:`zcube_deploy.errors.InputErrors` (a list of problems
with data paths and hints); see docs/api.md for a worked example. Each function imports what it runs
inside itself (start-up time: ``import zcube_deploy``, which every submodule import runs first,
stays free of the planner, napalm, asyncssh and openpyxl).

The names say what each call does and stay clear of the subpackages of the same words
(``zcube_deploy.plan``, ``zcube_deploy.render``, ...):

==========================  ========================  =================================================
function                    command                   what it returns
==========================  ========================  =================================================
:func:`plan_inventory`      ``zcube plan``            the plan (a dict), written to DIR/plan.json if asked
:func:`render_configs`      ``zcube render``          the manifest and counts (files in DIR/configs, hosts)
:func:`write_cabling`       ``zcube cabling``         the BOM, sheets and files written
:func:`push_configs`        ``zcube push``            the push report (per switch status)
:func:`verify_network`      ``zcube verify``          findings, summary, unreachable switches
:func:`compare_designs`     ``zcube compare``         ZCube against HPN, ROFT and Rail-only (a design comparison)
:func:`analyze_failures`    ``zcube analyze``         what failures cost (failure analysis, not fault injection)
==========================  ========================  =================================================
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zcube_deploy.version import __version__

PlanLike = dict | str | Path
"""A plan dict, or the path of a plan.json (or of the folder holding one)."""

__all__ = ["__version__", "analyze_failures", "compare_designs", "plan_inventory", "push_configs", "render_configs",
           "verify_network", "write_cabling"]


def _plan(plan: PlanLike, fields=None) -> dict:
    if isinstance(plan, dict):
        return plan
    from zcube_deploy.workflow import open_plan

    return open_plan(str(plan), fields)


def _str(path: str | Path | None) -> str | None:
    return str(path) if path else None


def plan_inventory(inventory: str | Path, out_dir: str | Path | None = None) -> dict:
    """Validate an inventory YAML file and plan the fabric; write DIR/plan.json when ``out_dir`` is given.

    Raises :class:`~zcube_deploy.errors.InputErrors` listing every problem of the inventory."""
    from zcube_deploy import workflow

    plan = workflow.plan_inventory(inventory)
    if out_dir is not None:
        workflow.write_plan(plan, out_dir)
    return plan


def render_configs(plan: PlanLike, out_dir: str | Path, only: str | None = None, jobs: int | None = None) -> dict:
    """Render switch configs (DIR/configs) and server netplan files (DIR/hosts), self-checked, and DIR/manifest.json.

    ``only``: comma-separated globs on switch/server names, or ``rack:GLOB``. Returns
    ``{"manifest": ..., "switches": n, "servers": n, "removed": [...], "removed_by_folder": {...}, "previous_unreadable": bool,
    "foreign": [...]}``
    (the previous render's files this one removed, and the files in DIR/configs and DIR/hosts no manifest lists, kept:
    docs/render.md); raises RenderError when a config does not match the plan."""
    from zcube_deploy import workflow
    from zcube_deploy.render import PLAN_FIELDS

    return workflow.render(_plan(plan, PLAN_FIELDS), out_dir, only, jobs)


def write_cabling(plan: PlanLike, out_dir: str | Path, catalog: str | Path | None = None, accept_catalog_change: bool = False) -> dict:
    """Cut sheets (DIR/cabling.xlsx), BOM, cables.csv, labels.csv, netbox-cables.csv and topology.dot.

    ``catalog``: a cabling catalog YAML (default: the plan's, else the bundled one); one other than the plan's is
    refused unless ``accept_catalog_change`` (``["catalog_changes"]`` then says what differs). Returns the BOM
    (``["bom"]``), the sheet names and the files written."""
    from zcube_deploy import workflow
    from zcube_deploy.cabling.run import PLAN_FIELDS

    return workflow.cabling(_plan(plan, PLAN_FIELDS), out_dir, _str(catalog), accept_catalog_change)


def push_configs(plan: PlanLike, configs_dir: str | Path, *, dry_run: bool = True, only: str | None = None, lab: str | Path | None = None,
                 known_hosts: str | Path | None = None, trust_on_first_use: bool = False, concurrency: int = 8, canary: int = 0,
                 max_failures: int | None = None, timeout: float = 30, allow_edited: bool = False) -> dict:
    """Push DIR/configs to the switches of the plan (a dry run unless ``dry_run=False``).

    A config file that differs from render's manifest.json is refused (InputErrors) unless ``allow_edited``;
    a line outside the managed scope always is (docs/push.md).

    Credentials come from ZCUBE_USERNAME / ZCUBE_PASSWORD / ZCUBE_ENABLE_SECRET (the lab's defaults
    with ``lab``, a lab.json); there is no prompt. Returns the push report (also DIR/push-report.json):
    ``report["ok"]``, ``report["summary"]`` and one entry per switch in ``report["devices"]``."""
    from zcube_deploy import workflow
    from zcube_deploy.push import PLAN_FIELDS

    report, _ = workflow.push(_plan(plan, PLAN_FIELDS), str(configs_dir), dry_run=dry_run, only=only, concurrency=concurrency,
                              canary=canary, max_failures=max_failures, lab_path=_str(lab),
                              known_hosts=_str(known_hosts), trust_on_first_use=trust_on_first_use,
                              timeout=timeout, allow_edited=allow_edited, plan_path=None if isinstance(plan, dict) else str(plan))
    return report


def verify_network(plan: PlanLike, out_dir: str | Path | None = None, *, lab: str | Path | None = None,
                   known_hosts: str | Path | None = None, record: str | Path | None = None, replay: str | Path | None = None,
                   only: str | None = None, concurrency: int = 32, timeout: float = 30) -> dict:
    """Check the built network against the plan: LLDP neighbours, interface state, routes (and eBGP sessions).

    Live over SSH (credentials as for :func:`push_configs`), or offline from the outputs a run saved
    with ``record`` (``replay=DIR``). Writes DIR/verify.json and DIR/verify.xlsx when ``out_dir`` is
    given. Returns ``{"findings": [...], "summary": {...}, "errors": {switch: why}, "paths": ...}``."""
    from zcube_deploy.verify import PLAN_FIELDS
    from zcube_deploy.verify.pipeline import run_verify

    return dict(run_verify(_plan(plan, PLAN_FIELDS), _str(out_dir), _str(lab), _str(known_hosts), _str(record), _str(replay),
                           only, concurrency, timeout))


def compare_designs(source: str | Path | None = None, *, gpus: int | None = None, switch_capacity: str = "51.2T",
                    nic_port_speed: str = "200G", gpus_per_server: int = 8, oversubscription: float = 1.0,
                    switch_model: str | None = None, catalog: str | Path | None = None) -> list[dict[str, Any]]:
    """ZCube against HPN dual-plane Clos, ROFT and Rail-only for a plan.json or inventory (``source``) or ``gpus``.

    A design comparison on paper (switches, cables, optics, CapEx), not a check of a built network
    (that is :func:`verify_network`). Returns one dict per design, as ``zcube compare --json`` prints."""
    from zcube_deploy import workflow
    from zcube_deploy.analysis.designs import as_json

    designs, *_ = workflow.design_comparison(_str(source), gpus, switch_capacity, nic_port_speed,
                                             gpus_per_server, oversubscription, switch_model, _str(catalog))
    return as_json(designs)


def analyze_failures(plan: PlanLike, out_dir: str | Path, *, probabilities: str | list[float] = "0.001,0.002,0.005,0.01,0.02,0.05",
                     samples: int = 400, seed: int = 1) -> dict:
    """What failures cost on a plan (failure analysis, not the lab's fault injection): single switch and link
    failures, seeded Monte-Carlo random link failures against a dual-plane Clos, path statistics.

    Writes DIR/analyze.json and DIR/unreachability.png; returns the analyze.json document."""
    from zcube_deploy import workflow

    probs = workflow.failure_probabilities(probabilities if isinstance(probabilities, str) else ",".join(map(repr, probabilities)))
    doc, _, _ = workflow.analyze(plan if isinstance(plan, dict) else str(plan), str(out_dir), probs, samples, seed)
    return doc
