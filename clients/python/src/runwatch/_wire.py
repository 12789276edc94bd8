"""What the sender thread handles: an event made wire-ready once (_Item), its counters, and how the server's
answers are read (error text, Retry-After)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from ._http import Response
from ._ids import uuid7
from ._json import iso_utc, resolve_deferred


@dataclass
class TransportStats:
    enqueued: int = 0
    sent: int = 0
    dropped_queue_full: int = 0
    dropped_rejected: int = 0
    dropped_failed: int = 0
    retries: int = 0
    requests: int = 0

    @property
    def dropped(self) -> int:
        return self.dropped_queue_full + self.dropped_rejected + self.dropped_failed


class _Item:
    """One event on its way: the wire JSON is made once, on the sender thread."""

    __slots__ = ("attempts", "event", "wire")

    def __init__(self, event: dict[str, Any]) -> None:
        self.event = event
        self.attempts = 0
        ts = event.pop("_ts", None)
        if ts is None:
            ts = time.time()
        if "event_id" not in event:
            event["event_id"] = uuid7(ts)
        if "occurred_at" not in event:
            event["occurred_at"] = iso_utc(ts)
        resolve_deferred(event.get("payload"))
        self.wire = json.dumps(event, separators=(",", ":"), default=str).encode()


def _describe(event: dict[str, Any]) -> str:
    return f"{event.get('event_type')} of run {event.get('sdk_run_id')}"


def _error_text(resp: Response) -> str:
    try:
        err = resp.json()["error"]
        return f"{err.get('code')}: {err.get('message')}"
    except Exception:
        return resp.body[:200].decode("utf-8", "replace")


def _pace(resp: Response) -> float:
    """Seconds to wait before the next request. Once half of the key's rate-limit window is spent (RateLimit-Limit,
    -Remaining, -Reset, docs/API.md), the requests left are spread evenly over what is left of it, so a busy client
    sends a little less often instead of spending the window and then waiting out a 429 (up to a minute without
    sending). 0 before that, and without the headers."""
    try:
        limit, remaining, reset = (
            float(resp.header(f"ratelimit-{h}") or "nan") for h in ("limit", "remaining", "reset")
        )
    except ValueError:
        return 0.0
    if not (remaining >= 0 and reset > 0) or remaining * 2 > limit:
        return 0.0
    return reset / (remaining + 1)


def _retry_after(resp: Response) -> float | None:
    """Retry-After as seconds (delta-seconds or HTTP-date), capped at 5 minutes."""
    raw = resp.header("retry-after")
    if not raw:
        return None
    raw = raw.strip()
    try:
        secs = float(raw)
    except ValueError:
        try:
            secs = parsedate_to_datetime(raw).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    return min(max(secs, 0.0), 300.0)
