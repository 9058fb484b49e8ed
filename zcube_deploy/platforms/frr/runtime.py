"""Run FRR in a network namespace: private run directory owned by user ``frr``, daemons started
by hand (no systemd), configuration applied with vtysh, state read back as JSON, daemons
stopped by the PIDs in their pidfiles.

Measured on Debian 12 / FRR 8.4.4 (shared/docs/twin.md): ``-u root`` fails on the ``frrvty``
group, so every daemon runs as ``frr`` in a directory that ``frr`` owns.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import time
from pathlib import Path

FRR_LIB = Path("/usr/lib/frr")
VTYSH = "vtysh"


def missing() -> str | None:
    """None when FRR can run here, else what is missing and how to get it."""
    absent = [d for d in ("zebra", "staticd", "bgpd", "bfdd") if not (FRR_LIB / d).exists()]
    if absent or not shutil.which(VTYSH):
        return ("FRR is not installed (missing " + ", ".join(absent + ([] if shutil.which(VTYSH) else ["vtysh"])) +
                "): install it with 'apt-get install -y frr' (Debian/Ubuntu)")
    try:
        pwd.getpwnam("frr")
    except KeyError:
        return "the user 'frr' does not exist: reinstall the Debian package 'frr'"
    return None


def _nsenter(netns: str) -> list[str]:
    return ["nsenter", f"--net=/run/netns/{netns}"]


# which daemon owns a top-level block of the integrated configuration (what vtysh would route it to)
BLOCK_OWNER = {"interface": "zebra", "ip route": "staticd", "router bgp": "bgpd", "bfd": "bfdd"}
EVERY_DAEMON = ("hostname", "log", "no ipv6 forwarding")


def split_config(text: str) -> dict[str, str]:
    """The integrated frr.conf cut into one file per daemon, so each reads its part at start-up.

    Starting daemons with their own files is about 2x faster than applying frr.conf with ``vtysh -f``
    (vtysh loads every daemon's command tree). A top-level line no daemon owns is an error.
    """
    parts: dict[str, list[str]] = {d: [] for d in ("zebra", "staticd", "bgpd", "bfdd")}
    owner = None
    for line in text.splitlines():
        if not line.strip() or line.startswith("!") or line == "end":
            owner = None if line.startswith("!") or line == "end" else owner
            continue
        if line[0] != " " and line != "exit":
            owner = next((d for k, d in BLOCK_OWNER.items() if line == k or line.startswith(k + " ")), None)
            if owner is None:
                if not line.startswith(EVERY_DAEMON):
                    raise ValueError(f"no FRR daemon owns the line {line!r}")
                for d in parts:
                    if line.startswith("hostname") or d == "zebra":
                        parts[d].append(line)
                continue
            if owner == "staticd":  # a one-line block
                parts[owner].append(line)
                owner = None
                continue
        if owner:
            parts[owner].append(line)
    return {d: "\n".join(lines) + "\n" for d, lines in parts.items()}


# Added to zebra in the twin: a cut cable is simulated by setting one veth end down, the kernel then drops
# that member from its nexthop-group objects and FRR 8.4 does not notice, so a repaired link stayed out of
# ECMP (found by the twin's FIB comparison). Inline multipath routes are revived by the kernel itself.
TWIN_ZEBRA_LINES = ["no zebra nexthop kernel enable"]


def prepare_dir(run_dir: Path, config_text: str, extra_zebra: list[str] | None = None) -> None:
    """Create the switch's private run directory (owned by frr) with its frr.conf and one file per daemon."""
    run_dir.mkdir(parents=True, exist_ok=True)
    for old in run_dir.iterdir():  # logs, pidfiles and sockets of an earlier twin in the same folder
        if old.is_file() or old.is_socket():
            old.unlink()
    ent = pwd.getpwnam("frr")
    (run_dir / "frr.conf").write_text(config_text)
    for d, part in split_config(config_text).items():
        if d == "zebra" and extra_zebra:
            part = "\n".join(extra_zebra) + "\n" + part
        (run_dir / f"{d}.conf").write_text(part)
    for p in [run_dir, *run_dir.iterdir()]:
        os.chown(p, ent.pw_uid, ent.pw_gid)


def daemon_command(netns: str, daemon: str, run_dir: Path) -> list[str]:
    d = str(run_dir)
    cmd = [*_nsenter(netns), str(FRR_LIB / daemon), "-d", "-P", "0", "--vty_socket", d, "-i", f"{d}/{daemon}.pid",
           "-z", f"{d}/zserv.api", "-f", f"{d}/{daemon}.conf", "--log", f"file:{d}/{daemon}.log"]
    if daemon == "bfdd":
        cmd += ["--bfdctl", f"{d}/bfdd.sock"]
    return cmd


def _run_all(cmds: list[list[str]], what: str) -> list[str]:
    """Run commands in parallel; returns the errors (command and stderr) of those that failed."""
    procs = [(c, subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)) for c in cmds]
    errors = []
    for c, p in procs:
        _, err = p.communicate()
        if p.returncode:
            errors.append(f"{what}: {' '.join(c[2:4])}... exited {p.returncode}: {err.strip()[:300]}")
    return errors


def _wait_for(paths: list[Path], timeout: float) -> list[Path]:
    end = time.monotonic() + timeout
    left = list(paths)
    while left and time.monotonic() < end:
        left = [p for p in left if not p.exists()]
        if left:
            time.sleep(0.02)
    return left


def start(switches: list[tuple[str, Path]], daemons: tuple[str, ...], timeout: float = 30.0) -> list[str]:
    """Start ``daemons`` (zebra first) in each (netns, run_dir), then apply each run_dir/frr.conf with vtysh.

    Returns the errors (empty when all started and took their configuration).
    """
    errors = _run_all([daemon_command(ns, "zebra", d) for ns, d in switches], "zebra")
    late = _wait_for([d / "zserv.api" for _, d in switches], timeout)
    errors += [f"zebra did not open {p} within {timeout:.0f} s" for p in late]
    if errors:
        return errors
    rest = [daemon_command(ns, dm, d) for ns, d in switches for dm in daemons if dm != "zebra"]
    errors += _run_all(rest, "daemon")
    late = _wait_for([d / f"{dm}.vty" for _, d in switches for dm in daemons], timeout)
    errors += [f"{p.name} did not open its vty within {timeout:.0f} s" for p in late]
    if errors:
        return errors
    for _, d in switches:
        errors += config_errors(d, daemons)
    return errors


def config_errors(run_dir: Path, daemons: tuple[str, ...]) -> list[str]:
    """Lines of the daemons' configuration files they refused (from their logs)."""
    found = []
    for dm in daemons:
        log = run_dir / f"{dm}.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        for line in text.splitlines():
            if "rror" in line and ("config" in line.lower() or "command" in line.lower()):
                found.append(f"{run_dir.name} {dm}: {line.strip()[-200:]}")
    return found


def pids(run_dir: Path) -> dict[str, int]:
    """The daemons' PIDs from their pidfiles."""
    found = {}
    for f in sorted(run_dir.glob("*.pid")):
        try:
            found[f.stem] = int(f.read_text().strip())
        except (OSError, ValueError):
            pass
    return found


def is_ours(pid: int, run_dir: Path | str) -> bool:
    """The process ``pid`` is one of the daemons started on ``run_dir`` (its command line names the directory),
    so a reused PID is never signalled."""
    try:
        return str(run_dir) in Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False


def log_files(run_dir: Path) -> list[Path]:
    """The daemons' log files in ``run_dir`` (``--log file:DIR/<daemon>.log``)."""
    return sorted(run_dir.glob("*.log"))


def vtysh(run_dir: Path, *commands: str, timeout: float = 20.0) -> str:
    args = [VTYSH, "--vty_socket", str(run_dir)]
    for c in commands:
        args += ["-c", c]
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout).stdout


def vtysh_json(run_dir: Path, command: str) -> dict:
    try:
        return json.loads(vtysh(run_dir, command) or "{}")
    except ValueError:
        return {}


def bgp_established(run_dir: Path) -> tuple[int, int]:
    """(established sessions, configured sessions) of the switch's BGP."""
    data = vtysh_json(run_dir, "show bgp ipv4 unicast summary json")
    peers = (data.get("ipv4Unicast") or data).get("peers", {}) if data else {}
    return sum(1 for p in peers.values() if p.get("state") == "Established"), len(peers)


def route_count(run_dir: Path) -> int:
    data = vtysh_json(run_dir, "show ip route summary json")
    return int(data.get("routesTotalFib", 0)) if data else 0


def set_neighbor_bfd_profile(run_dir: Path, asn: int, neighbor: str, profile: str) -> None:
    """Put one BGP neighbour's BFD session on ``profile`` (the twin tests that session at the plan's rate)."""
    vtysh(run_dir, "configure terminal", f"router bgp {asn}", f"neighbor {neighbor} bfd profile {profile}", "end")


def stop(pids_by_daemon: dict[str, int], sig: int = 15) -> list[int]:
    """Signal each PID (bgpd/bfdd/staticd first, zebra last); returns the PIDs signalled."""
    done = []
    order = sorted(pids_by_daemon.items(), key=lambda kv: kv[0] == "zebra")
    for _, pid in order:
        try:
            os.kill(pid, sig)
            done.append(pid)
        except ProcessLookupError:
            pass
    return done
