"""One switch's push as named steps, each with a typed outcome: connect, back up, load, diff, guard, apply,
save again (when the save was not confirmed), roll back, read back.

Every step either returns what the next one needs or raises :class:`Stop` carrying the switch's final
status and why; :func:`push_device` runs the steps in order and turns the first ``Stop`` into the
switch's :class:`DeviceResult`. Whether anything was sent is a field of the run (``Session.sent``),
never guessed from the status. After any rollback the whole running config is read back and compared
with the backup (the platform's ``config_drift``, volatile lines aside): ``rolled_back`` only when
nothing differs, else ``rollback_incomplete`` naming the lines that do.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from napalm.base.exceptions import MergeConfigException, ReplaceConfigException

from zcube_deploy.platforms import napalm_driver, platform_module
from zcube_deploy.platforms.contract import StartupNotConfirmed
from zcube_deploy.push.guard import after_change, management_problems, management_unchecked
from zcube_deploy.push.options import Credentials, PushOptions
from zcube_deploy.push.targets import Target
from zcube_deploy.safety import make_private_dir, mask_credentials, redact_secrets, write_private

MAX_DRIFT_SHOWN = 20  # lines named in a rollback_incomplete error (all of them are in the result's `drift`)


@dataclass
class DeviceResult:
    """What push did to one switch (one entry of push-report.json's ``devices``; see docs/push.md for each status).

    The fields that are None (or False) are left out of the report, as before this was a record.
    """

    name: str
    host: str | None = None
    port: int | None = None
    status: str = "failed"
    lines_changed: int = 0
    error: str | None = None
    duration_s: float = 0.0
    edited: bool = False  # the config file differs from render's manifest (pushed with --allow-edited)
    backup: str | None = None
    diff: str | None = None
    note: str | None = None
    save_retried: bool = False
    save_retry_error: str | None = None
    rollback_attempts: int | None = None
    rollback_error: str | None = None
    rolled_back: bool | None = None  # startup_uncertain: whether the running config is back to the backup
    action: str | None = None  # what a technician does (startup_uncertain, rollback_incomplete)
    drift: list[str] | None = None  # rollback_incomplete: the running config's lines that differ from the backup
    not_checked: list[str] | None = None  # checks that could not run (the management guard without a management address)

    def as_dict(self) -> dict:
        always = ("name", "status", "lines_changed", "error", "duration_s")
        return {k: v for k, v in asdict(self).items() if k in always or (v is not None and v is not False)}


class Stop(Exception):
    """The end of a switch's push: its final ``status`` and why (``error``, None for a good end)."""

    def __init__(self, status: str, error: str | None = None):
        super().__init__(status)
        self.status = status
        self.error = error


@dataclass
class Session:
    """One switch's push in progress: the target, its driver session, the result being filled in."""

    t: Target
    creds: Credentials
    opts: PushOptions
    out: Path
    result: DeviceResult
    drv: object = None
    running: str = ""  # the backup: the running config read before anything was sent
    lines: list[str] = field(default_factory=list)  # the remediation (the diff)
    sent: bool = False  # a line may have reached the device

    def driver(self, **extra):
        t, opts, creds = self.t, self.opts, self.creds
        return napalm_driver(t.platform)(t.host, creds.username, creds.password, timeout=int(opts.timeout), optional_args={
            "port": t.port, "secret": creds.secret, "known_hosts": opts.known_hosts,
            "trust_on_first_use": opts.trust_on_first_use, "read_timeout": opts.read_timeout, "managed_scope": t.scope, **extra})

    def clean(self, exc: BaseException, with_type: bool = True) -> str:
        return clean_error(exc, self.creds, self.t.platform, with_type)

    def reconnect(self, **extra) -> None:
        """A new session (the old one closed quietly); an open that fails is left to the caller's next step."""
        close_quietly(self.drv)
        self.drv = self.driver(**extra)
        try:
            self.drv.open()
        except Exception:
            pass


def push_device(t: Target, creds: Credentials, opts: PushOptions, out: Path) -> DeviceResult:
    """Push one switch; every outcome is a result (a device's failure never stops the others)."""
    res = DeviceResult(t.name, t.host, t.port, edited=t.edited)
    s = Session(t, creds, opts, Path(out), res)
    started = time.monotonic()
    try:
        for step in (connect, back_up, load, diff, guard, apply):
            step(s)
    except Stop as stop:
        res.status, res.error = stop.status, stop.error if stop.error is not None else res.error
    except Exception as exc:  # e.g. a config the parser cannot read
        res.status = "failed"
        res.error = f"{s.clean(exc)} ({'after lines were sent; not rolled back' if s.sent else 'before any change'})"
    finally:
        close_quietly(s.drv)
        res.duration_s = round(time.monotonic() - started, 3)
    return res


# ---- the steps (each raises Stop to end the switch's push)
def connect(s: Session) -> None:
    s.drv = s.driver()
    try:
        s.drv.open()
    except Exception as exc:
        raise Stop("unreachable", s.clean(exc)) from None


def back_up(s: Session) -> None:
    """Read the running config and keep it (owner-only: it holds the device's secrets) before anything is sent."""
    try:
        s.running = s.drv.get_config("running")["running"]
    except Exception as exc:
        raise Stop("unreachable", f"could not read the running config: {s.clean(exc)}") from None
    make_private_dir(s.out / "backups")
    backup = s.out / "backups" / s.t.name / f"{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%S%fZ')}.cfg"
    write_private(backup, s.running)
    s.result.backup = str(backup)


def load(s: Session) -> None:
    """Load the candidate: the driver's pre-flight (every interface named exists)."""
    try:
        s.drv.load_replace_candidate(config=s.t.intended)
    except (ReplaceConfigException, MergeConfigException) as exc:
        raise Stop("failed", f"{s.clean(exc, with_type=False)}; nothing was changed") from None


def diff(s: Session) -> None:
    """The remediation, written to DIR/push/<switch>.diff (every line that would be sent, secrets masked)."""
    text = s.drv.compare_config()
    s.lines = text.splitlines() if text else []
    s.result.lines_changed = sum(1 for ln in s.lines if ln != "exit")
    ddir = s.out / "push"
    ddir.mkdir(parents=True, exist_ok=True)
    path = ddir / f"{s.t.name}.diff"
    path.write_text(redact_secrets("".join(ln + "\n" for ln in s.lines), s.t.platform), encoding="utf-8")
    s.result.diff = str(path)


def guard(s: Session) -> None:
    """Refuse a change that would cut the management path; a dry run and an empty diff end here."""
    refused, unchecked = management_guard(s.t, s.running, s.lines)
    if unchecked:
        s.result.not_checked = [unchecked]
    if refused:
        raise Stop("refused", redact_secrets("refused: " + "; ".join(refused) + "; nothing was changed", s.t.platform))
    if s.opts.dry_run:
        raise Stop("would_change" if s.lines else "unchanged")
    if not s.lines:
        raise Stop("unchanged")


def apply(s: Session) -> None:
    """Commit (apply, read back, write); on a failure, save again or roll back."""
    s.sent = True
    try:
        s.drv.commit_config()
        raise Stop("changed")
    except StartupNotConfirmed as exc:  # applied and confirmed; the write may have happened, or partly
        s.result.error = s.clean(exc, with_type=False)
        save_again(s)  # raises Stop("changed") when the second save is confirmed
        s.reconnect(rollback_to=s.running)  # this session's commit took the new config as its backup: never roll back to it
        roll_back(s, unsaved=exc)
    except Stop:
        raise
    except Exception as exc:
        s.result.error = s.clean(exc)
        roll_back(s)


def save_again(s: Session) -> None:
    """After a commit whose save was not confirmed: on a new session, when nothing differs from the intended config
    (the running config still holds exactly the change), commit again, which applies nothing and saves. Raises
    Stop("changed") (``save_retried``) when the device confirms it; returns, with the reason, otherwise."""
    close_quietly(s.drv)
    s.drv = s.driver()
    try:
        s.drv.open()
        s.drv.load_replace_candidate(config=s.t.intended)
        left = s.drv.compare_config()
        if left:
            s.result.save_retry_error = f"not saved again: {len(left.splitlines())} lines differ from the intended config on a new session"
            return
        s.drv.commit_config()
    except Exception as exc:
        s.result.save_retry_error = s.clean(exc)
        return
    s.result.save_retried = True
    s.result.note = f"the first save was not confirmed ({s.result.error or 'no answer'}); a second one on a new session was"
    s.result.error = None
    raise Stop("changed")


def roll_back(s: Session, unsaved: StartupNotConfirmed | None = None) -> None:
    """Roll back to the backup (reconnecting when the session is gone; never writing), then read the whole running
    config back. Always raises Stop: rolled_back, rollback_incomplete, startup_uncertain or failed."""
    for attempt in range(1, s.opts.rollback_attempts + 1):
        try:
            if not s.drv.is_alive()["is_alive"]:
                s.reconnect(rollback_to=s.running)
            s.drv.rollback()
        except Exception as exc:
            s.result.rollback_error = s.clean(exc)
            s.reconnect(rollback_to=s.running)
            continue
        s.result.rollback_attempts = attempt
        drift = read_back(s)
        if unsaved is not None:
            s.result.drift = [redact_secrets(d, s.t.platform) for d in drift] or None
            startup_uncertain(s.result, unsaved, s.t, rolled_back=drift == [])
            raise Stop("startup_uncertain")
        if drift:
            rollback_incomplete(s.result, drift, s.t)
            raise Stop("rollback_incomplete")
        raise Stop("rolled_back")
    if unsaved is not None:
        startup_uncertain(s.result, unsaved, s.t, rolled_back=False)
        raise Stop("startup_uncertain")
    raise Stop("failed")


def read_back(s: Session) -> list[str]:
    """The lines in which the whole running config (read now) differs from the backup; [] when none does.
    A running config that cannot be read is a difference too: nothing unread is reported as restored."""
    try:
        now = s.drv.get_config("running")["running"]
    except Exception as exc:
        return [f"? the running config could not be read back: {s.clean(exc)}"]
    return config_drift(s.t.platform, now, s.running)


def config_drift(platform: str, have: str, want: str) -> list[str]:
    """The platform's ``config_drift`` (volatile lines aside); for a platform without one, the lines of one text
    that the other lacks, blank lines aside (stricter: a volatile line counts as a difference, never the reverse)."""
    own = getattr(platform_module(platform), "config_drift", None)
    if own is not None:
        return own(have, want)
    a = [ln.rstrip() for ln in have.splitlines() if ln.strip()]
    b = [ln.rstrip() for ln in want.splitlines() if ln.strip()]
    return [f"+ {ln}" for ln in a if ln not in set(b)] + [f"- {ln}" for ln in b if ln not in set(a)]


# ---- the words of the failure statuses
def rollback_incomplete(res: DeviceResult, drift: list[str], t: Target) -> None:
    """The rollback ran, but the running config read back is not the backup: name the lines that differ."""
    shown = "; ".join(drift[:MAX_DRIFT_SHOWN]) + (f"; ... {len(drift) - MAX_DRIFT_SHOWN} more" if len(drift) > MAX_DRIFT_SHOWN else "")
    res.drift = [redact_secrets(d, t.platform) for d in drift]
    res.error = redact_secrets(f"{res.error}; the rollback left {len(drift)} lines different from the backup: {shown}", t.platform)
    res.action = (f"compare the switch's running config with the backup {res.backup} and remove or restore the lines named "
                  f"('+' on the switch, not in the backup; '-' in the backup, not on the switch) by hand; the startup "
                  f"config was not written")


def startup_uncertain(res: DeviceResult, exc: StartupNotConfirmed, t: Target, rolled_back: bool) -> None:
    """The commit's save was not confirmed: the startup config may hold the new config, the old one, or part of
    either. Status ``startup_uncertain`` (a failure) and what a technician does about it."""
    check = exc.check or "compare the switch's startup config with its running config"
    again = f"re-run `zcube push PLAN --configs DIR --only {t.name}` (it applies the change again and saves it)"
    if rolled_back:
        action = (f"the running config is back to the backup, but the startup config may already hold the new config "
                  f"(a reload would bring it up): {check}; if they differ, {again}, or save the restored running config; "
                  f"do not reload the switch before")
    else:
        action = (f"the rollback failed too: the running config holds the new config or part of it, and the startup config "
                  f"is unknown: {check}, compare the running config with the backup {res.backup or ''}; then {again}")
    res.rolled_back, res.action = rolled_back, action


def management_guard(t: Target, running: str, lines: list[str]) -> tuple[list[str], str | None]:
    """(why the change would cut this switch's management path, [] when it would not or nothing changes;
    why the guard could not check it, None when it could): never a silent pass."""
    if not lines or t.scope is None:
        return [], None
    plat = platform_module(t.platform)
    before = plat.l3_facts(running)
    addresses = [a for a in (t.mgmt_address, t.host) if a]
    after = after_change(running, t.intended, t.scope.owns, plat.parse_config)
    return management_problems(before, plat.l3_facts(after), addresses), management_unchecked(before, addresses)


def clean_error(exc: BaseException, creds: Credentials, platform: str, with_type: bool = True) -> str:
    """An exception's first line, at most 300 characters, credentials and secret values masked."""
    text = ((f"{type(exc).__name__}: {exc}" if with_type else str(exc)).strip().splitlines() or [type(exc).__name__])[0]
    return redact_secrets(mask_credentials(text, creds.password, creds.secret), platform)[:300]  # masked, then cut


def close_quietly(drv) -> None:
    if drv is None:
        return
    try:
        drv.close()
    except Exception:
        pass
