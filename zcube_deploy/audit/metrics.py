"""An audit's figures in the Prometheus text exposition format, for node_exporter's textfile collector.

``prometheus_client.write_to_textfile`` writes a temporary file and renames it over the target, so
the collector never reads half a file (the textfile convention). Metrics:

- ``zcube_audit_findings{kind}``: findings of each kind (every known kind, 0 included);
- ``zcube_audit_switch_findings{switch}``: findings per switch (every audited switch, 0 included);
- ``zcube_audit_switches{state="audited"|"unreachable"}``;
- ``zcube_audit_clean``: 1 when the run found nothing (no drift, no finding, nothing unchecked);
- ``zcube_audit_duration_seconds``, ``zcube_audit_last_run_timestamp_seconds``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from prometheus_client import CollectorRegistry, Gauge, write_to_textfile

from zcube_deploy.audit.drift import DRIFT_KINDS
from zcube_deploy.errors import InputErrors, Problem


def check_metrics_path(path: str | Path, out_dir: str | Path | None = None) -> None:
    """Refuse (exit 2, before any audit runs) a --metrics file whose folder does not exist or is not a folder: a
    typo in the node_exporter textfile folder would otherwise make a folder no exporter reads. The audit's own
    output folder ``out_dir`` is the exception: the audit makes it before it writes the metrics."""
    parent = Path(path).parent
    if out_dir is not None and not parent.exists() and os.path.abspath(parent) == os.path.abspath(out_dir):
        return
    if not parent.is_dir():
        raise InputErrors(Problem("--metrics", f"{path}: its folder {parent} {'is not a folder' if parent.exists() else 'does not exist'}",
                                  "give a file in an existing folder (node_exporter's --collector.textfile.directory)"),
                          "cannot audit; nothing was read")


def write_metrics(path: str | Path, result, cluster: str, known_kinds: tuple[str, ...] = (), now: float | None = None) -> None:
    """Write ``result`` (an AuditResult) to ``path`` in the Prometheus text format."""
    reg = CollectorRegistry()
    findings = Gauge("zcube_audit_findings", "Audit findings by kind", ["cluster", "kind"], registry=reg)
    per_switch = Gauge("zcube_audit_switch_findings", "Audit findings by switch", ["cluster", "switch"], registry=reg)
    switches = Gauge("zcube_audit_switches", "Switches audited or unreachable", ["cluster", "state"], registry=reg)
    clean = Gauge("zcube_audit_clean", "1 when the audit found nothing", ["cluster"], registry=reg)
    duration = Gauge("zcube_audit_duration_seconds", "How long the audit took", ["cluster"], registry=reg)
    last = Gauge("zcube_audit_last_run_timestamp_seconds", "When the audit finished (Unix time)", ["cluster"], registry=reg)
    counts = dict.fromkeys(sorted(set(known_kinds) | set(DRIFT_KINDS) | {"not_checked"}), 0)
    counts.update(result.summary["by_kind"])
    for kind, n in counts.items():
        findings.labels(cluster, kind).set(n)
    by_switch = dict.fromkeys(result.scope, 0)
    for f in result.findings:
        dev = f.get("device") or ((f.get("ends") or [{}])[0].get("device"))
        if dev:
            by_switch[dev] = by_switch.get(dev, 0) + 1
    for sw, n in sorted(by_switch.items()):
        per_switch.labels(cluster, sw).set(n)
    switches.labels(cluster, "audited").set(result.summary["switches"] - result.summary["switches_unreachable"])
    switches.labels(cluster, "unreachable").set(result.summary["switches_unreachable"])
    clean.labels(cluster).set(1 if result.summary["clean"] else 0)
    duration.labels(cluster).set(result.duration_s)
    last.labels(cluster).set(time.time() if now is None else now)
    write_to_textfile(str(path), reg)  # (its folder checked first: check_metrics_path; never made here)
