"""`zcube replace PLAN SWITCH`: a dead switch's successor, a factory-fresh unit of the same model, brought into the fabric.

The plan is deterministic, so the new unit's configuration is the failed unit's rendered one; only the
management bootstrap is new (lifecycle.md: same intent, new serial and MAC). The steps, for that one
switch and no other:

1. ``bootstrap``: the console lines for the unit (the platform's ``console_bootstrap``: hostname,
   management address and gateway from the plan, the site's access lines from the operator's
   file, each checked: access.py), written 0600 to ``DIR/replace/SWITCH/bootstrap.txt``;
2. ``reach``: the unit answers on its management address (NAPALM ``get_facts``: its serial, its
   hostname) once a technician has pasted the bootstrap at its console; until then the run stops
   here (exit 1) and says so, or waits ``wait_s`` seconds for it;
3. ``push``: push's own path (backup, diff, management guard, apply, read back, save or roll
   back, inside the managed scope) with a target list of one;
4. ``verify``: ``zcube verify --only SWITCH`` (LLDP against the plan, whatever chassis id the new
   unit announces; interfaces; routes; BGP sessions in mode bgp).

A drained switch (a drain record beside the plan names its ports) comes back drained: the pushed
config is the rendered one with the drains' edits (the platform's ``drained_config``), verify sets
their ports aside, the records stay, and the operator undrains when ready (docs/replace.md).
Every session goes to SWITCH's endpoint only; the report lists the switches contacted.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import textwrap
import time
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import TypeAdapter
from typing_extensions import NotRequired, TypedDict

from zcube_deploy.access import Credentials, endpoints, forget_host_key, known_hosts_for, not_in_lab, pinned_host_keys
from zcube_deploy.drain.records import graceful_now, read_records, shut_now
from zcube_deploy.errors import InputErrors, Problem, names_hint
from zcube_deploy.ipv4 import dotted_mask
from zcube_deploy.plan.io import wiring_identity
from zcube_deploy.plan.state import read_state
from zcube_deploy.platforms import napalm_driver, platform_module
from zcube_deploy.push.candidate import control_character
from zcube_deploy.push.options import PushOptions
from zcube_deploy.push.preview import section_changes
from zcube_deploy.push.runner import push_all
from zcube_deploy.push.targets import Target, select_targets
from zcube_deploy.replace.access import read_access_lines
from zcube_deploy.safety import make_private_dir, mask_credentials, redact_secrets, write_private
from zcube_deploy.verify.pipeline import run_verify

WORK = "replace"  # DIR/replace/SWITCH/: bootstrap.txt, backups/, push/, push-report.json, verify/, replace.json
POLL_S = 2.0  # how often a run with --wait tries the unit again
MAX_NAMES = 64  # switch names listed when SWITCH is not one of the plan's


@dataclass
class ReplaceOptions:
    configs_dir: Path
    lab_path: str | None = None
    known_hosts: str | None = None
    dry_run: bool = False
    access_lines: str | None = None  # the operator's file of site lines (users, AAA, vty, SSH ...)
    timeout: float = 30
    wait_s: float = 0.0  # wait this long for the unit to answer (the technician pasting the bootstrap)
    new_host_key: bool = False  # forget the switch's pinned SSH host key and pin the new unit's on first contact
    settle_s: float = 0.0  # after the push, before verify (LLDP and sessions come up)
    same_unit: bool = False  # the unit is the one that was there (re-seated, wiped in place): go on though its identity is the old one's


def plan_switch(plan: dict, name: str) -> dict:
    """The plan's switch ``name``; an input error listing the plan's switches otherwise."""
    for sw in plan["switches"]:
        if sw["name"] == name:
            return sw
    names = [s["name"] for s in plan["switches"]]
    raise InputErrors(Problem("SWITCH", f"{name!r} is not a switch of the plan", names_hint(name, names, "switch", MAX_NAMES)))


def drain_edits(plan: dict, plan_dir: Path, name: str) -> tuple[tuple[str, ...], bool, list[str]]:
    """(ports shut by drains on ``name``, graceful shutdown on, the drain records that say so) from the records
    beside the plan."""
    shut: set[str] = set()
    graceful, records = False, []
    for doc in read_records(plan_dir, plan):
        ports = shut_now(doc).get(name, ())
        on = name in graceful_now(doc)
        if ports or on:
            shut.update(ports)
            graceful = graceful or on
            records.append(doc["element"])
    return tuple(sorted(shut)), graceful, records


def bootstrap_text(plan: dict, sw: dict, access: list[str]) -> tuple[str, list[str]]:
    """(the console bootstrap of ``sw``'s new unit, its lines) from the plan and the checked access lines."""
    pm = platform_module(plan["cluster"]["platform"])
    settings = plan["settings"]
    lines = pm.console_bootstrap(sw["name"], plan["models"]["switch"]["mgmt_interface"], sw["mgmt_address"],
                                 dotted_mask(settings["mgmt_prefix_len"]), settings.get("mgmt_gateway"), access)
    bad = [f"{line!r}: {why}" for line in lines if (why := control_character(line))]
    if bad:  # the plan's own fields are checked when planned: this is a defence, not an expected path
        raise InputErrors([Problem("bootstrap", b) for b in bad], "the bootstrap would carry unsafe lines; nothing was written")
    return "\n".join(lines) + "\n", lines


def error_text(exc: BaseException, *secrets: str | None) -> str:
    """An exception as one line for the report: its type, its words, and a separator before an OS error glued to the
    text before it (paramiko says 'Error reading SSH protocol banner[Errno 104] ...'); ``secrets`` masked."""
    text = re.sub(r"(?<=[^\s:(])\[Errno", ": [Errno", " ".join(str(exc).split()))
    return mask_credentials(f"{type(exc).__name__}: {text}", *secrets)[:300]


def probe(target: Target, creds: Credentials, known_hosts: str | None, timeout: float, pin_new_key: bool = False) -> dict:
    """Does the unit answer on its management endpoint? {"reachable": bool, "serial", "hostname"} or the error.
    ``pin_new_key``: accept the key it presents and pin it in ``known_hosts`` (its old line already forgotten)."""
    drv = napalm_driver(target.platform)(target.host, creds.username, creds.password, timeout=int(timeout),
                                         optional_args={"port": target.port, "secret": creds.secret, "known_hosts": known_hosts,
                                                        "trust_on_first_use": pin_new_key})
    try:
        drv.open()
    except Exception as exc:  # noqa: BLE001 (any connection failure: the unit is not reachable yet)
        return {"reachable": False, "error": error_text(exc, creds.password, creds.secret)}
    try:
        facts = drv.get_facts()
        return {"reachable": True, "serial": facts.get("serial_number", ""), "hostname": facts.get("hostname", "")}
    finally:
        drv.close()


def host_keys(target: Target, known_hosts: str | None, opts: ReplaceOptions, scratch: Path | None) -> tuple[str | None, int]:
    """(the known_hosts file the run uses, lines forgotten): with ``new_host_key`` the switch's pinned key goes (in a
    dry run from a copy in its ``scratch`` folder, so nothing changes) and the new unit's is pinned on the first contact."""
    if not opts.new_host_key:
        return known_hosts, 0
    path = known_hosts_for(known_hosts, True)
    if scratch is not None:
        copy = scratch / "known_hosts"
        if Path(path).exists():
            shutil.copyfile(path, copy)
        path = str(copy)
    return path, forget_host_key(path, target.host, target.port)


def _wait_for(target: Target, creds: Credentials, known_hosts: str | None, opts: ReplaceOptions, say) -> dict:
    deadline = time.monotonic() + opts.wait_s
    while True:
        seen = probe(target, creds, known_hosts, opts.timeout, pin_new_key=opts.new_host_key)
        if seen["reachable"] or time.monotonic() >= deadline:
            return seen
        say(f"{target.name}: not reachable yet ({textwrap.shorten(seen['error'], 100, placeholder=' ...')}); trying again in {POLL_S:g} s")
        time.sleep(POLL_S)


def _inputs(plan: dict, plan_dir: Path, name: str, opts: ReplaceOptions) -> tuple:
    """(the push target, the access lines, (the lab's endpoints, known_hosts), the drains' edits): every input
    problem of the run at once (exit 2), before anything is written or sent."""
    problems: list[Problem] = []

    def checked(fn, *args):
        try:
            return fn(*args)
        except InputErrors as exc:
            problems.extend(exc.problems)
            return None

    targets = checked(select_targets, plan, opts.configs_dir, name, None)
    target = targets[0] if targets else None
    access = checked(read_access_lines, opts.access_lines, target.scope if target else None,
                     plan["models"]["switch"]["mgmt_interface"], plan["cluster"]["platform"])
    reach = checked(endpoints, opts.lab_path, opts.known_hosts, (wiring_identity(plan),))
    drains = checked(drain_edits, plan, plan_dir, name)
    problems += not_in_lab([name], reach[0] if reach else None)
    if problems:
        raise InputErrors(problems, "cannot replace; nothing was written or sent")
    if reach[0] is not None:
        target = replace(target, host=reach[0][name][0], port=reach[0][name][1])
    return target, access, reach, drains


COMPLETE = ("replaced", "replaced, drained")  # a replace that ended: the next run is a new replace, of a new unit


class _OldUnit(TypedDict):
    serial: str | None  # the serial an earlier, completed replace recorded for the unit it brought in
    serial_from: str | None  # that replace.json
    host_keys: list[str]  # the fingerprints the known_hosts file pinned for the endpoint when this replace began
    known_hosts: str


class _Seen(TypedDict):
    reachable: bool
    serial: NotRequired[str]


class _ReplaceDoc(TypedDict):
    """The fields of an earlier run's replace.json that a run reads (the rest is the report)."""

    switch: str
    status: str
    unit: NotRequired[_Seen]
    old_unit: NotRequired[_OldUnit]


_REPLACE_DOC = TypeAdapter(_ReplaceDoc)


def old_unit(record: Path, known_hosts: str | None, target: Target) -> dict:
    """The identity of the unit that was in SWITCH's place, as recorded: while a replace is under way (its earlier runs
    stopped before the end) the one its first run recorded in ``record`` (DIR/replace/SWITCH/replace.json); else the
    serial of the unit a completed replace brought in (that record), and the host keys the known_hosts file pins for
    the endpoint now (before ``--new-host-key`` forgets them). None of a field: nothing records it."""
    prev = read_state(record, _REPLACE_DOC, "a replace.json", f"{record} is the report an earlier `zcube replace` wrote; "
                      "move it away to start the replace afresh") if record.exists() else None
    if prev and prev["status"] not in COMPLETE and prev.get("old_unit"):
        return dict(prev["old_unit"])
    done = prev is not None and prev["status"] in COMPLETE and bool(prev.get("unit", {}).get("serial"))
    return {"serial": prev["unit"]["serial"] if done else None, "serial_from": str(record) if done else None,
            "host_keys": pinned_host_keys(known_hosts, target.host, target.port), "known_hosts": known_hosts or "~/.ssh/known_hosts"}


def identity(old: dict, seen: dict, known_hosts: str | None, target: Target) -> dict:
    """Is the unit that answers the one that was there? Its serial against the recorded one, and the host key it
    presented (the one known_hosts pins now: the session's strict check passed against it, or this run pinned it)
    against the keys pinned when the replace began. A comparison without a record is not checked, never passed."""
    endpoint = target.host if target.port == 22 else f"[{target.host}]:{target.port}"
    now = pinned_host_keys(known_hosts, target.host, target.port)
    checked, not_checked = [], []
    if old["serial"] and seen.get("serial"):
        checked.append({"what": "serial", "seen": seen["serial"], "old": old["serial"], "same": seen["serial"] == old["serial"],
                        "recorded": f"the serial of the unit an earlier replace brought in ({old['serial_from']})"})
    else:
        not_checked.append("serial: " + ("the unit reported none" if old["serial"] else
                                         "no record of the old unit's serial (zcube records one only when a replace brings a unit in)"))
    if old["host_keys"] and now:
        checked.append({"what": "SSH host key", "seen": ", ".join(now), "old": ", ".join(old["host_keys"]), "same": bool(set(now) & set(old["host_keys"])),
                        "recorded": f"the key {old['known_hosts']} pinned for {endpoint} when this replace began"})
    else:
        not_checked.append("SSH host key: " + (f"{old['known_hosts']} pinned no key for {endpoint} when this replace began" if not old["host_keys"]
                                               else f"{known_hosts or '~/.ssh/known_hosts'} pins no key for {endpoint} after the session"))
    return {"same_unit": any(c["same"] for c in checked), "checked": checked, "not_checked": not_checked}


def refuse_same_unit(name: str, target: Target, seen: dict, ident: dict, lab_path: str | None) -> InputErrors:
    """The refusal of a unit whose serial or host key is the old unit's (exit 2): what it showed, where the old one is
    recorded, what to do."""
    where = f"{target.host}:{target.port}"
    swap = f"zcube lab replace {Path(lab_path).parent} {name}" if lab_path else "the technician's swap"
    problems = [Problem(name, f"the unit at {where} (serial {seen.get('serial') or '?'}) has the {c['what']} {c['seen']}: "
                              f"{c['recorded']}; not a new unit")
                for c in ident["checked"] if c["same"]]
    problems[-1] = replace(problems[-1], hint=f"a replace is a new unit: swap it first ({swap}), or give --same-unit for the same "
                                              "unit re-seated or wiped in place")
    return InputErrors(problems, "not replaced; nothing was pushed")


def replace_switch(plan: dict, plan_dir: Path, name: str, opts: ReplaceOptions, creds: Credentials, say=print) -> dict:
    """Bring ``name``'s new unit into the fabric (the module's steps); returns the report (written as replace.json).
    A dry run works in a temporary folder, gone when it returns; it keeps only the push's diff (:func:`dry_run_diff`)."""
    if not opts.dry_run:
        return _replace(plan, plan_dir, name, opts, creds, say, None)
    with tempfile.TemporaryDirectory(prefix="zcube-replace-") as scratch:
        return _replace(plan, plan_dir, name, opts, creds, say, Path(scratch))


def _replace(plan: dict, plan_dir: Path, name: str, opts: ReplaceOptions, creds: Credentials, say, scratch: Path | None) -> dict:
    """replace_switch's steps; ``scratch``: a dry run's temporary folder (its work folder and known_hosts copy)."""
    sw = plan_switch(plan, name)
    platform = plan["cluster"]["platform"]
    target, access, (eps, known_hosts), (shut, graceful, drains) = _inputs(plan, plan_dir, name, opts)
    if drains:
        target = replace(target, intended=platform_module(platform).drained_config(target.intended, shut, graceful))
    text, lines = bootstrap_text(plan, sw, access)
    record = Path(opts.configs_dir) / WORK / name / "replace.json"
    old = old_unit(record, known_hosts, target)
    work = scratch / "work" if scratch is not None else record.parent
    console = f"zcube lab console {Path(opts.lab_path).parent} {name} --file FILE" if opts.lab_path else "its serial console"
    report: dict = {"switch": name, "dry_run": opts.dry_run, "endpoint": f"{target.host}:{target.port}", "console": console,
                    "bootstrap": {"lines": len(lines), "access_lines": len(access),
                                  "warnings": platform_module(platform).ssh_gaps(access) if opts.access_lines else
                                  ["no --access-lines: the bootstrap gives the unit no user and no SSH server"]},
                    "drained": {"records": drains, "ports": list(shut), "graceful_shutdown": graceful}, "contacted": [name], "old_unit": old}
    if opts.dry_run:
        report["bootstrap"]["text"] = redact_secrets(text, platform)
    else:
        write_private(work / "bootstrap.txt", text)  # the site's access lines may hold secrets: the operator's file, 0600
        report["bootstrap"]["path"] = str(work / "bootstrap.txt")
        report["console"] = console.replace("FILE", str(work / "bootstrap.txt"))
    pinned = known_hosts_for(known_hosts, True) if opts.new_host_key and scratch is None else None
    pinned_text = Path(pinned).read_text() if pinned and Path(pinned).exists() else None
    known_hosts, forgotten = host_keys(target, known_hosts, opts, scratch)
    if opts.new_host_key:
        report["host_key"] = {"known_hosts": known_hosts if not opts.dry_run else "(a copy)", "forgotten": forgotten}
    if opts.wait_s > 0 and not opts.dry_run:  # the technician needs the file and the console before the wait, not after it
        say(f"{name}: paste the bootstrap {report['bootstrap']['path']} at the unit's console ({report['console']}) now; "
            f"waiting up to {opts.wait_s:g} s for it to answer")
    seen = _wait_for(target, creds, known_hosts, opts, say)
    report["unit"] = seen
    if not seen["reachable"]:
        if "SSH host key" in seen["error"]:
            report["status"] = "host key refused"
            seen["hint"] = "a new unit presents a new SSH host key: run again with --new-host-key to forget the old one and pin the new"
        else:
            report["status"] = "would bootstrap" if opts.dry_run else "waiting for the console bootstrap"
        return _finish(report, work, opts)
    report["identity"] = ident = identity(old, seen, known_hosts, target)
    if ident["same_unit"] and not opts.same_unit:
        if pinned_text is not None:  # the old unit's key goes back where it was: nothing of this run stays
            Path(pinned).write_text(pinned_text)
        raise refuse_same_unit(name, target, seen, ident, opts.lab_path)
    return _push_verify(plan, name, target, opts, creds, report, (work, known_hosts, shut, drains))


def dry_run_diff(dev: dict, target: Target, folder: Path) -> dict:
    """A dry run's push diff (``dev``: its push result, the diff in the temporary work folder) written where a real
    run writes it (``folder``/push/SWITCH.diff, as `zcube push --dry-run` writes DIR/push/SWITCH.diff: every line that
    would be sent, secrets masked), and what it adds and removes per kind of section, for the terminal."""
    if not dev.get("diff"):
        return {"diff": None, "sections": []}
    text = Path(dev["diff"]).read_text(encoding="utf-8")
    make_private_dir(folder)  # the run's folder, 0700 as a real run makes it (its bootstrap holds the site's access lines)
    path = folder / "push" / f"{target.name}.diff"
    write_private(path, text)
    return {"diff": str(path), "sections": section_changes(text.splitlines(), target.intended, platform_module(target.platform))}


def _push_verify(plan: dict, name: str, target: Target, opts: ReplaceOptions, creds: Credentials, report: dict, run: tuple) -> dict:
    """Steps 3 and 4 for the unit that answers: push (a dry run: its diff, into the report) and verify, ``name`` alone."""
    work, known_hosts, shut, drains = run
    push = push_all([target], creds, PushOptions(dry_run=opts.dry_run, known_hosts=known_hosts, timeout=opts.timeout), work)
    dev = push["devices"][0]
    report["contacted"] = sorted({name, *(d["name"] for d in push["devices"])})  # the push's targets: this switch only
    report["push"] = {k: dev.get(k) for k in ("status", "lines_changed", "error", "diff", "backup")}
    if opts.dry_run:  # its work folder goes when the run returns: the full diff is kept in the output folder, summed up
        report["push"].update(backup=None, **dry_run_diff(dev, target, Path(opts.configs_dir) / WORK / name))
    if opts.dry_run or not push["ok"]:
        report["status"] = "would replace" if opts.dry_run and push["ok"] else f"push {dev['status']}"
        return _finish(report, work, opts)
    time.sleep(opts.settle_s)
    v = run_verify(plan, str(work / "verify"), lab_path=opts.lab_path, known_hosts=known_hosts, only=name, creds=creds,
                   timeout=opts.timeout, drained={name: set(shut)} if shut else None)
    report["contacted"] = sorted({*report["contacted"], *(v["errors"] or {}), *([name] if v["summary"]["switches_verified"] else [])})
    report["verify"] = {"findings": len(v["findings"]), "kinds": sorted({f["kind"] for f in v["findings"]}),
                        "unreachable": v["errors"], "set_aside": (v["summary"].get("drained") or {}).get("findings_set_aside", 0),
                        "path": str(work / "verify" / "verify.json")}
    clean = not v["findings"] and not v["errors"]
    report["status"] = ("replaced, drained" if drains else "replaced") if clean else "replaced, verify found problems"
    return _finish(report, work, opts)


OK_STATUSES = ("replaced", "replaced, drained", "would bootstrap", "would replace")


def _finish(report: dict, work: Path, opts: ReplaceOptions) -> dict:
    report["ok"] = report["status"] in OK_STATUSES
    if not opts.dry_run:
        (work / "replace.json").write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return report
