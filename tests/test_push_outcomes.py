"""push's outcomes with a scripted NAPALM driver (no lab): error cleaning per platform, an unsaved commit
whose rollback fails too."""

from __future__ import annotations

import pytest
from napalm.base.exceptions import ConnectionException

import zcube_deploy.push as push
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


@pytest.mark.parametrize("step", ["open", "get_config"])
def test_an_unreachable_device_error_is_cleaned_with_its_platform(scripted, tmp_path, step):
    Scripted.script = {step: ConnectionException("auth failed for ops with pw-Secret-123 / en-Secret-456; enable secret 5 x")}
    res = push_device(target(), CREDS, PushOptions(), tmp_path)
    assert res["status"] == "unreachable"
    assert "pw-Secret-123" not in res["error"] and "en-Secret-456" not in res["error"] and "***" in res["error"]
    assert scripted and set(scripted) == {OTHER_PLATFORM}, f"cleaned with the wrong platform's secret patterns: {scripted}"


def test_the_default_platform_masks_its_secret_lines(scripted, tmp_path):
    Scripted.script = {"open": ConnectionException("rejected: enable secret 5 $1$abc$xyz")}
    res = push_device(target("ruijie_rgos"), CREDS, PushOptions(), tmp_path)
    assert res["status"] == "unreachable" and "$1$abc$xyz" not in res["error"] and "<redacted>" in res["error"]


def test_unsaved_commit_then_failed_rollback(scripted, tmp_path):
    Scripted.script = {"commit_config": StartupNotConfirmed("the running config is as intended, but the save was not confirmed",
                                                           check="look at the startup config"),
                       "rollback": ConnectionException("gone")}
    res = push_device(target(), CREDS, PushOptions(rollback_attempts=2), tmp_path)
    assert res["status"] == "startup_uncertain" and res["rolled_back"] is False
    assert "look at the startup config" in res["action"] and res["backup"] in res["action"] and "--only sw1" in res["action"]
    assert "rollback failed" in res["action"] and "gone" in res["rollback_error"]


def test_unsaved_commit_rolled_back(scripted, tmp_path):
    Scripted.script = {"commit_config": StartupNotConfirmed("not saved", check="look at the startup config")}
    res = push_device(target(), CREDS, PushOptions(), tmp_path)
    assert res["status"] == "startup_uncertain" and res["rolled_back"] is True and res["rollback_attempts"] == 1
    assert "back to the backup" in res["action"] and "look at the startup config" in res["action"]


def test_other_commit_errors_still_roll_back(scripted, tmp_path):
    from napalm.base.exceptions import CommitError

    Scripted.script = {"commit_config": CommitError("the device rejected 'x'")}
    res = push_device(target(), CREDS, PushOptions(), tmp_path)
    assert res["status"] == "rolled_back" and "action" not in res and "rolled_back" not in res
