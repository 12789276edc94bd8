"""Exceptions the client raises. Event delivery never raises; only explicit waits (human input) can."""

from __future__ import annotations


class RunwatchError(Exception):
    """A Runwatch API call that the caller waits for failed (e.g. the API key was refused). `status` is the HTTP
    status of a refusal (None when the server was not reached)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class HumanInputTimeout(RunwatchError, TimeoutError):
    """No answer to a human-input request arrived within the timeout."""
