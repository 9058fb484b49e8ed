"""Device access: the credential and host-key policy of everything that logs in to switches (push,
verify, the Nornir inventory, the demo), below them all (docs/layout.md: the layers).

Where the username, password and enable secret come from (the environment, the lab's documented
defaults, else a prompt), where a lab's management-address override and known_hosts file come
from (its lab.json), and where trust-on-first-use records new host keys. The device drivers
themselves are the platforms' (``zcube_deploy.platforms.napalm_driver``).
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ConfigDict, TypeAdapter, with_config
from typing_extensions import NotRequired, TypedDict

from zcube_deploy.errors import InputErrors, Problem
from zcube_deploy.plan.io import wiring_identity
from zcube_deploy.plan.state import read_state
from zcube_deploy.safety import make_private_dir

# the lab's documented defaults (docs/lab.md), overridden by the same variables as a real network's
DEFAULT_USERNAME = "admin"
DEFAULT_PASSWORD = "zcube-lab"
DEFAULT_ENABLE_SECRET = "zcube-enable"


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str
    secret: str

    def __repr__(self) -> str:  # never print secrets, even by accident
        return f"Credentials(username={self.username!r}, password=***, secret=***)"


def lab_credentials() -> tuple[str, str, str]:
    """(username, password, enable secret) of the lab: the environment's, else the documented defaults."""
    return (os.environ.get("ZCUBE_USERNAME") or DEFAULT_USERNAME, os.environ.get("ZCUBE_PASSWORD") or DEFAULT_PASSWORD,
            os.environ.get("ZCUBE_ENABLE_SECRET") or DEFAULT_ENABLE_SECRET)


class _LabEndpoint(TypedDict):
    host: str
    port: int


class _LabPlan(TypedDict):
    cluster: str
    cables_sha256: str


@with_config(ConfigDict(strict=True))
class _LabDoc(TypedDict):
    """The shape of a lab.json (``Lab.write_files``): {"switches": {name: {"host", "port"}}, "known_hosts",
    "plan": the plan the lab runs now (``plan.io.wiring_identity``: commands and `zcube lab fix` check it),
    "pid": the lab's process (it holds LAB_LOCK beside lab.json for its life)}."""

    switches: dict[str, _LabEndpoint]
    known_hosts: NotRequired[str | None]
    plan: NotRequired[_LabPlan]
    pid: NotRequired[int]


_LAB_DOC = TypeAdapter(_LabDoc)
LAB_LOCK = "lab.lock"  # beside lab.json: flock'ed (exclusive) by the lab's process while it serves (lab/control.py)
_LAB_HINT = "--lab takes the lab.json that `zcube lab up PLAN -o DIR` wrote in DIR (there while the lab runs: it is removed when the lab stops)"


def read_lab(path: str | Path, hint: str = _LAB_HINT) -> dict:
    """A lab.json document, its shape checked: {"switches": {name: {"host", "port"}}, "known_hosts"}.

    The one place a lab.json is read (access, `zcube lab grow`, a migration stage's role names): a file
    of another shape (a plan.json, say) is an input error naming every misplaced field, never a crash
    further on; ``hint`` says where the right file comes from.
    """
    return read_state(path, _LAB_DOC, "a lab.json", hint)


def load_lab(path: str | Path, hint: str = _LAB_HINT) -> tuple[dict[str, tuple[str, int]], str | None]:
    """A lab.json's endpoints ({switch: (host, port)}) and known_hosts file (``read_lab``: its shape checked)."""
    doc = read_lab(path, hint)
    return {n: (e["host"], e["port"]) for n, e in doc["switches"].items()}, doc.get("known_hosts")


# (environment variable, prompt label, hide the answer)
CREDENTIAL_SOURCES = (("ZCUBE_USERNAME", "username", False), ("ZCUBE_PASSWORD", "password", True),
                      ("ZCUBE_ENABLE_SECRET", "enable secret", True))

Prompt = Callable[[str, bool], str]
"""Ask the user for ``label``; the bool says whether to hide the answer."""


def given_secrets() -> tuple[str, ...]:
    """The passwords and enable secrets this process may hold (``ZCUBE_PASSWORD``, ``ZCUBE_ENABLE_SECRET``, the
    lab's defaults, and what :func:`credentials` was told at a prompt): what a message far from the credentials (an
    internal error, a Nornir task's exception) masks with safety.mask_credentials."""
    env = tuple(os.environ.get(k, "") for k in ("ZCUBE_PASSWORD", "ZCUBE_ENABLE_SECRET"))
    return tuple(s for s in (*env, *lab_credentials()[1:], *_PROMPTED) if s)


_PROMPTED: list[str] = []  # the password and enable secret typed at a prompt in this process (given_secrets)


def credentials(lab: bool, prompt: Prompt | None = None) -> Credentials:
    """ZCUBE_USERNAME / ZCUBE_PASSWORD / ZCUBE_ENABLE_SECRET, the lab's defaults with ``lab``, else ``prompt``.

    Without a terminal (or without ``prompt``) a missing variable is an input error naming it.
    """
    if lab:
        return Credentials(*lab_credentials())
    values = {}
    for key, label, hide in CREDENTIAL_SOURCES:
        v = os.environ.get(key)
        if not v:
            if prompt is None or not sys.stdin.isatty():
                raise InputErrors(Problem(key, "not set and no terminal to ask on", f"export {key}=..."))
            v = prompt(label, hide)
            if hide:
                _PROMPTED.append(v)
        values[label] = v
    return Credentials(values["username"], values["password"], values["enable secret"])


MAX_MISSING = 10  # switches named one by one before "... and N more"


def not_in_lab(names, eps: dict[str, tuple[str, int]] | None, where: str = "--lab") -> list[Problem]:
    """The problems of the switches ``names`` that the lab's endpoints ``eps`` do not run (none without a lab).

    The one check push, verify, audit, drain, replace and the Nornir inventory make before they connect
    to anything: a plan against another fabric's lab names the plan's switches the lab does not run and
    what the lab does run, never a crash further on. ``where``: the problems' place."""
    if eps is None:
        return []
    missing = [n for n in names if n not in eps]
    if not missing:
        return []
    runs = ", ".join(sorted(eps)[:3]) + (", ..." if len(eps) > 3 else "")
    hint = (f"the lab runs {len(eps)} switch(es) ({runs}): a lab of another plan? "
            "give the lab.json of `zcube lab up PLAN -o DIR` started from this plan")
    out = [Problem(where, f"{n} is not in the lab", hint) for n in missing[:MAX_MISSING]]
    if len(missing) > MAX_MISSING:
        out.append(Problem(where, f"... and {len(missing) - MAX_MISSING} more of the plan's switches are not in the lab"))
    return out


def lab_targets(plan: dict, names: list[str], lab_path: str | None, known_hosts: str | None, lab_may_run: Sequence[dict] = ()
                ) -> tuple[list[tuple[str, str, int]], str | None]:
    """(switch, host, port) of each of ``names`` (the lab's endpoints with ``lab_path``, else the plan's
    management addresses at port 22) and the known_hosts file; a lab not running or of another plan
    (:func:`endpoints`; ``lab_may_run``: other plans it may run, an expansion's old one) or a switch the
    lab does not run (:func:`not_in_lab`) is an input error, all of them at once."""
    eps, kh = endpoints(lab_path, known_hosts, (wiring_identity(plan), *lab_may_run))
    problems = not_in_lab(names, eps)
    if problems:
        raise InputErrors(problems, f"{lab_path} does not run this plan's switches; nothing was read")
    mg = {s["name"]: s["mgmt_address"] for s in plan["switches"]}
    return [(n, *(eps[n] if eps is not None else (mg[n], 22))) for n in names], kh


def endpoints(lab_path: str | None, known_hosts: str | None, plans: Sequence[dict], hint: str = _LAB_HINT
              ) -> tuple[dict[str, tuple[str, int]] | None, str | None]:
    """A lab.json's endpoints (management-address override) and known_hosts: ``known_hosts`` wins over the lab's.

    The lab must be running and run the plan: ``plans`` is the plan's ``plan.io.wiring_identity`` first, then any
    other the lab may run for it (an expansion pushes its grown plan to a lab of the old one); a lab.json of a lab
    that is not running, of another plan, or that records none, is an input error (:func:`lab_problems`); ``hint``:
    where the right file comes from (:func:`read_lab`)."""
    if not lab_path:
        return None, known_hosts
    doc = read_lab(lab_path, hint)
    problems = lab_problems(lab_path, doc, plans)
    if problems:
        raise InputErrors(problems, "nothing was read or sent")
    return {n: (e["host"], e["port"]) for n, e in doc["switches"].items()}, known_hosts or doc.get("known_hosts")


def lab_running(lab_path: str | Path) -> bool | None:
    """Whether a process holds the lock beside ``lab_path`` (LAB_LOCK): a lab serving that folder; None without the
    lock file (a lab.json copied elsewhere: cannot be told). The lock goes with its process however it ends (a killed
    lab included), so a lab.json left behind never passes for a live lab."""
    try:
        fd = os.open(Path(lab_path).with_name(LAB_LOCK), os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # (released at once: a `lab up` starting now retries its lock)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def plan_words(ident: dict) -> str:
    """A plan's wiring identity as the messages name it."""
    return f"cluster {ident.get('cluster')!r}, cables sha256 {str(ident.get('cables_sha256'))[:12]}"


def lab_problems(lab_path: str | Path, doc: dict, plans: Sequence[dict]) -> list[Problem]:
    """What forbids using the lab of ``doc`` (its lab.json at ``lab_path``) for the plan ``plans[0]`` (with
    :func:`endpoints`' ``plans``): a lab that is not running (its pid recorded, its lock free: a lab.json left by a
    killed lab; one problem, not one refused connection a switch), a lab of another plan (both named), or a
    lab.json that records no plan. The one check every command that reaches a lab makes (push, verify, audit,
    drain, replace, the Nornir inventory, `zcube lab drift`)."""
    out = []
    if "pid" in doc and lab_running(lab_path) is False:
        out.append(Problem(str(lab_path), f"is the lab running? ({lab_path} from pid {doc['pid']}, not running)",
                           "start it with `zcube lab up PLAN -o DIR` (a lab that stops removes its lab.json; this one was "
                           "left by a lab that was killed)"))
    runs = doc.get("plan")
    if runs is None:
        out.append(Problem(str(lab_path), "records no plan (a lab.json of an older zcube, or written by hand): whether the "
                           "lab runs this plan cannot be told", "restart the lab with `zcube lab up PLAN -o DIR`, or, if it "
                           f"runs this plan, add \"plan\": {json.dumps(plans[0], sort_keys=True)}"))
    elif runs not in plans:
        out.append(Problem(str(lab_path), f"the lab runs another plan ({plan_words(runs)}); this plan is {plan_words(plans[0])}",
                           "give the lab.json of `zcube lab up PLAN -o DIR` started from this plan (a lab follows "
                           "`zcube lab grow` and `zcube lab fix --stage`)"))
    return out


def known_hosts_for(known_hosts: str | None, trust_on_first_use: bool) -> str | None:
    """--trust-on-first-use with no known_hosts file records new keys in ~/.ssh/known_hosts (as the docs say)."""
    if known_hosts or not trust_on_first_use:
        return known_hosts
    ssh = Path.home() / ".ssh"
    make_private_dir(ssh)
    return str(ssh / "known_hosts")


def forget_host_key(path: str | Path, host: str, port: int = 22) -> int:
    """Remove every line of the known_hosts file ``path`` that pins ``host`` (at ``port``), as `ssh-keygen -R` does,
    hashed entries included; returns how many went. For a replaced switch: its new unit presents a new key."""
    from paramiko.hostkeys import HostKeys  # start-up time: paramiko (and cryptography) load only for `zcube replace --new-host-key`

    p = Path(path)
    if not p.exists():
        return 0
    name = host if port == 22 else f"[{host}]:{port}"
    kept, gone = [], 0
    for line in p.read_text().splitlines():
        names = line.split()[0] if line.strip() and not line.lstrip().startswith("#") else ""
        hit = any(n == name or (n.startswith("|1|") and HostKeys.hash_host(name, n) == n) for n in names.split(","))
        gone += hit
        if not hit:
            kept.append(line)
    if gone:
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text("".join(x + "\n" for x in kept))
        os.chmod(tmp, p.stat().st_mode & 0o777)
        tmp.replace(p)
    return gone


def pinned_host_keys(path: str | Path | None, host: str, port: int = 22) -> list[str]:
    """The SHA256 fingerprints (as `ssh-keygen -l` prints them) of the keys the known_hosts file ``path`` pins for
    ``host`` at ``port``, hashed lines included; [] when the file is missing or pins none (None: the user's
    ~/.ssh/known_hosts, where an SSH session without a known_hosts file looks). A replace compares them with what the
    new unit presents."""
    from paramiko.hostkeys import HostKeys, InvalidHostKey  # start-up time: paramiko (and cryptography) load only for `zcube replace`

    p = Path(path) if path else Path.home() / ".ssh" / "known_hosts"
    if not p.is_file():
        return []
    try:
        keys = HostKeys(str(p)).lookup(host if port == 22 else f"[{host}]:{port}")
    except (OSError, UnicodeDecodeError, InvalidHostKey) as exc:  # InvalidHostKey: a line whose key is no base64
        raise InputErrors(Problem(str(p), f"cannot read it as a known_hosts file: {exc}")) from None
    return sorted(k.fingerprint for k in (keys or {}).values())
