"""The verify pipeline: scope, collect over SSH (or replay recorded outputs), compare, summarise, report.

``zcube verify``, the demo and the public API call :func:`run_verify`; none of them prints here.
"""

from __future__ import annotations

from collections import Counter
from typing import TypedDict

from zcube_deploy.topology.forwarding import switch_mode
from zcube_deploy.access import Prompt, credentials, lab_targets
from zcube_deploy.plan.io import wiring_identity
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.perf import bulk_allocation
from zcube_deploy.platforms import require_device_access
from zcube_deploy.verify import scope_of
from zcube_deploy.verify.bgp import session_counts
from zcube_deploy.verify.classify import check, summarize
from zcube_deploy.verify.collect import collect, replay
from zcube_deploy.verify.report import write_reports
from zcube_deploy.vocabulary import FindingKind


class VerifyResult(TypedDict):
    findings: list[dict]
    summary: dict
    errors: dict[str, str]
    paths: tuple | None


def check_sources(record: str | None, replay_dir: str | None) -> None:
    """--record saves what a live run reads, --from replays it: one run cannot do both."""
    if record and replay_dir:
        raise InputErrors(Problem("--record/--from", "use one of them, not both"))


def set_aside_drained(plan: dict, findings: list[dict], drained: dict[str, set[str]]) -> tuple[list[dict], list[dict]]:
    """(findings, those set aside): a finding whose cables all end on drained ports is what a drain leaves."""
    if not drained:
        return findings, []
    cables = {i["cable"] for sw in plan["switches"] for i in sw.get("interfaces", ()) if i["name"] in drained.get(sw["name"], ())}
    keep, aside = [], []
    for f in findings:  # (a drained port found up is never what a drain leaves)
        (aside if f.get("cables") and set(f["cables"]) <= cables and f["kind"] != FindingKind.DRAINED_UP else keep).append(f)
    return keep, aside


def run_verify(plan: dict, out_dir: str | None, lab_path: str | None = None, known_hosts: str | None = None,
               record: str | None = None, replay_dir: str | None = None, only: str | None = None, concurrency: int = 32,
               timeout: float = 30, creds=None, prompt: Prompt | None = None,
               drained: dict[str, set[str]] | None = None, lab_may_run: tuple[dict, ...] = ()) -> VerifyResult:
    """Verify ``plan`` against the switches (or ``replay_dir``'s recorded outputs).

    ``lab_may_run``: plans the lab of ``lab_path`` may run besides ``plan`` (an expansion's old plan; access.endpoints).

    ``drained`` (switch -> ports shut by `zcube drain`, from the records beside the plan): a finding
    all of whose cables end on drained ports is the expected state, set aside as ``drained`` in the
    summary, not a finding; a drained port that reads up is a ``drained_up`` finding.

    Writes DIR/verify.json and DIR/verify.xlsx when ``out_dir`` is given. ``creds`` default to the
    credential policy of :func:`zcube_deploy.access.credentials` (``prompt`` asks for missing ones).
    """
    check_sources(record, replay_dir)
    names = scope_of(plan, only)
    platform = plan["cluster"]["platform"]  # whose commands to run and how to read them
    require_device_access(platform)
    if replay_dir:
        with bulk_allocation():  # parsing the recordings makes millions of small objects and no cycles
            observed, errors = replay(replay_dir, names, platform=platform)
    else:
        targets, kh = lab_targets(plan, names, lab_path, known_hosts, lab_may_run)
        creds = creds or credentials(bool(lab_path), prompt)
        observed, errors = collect(targets, creds, kh, concurrency=concurrency, timeout=timeout, record=record,
                                   platform=platform)
    meta = {"cluster": plan["cluster"]["name"], "scope": names, "mode": "offline" if replay_dir else "live"}
    if out_dir and "cables" in plan:  # which plan the findings are for: `zcube lab fix` refuses another plan's
        meta["plan"] = wiring_identity(plan)
    return verify_observed(plan, observed, errors, out_dir, meta, drained)


def verify_observed(plan: dict, observed: dict, errors: dict[str, str], out_dir: str | None, meta: dict,
                    drained: dict[str, set[str]] | None = None, planned=None) -> VerifyResult:
    """:func:`run_verify` once the switches' observations are in (``errors``: switch -> why it was not observed);
    audit calls it on the observations its own pass over the recordings made. ``meta``: the reports' header;
    ``planned``: classify.check's."""
    with bulk_allocation():  # the checks make hundreds of thousands of small objects and no cycles
        findings, not_checked = check(plan, observed, set(observed), drained, planned)
    findings, expected = set_aside_drained(plan, findings, drained or {})
    summary = summarize(findings, not_checked)
    if drained:
        summary["drained"] = {"ports": sum(len(p) for p in drained.values()), "findings_set_aside": len(expected),
                              "by_kind": dict(sorted(Counter(f["kind"] for f in expected).items()))}
    summary["switches_verified"] = len(observed)
    summary["switches_unreachable"] = len(errors)
    if (plan.get("routing") or {}).get("mode") == "bgp" or any(sw.get("routing_mode") == "bgp" for sw in plan["switches"]):
        # issue 14: eBGP sessions (verify/bgp.py); a migration stage's eBGP island too
        routing = plan.get("routing") or {"mode": "static"}
        speakers = {sw["name"] for sw in plan["switches"] if switch_mode(routing, sw) == "bgp"}
        summary["bgp_sessions"] = session_counts(plan, observed, set(observed) & speakers)
    paths = write_reports(findings, summary, errors, out_dir, meta) if out_dir else None
    return {"findings": findings, "summary": summary, "errors": errors, "paths": paths}
