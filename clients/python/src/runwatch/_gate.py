"""Activating an agent's config version through the activation gate (docs/EVALUATION.md): returns the gate's check
(both experiments' summaries, the rules); a version whose latest experiment broke a rule raises RunwatchError (HTTP
409) whose message names the score and both values, unless forced with a reason by a key of an admin or the owner."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ._datasets import _call

if TYPE_CHECKING:
    from .client import Runwatch


def activate_config_version(
    client: Runwatch, agent: str, version: int, *, force: bool = False, reason: str | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {"force": True, "reason": reason or ""} if force else {}
    return _call(client, "POST", f"/api/agents/{quote(agent, safe='')}/configs/{int(version)}/activate", body)
