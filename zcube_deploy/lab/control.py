"""Running a lab from the command line, and talking to a running one through its folder.

A lab started by ``zcube lab up PLAN -o DIR`` serves until SIGINT/SIGTERM and, every two seconds,
looks for DIR/control.json: a list of wiring operations (the physical fixes of a verify.json) that
another process (``zcube lab fix``) leaves there. The lab takes the file (renames it DIR/control.work: the
acknowledgement that it is being applied), applies it, writes DIR/control.error when it refused it,
rewrites DIR/wiring.json and removes DIR/control.work (done). This module holds both sides of that protocol.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import TypeAdapter
from typing_extensions import TypedDict

from zcube_deploy.access import LAB_LOCK, load_lab, plan_words, read_lab
from zcube_deploy.errors import InputErrors, Problem, ZCubeError
from zcube_deploy.lab.wiring import operation_problems
from zcube_deploy.migrate.labops import physical_ops
from zcube_deploy.plan.io import wiring_identity
from zcube_deploy.plan.state import read_state

CONTROL_FILE = "control.json"
CONTROL_ERROR = "control.error"
CONTROL_REPLY = "control.reply"  # the answer to a request (replace, console, rerole)
STAGE_RECORD = "migration.json"  # the migration stages a lab has had (`zcube lab fix --stage`, lab/stage.py)
CONTROL_WORK = "control.work"  # control.json once the lab took it; removed when the work is done
WORK_LIMIT_SECONDS = 900  # the longest `lab fix` waits for a taken request to be done (a lab killed mid-work)
MAX_CONSOLE_BYTES = 1024 * 1024  # a console paste is a bootstrap, not a config dump
POLL_SECONDS = 2.0  # how often a running lab looks for control.json
ACK_POLL_SECONDS = 0.2  # how often `lab fix` looks whether the lab took it
MAX_BASELINE_BYTES = 16 * 1024 * 1024  # a site baseline is a running config, not a disk image


def read_baseline(path: str | None) -> str | None:
    """--baseline: None for the lab's site baseline, "none" for a bare config, else a file of RGOS lines."""
    if path is None:
        return None
    if path == "none":
        return ""
    hint = "give a text file of RGOS config lines"
    p = Path(path)
    try:
        if not p.is_file():  # a FIFO or a device would block or never end
            raise InputErrors(Problem(path, "not a regular file" if p.exists() else "no such file", hint))
        if p.stat().st_size > MAX_BASELINE_BYTES:
            raise InputErrors(Problem(path, f"{p.stat().st_size} bytes: more than a site baseline's {MAX_BASELINE_BYTES}", hint))
        return p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputErrors(Problem(path, f"cannot read it: {exc.strerror}", hint)) from None
    except UnicodeDecodeError as exc:
        raise InputErrors(Problem(path, f"not UTF-8 text: {exc.reason} at byte {exc.start}", hint)) from None


def endpoint_rows(plan: dict, endpoints: dict[str, tuple[str, int]]) -> list[tuple[str, str, str]]:
    """(switch, host:port, management address in the plan) for each switch of a lab's endpoints ({switch: (host,
    port)}, as the lab serves them or ``access.load_lab`` reads them from its lab.json), in name order."""
    mg = {s["name"]: s["mgmt_address"] for s in plan["switches"]}
    return [(name, f"{host}:{port}", mg.get(name, "-")) for name, (host, port) in sorted(endpoints.items())]


# what an earlier lab left in its folder that a new lab must not take as its own: requests not taken (a `lab fix`
# that gave up withdraws its own; one killed mid-wait may not), their answers, the migration stages applied
STALE_STATE = (CONTROL_FILE, CONTROL_FILE + ".tmp", CONTROL_WORK, CONTROL_ERROR, CONTROL_REPLY, STAGE_RECORD, STAGE_RECORD + ".tmp")


def clear_state(out_dir: str) -> list[str]:
    """Remove an earlier lab's state from ``out_dir`` (:data:`STALE_STATE`); returns the names removed."""
    removed = []
    for name in STALE_STATE:
        p = Path(out_dir) / name
        if p.is_file():
            p.unlink()
            removed.append(name)
    return removed


LOCK_TRIES = 10  # a `zcube lab up` retries a held lock this many times, 0.1 s apart (a command probing it holds it an instant)


def hold_folder(out_dir: str | Path):
    """Take the lab folder ``out_dir`` for this process's lab: an exclusive flock on DIR/lab.lock (the pid written in it),
    held for the lab's life (:func:`release_folder`). A folder a running lab holds is an input error naming its pid:
    a second lab there would overwrite the first one's lab.json and known_hosts. A lock rather than a pid in a file:
    the kernel drops it with the process however it ends (SIGKILL too), so a dead lab never holds a folder and a
    reused pid never passes for one. Returns the open lock file."""
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    fh = open(d / LAB_LOCK, "a+", encoding="utf-8")
    for _ in range(LOCK_TRIES):
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            time.sleep(0.1)
    else:
        fh.seek(0)
        pid = fh.read().strip() or "?"
        fh.close()
        raise InputErrors(Problem(str(out_dir), f"a running lab (pid {pid}) serves this folder: a second lab would overwrite its "
                                  "lab.json and known_hosts", f"stop it first (Ctrl-C where it runs, or kill -INT {pid}), or give "
                                  "another -o DIR"), "no lab started")
    fh.seek(0)
    fh.truncate()
    fh.write(f"{os.getpid()}\n")
    fh.flush()
    return fh


def release_folder(fh, out_dir: str | Path) -> None:
    """A lab that stops: its lab.json removed (a script waiting on lab.json, or a command given it, is never told of a
    lab that is gone), then its folder lock released."""
    (Path(out_dir) / "lab.json").unlink(missing_ok=True)
    fh.close()


def serve(plan: dict, out_dir: str, faults: str | None = None, seed: int = 0, port_base: int | None = None,
          baseline: str | None = None, on_ready: Callable[[object, dict], None] | None = None, baseline_name: str = "baseline",
          on_cleared: Callable[[list[str]], None] | None = None) -> None:
    """Serve every switch of ``plan`` over SSH until SIGINT/SIGTERM; apply control files left in ``out_dir``.

    A new lab starts from a clean folder: an earlier lab's requests, answers and migration record there are
    removed first (``on_cleared(names)`` is told which). ``on_ready(lab, doc)`` runs once the lab listens
    and DIR/lab.json (``doc``) is written.
    """
    from zcube_deploy.lab.server import Lab  # start-up time: asyncssh loads only when a lab is served, not for wiring or fixes

    lab = Lab(plan, faults=faults, seed=seed, port_base=port_base, baseline=baseline, baseline_name=baseline_name)
    lock = hold_folder(out_dir)  # (after the inputs are checked: a refused `lab up` changes nothing)
    removed = clear_state(out_dir)
    if removed and on_cleared:
        on_cleared(removed)

    async def run() -> None:
        await lab.start()
        doc = lab.write_files(out_dir)
        if on_ready:
            on_ready(lab, doc)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), POLL_SECONDS)
            except asyncio.TimeoutError:
                lab.poll_control(out_dir)
        await lab.stop()

    try:
        asyncio.run(run())
    finally:
        release_folder(lock, out_dir)


def _read_findings(verify_json: str) -> dict | list:
    try:
        return json.loads(Path(verify_json).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputErrors(Problem(verify_json, f"cannot read it: {exc.strerror}")) from None
    except (ValueError, RecursionError) as exc:  # JSON syntax, undecodable bytes, nesting beyond the parser
        raise InputErrors(Problem(verify_json, f"not a verify.json (JSON): {exc}")) from None


def fix_operations(verify_json: str) -> tuple[list[dict], list[dict]]:
    """(wiring operations, findings) of a verify.json: every finding's physical fixes, in order.

    The whole file is checked first (each finding a mapping, each `fix` a list of well-formed wiring
    operations): a bad file raises InputErrors naming every problem, and no fix is sent.
    """
    doc = _read_findings(verify_json)
    findings = doc.get("findings") if isinstance(doc, dict) else None
    if not isinstance(findings, list):
        raise InputErrors(Problem(verify_json, "not a verify.json: expected a mapping with a 'findings' list",
                                  "give the verify.json that `zcube verify -o DIR` wrote"))
    if "runner" in doc:  # audit.json's mark: its fixes are config lines and texts, not wiring operations (one message, not one a fix)
        raise InputErrors(Problem(verify_json, "an audit report (audit.json), not a verify.json: `lab fix --findings` takes verify's "
                                  "physical fixes", "an audit's findings are fixed by `zcube push` (config drift) or by the finding's "
                                  "fix text; for the lab's cabling run `zcube verify PLAN --lab DIR/lab.json -o OUT` and give OUT/verify.json"))
    problems: list[Problem] = []
    ops: list[dict] = []
    for i, f in enumerate(findings):
        if not isinstance(f, dict):
            problems.append(Problem(f"findings[{i}]", f"expected a mapping, found {type(f).__name__}"))
            continue
        fix = f.get("fix", [])
        found = operation_problems(fix, f"findings[{i}].fix")
        problems += found
        if not found:
            ops += fix
    if problems:
        shown = problems[:20] + ([Problem("", f"... and {len(problems) - 20} more")] if len(problems) > 20 else [])
        raise InputErrors(shown, f"invalid findings file {verify_json} (no fix applied)")
    return ops, findings


def request_fixes(lab_dir: str, ops: list[dict] | dict, wait: float, source: str = "") -> None:
    """Leave ``ops`` in LAB_DIR/control.json, wait up to ``wait`` seconds for the running lab to take them (it renames
    the file control.work), then until it has done them (control.work gone; at most WORK_LIMIT_SECONDS)."""
    control = Path(lab_dir) / CONTROL_FILE
    if not (Path(lab_dir) / "lab.json").exists():
        raise InputErrors(Problem(lab_dir, "no lab.json here", "start a lab with `zcube lab up PLAN -o DIR`"))
    (Path(lab_dir) / CONTROL_REPLY).unlink(missing_ok=True)
    tmp = control.with_name(CONTROL_FILE + ".tmp")  # whole or not at all: the lab never reads half a file
    tmp.write_text(json.dumps(ops))
    tmp.replace(control)
    deadline = time.monotonic() + wait
    while control.exists() and time.monotonic() < deadline:
        time.sleep(ACK_POLL_SECONDS)
    try:
        control.unlink()  # not taken: withdrawn, so a lab started later in this folder never applies a stale request
    except FileNotFoundError:
        pass  # taken in the meantime: wait for the work as usual
    else:
        raise ZCubeError(f"the lab did not pick up {control} within {wait:g} s: is `zcube lab up` running for {lab_dir}? "
                         "(the request was withdrawn: nothing applied)")
    work = control.with_name(CONTROL_WORK)  # taken: the lab works on it (a stage of thousands of moves takes a while)
    deadline = time.monotonic() + WORK_LIMIT_SECONDS
    while work.exists() and time.monotonic() < deadline:
        time.sleep(ACK_POLL_SECONDS)
    if work.exists():
        raise ZCubeError(f"the lab took {control} but did not finish it within {WORK_LIMIT_SECONDS} s (it still holds {work})")
    refused = Path(lab_dir) / CONTROL_ERROR
    if refused.exists():
        raise InputErrors(Problem(source or str(control), f"the running lab refused the fixes, none applied: {refused.read_text().strip()}"))


def lab_switch(lab_dir: str, switch: str) -> None:
    """Refuse (exit 2, with the lab's switches) a name that is not a switch of the lab in ``lab_dir``."""
    path = Path(lab_dir) / "lab.json"
    if not path.exists():
        raise InputErrors(Problem(lab_dir, "no lab.json here", "start a lab with `zcube lab up PLAN -o DIR`"))
    names = sorted(load_lab(path)[0])
    if switch not in names:
        raise InputErrors(Problem("SWITCH", f"{switch!r} is not a switch of this lab", "the lab's switches: " + ", ".join(names)))


def request(lab_dir: str, doc: dict, wait: float, source: str) -> dict:
    """Send a request to the running lab and return its answer (LAB_DIR/control.reply)."""
    request_fixes(lab_dir, doc, wait, source)
    return json.loads((Path(lab_dir) / CONTROL_REPLY).read_text(encoding="utf-8"))


def replace_switch(lab_dir: str, switch: str, wait: float) -> dict:
    """`zcube lab replace`: the running lab swaps ``switch`` for a factory-fresh unit; returns its serial and chassis id."""
    lab_switch(lab_dir, switch)
    return request(lab_dir, {"replace": switch}, wait, f"{lab_dir} (replace {switch})")


def console_lines(path: str) -> list[str]:
    """The lines of a file to paste at a console: a regular UTF-8 text file of at most MAX_CONSOLE_BYTES."""
    p = Path(path)
    hint = "give the text file to paste (e.g. the bootstrap `zcube replace` wrote)"
    try:
        if not p.is_file():
            raise InputErrors(Problem(path, "not a regular file" if p.exists() else "no such file", hint))
        if p.stat().st_size > MAX_CONSOLE_BYTES:
            raise InputErrors(Problem(path, f"{p.stat().st_size} bytes: more than a console paste's {MAX_CONSOLE_BYTES}", hint))
        return p.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputErrors(Problem(path, f"cannot read it: {exc.strerror}", hint)) from None
    except UnicodeDecodeError as exc:
        raise InputErrors(Problem(path, f"not UTF-8 text: {exc.reason} at byte {exc.start}", hint)) from None


def console_paste(lab_dir: str, switch: str, path: str, wait: float) -> dict:
    """`zcube lab console`: paste the lines of ``path`` at ``switch``'s serial console in the running lab.

    Returns the lab's answer: {"lines": N, "rejected": [[line number, line (secrets masked), error], ...], "ssh": ...}."""
    lab_switch(lab_dir, switch)
    lines = console_lines(path)
    return request(lab_dir, {"console": {"switch": switch, "lines": lines}}, wait, path)


def same_plan(lab_dir: str, verify_json: str, doc: dict) -> None:
    """Refuse (exit 2) findings that are not of the plan the lab runs now: another cluster's, or an earlier
    stage's after a later stage re-wired the lab (verify.json's "plan" against lab.json's, both
    ``plan.io.wiring_identity``), saying which plan each is for; a file without the record is refused too
    (its plan cannot be told: never applied on trust)."""
    lab_json = Path(lab_dir) / "lab.json"
    if not lab_json.exists():
        raise InputErrors(Problem(lab_dir, "no lab.json here", "start a lab with `zcube lab up PLAN -o DIR`"))
    runs = read_lab(lab_json).get("plan")
    found = doc.get("plan") if isinstance(doc.get("plan"), dict) else {"cluster": doc.get("cluster")}
    hint = "verify the plan the lab runs (`zcube verify PLAN --lab DIR/lab.json -o OUT`) and give its OUT/verify.json"
    if runs is None:
        raise InputErrors(Problem(str(lab_json), "records no plan (a lab started by an older zcube): the findings cannot be "
                                  "checked against it", "restart the lab with `zcube lab up PLAN -o DIR`"), "no fix applied")
    if "cables_sha256" not in found:
        problem = Problem(verify_json, f"records no plan identity (only {plan_words(found)}): which plan its findings "
                          f"are for cannot be told; the lab runs {plan_words(runs)}", hint)
    elif found != runs:
        problem = Problem(verify_json, f"findings of another plan ({plan_words(found)}); the lab runs {plan_words(runs)}", hint)
    else:
        return
    raise InputErrors(problem, "no fix applied")


class _StageRecord(TypedDict):
    """LABDIR/migration.json as apply_stage writes it."""

    migration: str
    applied: list[int]
    roles: list[str]
    switch_of: dict[str, str]


_STAGE_RECORD_DOC = TypeAdapter(_StageRecord)


def read_stage_record(lab_dir: str | Path) -> dict:
    """LABDIR/migration.json (the stages the lab carries), its shape checked; {} when the lab has had no stage."""
    path = Path(lab_dir) / STAGE_RECORD
    if not path.exists():
        return {}
    return read_state(path, _STAGE_RECORD_DOC, "the lab's record of the migration stages applied",
                      "written by `zcube lab fix --stage`; start a new lab from FROM's plan if it is damaged")


def apply_verify_fixes(lab_dir: str, verify_json: str, wait: float) -> tuple[int, int, int]:
    """`zcube lab fix`: apply a verify.json's physical fixes to the lab running in ``lab_dir``.

    Returns (operations applied, findings they came from, findings without a physical fix: a port shut in its
    config, a route, a hostname, ...: what a push or a person does, which the lab's wiring cannot)."""
    ops, findings = fix_operations(verify_json)
    same_plan(lab_dir, verify_json, _read_findings(verify_json))
    record = read_stage_record(lab_dir)  # a lab taken through migration stages: its switches play roles under other names
    if record:
        ops = physical_ops(ops, record["switch_of"])
    request_fixes(lab_dir, ops, wait, verify_json)
    physical = sum(1 for f in findings if f.get("fix"))
    return len(ops), physical, len(findings) - physical


def grow_operations(plan: dict, wiring: dict) -> dict:
    """What the technicians do when the plan grows: every planned cable the lab's wiring lacks (by ID) is
    connected as planned, and the plan's servers are racked (``servers``: names and inventory MACs)."""
    have = {c["id"] for c in wiring["cables"]}
    ops = [{"op": "connect", "cable": c["id"], "a": {"device": c["a"]["device"], "port": c["a"]["port"]},
            "b": {"device": c["b"]["device"], "port": c["b"]["port"]}} for c in plan["cables"] if c["id"] not in have]
    servers = [{"name": s["name"], "macs": {n["port"]: n["mac"] for n in s["nics"] if n.get("mac")}} for s in plan["servers"]]
    return {"operations": ops, "servers": servers}


def grow_lab(lab_dir: str, plan: dict, plan_path: str, wait: float) -> tuple[int, int]:
    """`zcube lab grow`: the running lab in ``lab_dir`` learns the grown plan's new servers and cables
    (same switches: a plan with a switch the lab does not serve is refused). Returns (cables, servers) added."""
    doc_path = Path(lab_dir) / "lab.json"
    if not doc_path.exists():
        raise InputErrors(Problem(lab_dir, "no lab.json here", "start a lab with `zcube lab up PLAN -o DIR`"))
    served = set(read_lab(doc_path, "start a lab with `zcube lab up PLAN -o DIR`")["switches"])
    unknown = sorted(s["name"] for s in plan["switches"] if s["name"] not in served)
    if unknown:
        raise InputErrors([Problem(f"{plan_path}: switches[{n}]", "the lab does not serve this switch",
                                   "a lab grows by servers and cables; start a new lab for new switches") for n in unknown],
                          "cannot grow the lab")
    before = {s for c in read_wiring(lab_dir)["cables"] for s in (c["a"]["device"],)}
    grow = grow_operations(plan, read_wiring(lab_dir))
    request_fixes(lab_dir, grow, wait, plan_path)
    write_lab_json(doc_path, {**read_lab(doc_path), "plan": wiring_identity(plan)})  # the lab runs the grown plan now
    return len(grow["operations"]), len({s["name"] for s in plan["servers"]} - before)


def write_lab_json(path: Path, doc: dict) -> None:
    """Rewrite a lab.json whole (a reader never sees half of it)."""
    tmp = path.with_name("lab.json.tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


def read_wiring(lab_dir: str) -> dict:
    """LAB_DIR/wiring.json, kept current by a running lab."""
    path = Path(lab_dir) / "wiring.json"
    if not path.exists():
        raise InputErrors(Problem(str(path), "no wiring.json here", "start a lab with `zcube lab up PLAN -o DIR`"))
    return json.loads(path.read_text())


def wiring_rows(w: dict) -> list[tuple[str, str, str, str, str, str]]:
    """(cable, A device, A port, B device, B port, note) for each cable of a wiring.json document.

    The note says what differs from the plan: an extra cable, a port that is down, a false LLDP name."""
    down = {(d["device"], d["port"]) for d in w["down"]}
    rows = []
    for c in w["cables"]:
        note = []
        if not c["planned"]:
            note.append("extra")
        if (c["a"]["device"], c["a"]["port"]) in down or (c["b"]["device"], c["b"]["port"]) in down:
            note.append("port down")
        if c["id"] in w["announced_name"]:
            note.append(f"announces {w['announced_name'][c['id']]}")
        rows.append((c["id"], c["a"]["device"], c["a"]["port"], c["b"]["device"], c["b"]["port"], ", ".join(note)))
    return rows
