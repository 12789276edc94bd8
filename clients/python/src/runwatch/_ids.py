"""UUIDv7 event ids (RFC 9562), monotonic within the process.

The server orders a run's events by event_id (uuidv7 minted at ingest, or the client's own id), so the
client's ids must sort in the order the events happened: a 48-bit millisecond timestamp, then a 12-bit
counter (method 1 of RFC 9562 §6.2) that keeps ids made in the same millisecond in order, then 62 random
bits. Python's uuid module has no uuid7 before 3.14.
"""

from __future__ import annotations

import random
import threading

_lock = threading.Lock()
_last_ms = -1
_counter = 0
# The module-level generator: fast, and reseeded in a forked child by the random module itself. Event ids
# need uniqueness, not secrecy; 62 random bits per id plus the time and counter fields give that.
_getrandbits = random.getrandbits


def uuid7(ts: float) -> str:
    """A UUIDv7 for the event time `ts` (epoch seconds), never sorting before the previous one."""
    global _last_ms, _counter
    ms = int(ts * 1000)
    with _lock:
        if ms > _last_ms:
            _last_ms = ms
            _counter = _getrandbits(10)  # random start, room left for 3k+ ids in the same millisecond
        else:
            _counter += 1
            if _counter > 0xFFF:  # counter exhausted: borrow the next millisecond
                _last_ms += 1
                _counter = 0
        ms, counter = _last_ms, _counter
    value = (ms & 0xFFFF_FFFF_FFFF) << 80 | 0x7 << 76 | counter << 64 | 0b10 << 62 | _getrandbits(62)
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
