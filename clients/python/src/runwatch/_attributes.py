"""A run's attributes — tags, metadata, end user, environment, release (docs/API.md, the event envelope) — made to
fit the server's bounds before they are sent, so that a run is never refused because of them:

- a string over its bound is cut (a tag, a metadata key or end_user and release at 200 characters, environment at
  100, a metadata value at 1024; characters as the server counts them, in UTF-16 code units); an empty one is left
  out;
- past 50 tags or 64 metadata keys on a run, further ones are left out (the server keeps no more per run either);
- a metadata value that is not a string, a finite number or a boolean is sent JSON-encoded as a string; None is
  left out.

Each cut is logged as a warning on the `runwatch` logger. A value of the wrong kind (tags that are not strings,
metadata that is not a mapping with string keys) is the caller's mistake and raises TypeError at the call.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Mapping
from typing import Any

from ._json import to_jsonable

logger = logging.getLogger("runwatch")

MAX_TAGS = 50
MAX_TAG_CHARS = 200
MAX_METADATA_KEYS = 64
MAX_KEY_CHARS = 200
MAX_VALUE_CHARS = 1024
MAX_END_USER_CHARS = 200
MAX_ENVIRONMENT_CHARS = 100
MAX_RELEASE_CHARS = 200

MetadataValue = str | int | float | bool


def _utf16_length(text: str) -> int:
    """The length the server measures (JavaScript's String.length): a character beyond U+FFFF counts twice."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def _cut(text: str, limit: int, what: str) -> str:
    length = _utf16_length(text)
    if length <= limit:
        return text
    logger.warning("runwatch: %s is %d characters long; cut to %d", what, length, limit)
    out, used = [], 0
    for c in text:
        used += 2 if ord(c) > 0xFFFF else 1
        if used > limit:
            break
        out.append(c)
    return "".join(out)


def tag_list(tags: str | Iterable[str] | None) -> list[str]:
    """The tags as the wire takes them: a single string is one tag; each cut to 200 characters, empty ones left out."""
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = [tags]
    elif not isinstance(tags, Iterable) or isinstance(tags, Mapping):
        raise TypeError(f"runwatch: tags must be a list of strings, not {type(tags).__name__}")
    out: list[str] = []
    for i, tag in enumerate(tags):
        if not isinstance(tag, str):
            raise TypeError(f"runwatch: tags[{i}] must be a string, not {type(tag).__name__}")
        if tag:
            out.append(_cut(tag, MAX_TAG_CHARS, f"tag {tag[:40]!r}…"))
    return out


def metadata_value(value: Any) -> MetadataValue:
    """A string, finite number or boolean as it is (a string cut to 1024 characters); anything else JSON-encoded."""
    if isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    text = value if isinstance(value, str) else json.dumps(to_jsonable(value), ensure_ascii=False, default=str)
    return _cut(text, MAX_VALUE_CHARS, "a metadata value")


def metadata_dict(metadata: Mapping[str, Any] | None) -> dict[str, MetadataValue]:
    """The metadata as the wire takes it (see metadata_value); keys cut to 200 characters, None values left out."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise TypeError(f"runwatch: metadata must be a mapping of string keys, not {type(metadata).__name__}")
    out: dict[str, MetadataValue] = {}
    for key, value in metadata.items():
        if not isinstance(key, str):
            raise TypeError(f"runwatch: metadata keys must be strings, not {type(key).__name__} ({key!r})")
        if key and value is not None:
            out[_cut(key, MAX_KEY_CHARS, f"metadata key {key[:40]!r}…")] = metadata_value(value)
    return out


def label(value: str | int | None, limit: int, name: str) -> str | None:
    """end_user, environment or release: a string (an int is taken as its digits) cut to `limit`; None when empty."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise TypeError(f"runwatch: {name} must be a string, not {type(value).__name__}")
    return _cut(value, limit, name) if value else None


def _some(names: list[str]) -> str:
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    return ", ".join(repr(n) for n in names[:5]) + more


class RunAttributes:
    """The tags and metadata one run has sent or will send, bounded as the server bounds a run, and the envelope
    fields not sent yet (`pending`): they go with the run's next event (`take_pending`). Callers hold the run's lock
    to change it."""

    __slots__ = ("metadata", "pending", "sdk_run_id", "tags")

    def __init__(
        self,
        sdk_run_id: str,
        tags: str | Iterable[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        *,
        end_user: str | None = None,
        environment: str | None = None,
        release: str | None = None,
    ) -> None:
        self.sdk_run_id = sdk_run_id
        self.tags: dict[str, None] = {}  # insertion-ordered set
        self.metadata: dict[str, MetadataValue] = {}
        self.pending: dict[str, Any] | None = None
        for field, value in (
            ("end_user", label(end_user, MAX_END_USER_CHARS, "end_user")),
            ("environment", label(environment, MAX_ENVIRONMENT_CHARS, "environment")),
            ("release", label(release, MAX_RELEASE_CHARS, "release")),
        ):
            if value is not None:
                self._pend()[field] = value
        self.add_tags(tag_list(tags))
        self.set_metadata(metadata_dict(metadata))

    def _pend(self) -> dict[str, Any]:
        if self.pending is None:
            self.pending = {}
        return self.pending

    def add_tags(self, tags: list[str]) -> None:
        left_out: list[str] = []
        for tag in tags:
            if tag in self.tags:
                continue
            if len(self.tags) >= MAX_TAGS:
                left_out.append(tag)
                continue
            self.tags[tag] = None
            self._pend().setdefault("tags", []).append(tag)
        if left_out:
            logger.warning(
                "runwatch: run %s has %d tags, the most a run keeps; left out: %s",
                self.sdk_run_id,
                MAX_TAGS,
                _some(left_out),
            )

    def set_metadata(self, metadata: dict[str, MetadataValue]) -> None:
        left_out: list[str] = []
        for key, value in metadata.items():
            if key not in self.metadata and len(self.metadata) >= MAX_METADATA_KEYS:
                left_out.append(key)
                continue
            self.metadata[key] = value
            self._pend().setdefault("metadata", {})[key] = value
        if left_out:
            logger.warning(
                "runwatch: run %s has %d metadata keys, the most a run keeps; left out: %s",
                self.sdk_run_id,
                MAX_METADATA_KEYS,
                _some(left_out),
            )

    def take_pending(self) -> dict[str, Any] | None:
        """The envelope fields not sent yet (forgotten as they are taken)."""
        pending, self.pending = self.pending, None
        return pending
