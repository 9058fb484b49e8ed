"""`zcube drain` and `zcube undrain`: take an element out of service in an order that loses nothing it
can avoid, record exactly what was changed beside the plan, and put it back exactly.

Every change goes through push (push/runner.py): backup, diff, the management guard, apply, read
back, save or roll back, inside the managed scope. A step's config is the switch's rendered config
with the drain's edits (the platform's ``drained_config``); so a drain step changes exactly those
lines, and undrain, a push of the rendered config once the switch is proved to hold nothing else,
reverses exactly them. Steps for ``switch:NAME``:

1. ``steer`` (mode bgp only): BGP graceful shutdown (RFC 8326) so peers move transit away while
   every port is still up; then ``settle`` seconds;
2. ``host ports``: the GPU-facing ports shut: carrier loss moves each GPU's traffic to its other
   NIC port (the hosts' fallbacks);
3. ``fabric ports``: the switch-to-switch ports shut: the peers' routes through it go (static: by
   carrier loss; bgp: BFD and the session);
4. ``check``: every drained port reads down on the switch.

``link:CABLE`` shuts the cable's switch end(s) in one step. The record ``drains/<kind>-<name>.json``
beside the plan holds the element, its blast radius, the ports shut, whether graceful shutdown is
on, and each step's push result; push and verify read it (docs/drain.md).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from pathlib import Path

from zcube_deploy.drain.blast import Blast, Element, blast_radius, parse_element
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.platforms import napalm_driver, platform_module
from zcube_deploy.push.options import Credentials, PushOptions
from zcube_deploy.push.runner import push_all
from zcube_deploy.push.targets import Target, select_targets

RECORDS = "drains"


@dataclass
class DrainOptions:
    configs_dir: Path
    lab_path: str | None = None
    known_hosts: str | None = None
    dry_run: bool = False
    accept_loss: bool = False  # drain even when the analysis predicts GPU pairs without a routed path
    force: bool = False  # undrain even when the switch holds more than the drain's changes
    settle_s: float = 5.0  # after graceful shutdown, before the ports go down
    timeout: float = 30


def record_path(plan_dir: Path, element: Element) -> Path:
    return plan_dir / RECORDS / f"{element.kind}-{element.name}.json"


def read_records(plan_dir: str | Path) -> list[dict]:
    """Every drain record beside the plan (the fabric's drained elements), each checked."""
    d = Path(plan_dir) / RECORDS
    out = []
    for p in sorted(d.glob("*.json")) if d.is_dir() else ():
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
            if not (isinstance(doc, dict) and isinstance(doc.get("ports"), dict) and isinstance(doc.get("element"), str)):
                raise ValueError("no element or ports")
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise InputErrors(Problem(str(p), f"not a drain record: {exc}", "written by `zcube drain`; remove it only if you know why")) from None
        out.append(doc)
    return out


def drained_ports(plan_dir: str | Path) -> dict[str, set[str]]:
    """switch -> its ports shut by a drain (for verify and push)."""
    out: dict[str, set[str]] = {}
    for doc in read_records(plan_dir):
        for sw, ports in doc["ports"].items():
            out.setdefault(sw, set()).update(ports)
    return out


def _targets(plan: dict, opts: DrainOptions, switches: list[str]) -> dict[str, Target]:
    from zcube_deploy.push.credentials import endpoints

    eps, _ = endpoints(opts.lab_path, opts.known_hosts)
    return {t.name: t for t in select_targets(plan, opts.configs_dir, ",".join(switches), eps)}


def _steps(blast: Blast) -> list[tuple[str, dict[str, tuple[str, ...]], bool]]:
    """(step name, switch -> ports shut after the step, graceful shutdown on)."""
    graceful = blast.mode == "bgp" and blast.element.kind == "switch"
    steps = []
    if graceful:
        steps.append(("steer", {sw: () for sw in blast.ports}, True))
    if blast.element.kind == "switch":
        sw = blast.element.name
        n_host = len(blast.host_ports)
        steps.append(("host ports", {sw: blast.ports[sw][:n_host]}, graceful))
        steps.append(("fabric ports", {sw: blast.ports[sw]}, graceful))
    else:
        steps.append(("ports", dict(blast.ports), False))
    return steps


def _push_step(plan: dict, base: dict[str, Target], shut: dict[str, tuple[str, ...]], graceful: bool, creds: Credentials,
               opts: DrainOptions, out: Path) -> dict:
    pm = platform_module(plan["cluster"]["platform"])
    targets = [replace(base[sw], intended=pm.drained_config(base[sw].intended, ports, graceful)) for sw, ports in sorted(shut.items())]
    return push_all(targets, creds, PushOptions(dry_run=opts.dry_run, known_hosts=opts.known_hosts or _lab_known_hosts(opts),
                                                timeout=opts.timeout), out)


def _lab_known_hosts(opts: DrainOptions) -> str | None:
    from zcube_deploy.push.credentials import endpoints

    return endpoints(opts.lab_path, opts.known_hosts)[1]


def port_states(plan: dict, base: dict[str, Target], creds: Credentials, opts: DrainOptions) -> dict[str, dict[str, bool]]:
    """switch -> port -> link up, as the switch reports it (NAPALM get_interfaces)."""
    out = {}
    for name, t in sorted(base.items()):
        drv = napalm_driver(t.platform)(t.host, creds.username, creds.password, timeout=int(opts.timeout), optional_args={
            "port": t.port, "secret": creds.secret, "known_hosts": opts.known_hosts or _lab_known_hosts(opts)})
        drv.open()
        try:
            out[name] = {p: bool(v.get("is_up")) for p, v in drv.get_interfaces().items()}
        finally:
            drv.close()
    return out


def drain(plan: dict, plan_dir: Path, element_text: str, opts: DrainOptions, creds: Credentials, say=print) -> dict:
    """Drain ``element_text`` (``switch:NAME`` or ``link:CABLE``); returns the record (written unless dry run)."""
    element = parse_element(element_text, plan)
    path = record_path(plan_dir, element)
    if path.exists():
        raise InputErrors(Problem(str(path), f"{element.key} is already drained", f"`zcube undrain PLAN {element.key}` first"))
    blast = blast_radius(plan, element)
    if blast.gpu_pairs_without_routed_path and not opts.accept_loss:
        raise InputErrors(Problem(element.key, f"the analysis predicts {blast.gpu_pairs_without_routed_path} GPU pairs without a routed "
                                               "path while it is drained", "--accept-loss to drain anyway"))
    base = _targets(plan, opts, sorted(blast.ports))
    record = {"element": element.key, "blast": blast.as_dict(), "ports": {k: list(v) for k, v in blast.ports.items()},
              "graceful_shutdown": False, "steps": [], "status": "draining"}
    work = plan_dir / "drain-work" / f"{element.kind}-{element.name}"
    for i, (name, shut, graceful) in enumerate(_steps(blast), 1):
        report = _push_step(plan, base, shut, graceful, creds, opts, work / f"step-{i}")
        record["steps"].append({"step": name, "ok": report["ok"], "devices": {d["name"]: {k: d.get(k) for k in ("status", "lines_changed", "error")}
                                                                            for d in report["devices"]}})
        say(f"step {i} {name}: " + ", ".join(f"{d['name']} {d['status']} ({d.get('lines_changed', 0)} lines)" for d in report["devices"]))
        if not report["ok"]:
            record["status"] = f"failed at step {i} ({name})"
            break
        record["graceful_shutdown"] = graceful
        if name == "steer" and not opts.dry_run:
            time.sleep(opts.settle_s)
    else:
        record["status"] = "would drain" if opts.dry_run else "drained"
    if not opts.dry_run and record["status"] == "drained":
        states = port_states(plan, base, creds, opts)
        still_up = [f"{sw} {p}" for sw, ports in blast.ports.items() for p in ports if states.get(sw, {}).get(p, False)]
        record["check"] = {"ports_down": not still_up, "still_up": still_up}
        if still_up:
            record["status"] = "drained, check failed"
    if not opts.dry_run and any(s["ok"] for s in record["steps"]):  # a first step that failed was rolled back: nothing to record
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(path)
    return record


def undrain(plan: dict, plan_dir: Path, element_text: str, opts: DrainOptions, creds: Credentials, say=print) -> dict:
    """Reverse the drain of ``element_text`` exactly, check the switches are back as planned, remove the record."""
    from zcube_deploy.verify.pipeline import run_verify

    element = parse_element(element_text, plan)
    path = record_path(plan_dir, element)
    if not path.exists():
        raise InputErrors(Problem(str(path), f"{element.key} is not drained (no record)"))
    record = json.loads(path.read_text(encoding="utf-8"))
    shut = {sw: tuple(p) for sw, p in record["ports"].items()}
    base = _targets(plan, opts, sorted(shut))
    work = plan_dir / "drain-work" / f"{element.kind}-{element.name}"
    # 1. the switches hold exactly what the drain left (nothing else changed inside the scope since)
    done = [s for s in record["steps"] if s["ok"]]
    last_shut = shut if done and done[-1]["step"] != "steer" else {sw: () for sw in shut}
    check = _push_step(plan, base, last_shut, bool(record.get("graceful_shutdown")), creds, replace(opts, dry_run=True), work / "undrain-check")
    extra = {d["name"]: d["lines_changed"] for d in check["devices"] if d["status"] != "unchanged"}
    if extra and not opts.force:
        raise InputErrors(Problem(str(path), "the switch holds more than the drain's changes: " + ", ".join(f"{k} {v} lines" for k, v in extra.items()),
                                  f"see {work / 'undrain-check'} (push dry run); --force to push the rendered config anyway"))
    # 2. the rendered config: exactly the drain's lines reversed
    report = push_all(list(base.values()), creds, PushOptions(dry_run=opts.dry_run, known_hosts=opts.known_hosts or _lab_known_hosts(opts),
                                                              timeout=opts.timeout), work / "undrain")
    say("undrain: " + ", ".join(f"{d['name']} {d['status']} ({d.get('lines_changed', 0)} lines)" for d in report["devices"]))
    result = {"element": element.key, "ok": report["ok"], "devices": report["devices"]}
    if opts.dry_run or not report["ok"]:
        return result
    # 3. back as planned: verify of the switches, then the record goes
    v = run_verify(plan, None, lab_path=opts.lab_path, known_hosts=opts.known_hosts, only=",".join(sorted(shut)), creds=creds)
    result["verify"] = {"findings": len(v["findings"]), "unreachable": v["errors"]}
    result["back_as_planned"] = not v["findings"] and not v["errors"]
    if result["back_as_planned"]:
        path.unlink()
    return result
