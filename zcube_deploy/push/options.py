"""What a push run is given: the credentials and the options (plain records, no behaviour)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str
    secret: str

    def __repr__(self) -> str:  # never print secrets, even by accident
        return f"Credentials(username={self.username!r}, password=***, secret=***)"


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
