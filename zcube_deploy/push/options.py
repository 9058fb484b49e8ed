"""What a push run is given: the credentials (the record of access.py, shared with verify) and the
options (plain records, no behaviour)."""

from __future__ import annotations

from dataclasses import dataclass

from zcube_deploy.access import Credentials

__all__ = ["Credentials", "PushOptions"]


@dataclass
class PushOptions:
    dry_run: bool = False
    concurrency: int = 8
    canary: int = 0
    max_failures: int | None = None
    known_hosts: str | None = None
    trust_on_first_use: bool = False
    timeout: float = 30
    read_timeout: float = 120
    rollback_attempts: int = 3
