"""What a driver's ``commit_config`` tells push beyond the NAPALM contract's ``CommitError``.

A driver that cannot confirm the save raises :class:`StartupNotConfirmed` (a ``CommitError``, so a
caller that knows nothing of it still sees a failed commit): the change was applied and read back,
but writing it to the startup config was not confirmed (the save answered an error, timed out, or
the session dropped before its answer). The device may have written all of it, none of it, or part
of it: push saves once more on a new session and, if that is not confirmed either, rolls back and
reports the switch as ``startup_uncertain`` with what to check.

It lives here, beside the platforms, because a platform's driver raises it: a driver imports nothing
of push.
"""

from __future__ import annotations

from napalm.base.exceptions import CommitError


class StartupNotConfirmed(CommitError):
    """The change is applied and confirmed in the running config; its save to the startup config is not.

    ``check``: how a technician compares the two configs on this platform (the driver's wording,
    e.g. the show commands to run), shown in push's "what to do" text.
    """

    def __init__(self, message: str, check: str = ""):
        super().__init__(message)
        self.check = check
