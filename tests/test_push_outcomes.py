"""push's outcomes with a scripted NAPALM driver (no lab): error cleaning per platform, an unsaved commit
whose rollback fails too."""

from __future__ import annotations

import pytest
from napalm.base.exceptions import ConnectionException

import zcube_deploy.push.device as push
from zcube_deploy.push import Credentials, PushOptions, Target, push_device
from zcube_deploy.platforms.contract import StartupNotConfirmed

CREDS = Credentials("ops", "pw-Secret-123", "en-Secret-456")
OTHER_PLATFORM = "frr"  # any known platform other than the default one


class Scripted:
    """A NAPALM driver whose steps do what the test says."""

    script: dict = {}

    def __init__(self, host, username, password, timeout=60, optional_args=None):
        self.alive = True

    def _step(self, name):
        action = self.script.get(name)
        if isinstance(action, BaseException):
            raise action
        return action

    def open(self):
        self._step("open")

    def close(self):
        pass

    def is_alive(self):
        return {"is_alive": self.alive}

    def get_config(self, retrieve="all"):
        return {"running": self._step("get_config") or "hostname old\n"}

    def load_replace_candidate(self, config=None):
        pass

    def compare_config(self):
        return "hostname new"

    def commit_config(self):
        self._step("commit_config")

    def rollback(self):
        self._step("rollback")


@pytest.fixture
def scripted(monkeypatch):
    monkeypatch.setattr(push, "napalm_driver", lambda platform: Scripted)
    calls = []
    real = push.redact_secrets
    monkeypatch.setattr(push, "redact_secrets", lambda text, platform="?": calls.append(platform) or real(text, platform))
    return calls


def target(platform=OTHER_PLATFORM):
    return Target("sw1", "192.0.2.1", 22, "hostname new\n", None, None, platform)


def test_a_short_password_is_masked_as_a_word_not_inside_words(scripted, tmp_path):
    """A throwaway password 'x' (a lab, a test bench): masked where it stands as a word or a value, never inside the
    words of the message (it read 'ConnectionE***ception: ... e***change ...')."""
    Scripted.script = {"open": ConnectionException("SSH key exchange failed; auth with x refused (pw=x, secret:en)")}
    res = push_device(target(), Credentials("ops", "x", "en"), PushOptions(), tmp_path)
    assert res.error == "ConnectionException: SSH key exchange failed; auth with *** refused (pw=***, secret:***)", res.error


@pytest.mark.parametrize("secret,text,masked", [
    ("x", "e[x]change x", "e[***]change ***"),  # short: apart from letters and digits only
    ("Secr3tPass", "ops:Secr3tPass@h and aSecr3tPassb", "ops:***@h and a***b"),  # long: anywhere
    ("p.w", "p.w p_w pXw", "*** p_w pXw"),  # a regex character stands for itself
    ("pw!", "login pw!x failed", "login ***x failed"),  # ends in a symbol: nothing to keep apart on that side
    ("-ab1", "key-ab1 and -ab1x", "key*** and -ab1x"),
])
def test_mask_credentials(secret, text, masked):
    from zcube_deploy.safety import mask_credentials

    assert mask_credentials(text, None, secret, "") == masked


def test_a_message_is_masked_before_it_is_cut(scripted, tmp_path):
    """A long message is cut at 300 characters after the secrets are masked: cut first, a password straddling the
    cut was no longer found whole and its beginning was printed."""
    Scripted.script = {"open": ConnectionException("x" * 268 + " pw-Secret-123 refused")}  # the cut at 300 falls inside it
    res = push_device(target(), CREDS, PushOptions(), tmp_path)
    assert "pw-Secret" not in res.error and len(res.error) == 300 and " *** refuse" in res.error, res.error


@pytest.mark.parametrize("step", ["open", "get_config"])
def test_an_unreachable_device_error_is_cleaned_with_its_platform(scripted, tmp_path, step):
    Scripted.script = {step: ConnectionException("auth failed for ops with pw-Secret-123 / en-Secret-456; enable secret 5 x")}
    res = push_device(target(), CREDS, PushOptions(), tmp_path)
    assert res.status == "unreachable"
    assert "pw-Secret-123" not in res.error and "en-Secret-456" not in res.error and "***" in res.error
    assert scripted and set(scripted) == {OTHER_PLATFORM}, f"cleaned with the wrong platform's secret patterns: {scripted}"


def test_the_default_platform_masks_its_secret_lines(scripted, tmp_path):
    Scripted.script = {"open": ConnectionException("rejected: enable secret 5 $1$abc$xyz")}
    res = push_device(target("ruijie_rgos"), CREDS, PushOptions(), tmp_path)
    assert res.status == "unreachable" and "$1$abc$xyz" not in res.error and "<redacted>" in res.error


def test_unsaved_commit_then_failed_rollback(scripted, tmp_path):
    Scripted.script = {"commit_config": StartupNotConfirmed("the running config is as intended, but the save was not confirmed",
                                                           check="look at the startup config"),
                       "rollback": ConnectionException("gone")}
    res = push_device(target(), CREDS, PushOptions(rollback_attempts=2), tmp_path)
    assert res.status == "startup_uncertain" and res.rolled_back is False
    assert "look at the startup config" in res.action and res.backup in res.action and "--only sw1" in res.action
    assert "rollback failed" in res.action and "gone" in res.rollback_error


def test_unsaved_commit_rolled_back(scripted, tmp_path):
    Scripted.script = {"commit_config": StartupNotConfirmed("not saved", check="look at the startup config")}
    res = push_device(target(), CREDS, PushOptions(), tmp_path)
    assert res.status == "startup_uncertain" and res.rolled_back is True and res.rollback_attempts == 1
    assert "back to the backup" in res.action and "look at the startup config" in res.action


def test_other_commit_errors_still_roll_back(scripted, tmp_path):
    from napalm.base.exceptions import CommitError

    Scripted.script = {"commit_config": CommitError("the device rejected 'x'")}
    res = push_device(target(), CREDS, PushOptions(), tmp_path)
    assert res.status == "rolled_back" and res.action is None and res.rolled_back is None
    assert set(res.as_dict()) == {"name", "host", "port", "status", "lines_changed", "error", "duration_s", "backup", "diff", "rollback_attempts"}


class Stateful(Scripted):
    """A device whose running config the commit changes and the rollback restores (as much as the test says)."""

    config = "hostname old\n"
    calls: list = []
    left_after_rollback = ""  # what a rollback cannot see (a lenient CLI's stray global line)

    def get_config(self, retrieve="all"):
        return {"running": Stateful.config}

    def commit_config(self):
        Stateful.calls.append("commit_config")
        Stateful.config = "hostname new\n" + Stateful.left_after_rollback
        self._step("commit_config")

    def rollback(self):
        Stateful.calls.append("rollback")
        self._step("rollback")
        Stateful.config = "hostname old\n" + Stateful.left_after_rollback


@pytest.fixture
def stateful(monkeypatch):
    monkeypatch.setattr(push, "napalm_driver", lambda platform: Stateful)
    Stateful.config, Stateful.calls, Stateful.left_after_rollback = "hostname old\n", [], ""
    return Stateful


REJECTED = "the device rejected 'interface X 0/9': % Invalid input detected at '^' marker."


def test_rolled_back_only_after_the_rollback_ran_and_was_read_back(stateful, tmp_path):
    """Known-bad case: push skipping its rollback call while reporting rolled_back (the read-back sees the new config)."""
    from napalm.base.exceptions import CommitError

    Stateful.script = {"commit_config": CommitError(REJECTED)}
    res = push_device(target("ruijie_rgos"), CREDS, PushOptions(), tmp_path)
    assert Stateful.calls == ["commit_config", "rollback"]
    assert res.status == "rolled_back" and Stateful.config == "hostname old\n"


def test_the_devices_rejection_is_the_reported_reason(stateful, tmp_path):
    """Known-bad case: a hidden "device rejected" reason. The device's words reach the report and the table."""
    from napalm.base.exceptions import CommitError

    from zcube_deploy.push.preview import device_rows

    Stateful.script = {"commit_config": CommitError(REJECTED)}
    res = push_device(target("ruijie_rgos"), CREDS, PushOptions(), tmp_path)
    assert REJECTED in res.error and REJECTED in res.as_dict()["error"]
    ((_, status, _, _, detail),) = device_rows({"devices": [res.as_dict()]})
    assert status == "rolled_back" and REJECTED in detail


def test_a_rollback_that_leaves_a_stray_line_is_rollback_incomplete(stateful, tmp_path):
    from napalm.base.exceptions import CommitError

    Stateful.script = {"commit_config": CommitError(REJECTED)}
    Stateful.left_after_rollback = "bfd interval 300 min_rx 300 multiplier 3\n"
    res = push_device(target("ruijie_rgos"), CREDS, PushOptions(), tmp_path)
    assert res.status == "rollback_incomplete" and res.drift == ["+ bfd interval 300 min_rx 300 multiplier 3"]
    assert REJECTED in res.error and "+ bfd interval 300" in res.error and res.backup in res.action
    assert res.as_dict()["drift"] == res.drift


def test_an_unreadable_read_back_is_not_rolled_back(stateful, tmp_path, monkeypatch):
    from napalm.base.exceptions import CommitError

    Stateful.script = {"commit_config": CommitError(REJECTED)}
    reads = []

    def get_config(self, retrieve="all"):
        reads.append(retrieve)
        if len(reads) > 1:
            raise ConnectionException("gone")
        return {"running": Stateful.config}

    monkeypatch.setattr(Stateful, "get_config", get_config)
    res = push_device(target("ruijie_rgos"), CREDS, PushOptions(), tmp_path)
    assert res.status == "rollback_incomplete" and "could not be read back" in res.drift[0]


def test_an_internal_error_masks_the_secrets_the_process_holds(monkeypatch, capsys):
    """A bug's message, printed far from any credentials (cli/common.handle_errors), masks what the process was given:
    the environment's password and enable secret (and the lab's defaults, a prompt's answers: access.given_secrets);
    a message with rich markup in it is printed as it is."""
    from zcube_deploy.cli.common import handle_errors

    monkeypatch.setenv("ZCUBE_PASSWORD", "env-Passw0rd-1")
    monkeypatch.setenv("ZCUBE_ENABLE_SECRET", "q")

    @handle_errors
    def boom():
        raise RuntimeError("session env-Passw0rd-1 failed at [bold]q[/bold]: see queue")

    with pytest.raises(SystemExit) as e:
        boom()
    said = capsys.readouterr().err
    assert e.value.code == 3 and "env-Passw0rd-1" not in said, said
    assert "session *** failed at [bold]***[/bold]: see queue" in " ".join(said.split()), said
