"""Collect what the switches report (through the platform's NAPALM driver, ``cli`` of the NAPALM
contract), or replay recorded outputs. What to run and how to read it is the platform's
(``VERIFY_COMMANDS``, ``observe`` in platforms/<name>)."""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.platforms import DEFAULT_PLATFORM, napalm_driver
from zcube_deploy.platforms.facts import UnreadableOutput
from zcube_deploy.safety import make_private_dir, mask_credentials, redact_secrets, write_private
from zcube_deploy.verify.observation import Observation
from zcube_deploy.verify.observe import commands, observe, record_name


def collect_device(name: str, host: str, port: int, creds, known_hosts: str | None, timeout: float,
                   record: Path | None, platform: str = DEFAULT_PLATFORM, read: bool = True) -> tuple[dict | None, str | None]:
    """(the switch's observation, or None and why not). ``read`` False: the outputs are only recorded (the
    observation is {}: a caller that replays the recordings reads them there, on its own processes)."""
    drv = napalm_driver(platform)(host, creds.username, creds.password, timeout=int(timeout),
                                  optional_args={"port": port, "secret": creds.secret, "known_hosts": known_hosts, "read_timeout": 120})
    try:
        drv.open()
        outputs = drv.cli(list(commands(platform)))
    except Exception as exc:
        text = f"{type(exc).__name__}: {exc}".splitlines()[0]
        return None, redact_secrets(mask_credentials(text, creds.password, creds.secret), platform)[:300]  # masked, then cut
    finally:
        drv.close()
    if record is not None:  # raw outputs hold the whole running config, secrets included: owner-only
        make_private_dir(record)
        for cmd, text in outputs.items():
            write_private(record / name / record_name(cmd), text)
    if not read:
        return {}, None
    try:
        return observe(outputs, platform), None
    except UnreadableOutput as exc:  # the switch said something its platform's reader cannot take
        return None, f"could not read its output: {exc}"


def collect(targets: list[tuple[str, str, int]], creds, known_hosts: str | None, concurrency: int = 32, timeout: float = 30,
            record: str | Path | None = None, platform: str = DEFAULT_PLATFORM, read: bool = True) -> tuple[dict[str, dict], dict[str, str]]:
    """({switch: observation}, {switch: why it could not be collected}) over SSH, ``concurrency`` sessions at once.
    ``read`` False (with ``record``): the outputs are recorded and not read here (each observation is {}), for a
    caller that replays the recordings anyway (audit): reading them in these threads would only do it twice."""
    if not read and record is None:
        raise ValueError("collect(read=False) records only: give record")
    rec = Path(record) if record else None
    observed, errors = {}, {}
    with tempfile.TemporaryDirectory(prefix="zcube-verify-") as tmp:  # (created owner-only)
        kh = per_host_known_hosts(known_hosts, [(t[1], t[2]) for t in targets], Path(tmp))

        def one(t):
            return t[0], collect_device(t[0], t[1], t[2], creds, kh.get((t[1], t[2]), known_hosts), timeout, rec, platform, read)

        with ThreadPoolExecutor(max(1, concurrency)) as pool:
            for name, (obs, err) in pool.map(one, targets):
                if obs is not None:
                    observed[name] = obs
                else:
                    errors[name] = err
    return observed, errors


def per_host_known_hosts(known_hosts: str | None, hosts: list[tuple[str, int]], directory: Path) -> dict[tuple[str, int], str]:
    """(host, port) -> a known_hosts file in ``directory`` holding only that host's lines of ``known_hosts``.

    The SSH client reads the whole known_hosts file on every connection and checks each line against
    the lines before it: with one line per switch that is quadratic in the switches per session (at 256
    switches, most of a live run's CPU). A host's key is looked up by its exact name (`host`, or
    `[host]:port` off port 22), so a file of the lines naming it verifies exactly as the whole file does
    (a host without a line gets an empty file: refused as before). With hashed names or markers
    (`|1|...`, `@cert-authority`) the lines cannot be told apart: {} (every session reads the whole file).
    """
    if not known_hosts or not Path(known_hosts).is_file():
        return {}
    lines: dict[str, list[str]] = {}
    for raw in Path(known_hosts).read_text(errors="replace").splitlines():
        line = raw.strip()
        if not line or line[0] == "#":
            continue
        if line[0] in "@|":
            return {}
        for name in set(line.replace("\t", " ").split(" ", 1)[0].split(",")):
            lines.setdefault(name, []).append(line)
    out = {}
    for i, (host, port) in enumerate(sorted(set(hosts))):
        f = directory / f"known_hosts.{i}"
        f.write_text("".join(line + "\n" for line in lines.get(host if port == 22 else f"[{host}]:{port}", ())))
        out[(host, port)] = str(f)
    return out


def read_recording(sd: Path, platform: str = DEFAULT_PLATFORM) -> tuple[dict[str, bytes], dict[str, str], list[Problem]]:
    """One switch's recorded files as bytes ({command: bytes}), the commands not recorded (command -> why), and
    the problems of its files (a directory where a file should be, an unreadable file)."""
    raw, absent, problems = {}, {}, []
    for cmd in commands(platform):
        f = sd / record_name(cmd)
        if not f.exists():
            absent[cmd] = f"`{cmd}` was not recorded (no {f.name} in the switch's folder)"
        elif not f.is_file():
            problems.append(Problem(str(f), "is not a file", f"the recorded output of `{cmd}` (or remove it: that check is then not run)"))
        else:
            try:
                raw[cmd] = f.read_bytes()
            except OSError as exc:
                problems.append(Problem(str(f), f"cannot be read: {exc.strerror or exc}"))
    return raw, absent, problems


def observe_recording(sd: Path, raw: dict[str, bytes], absent: dict[str, str],
                      platform: str = DEFAULT_PLATFORM) -> tuple[Observation | None, list[Problem]]:
    """:func:`read_recording`'s outputs parsed and typed, or the line its platform's reader cannot take."""
    outputs = {cmd: b.decode("utf-8", errors="replace") for cmd, b in raw.items()}
    try:
        return Observation.from_dict(observe(outputs, platform, absent)), []
    except UnreadableOutput as exc:
        return None, [Problem(f"{sd / record_name(exc.command)}" + (f", line {exc.line}" if exc.line else ""),
                              f"the recorded output cannot be read: {exc.why}", "a recording is what the switch printed; re-record it")]


def _replay_one(sd: Path, platform: str = DEFAULT_PLATFORM) -> tuple[Observation | None, list[Problem]]:
    """One switch's recording, parsed and typed (in a worker process: both are per-switch work), or the
    problems of its files (a directory where a file should be, an unreadable file, a line its platform's
    reader cannot take). A command without its file is not observed: the checks reading it are not_checked."""
    raw, absent, problems = read_recording(sd, platform)
    if problems:
        return None, problems
    return observe_recording(sd, raw, absent, platform)


def recorded_switches(d: Path, names: list[str]) -> tuple[list[str], list[Problem], dict[str, str]]:
    """(the switches with a folder in recording folder ``d``, the problems of those whose entry is no folder,
    {switch without a recording: "no recording"}). A folder that holds things but the recording of none of
    ``names`` is another folder (the plan's own, another plan's recordings): an input error, not every check
    not_checked; an empty one is a run that recorded nothing (every switch: no recording)."""
    if not d.is_dir():
        raise InputErrors(Problem(str(d), "no such recordings folder", "record one with `zcube verify PLAN --record DIR`"))
    present = [n for n in names if (d / n).is_dir()]
    if names and not present and not any((d / n).exists() for n in names) and any(d.iterdir()):
        raise InputErrors(Problem(str(d), f"holds no recording of any of the plan's {len(names)} switches (a folder per switch, "
                                          f"e.g. {d / names[0]}/)",
                                  "give a recordings folder: `zcube verify PLAN --record DIR`'s DIR, or an audit's OUT/recordings"))
    problems = [Problem(str(d / n), "is not a folder", f"{n}'s recorded outputs belong in the folder {d / n}")
                for n in names if (d / n).exists() and n not in present]
    return present, problems, {n: "no recording" for n in names if n not in present}


def replay(directory: str | Path, names: list[str], jobs: int | None = None,
           platform: str = DEFAULT_PLATFORM) -> tuple[dict[str, Observation], dict[str, str]]:
    """Observations from recorded outputs: DIR/<switch>/<command with spaces as _>.txt (parsed on up to 2 processes)."""
    d = Path(directory)
    present, problems, errors = recorded_switches(d, names)
    jobs = jobs or min(2, os.cpu_count() or 1)
    if jobs > 1 and len(present) > 32 and "fork" in multiprocessing.get_all_start_methods():
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = pool.starmap(_replay_one, [(d / n, platform) for n in present], chunksize=8)
    else:
        results = [_replay_one(d / n, platform) for n in present]
    problems += [p for _, ps in results for p in ps]
    if problems:
        raise InputErrors(problems, "unreadable recordings")
    return {n: obs for n, (obs, _) in zip(present, results)}, errors
