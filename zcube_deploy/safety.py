"""Validation of every string that can reach a device CLI or a config file.

A newline, ``!``, ``?`` or a control character inside a hostname or description would let an
inventory field inject commands into a switch (``?`` triggers RGOS context help, ``!`` starts a
comment, a newline ends the command). These checks are strict allow-lists.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from zcube_deploy.platform_data import platform_data

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
NAME_HINT = "use letters, digits, '.', '_' and '-' only, starting with a letter or digit, at most 63"
INTERFACE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*( ?[0-9]+(/[0-9]+)*(:[0-9]+)?)?$")
INTERFACE_HINT = "an interface name: a word, an optional space, then numbers like 0/1:2 (e.g. 'ens1f0np0')"
DESCRIPTION_RE = re.compile(r"^[A-Za-z0-9 ._:/,()=+@#%&*<>\[\]-]{0,240}$")
DESCRIPTIONS_RE = re.compile(r"[A-Za-z0-9 ._:/,()=+@#%&*<>\[\]-]{0,240}(?:\n[A-Za-z0-9 ._:/,()=+@#%&*<>\[\]-]{0,240})*")  # several, one per line
DESCRIPTION_HINT = "printable characters without '!', '?', quotes or control characters, at most 240"
MAC_RE = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")


def describe_bad(value: str, otherwise: str = "has characters outside the allowed set") -> str:
    """Say which character makes ``value`` unsafe, in words a user can act on."""
    for ch in value:
        if ch == "\n" or ch == "\r":
            return "contains a line break"
        if ch in "!?":
            return f"contains {ch!r}, which RGOS treats specially"
        if ord(ch) < 32 or ord(ch) == 127:
            return f"contains the control character {ord(ch):#04x}"
        if ord(ch) > 126:
            return f"contains the non-ASCII character {ch!r}"
    return otherwise


def check_name(value: str) -> str | None:
    """Return None when ``value`` is a safe device/rack/server name, else what is wrong."""
    if not isinstance(value, str):
        return "must be a string"
    if NAME_RE.fullmatch(value):  # fullmatch: "$" would also accept a trailing newline
        return None
    if not value:
        return "must not be empty"
    if len(value) > 63:
        return "is longer than 63 characters"
    return describe_bad(value, otherwise="has characters outside letters, digits, '.', '_' and '-'")


def check_interface(value: str) -> str | None:
    if isinstance(value, str) and INTERFACE_RE.fullmatch(value) and len(value) <= 64:
        return None
    return describe_bad(value) if isinstance(value, str) else "must be a string"


def check_description(value: str) -> str | None:
    if isinstance(value, str) and DESCRIPTION_RE.fullmatch(value):
        return None
    return describe_bad(value) if isinstance(value, str) else "must be a string"


def check_config_line(line: str) -> str | None:
    """None when ``line`` (a config line given as data: catalog syntax, the inventory's lossless lines)
    can be sent as one device command, else what is wrong with it (a line break ends the command,
    ``!`` starts a comment, ``?`` asks for help; a control character, a tab included, has no place).

    >>> check_config_line("qos trust dscp"), check_config_line("qos trust dscp ?")
    (None, "contains a line break, '!', '?' or a control character")
    """
    if any(c in "\r\n!?" or ord(c) < 32 for c in line):
        return "contains a line break, '!', '?' or a control character"
    return None


def assert_safe_line(line: str) -> None:
    """Last line of defence before a line is sent to a device or written to a config."""
    if "\n" in line or "\r" in line or "?" in line or any(ord(c) < 32 and c != "\t" for c in line):
        raise ValueError(f"unsafe config line refused: {line!r}")


# ---- secrets in files, reports and logs
def redact_secrets(text: str, platform: str = "ruijie_rgos") -> str:
    """Mask the values of secret-bearing keywords (the platform's ``secrets`` patterns) as <redacted>.

    >>> redact_secrets("username ops privilege 15 secret 5 $1$abc$xyz")
    'username ops privilege 15 secret 5 <redacted>'
    """
    for pat in _secret_patterns(platform):
        text = pat.sub(lambda m: m.group(0)[: m.start("value") - m.start(0)] + "<redacted>" + m.group(0)[m.end("value") - m.start(0):], text)
    return text


SHORT_SECRET = 8  # a secret shorter than this is masked as a whole word only (mask_credentials)


def mask_credentials(text: str, *secrets: str | None) -> str:
    """``text`` with each of ``secrets`` (the password, the enable secret) replaced by ``***``, longest first. One of
    SHORT_SECRET characters or more is masked wherever it appears; a shorter one only where it stands apart from
    letters and digits (as a word, or after ``=`` or ``:``; on a side where it ends in a letter or digit): masked
    inside other words, a throwaway lab password ``x`` turned every message into ``ConnectionE***ception``, and its
    being inside a word tells nothing of it. Mask before cutting a message short: a secret the cut splits is no
    longer found whole.

    >>> mask_credentials("ConnectionException: password x refused (pw=x)", "x")
    'ConnectionException: password *** refused (pw=***)'
    >>> mask_credentials("login failed for ops:Secr3tPass@10.0.0.1", "Secr3tPass", None)
    'login failed for ops:***@10.0.0.1'
    """
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        if len(secret) >= SHORT_SECRET:
            text = text.replace(secret, "***")
        else:
            # apart from letters and digits on a side where the secret itself ends in one ('pw!' is masked in 'pw!x')
            before = "(?<![A-Za-z0-9])" if secret[0].isalnum() else ""
            after = "(?![A-Za-z0-9])" if secret[-1].isalnum() else ""
            text = re.sub(before + re.escape(secret) + after, "***", text)
    return text


def _secret_patterns(platform: str) -> list[re.Pattern]:
    cached = _SECRET_CACHE.get(platform)
    if cached is None:
        cached = _SECRET_CACHE[platform] = [re.compile(p, re.I) for p in platform_data(platform).get("secrets", ())]
    return cached


_SECRET_CACHE: dict[str, list[re.Pattern]] = {}


def write_private(path, text: str) -> None:
    """Write ``text`` to ``path`` readable by its owner only (0600), its folder 0700 when created here."""
    path = Path(path)
    make_private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(path, 0o600)  # an existing file keeps its mode through O_TRUNC: set it


def make_private_dir(path) -> None:
    """Create ``path`` (and missing parents) as 0700; tighten it to 0700 if it exists."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
