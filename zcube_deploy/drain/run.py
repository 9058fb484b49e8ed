"""`zcube drain` and `zcube undrain`: take an element out of service in an order that loses nothing it
can avoid, record exactly what was changed beside the plan, and put it back exactly.

Every change goes through push (push/runner.py): backup, diff, the management guard, apply, read
back, save or roll back, inside the managed scope. A step's config is the switch's rendered config
with the drain's edits (the platform's ``drained_config``); so a drain step changes exactly those
lines, and undrain, a push of the rendered config once the switch is proved to hold nothing else,
reverses exactly them. Steps for ``switch:NAME``:

1. ``steer`` (mode bgp only): the GRACEFUL_SHUTDOWN community (RFC 8326) on the routes the switch
   does not originate, so peers move transit away while every port is still up; then ``settle``
   seconds;
2. ``hosts``: each GPU port on the switch is taken down *by its host* (``--host-command``), so the
   host moves its traffic to its other port before the switch's side goes (without it, carrier
   loss at step 3 moves it and what the host sent meanwhile is lost: measured in the twin);
3. ``host ports``: the GPU-facing ports shut: carrier loss moves each GPU's traffic to its other
   NIC port (the hosts' fallbacks) if step 2 did not;
4. ``fabric ports``: the switch-to-switch ports shut: the peers' routes through it go (static: by
   carrier loss; bgp: BFD and the session);
5. ``check``: every drained port reads down on the switch.

``link:CABLE`` shuts the cable's switch end(s) in one step. The record ``drains/<kind>-<name>.json``
beside the plan holds the element, its blast radius, the ports shut, whether graceful shutdown is
on, and each step's push result; push and verify read it (records.py, docs/drain.md).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path


from zcube_deploy.access import endpoints, load_lab
from zcube_deploy.drain.blast import Blast, Element, blast_radius, parse_element
from zcube_deploy.drain.records import RECORDS, graceful_now, read_records, shut_now
from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.plan.io import wiring_identity
from zcube_deploy.plan.roles import design_of
from zcube_deploy.platforms import napalm_driver, platform_module
from zcube_deploy.push.options import Credentials, PushOptions
from zcube_deploy.push.runner import PushInterrupted, push_all
from zcube_deploy.push.targets import Target, select_targets
from zcube_deploy.safety import mask_credentials, redact_secrets
from zcube_deploy.verify.pipeline import run_verify

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
    host_command: str | None = None  # run per GPU port of the drained switch: {server} {port} {state} (down / up)
    plan_path: str = "PLAN"  # as given on the command line: the hints name the command to run with it


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun`` (singular) in the plural unless ``n`` is 1: "1 fabric link", "2 fabric links"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}es" if noun.endswith(("ch", "sh")) else f"{n} {noun}s"


def command_for(opts: DrainOptions, verb: str, switches: str) -> str:
    """The command line of `zcube VERB` on ``switches`` (``--only``) with the drain's plan, configs and lab, to paste."""
    args = ["zcube", verb, opts.plan_path, "--only", switches]
    if verb == "push" and opts.configs_dir != Path(opts.plan_path) and opts.configs_dir != Path(opts.plan_path).parent:
        args += ["--configs", str(opts.configs_dir)]
    if opts.lab_path:
        args += ["--lab", opts.lab_path]
    return shlex.join(args)


HOST_STEP = "hosts"
_HOST_FIELD = re.compile(r"^[A-Za-z0-9_.:@/-]+$")


def host_commands(template: str, host_ports: list[str], state: str) -> list[list[str]]:
    """The argument vectors of ``template`` for each ``server:port`` (split first, then each word formatted, so a
    name can never become a second word or a shell construct); a name outside [A-Za-z0-9_.:@/-] is refused."""
    words = shlex.split(template)
    if not any("{port}" in w for w in words):
        raise InputErrors(Problem("--host-command", "names no {port}: the command must act on one GPU port",
                                  "e.g. 'ssh {server} ip link set dev {port} {state}'"))
    out = []
    for hp in host_ports:
        server, port = hp.split(":", 1)
        bad = [x for x in (server, port) if not _HOST_FIELD.match(x)]
        if bad:
            raise InputErrors(Problem(hp, f"{bad[0]!r} cannot be passed to --host-command", "names of letters, digits and _.:@/-"))
        try:
            out.append([w.format(server=server, port=port, state=state) for w in words])
        except (KeyError, IndexError, ValueError) as exc:
            raise InputErrors(Problem("--host-command", f"bad field {exc}", "fields: {server} {port} {state}")) from None
    return out


def move_hosts(host_ports: list[str], state: str, opts: DrainOptions, say=print) -> dict:
    """Step ``hosts``: ``--host-command`` for every GPU port (``state``: down before the switch's ports shut, up after
    they came back); without a command the step is reported as not run, never as done."""
    if not opts.host_command:
        moves = "the GPU port moves" if len(host_ports) == 1 else f"the {len(host_ports)} GPU ports move"
        say(f"  not run (no --host-command): {moves} on carrier loss when the switch shuts {'it' if len(host_ports) == 1 else 'them'}; "
            "packets a host sends meanwhile are lost (docs/drain.md)")
        return {"ran": False, "state": state, "ports": len(host_ports), "failed": []}
    cmds = host_commands(opts.host_command, host_ports, state)
    if opts.dry_run:
        for c in cmds:
            say(f"    {shlex.join(c)}")
        return {"ran": False, "state": state, "ports": len(host_ports), "failed": [], "dry_run": True}

    def run(c: list[str]) -> str | None:
        try:
            r = subprocess.run(c, capture_output=True, text=True, timeout=opts.timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{type(exc).__name__}: {exc}"[:200]
        said = (r.stderr or r.stdout).strip()[:200]
        return None if r.returncode == 0 else f"exit {r.returncode}" + (f": {said}" if said else " (no output)")

    with ThreadPoolExecutor(max_workers=8) as pool:
        errors = list(pool.map(run, cmds))
    failed = [{"port": hp, "error": e} for hp, e in zip(host_ports, errors) if e]
    say(f"  {len(host_ports) - len(failed)} of {len(host_ports)} done" + (f", {len(failed)} failed:" if failed else ""))
    for f in failed:
        say(f"  {f['port']}: {f['error']}")
    return {"ran": True, "state": state, "ports": len(host_ports), "failed": failed}


def record_path(plan_dir: Path, element: Element) -> Path:
    return plan_dir / RECORDS / f"{element.kind}-{element.name}.json"


def _targets(plan: dict, opts: DrainOptions, switches: list[str]) -> dict[str, Target]:

    eps, _ = endpoints(opts.lab_path, opts.known_hosts, (wiring_identity(plan),))
    return {t.name: t for t in select_targets(plan, opts.configs_dir, ",".join(switches), eps, way_out=(
        "give --configs the folder this plan was rendered to (`zcube render PLAN -o DIR`; default: the plan's folder)"))}


def steps(blast: Blast) -> list[tuple[str, dict[str, tuple[str, ...]], bool]]:
    """(step name, switch -> ports shut after the step, graceful shutdown on)."""
    graceful = blast.mode == "bgp" and blast.element.kind == "switch"
    steps = []
    if graceful:
        steps.append(("steer", {sw: () for sw in blast.ports}, True))
    if blast.element.kind == "switch":
        sw = blast.element.name
        n_host = len(blast.host_ports)
        steps.append((HOST_STEP, {sw: ()}, graceful))  # the hosts take their ports down: the switch's config is unchanged
        steps.append(("host ports", {sw: blast.ports[sw][:n_host]}, graceful))
        steps.append(("fabric ports", {sw: blast.ports[sw]}, graceful))
    else:
        steps.append(("ports", dict(blast.ports), False))
    return steps


State = tuple[str, dict[str, tuple[str, ...]], bool]  # (label, switch -> ports shut, graceful shutdown on those switches)


def ladder(blast: Blast) -> list[State]:
    """The states the element's switches pass through, in the drain's order: before step 1, then after each step
    that pushes (step ``hosts`` changes no switch). Undrain walks the same states back, so an interrupted drain or
    undrain leaves each switch in one of them."""
    out: list[State] = [("before step 1", {sw: () for sw in blast.ports}, False)]
    out += [(f"after step {i} ({name})", shut, graceful) for i, (name, shut, graceful) in enumerate(steps(blast), 1) if name != HOST_STEP]
    return out


def record_blast(plan: dict, record: dict) -> Blast:
    """The blast radius a record was drained with, as far as the steps need it (ports, GPU ports, mode)."""
    b = record.get("blast") or {}
    return Blast(parse_element(record["element"], plan), {k: tuple(v) for k, v in record["ports"].items()},
                 tuple(b.get("host_ports", ())), (), (), 0, 0, b.get("mode", "static"))


def found_states(plan: dict, base: dict[str, Target], report: dict, states: list[State], other_shut: dict[str, tuple[str, ...]],
                 other_graceful: set[str]) -> dict[str, int | None]:
    """switch -> the last of ``states`` its scoped running config holds (read by the push dry run ``report``: its
    backup), the other drains' ports and steer included; None: none of them (a hand edit, or not read)."""
    pm = platform_module(plan["cluster"]["platform"])
    found: dict[str, int | None] = {}
    for d in report["devices"]:
        name, found[d["name"]] = d["name"], None
        if not d.get("backup"):
            continue
        t, running = base[name], Path(d["backup"]).read_text(encoding="utf-8")
        for k, (_, shut, graceful) in enumerate(states):
            cfg = pm.drained_config(t.intended, _union(other_shut, shut).get(name, ()), name in other_graceful or (graceful and name in shut))
            if not pm.drift_rows(running, cfg, t.scope.owns):
                found[name] = k
    return found


def _state_found(states: list[State], found: dict[str, int]) -> tuple[dict[str, tuple[str, ...]], set[str]]:
    """(switch -> ports shut, switches with graceful shutdown) of the states found switch by switch."""
    shut = {sw: states[k][1].get(sw, ()) for sw, k in found.items()}
    return {sw: p for sw, p in shut.items() if p}, {sw for sw, k in found.items() if states[k][2] and sw in states[k][1]}


def follow_switches(record: dict, states: list[State], found: dict[str, int], say) -> bool:
    """Make the record say the state read from its switches when it says another (an interrupted step reached a
    switch, or the record could not be written after it); True when it did."""
    shut, graceful = _state_found(states, found)
    if (shut, graceful) == ({sw: p for sw, p in shut_now(record).items() if p}, graceful_now(record)):
        return False
    where = ", ".join(f"{sw} {states[k][0]}" for sw, k in sorted(found.items()))
    say(f"{record['element']}: the record said \"{record.get('status')}\"; the switches hold: {where}; going on from there")
    record["steps"].append({"step": "read from the switches", "ok": True, "shut": {k: list(v) for k, v in shut.items()},
                            "graceful": sorted(graceful), "found": {sw: states[k][0] for sw, k in sorted(found.items())}})
    return True


def _interrupted(record: dict, path: Path, i: int, entry: dict, stopped: PushInterrupted, say, undrain: bool = False) -> None:
    """Ctrl-C during step ``i``'s push (``entry``: the step as the record would hold it): the record follows push's
    report (the switches the step reached, those in flight and how they ended, those not started) and is written; a
    re-run reads the switches and goes on from where they are."""
    by = {d["name"]: d["status"] for d in stopped.report["devices"]}
    reached = all(st in ("changed", "unchanged") for st in by.values())
    record["steps"].append({**entry, "ok": reached, "interrupted": True, "devices": {n: {"status": st} for n, st in sorted(by.items())}})
    said = ", ".join(f"{n} {st}" for n, st in sorted(by.items()))
    verb = "undrain" if undrain else "drain"
    record["status"] = (f"{verb}ing: step {i} ({entry['step'].removeprefix('undrain ')}) done, then interrupted ({said})" if reached
                        else f"interrupted at step {i} ({entry['step'].removeprefix('undrain ')}): {said}")
    _write(path, record)
    say(f"interrupted: the record {path} says {record['status']}; run `zcube {verb}` again to go on from the switches' state"
        + ("" if undrain else ", or `zcube undrain` to reverse what was done"))


def _union(*maps: dict[str, tuple[str, ...]] | dict[str, set[str]]) -> dict[str, tuple[str, ...]]:
    out: dict[str, set[str]] = {}
    for m in maps:
        for sw, ports in m.items():
            out.setdefault(sw, set()).update(ports)
    return {sw: tuple(sorted(p)) for sw, p in out.items()}


def _push_state(plan: dict, base: dict[str, Target], shut: dict[str, tuple[str, ...]], graceful: set[str], creds: Credentials,
                opts: DrainOptions, out: Path, dry_run: bool) -> dict:
    """Push each switch of ``base`` to its rendered config with ``shut`` ports shut and graceful shutdown on ``graceful``."""
    pm = platform_module(plan["cluster"]["platform"])
    targets = [replace(t, intended=pm.drained_config(t.intended, shut.get(sw, ()), sw in graceful)) for sw, t in sorted(base.items())]
    return push_all(targets, creds, PushOptions(dry_run=dry_run, known_hosts=opts.known_hosts or _lab_known_hosts(opts),
                                                timeout=opts.timeout), out)


def _differs(report: dict) -> dict[str, str]:
    """switch -> what a dry run found (a switch not as expected: lines that would change, or why it could not be read)."""
    return {d["name"]: (f"{counted(d['lines_changed'], 'line')} differ" if d["status"] == "would_change" else f"{d['status']}: {d.get('error')}")
            for d in report["devices"] if d["status"] != "unchanged"}


def _not_as_expected(plan: dict, base: dict[str, Target], shut: dict[str, tuple[str, ...]], graceful: set[str], creds: Credentials,
                     opts: DrainOptions, out: Path) -> list[Problem]:
    """Where the switches of ``base`` are not in the state the drains expect (``shut`` ports shut, graceful shutdown
    on ``graceful``), read by a push dry run: one problem per differing line (switch, line, expected vs found)."""
    report = _push_state(plan, base, shut, graceful, creds, opts, out, dry_run=True)
    platform = plan["cluster"]["platform"]
    pm = platform_module(platform)
    problems = []
    for d in report["devices"]:
        name = d["name"]
        hint = f"push the switch first (`{command_for(opts, 'push', name)}`) or see its drift with `zcube audit`; push's preview: {out}"
        if d["status"] == "unchanged":
            continue
        if d["status"] != "would_change" or not d.get("backup"):
            problems.append(Problem(name, f"cannot tell whether it is as the drains expect: {d['status']}: {d.get('error')}", hint))
            continue
        t = base[name]
        running = Path(d["backup"]).read_text(encoding="utf-8")
        rows = pm.drift_rows(running, pm.drained_config(t.intended, shut.get(name, ()), name in graceful), t.scope.owns)
        for r in rows:
            found, expected = (repr(x) if x is not None else "nothing" for x in (r.have, r.want))
            problems.append(Problem(f"{name}: {redact_secrets(r.section, platform)}",
                                    redact_secrets(("" if r.line in (r.have, r.want) else f"{r.line!r}: ") + f"expected {expected}, found {found}",
                                                   platform), hint))
        if not rows:  # (the remediation and the drift read the same difference; never silent if they part)
            problems.append(Problem(name, f"{counted(d['lines_changed'], 'line')} differ (see {d.get('diff')})", hint))
    return problems


def undrain_steps(record: dict) -> list[tuple[str, dict[str, tuple[str, ...]], set[str]]]:
    """(step name, switch -> ports still shut after it, switches with graceful shutdown after it): the drain
    reversed from the state its record holds: the fabric ports first (the sessions come up while the GPU ports
    stay down), then the GPU ports, then graceful shutdown off. A link drain is one step."""
    shut, graceful = {sw: ps for sw, ps in shut_now(record).items() if ps}, graceful_now(record)
    host = {f"{sw}:{p}" for sw, ports in record["ports"].items() for p in ports[:len(record.get("blast", {}).get("host_ports", ()))]}
    out: list[tuple[str, dict[str, tuple[str, ...]], set[str]]] = []
    if record["element"].startswith("switch:"):
        fabric_up = {sw: tuple(p for p in ps if f"{sw}:{p}" in host) for sw, ps in shut.items()}
        fabric_up = {sw: ps for sw, ps in fabric_up.items() if ps}
        if fabric_up != shut:
            out.append(("fabric ports", fabric_up, graceful))
        if fabric_up:
            out.append(("host ports", {}, graceful))
        if hosts_moved(record):
            out.append((HOST_STEP, {}, graceful))
        if graceful:
            out.append(("steer off", {}, set()))
    if not out:
        out.append(("ports", {}, set()))
    return out


def hosts_moved(record: dict) -> bool:
    """The drain's host command took (some of) the GPU ports down and no undrain has brought them back yet."""
    state = None
    for st in record["steps"]:
        if st.get("step") in (HOST_STEP, f"undrain {HOST_STEP}") and (st.get(HOST_STEP) or {}).get("ran"):
            state = st[HOST_STEP].get("state")
    return state == "down"


def hosts_left(record: dict, ports: int) -> str:
    """What the drain's host command did to the GPU ports, for undrain's refusal to go on without one: a command that
    failed may have taken its port down all the same, so the state of those is not known (never "taken down")."""
    runs = [st[HOST_STEP] for st in record["steps"] if st.get("step") == HOST_STEP and (st.get(HOST_STEP) or {}).get("ran")]
    failed = len(runs[-1].get("failed") or ()) if runs else 0
    if not failed:
        return f"the drain took {ports} GPU ports down on their hosts (--host-command)"
    return (f"the drain ran --host-command to take {ports} GPU ports down on their hosts: {ports - failed} done, {failed} failed "
            "(their ports' state on the hosts is not known)")


def closing_line(doc: dict, plan_dir: Path, dry_run: bool) -> str:
    """The drain's last line: its status, what the check read (the drained state, or why it was not read: never
    silent) and the record's file, or that none was written (a first step that failed changes nothing)."""
    if dry_run:
        return doc["status"]
    check = doc.get("check")
    if check is None:
        said = ""
    elif check.get("ports_down"):
        n = sum(len(p) for p in doc["ports"].values())
        said = f"; check: the {counted(n, 'drained port')} read{'s' if n == 1 else ''} down"
    elif check.get("ports_down") is None:
        said = f"; check not run: {check.get('error')}"
    else:
        up = check.get("still_up") or []
        said = f"; check: {counted(len(up), 'drained port')} read{'s' if len(up) == 1 else ''} up: {', '.join(up[:4])}" + (", ..." if len(up) > 4 else "")
    kind, name = doc["element"].split(":", 1)
    path = plan_dir / RECORDS / f"{kind}-{name}.json"
    return doc["status"] + said + (f"; record {path}" if path.exists() else "; no record written")


def _dry_run_dir(plan_dir: Path, element: Element) -> Path:
    """Where a dry run writes its push previews (each switch's .diff: the lines it would send), emptied first.
    Beside the drains' work folders, never in drains/: a dry run writes no record."""
    d = plan_dir / "drain-work" / f"dry-run-{element.kind}-{element.name}"
    shutil.rmtree(d, ignore_errors=True)
    return d


def _say_lines(report: dict, say) -> None:
    """Every line a dry-run step would send, switch by switch, as push wrote them (secrets masked)."""
    for d in report["devices"]:
        if d.get("diff"):
            lines = Path(d["diff"]).read_text(encoding="utf-8").splitlines()
            say(f"  {d['name']} ({d['diff']}):" if lines else f"  {d['name']}: no change")
            for line in lines:
                say(f"    {line}")


def _write(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def _lab_known_hosts(opts: DrainOptions) -> str | None:
    """The lab's known_hosts (its lab.json checked by :func:`_targets` before)."""
    return load_lab(opts.lab_path)[1] if opts.lab_path else None


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


def _host_step(record: dict, i: int, shut: dict, graceful: bool, blast: Blast, opts: DrainOptions, path: Path, say) -> bool:
    """Drain step ``hosts``: the host command per GPU port, recorded (written unless a dry run); False if one failed."""
    say(f"step {i} {HOST_STEP}: {counted(len(blast.host_ports), 'GPU port')} to take down on their hosts")
    moved = move_hosts(list(blast.host_ports), "down", opts, say)
    record["steps"].append({"step": HOST_STEP, "ok": not moved["failed"], "shut": {k: list(v) for k, v in shut.items()},
                            "graceful": sorted(set(shut) if graceful else ()), HOST_STEP: moved})
    if moved["failed"]:
        record["status"] = f"failed at step {i} ({HOST_STEP}): {counted(len(moved['failed']), 'host command')} failed"
    if not opts.dry_run:
        _write(path, record)
    return not moved["failed"]


def refuse_a_stage(plan: dict) -> None:
    """A migration stage's plan is not drained (exit 2): its units leave service by the stage's moves."""
    if design_of(plan) == "stage":
        raise InputErrors(Problem("PLAN", "drain takes a ZCube or a ROFT plan; this one is a migration stage's (design stage)",
                                  "a stage's moves take its units out of service themselves (docs/migrate.md); drain in the "
                                  "plan of the fabric as it runs"), "cannot drain")


def blast_lines(blast: Blast, listed: Path) -> list[str]:
    """The blast radius in words, said before the first step: the counts, then the GPU ports that move (the
    first few; every one in ``listed``, written here)."""
    listed.parent.mkdir(parents=True, exist_ok=True)
    listed.write_text(json.dumps(blast.as_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    b = blast.as_dict()
    gpus = list(blast.host_ports)
    shown = ", ".join(gpus[:6]) + (f", ... {len(gpus) - 6} more" if len(gpus) > 6 else "")
    move = "1 GPU port moves to its" if len(gpus) == 1 else f"{len(gpus)} GPU ports move to their"
    return [f"{b['element']} (mode {b['mode']}): {counted(b['ports_down'], 'port')} down, {move} other port, "
            f"{counted(len(b['fabric_links']), 'fabric link')} down, {counted(len(b['routes_withdrawn']), 'route')} withdrawn; analysis: "
            f"{counted(b['gpu_pairs_without_routed_path'], 'GPU pair')} without a routed path",
            f"  GPU ports: {shown or 'none'}" + (f" (every one in {listed})" if gpus else "")]


def drain(plan: dict, plan_dir: Path, element_text: str, opts: DrainOptions, creds: Credentials, say=print) -> dict:
    """Drain ``element_text`` (``switch:NAME`` or ``link:CABLE``); returns the record (written as it goes, unless dry run).

    Other drains on the same switches stay as they are: each step's config carries their ports too,
    and before each step a dry run proves the switch is exactly in the state the drains expect. A drain
    that was interrupted or failed (its record says so) goes on from the state read from its switches."""

    refuse_a_stage(plan)
    element = parse_element(element_text, plan)
    path = record_path(plan_dir, element)
    records = {d["element"]: d for d in read_records(plan_dir, plan)}
    earlier = records.pop(element.key, None)
    if earlier is not None and str(earlier.get("status", "drained")).startswith("drained"):
        raise InputErrors(Problem(str(path), f"{element.key} is already drained", f"`zcube undrain PLAN {element.key}` first"))
    blast = blast_radius(plan, element)
    if blast.gpu_pairs_without_routed_path and not opts.accept_loss:
        raise InputErrors(Problem(element.key, f"the analysis predicts {blast.gpu_pairs_without_routed_path} GPU pairs without a routed "
                                               "path while it is drained", "--accept-loss to drain anyway"))
    others = list(records.values())
    other_shut = _union(*(shut_now(d) for d in others))
    other_graceful = set().union(*(graceful_now(d) for d in others)) if others else set()
    base = _targets(plan, opts, sorted(blast.ports))
    record = earlier or {"element": element.key, "blast": blast.as_dict(), "ports": {k: list(v) for k, v in blast.ports.items()},
                         "graceful_shutdown": False, "steps": [], "status": "draining"}
    work = _dry_run_dir(plan_dir, element) if opts.dry_run else plan_dir / "drain-work" / f"{element.kind}-{element.name}"
    if opts.host_command:
        host_commands(opts.host_command, list(blast.host_ports), "down")  # a bad template is refused before any step
    for line in blast_lines(blast, work / "blast.json"):  # what it takes out of service, before anything is sent
        say(line)
    states = ladder(blast)
    at = _start(plan, base, states, record, earlier is not None, other_shut, other_graceful, creds, opts, work, say)
    record["status"] = "draining"
    _drain_steps(plan, base, blast, record, path, at, other_shut, other_graceful, creds, opts, work, say)
    if opts.dry_run:
        return record
    if record["status"] == "drained":
        _check_drained(record, plan, base, blast, creds, opts)
    if any(st["ok"] or (st.get(HOST_STEP) or {}).get("ran") for st in record["steps"]):  # a switch or a host was changed
        _write(path, record)
    return record


def _start(plan: dict, base: dict[str, Target], states: list[State], record: dict, resume: bool, other_shut, other_graceful: set[str],
           creds: Credentials, opts: DrainOptions, work: Path, say) -> int:
    """The drain's state on its switches before it acts (an index of ``states``): 0 for a new drain, whose switches
    must hold exactly what the other drains expect (the dry run too: a hand edit inside the scope would otherwise
    stop a later step, or be folded into a step's diff); for a drain that was interrupted or failed, the state read
    from the switches (the least drained one), the record made to say it. Else nothing is done (exit 2)."""
    if not resume:
        problems = _not_as_expected(plan, base, other_shut, other_graceful, creds, opts, work / "step-0-expected")
        if problems:
            raise InputErrors(problems, f"cannot drain {record['element']}: the switches are not as the drains expect; nothing was done")
        return 0
    report = _push_state(plan, base, other_shut, other_graceful, creds, opts, work / "resume-read", dry_run=True)
    found = found_states(plan, base, report, states, other_shut, other_graceful)
    if any(k is None for k in found.values()):
        shut, graceful = _union(other_shut, shut_now(record)), other_graceful | graceful_now(record)
        problems = _not_as_expected(plan, base, shut, graceful, creds, opts, work / "resume-expected")
        raise InputErrors(problems or [Problem(sw, "in none of the drain's states") for sw, k in found.items() if k is None],
                          f"cannot go on with the drain of {record['element']} ({record.get('status')}): its switches are in none of "
                          "the drain's states (changed by hand since?); nothing was done")
    follow_switches(record, states, found, say)  # type: ignore[arg-type]
    return min(k for k in found.values() if k is not None)


def _drain_steps(plan: dict, base: dict[str, Target], blast: Blast, record: dict, path: Path, at: int, other_shut, other_graceful: set[str],
                 creds: Credentials, opts: DrainOptions, work: Path, say) -> None:
    """The drain's steps from ladder state ``at`` on (the steps the switches already hold are said and skipped), the
    record written after each; ``record["status"]`` says how they ended."""
    states = ladder(blast)
    before = _union(other_shut, states[at][1])
    before_graceful = other_graceful | (set(states[at][1]) if states[at][2] else set())
    pushed, level = 0, 0
    all_steps = steps(blast)
    for i, (name, shut, graceful) in enumerate(all_steps, 1):
        if name != HOST_STEP:
            level += 1
        if level <= at and (name != HOST_STEP or at > level):  # the switches hold it already (hosts: a later step too)
            say(f"step {i} {name}: done before (the switches hold it)")
            continue
        if name == HOST_STEP:  # the hosts act, not the switch: no push
            if any(st.get("step") == HOST_STEP and st["ok"] for st in record["steps"]):
                say(f"step {i} {name}: done before (the record says so)")
                continue
            if not _host_step(record, i, shut, graceful, blast, opts, path, say):
                return
            continue
        # (the state before the first push step was checked or read; a dry run applies no step, so only that state can
        # be checked and each later step's diff also shows the lines of the steps before it)
        expected = None if opts.dry_run or not pushed else _push_state(plan, base, before, before_graceful, creds, opts,
                                                                         work / f"step-{i}-expected", dry_run=True)
        pushed += 1
        differs = _differs(expected) if expected else {}
        if differs:
            record["status"] = f"stopped before step {i} ({name}): the switch is not as the drains expect"
            record["differs"] = differs
            return
        now = _union(other_shut, shut)
        now_graceful = other_graceful | (set(shut) if graceful else set())
        entry = {"step": name, "shut": {k: list(v) for k, v in shut.items()}, "graceful": sorted(set(shut) if graceful else ())}
        try:
            report = _push_state(plan, base, now, now_graceful, creds, opts, work / f"step-{i}", opts.dry_run)
        except PushInterrupted as stopped:
            _interrupted(record, path, i, entry, stopped, say)
            raise
        ok = report["ok"]
        record["steps"].append({**entry, "ok": ok,
                                "devices": {d["name"]: {k: d.get(k) for k in ("status", "lines_changed", "error")} for d in report["devices"]}})
        since = ", lines of the steps before included: a dry run applies none" if opts.dry_run and pushed > 1 else ""
        say(f"step {i} {name}: " + ", ".join(f"{d['name']} {d['status']} ({counted(d.get('lines_changed', 0), 'line')}{since})" for d in report["devices"]))
        if opts.dry_run:
            _say_lines(report, say)
        if not ok:
            record["status"] = f"failed at step {i} ({name})"
            return
        record["graceful_shutdown"] = graceful
        before, before_graceful = now, now_graceful
        if not opts.dry_run:
            _write(path, record)  # the state so far: a later failure or crash leaves what was done recorded
            if name == "steer":
                time.sleep(opts.settle_s)
    record["status"] = "would drain" if opts.dry_run else "drained"


def _check_drained(record: dict, plan: dict, base, blast, creds: Credentials, opts: DrainOptions) -> None:
    """The drained state read back: every port of the blast radius down (``record["check"]``); a device error leaves
    the check not run, said so, never passed."""
    try:
        states = port_states(plan, base, creds, opts)
        still_up = [f"{sw} {p}" for sw, ports in blast.ports.items() for p in ports if states.get(sw, {}).get(p, False)]
        record["check"] = {"ports_down": not still_up, "still_up": still_up}
        if still_up:
            record["status"] = "drained, check failed"
    except Exception as exc:  # noqa: BLE001 (a device error: the drain is done, the check is not)
        record["check"] = {"ports_down": None, "error": mask_credentials(f"{type(exc).__name__}: {exc}", creds.password, creds.secret)[:300]}
        record["status"] = "drained, check not run"


def undrain(plan: dict, plan_dir: Path, element_text: str, opts: DrainOptions, creds: Credentials, say=print) -> dict:
    """Reverse the drain of ``element_text`` exactly (other drains stay, named in ``still_drained``), remove the
    record, and verify the switches. It starts from the state read from the switches: a drain or an undrain that
    was interrupted (or whose record lags) goes on from where its switches are."""
    element = parse_element(element_text, plan)
    path = record_path(plan_dir, element)
    records = {d["element"]: d for d in read_records(plan_dir, plan)}
    if element.key not in records:
        raise InputErrors(Problem(str(path), f"{element.key} is not drained (no record)",
                                  f"drained now: {', '.join(sorted(records))}" if records else f"nothing is drained ({plan_dir / RECORDS} holds no record)"))
    record = records.pop(element.key)
    others = list(records.values())
    other_shut = _union(*(shut_now(d) for d in others))
    other_graceful = set().union(*(graceful_now(d) for d in others)) if others else set()
    base = _targets(plan, opts, sorted(record["ports"]))
    work = _dry_run_dir(plan_dir, element) if opts.dry_run else plan_dir / "drain-work" / f"{element.kind}-{element.name}"
    # 1. the switches hold one of the drain's states with what the other drains left (nothing else changed inside the
    #    scope since); the record is made to say the state read when it says another (an interrupted step)
    now = _union(other_shut, shut_now(record))
    check = _push_state(plan, base, now, other_graceful | graceful_now(record), creds, opts, work / "undrain-expected", dry_run=True)
    states = ladder(record_blast(plan, record))
    found = found_states(plan, base, check, states, other_shut, other_graceful)
    if all(k is not None for k in found.values()):
        if follow_switches(record, states, found, say) and not opts.dry_run:  # type: ignore[arg-type]
            _write(path, record)
    elif not opts.force:
        raise InputErrors([Problem(sw, f"differs from the state the drains left: {why}",
                                   f"see {work / 'undrain-expected'} (push dry run); --force to push anyway") for sw, why in _differs(check).items()],
                          f"cannot undrain {element.key}")
    host_ports = list(record.get("blast", {}).get("host_ports", ()))
    if hosts_moved(record) and not opts.host_command and not opts.dry_run:
        raise InputErrors(Problem(str(path), hosts_left(record, len(host_ports)),
                                  "give undrain the same --host-command so they come back ({state} is up)"))
    todo = undrain_steps(record)
    say(f"{element.key} ({record.get('status')}): undrain in {counted(len(todo), 'step')}: {', '.join(n for n, _, _ in todo)}")
    result = _undrain_steps(plan, base, record, path, todo, other_shut, other_graceful, creds, opts, work, say)
    if opts.dry_run or not result["ok"]:
        return result
    path.unlink()  # the drain is undone: its record must not set findings aside any more
    # 3. back as planned: verify of the switches (the other drains' ports set aside)
    only = ",".join(sorted(record["ports"]))
    v = run_verify(plan, None, lab_path=opts.lab_path, known_hosts=opts.known_hosts, only=only, creds=creds,
                   drained={k: set(p) for k, p in other_shut.items()})
    result["verify"] = {"findings": len(v["findings"]), "unreachable": v["errors"]}
    result["back_as_planned"] = not v["findings"] and not v["errors"]
    say(f"verify {only}: {counted(len(v['findings']), 'finding')}"
        + (f", {counted(len(v['errors']), 'switch')} not read: {v['errors']}" if v["errors"] else "")
        + ("" if result["back_as_planned"] else f" (`{command_for(opts, 'verify', only)}` lists them)"))
    result["status"] = "back as planned; record removed" if result["back_as_planned"] else "undone, but NOT back as planned (verify above); record removed"
    result["still_drained"] = sorted(d["element"] for d in others)  # their ports stay down: "as planned" is with them
    return result


def _undrain_steps(plan: dict, base: dict[str, Target], record: dict, path: Path, todo: list, other_shut, other_graceful: set[str],
                   creds: Credentials, opts: DrainOptions, work: Path, say) -> dict:
    """2. Back in stages, the drain's steps reversed (measured in the twin, docs/drain.md: one push brought the GPU
    ports up before the switch's sessions, and traffic that came back to them was lost meanwhile); after each the
    record holds the state reached (a failed or interrupted step leaves it for a new undrain to go on from)."""
    result = {"element": record["element"], "ok": True, "steps": [], "devices": []}
    host_ports = list(record.get("blast", {}).get("host_ports", ()))
    for i, (name, shut, graceful) in enumerate(todo, 1):
        entry = {"step": f"undrain {name}", "shut": {k: list(v) for k, v in shut.items()}, "graceful": sorted(graceful)}
        if name == HOST_STEP:
            say(f"undrain step {i} {name}: {counted(len(host_ports), 'GPU port')} to bring up on their hosts")
            moved = move_hosts(host_ports, "up", opts, say)
            result["steps"].append({"step": name, "ok": not moved["failed"]})
            failed = f"undrain failed at step {i} ({name}): {counted(len(moved['failed']), 'host command')} failed; the record keeps the state reached"
            if not opts.dry_run:  # (a failed step is not recorded as done: the hosts' ports count as down, a new undrain runs it again)
                record["steps"] += [] if moved["failed"] else [{**entry, "ok": True, HOST_STEP: moved}]
                record["status"] = failed if moved["failed"] else f"undraining: step {i} ({name}) done"
                _write(path, record)
            if moved["failed"]:
                result["ok"], result["status"] = False, failed
                break
            continue
        try:
            report = _push_state(plan, base, _union(other_shut, shut), other_graceful | graceful, creds, opts, work / f"undrain-{i}", opts.dry_run)
        except PushInterrupted as stopped:
            _interrupted(record, path, i, entry, stopped, say, undrain=True)
            raise
        since = ", lines of the steps before included: a dry run applies none" if opts.dry_run and i > 1 else ""
        say(f"undrain step {i} {name}: " + ", ".join(f"{d['name']} {d['status']} ({counted(d.get('lines_changed', 0), 'line')}{since})"
                                                     for d in report["devices"]))
        if opts.dry_run:
            _say_lines(report, say)
        result["steps"].append({"step": name, "ok": report["ok"]})
        result["ok"], result["devices"] = report["ok"], report["devices"]
        if not report["ok"]:
            result["status"] = f"undrain failed at step {i} ({name}); the record keeps the state reached: {path}"
            break
        if not opts.dry_run:
            record["steps"].append({**entry, "ok": True})
            record["status"] = f"undraining: step {i} ({name}) done"
            _write(path, record)
            if name == "fabric ports":
                time.sleep(opts.settle_s)  # the sessions come up before traffic is let back to the GPU ports
    else:
        result["status"] = "would undrain" if opts.dry_run else "undone"
    return result
