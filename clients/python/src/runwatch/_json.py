"""Turning arbitrary agent values (pydantic models, LangChain messages, dataclasses...) into bounded JSON.

The conversion is bounded by a character budget so a huge state never costs much, and it runs on the sender
thread, not the agent's: a payload value may be `deferred(...)`, which the agent's thread makes by taking a
snapshot — shallow copies of the containers the agent may still change (a dict's list values, a list) — and which
_wire._Item converts when it makes the event's wire form.
"""

from __future__ import annotations

import dataclasses
import math
import time
from datetime import date, datetime, timezone
from enum import Enum
from typing import Any
from uuid import UUID

PREVIEW_MAX_CHARS = 500
DEFAULT_BUDGET = 16_000
_MAX_DEPTH = 8
_MAX_ITEMS = 100
_ELLIPSIS = "…"


class _Budget:
    __slots__ = ("left",)

    def __init__(self, left: int) -> None:
        self.left = left


def _str(s: str, budget: _Budget) -> str:
    if len(s) <= budget.left:
        budget.left -= len(s)
        return s
    keep = max(budget.left, 0)
    budget.left = 0
    return s[:keep] + _ELLIPSIS


def _convert(value: Any, budget: _Budget, depth: int) -> Any:
    if value is None or isinstance(value, bool) or isinstance(value, int):
        return value
    if isinstance(value, str):
        return _str(value, budget)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if budget.left <= 0 or depth >= _MAX_DEPTH:
        return _ELLIPSIS
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for i, (k, v) in enumerate(value.items()):
            if i >= _MAX_ITEMS or budget.left <= 0:
                out[_ELLIPSIS] = f"{len(value) - i} more"
                break
            key = k if isinstance(k, str) else str(k)
            budget.left -= len(key)
            out[key] = _convert(v, budget, depth + 1)
        return out
    if isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
        res: list[Any] = []
        for i, v in enumerate(items):
            if i >= _MAX_ITEMS or budget.left <= 0:
                res.append(f"{_ELLIPSIS} {len(items) - i} more")
                break
            res.append(_convert(v, budget, depth + 1))
        return res
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (UUID, Enum)):
        return str(value.value if isinstance(value, Enum) else value)
    if isinstance(value, bytes):
        return _str(f"<{len(value)} bytes>", budget)
    # LangChain messages: keep what a person reads, not the whole pydantic dump.
    msg_type = getattr(value, "type", None)
    if isinstance(msg_type, str) and hasattr(value, "content") and hasattr(value, "additional_kwargs"):
        msg: dict[str, Any] = {"type": msg_type, "content": _convert(value.content, budget, depth + 1)}
        for attr in ("name", "tool_calls", "tool_call_id"):
            v = getattr(value, attr, None)
            if v:
                msg[attr] = _convert(v, budget, depth + 1)
        return msg
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return _convert(dump(), budget, depth + 1)
        except Exception:
            pass
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        try:
            return _convert({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, budget, depth + 1)
        except Exception:
            pass
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return _str(text, budget)


class Deferred:
    """A payload value converted on the sender thread: `fn(*args)` when the event is made wire-ready."""

    __slots__ = ("args", "fn")

    def __init__(self, fn: Any, *args: Any) -> None:
        self.fn = fn
        self.args = args

    def resolve(self) -> Any:
        try:
            return self.fn(*self.args)
        except Exception:
            return "<unserialisable>"


def snapshot(value: Any) -> Any:
    """What must be taken now for `value` to be converted later as it is now: a copy of a dict (and of its list
    values) or of a list; other values (strings, numbers, messages, models) as they are. Pointers only."""
    if isinstance(value, dict):
        return {k: (list(v) if isinstance(v, list) else v) for k, v in value.items()}
    if isinstance(value, list):
        return list(value)
    return value


def deferred_jsonable(value: Any) -> Deferred:
    """to_jsonable(value), on the sender thread (a value deferred already is kept: it converts itself)."""
    if type(value) is Deferred:
        return value
    return Deferred(to_jsonable, snapshot(value))


def deferred_preview(value: Any) -> Deferred:
    """preview(value), on the sender thread."""
    return Deferred(preview, snapshot(value))


#: What a deferred value resolves to when its key is to be left out of the payload.
OMIT = object()


def resolve_deferred(payload: Any) -> None:
    """Replaces the payload's deferred values with their JSON (the sender thread, _wire._Item)."""
    if isinstance(payload, dict):
        omitted = []
        for k, v in payload.items():
            if type(v) is Deferred:
                payload[k] = v.resolve()
                if payload[k] is OMIT:
                    omitted.append(k)
        for k in omitted:
            del payload[k]


def to_jsonable(value: Any, budget: int = DEFAULT_BUDGET) -> Any:
    """A JSON-serialisable copy of `value`, bounded to roughly `budget` characters. Never raises."""
    try:
        return _convert(value, _Budget(budget), 0)
    except Exception:
        return f"<unserialisable {type(value).__name__}>"


def to_object(value: Any, key: str = "value", budget: int = DEFAULT_BUDGET) -> dict[str, Any]:
    """Like to_jsonable, but always a JSON object (wraps non-dict values as {key: value})."""
    v = to_jsonable(value, budget)
    return v if isinstance(v, dict) else {key: v}


def preview(value: Any, limit: int = PREVIEW_MAX_CHARS) -> str:
    """A short human-readable string (tool input/output previews), at most `limit` characters."""
    if isinstance(value, str):
        text = value
    else:
        content = getattr(value, "content", None)  # ToolMessage / AIMessage → its content
        if isinstance(content, str) and hasattr(value, "additional_kwargs"):
            text = content
        else:
            import json

            try:
                text = json.dumps(to_jsonable(value, budget=limit * 2), ensure_ascii=False, default=str)
            except Exception:
                text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + _ELLIPSIS


_iso_second: list[object] = [-1, ""]  # (whole second, its "YYYY-MM-DDTHH:MM:SS" prefix): cached per second


def iso_utc(ts: float) -> str:
    """Epoch seconds → ISO 8601 UTC with microseconds, e.g. 2026-11-23T10:00:00.123456Z."""
    secs = int(ts)
    micros = round((ts - secs) * 1_000_000)
    if micros >= 1_000_000:
        secs, micros = secs + 1, micros - 1_000_000
    cached = _iso_second
    if cached[0] != secs:
        t = time.gmtime(secs)
        prefix = f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
        cached[:] = [secs, prefix]
    return f"{cached[1]}.{micros:06d}Z"


def parse_iso(s: str) -> float | None:
    try:
        dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()
