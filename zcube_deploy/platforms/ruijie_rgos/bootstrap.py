"""The console bootstrap of a factory-fresh RGOS unit (platform data for `zcube replace`).

A unit that replaces a dead switch boots with an empty configuration: hostname ``Ruijie``, no
management address, no local user, no SSH server. Nothing can log in over the network until a
technician pastes these lines at its serial console (``console_bootstrap``)::

    enable                                   <- a fresh unit asks no enable password
    configure terminal
    hostname ZC-O001
    interface Mgmt 0                         <- the model's management interface (catalog)
     ip address 172.16.0.11 255.255.255.0    <- the plan's management address and mask
    exit
    ip route 0.0.0.0 0.0.0.0 172.16.0.1      <- the management gateway (the plan's settings)
    ... the site's access lines ...          <- the operator's file: users, enable secret, AAA, vty, SSH
    end
    write

Facts and unknowns (ruijie.md): the modes, ``exit``/``end``, ``write`` and the ``ip route`` form are
confirmed; the factory defaults of a fresh unit (SSH server off, no user, no enable password) and
whether management runs in a management VRF (then the default route has another form) are **not
confirmed**: ``FACTORY_DEFAULTS_CONFIRMED`` says so, and the lines are data here, not code elsewhere.
The bootstrap writes no fabric line: push sends those once the unit is reachable.
"""

from __future__ import annotations

OPEN = ("enable", "configure terminal")
CLOSE = ("end", "write")
FACTORY_DEFAULTS_CONFIRMED = False  # see the module doc

# Words that, first on a pasted line, would leave configuration mode, save, reload or wipe the unit mid-paste,
# or ask the CLI a question: an access line is configuration only (the bootstrap opens and closes the mode itself).
EXEC_WORDS = frozenset({"end", "exit", "write", "copy", "configure", "reload", "disable", "erase", "delete", "format", "clear",
                        "debug", "undebug", "show", "do", "boot", "upgrade", "ping", "traceroute", "telnet", "ssh", "terminal",
                        "install", "rename", "mkdir", "rmdir", "more", "dir", "cd"})

# What a unit needs before an SSH login works (the lab's model of it; **not confirmed** on RGOS: a check
# that warns, never a refusal): (a line's first words, what is missing when no access line starts so).
SSH_NEEDS = (("enable service ssh-server", "no `enable service ssh-server`: the SSH server of a fresh unit may be off"),
             ("username", "no `username ...`: a fresh unit has no local user to log in with"))


def console_bootstrap(hostname: str, mgmt_interface: str, address: str, mask: str, gateway: str | None,
                      access: list[str]) -> list[str]:
    """The lines a technician pastes at the console of a fresh unit (``access``: the site's lines, checked).

    >>> console_bootstrap("ZC-O001", "Mgmt 0", "172.16.0.11", "255.255.255.0", "172.16.0.1", ["enable service ssh-server"])[2:8]
    ['hostname ZC-O001', 'interface Mgmt 0', ' ip address 172.16.0.11 255.255.255.0', 'exit', 'ip route 0.0.0.0 0.0.0.0 172.16.0.1', 'enable service ssh-server']
    """
    lines = [*OPEN, f"hostname {hostname}", f"interface {mgmt_interface}", f" ip address {address} {mask}", "exit"]
    if gateway:
        lines.append(f"ip route 0.0.0.0 0.0.0.0 {gateway}")
    return lines + list(access) + list(CLOSE)


def access_line_refusal(line: str) -> str | None:
    """Why a top-level access line may not go into the bootstrap (an exec command, a mode change, no command at
    all: a line of another file, such as a plan.json's ``{``), else None.

    >>> access_line_refusal("write"), access_line_refusal("enable secret 5 $1$x"), access_line_refusal("enable")
    ('an exec command (`write`): access lines are configuration only; the bootstrap enters and leaves configuration mode itself', None, 'an exec command (`enable`): access lines are configuration only; the bootstrap enters and leaves configuration mode itself')
    >>> access_line_refusal('"cables":[')
    'not a configuration command: a command starts with a word (`"cables":[` is none): is this the access-lines file?'
    """
    words = line.split()
    if not words:
        return None
    first = words[0].lower()
    if not first[0].isascii() or not first[0].isalpha():
        return f"not a configuration command: a command starts with a word (`{words[0][:30]}` is none): is this the access-lines file?"
    if first in EXEC_WORDS or (first == "enable" and len(words) == 1):
        return f"an exec command (`{words[0]}`): access lines are configuration only; the bootstrap enters and leaves configuration mode itself"
    return None


def ssh_gaps(access: list[str]) -> list[str]:
    """What the access lines lack for an SSH login to work on a fresh unit (warnings, in words).

    >>> ssh_gaps(["username ops privilege 15 secret 5 $1$x"])
    ['no `enable service ssh-server`: the SSH server of a fresh unit may be off']
    """
    tops = [" ".join(x.split()) for x in access if x[:1] not in (" ", "\t")]
    return [why for start, why in SSH_NEEDS if not any(t == start or t.startswith(start + " ") for t in tops)]
