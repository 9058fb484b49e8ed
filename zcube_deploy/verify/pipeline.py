"""The verify pipeline: scope, collect over SSH (or replay recorded outputs), compare, summarise, report.

``zcube verify``, the demo and the public API call :func:`run_verify`; none of them prints here.
"""

from __future__ import annotations

from typing import TypedDict

from zcube_deploy.access import Prompt, credentials, endpoints
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.platforms import require_device_access
from zcube_deploy.verify import scope_of
from zcube_deploy.verify.bgp import session_counts
from zcube_deploy.verify.classify import check, summarize
from zcube_deploy.verify.collect import collect, replay
from zcube_deploy.verify.report import write_reports


class VerifyResult(TypedDict):
    findings: list[dict]
    summary: dict
    errors: dict[str, str]
    paths: tuple | None


def check_sources(record: str | None, replay_dir: str | None) -> None:
    """--record saves what a live run reads, --from replays it: one run cannot do both."""
    if record and replay_dir:
        raise InputErrors(Problem("--record/--from", "use one of them, not both"))


def run_verify(plan: dict, out_dir: str | None, lab_path: str | None = None, known_hosts: str | None = None,
               record: str | None = None, replay_dir: str | None = None, only: str | None = None, concurrency: int = 32,
               timeout: float = 30, creds=None, prompt: Prompt | None = None) -> VerifyResult:
    """Verify ``plan`` against the switches (or ``replay_dir``'s recorded outputs).

    Writes DIR/verify.json and DIR/verify.xlsx when ``out_dir`` is given. ``creds`` default to the
    credential policy of :func:`zcube_deploy.access.credentials` (``prompt`` asks for missing ones).
    """
    check_sources(record, replay_dir)
    names = scope_of(plan, only)
    platform = plan["cluster"]["platform"]  # whose commands to run and how to read them
    require_device_access(platform)
    if replay_dir:
        observed, errors = replay(replay_dir, names, platform=platform)
    else:
        eps, kh = endpoints(lab_path, known_hosts)
        mg = {s["name"]: s["mgmt_address"] for s in plan["switches"]}
        targets = [(n, *(eps[n] if eps else (mg[n], 22))) for n in names]
        creds = creds or credentials(bool(lab_path), prompt)
        observed, errors = collect(targets, creds, kh, concurrency=concurrency, timeout=timeout, record=record,
                                   platform=platform)
    findings, not_checked = check(plan, observed, set(observed))
    summary = summarize(findings, not_checked)
    summary["switches_verified"] = len(observed)
    summary["switches_unreachable"] = len(errors)
    if (plan.get("routing") or {}).get("mode") == "bgp":  # issue 14: eBGP sessions (verify/bgp.py)
        summary["bgp_sessions"] = session_counts(plan, observed, set(observed))
    meta = {"cluster": plan["cluster"]["name"], "scope": names, "mode": "offline" if replay_dir else "live"}
    paths = write_reports(findings, summary, errors, out_dir, meta) if out_dir else None
    return {"findings": findings, "summary": summary, "errors": errors, "paths": paths}
