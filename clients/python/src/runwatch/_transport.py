"""Background delivery of events: a bounded in-memory queue drained by one daemon thread.

The agent's thread only appends a small dict to a deque (no lock, no I/O, no JSON). The sender thread
gives each event its idempotency id the first time it takes it (a UUIDv7, so ids sort in event order),
serialises it, and posts batches to POST /api/ingest/batch. Retries reuse the same event_id, so the
server stores a retried event once. Nothing here raises into the caller.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
import weakref
from collections import deque
from typing import Any, Literal

from ._http import HttpClient, Response, TransportError
from ._wire import TransportStats, _describe, _error_text, _Item, _pace, _retry_after

logger = logging.getLogger("runwatch")

DropPolicy = Literal["oldest", "newest"]

BATCH_PATH = "/api/ingest/batch"
_RETRYABLE_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
# Statuses for which a failing server is "down" or busy rather than rejecting the data: retried without limit
# (the bounded queue is what bounds memory meanwhile).
_UNLIMITED_RETRY_STATUS = frozenset({429, 502, 503, 504})


class Transport:
    def __init__(
        self,
        http: HttpClient,
        *,
        max_queue_size: int = 10_000,
        drop_policy: DropPolicy = "oldest",
        batch_size: int = 1000,
        max_batch_bytes: int = 900_000,
        flush_interval: float = 0.2,
        max_retries: int = 8,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        debug: bool = False,
    ) -> None:
        if drop_policy not in ("oldest", "newest"):
            raise ValueError("drop_policy must be 'oldest' or 'newest'")
        self._http = http
        self.max_queue_size = max(1, max_queue_size)
        self.drop_policy = drop_policy
        self.batch_size = max(1, min(batch_size, 1000))
        self.max_batch_bytes = max_batch_bytes
        self.flush_interval = flush_interval
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.debug = debug
        self.stats = TransportStats()
        self._pace_until = 0.0  # time.monotonic() before which the next request waits (_pace)
        self._init_threading()
        _live_transports.add(self)

    def _init_threading(self) -> None:
        self._queue: deque[dict[str, Any]] = deque()
        self._retry: deque[_Item] = deque()  # items that failed and go out again first, in order
        self._inflight = 0
        self._wake = threading.Event()  # something to send (set on the empty→non-empty edge)
        self._urgent = threading.Event()  # flush requested or a full batch is waiting: stop lingering
        self._stopped = threading.Event()
        self._idle = threading.Condition()
        self._wake_pending = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self._deadline: float | None = None  # while shutting down: never sleep past this

    # ---- agent's thread -------------------------------------------------------------------------------

    def enqueue(self, event: dict[str, Any]) -> None:
        """Queues one event. Costs a deque append; never blocks, never raises."""
        if self._closed:
            self.stats.dropped_queue_full += 1
            if self.debug:
                logger.debug("runwatch: client is shut down, dropped %s", _describe(event))
            return
        q = self._queue
        if len(q) >= self.max_queue_size:
            self.stats.dropped_queue_full += 1
            if self.drop_policy == "newest":
                if self.debug:
                    logger.debug("runwatch: queue full (%d), dropped newest %s", len(q), _describe(event))
                return
            try:
                old = q.popleft()
            except IndexError:
                old = None
            if self.debug and old is not None:
                logger.debug("runwatch: queue full (%d), dropped oldest %s", len(q), _describe(old))
        q.append(event)
        self.stats.enqueued += 1
        if self._thread is None:
            self._start()
        if not self._wake_pending:
            self._wake_pending = True
            self._wake.set()
        elif len(q) >= self.batch_size:
            self._urgent.set()

    def _start(self) -> None:
        with self._idle:
            if self._thread is None:
                t = threading.Thread(target=self._run, name="runwatch-sender", daemon=True)
                self._thread = t
                t.start()

    # ---- control --------------------------------------------------------------------------------------

    def pending(self) -> int:
        return len(self._queue) + len(self._retry) + self._inflight

    def flush(self, timeout: float | None = None) -> bool:
        """Waits until every queued event was delivered (or dropped). True if the queue drained in time."""
        if self._thread is None or not self._thread.is_alive():
            return self.pending() == 0
        if threading.current_thread() is self._thread:
            return False
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._idle:
            self._wake_pending = True
            self._wake.set()
            self._urgent.set()
            while self.pending() > 0:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._idle.wait(0.05 if left is None else min(left, 0.05))
                self._urgent.set()
        return True

    def shutdown(self, timeout: float | None = 5.0) -> bool:
        """Flushes for at most `timeout` seconds, then stops the sender. Later events are dropped."""
        if self._closed:
            return self.pending() == 0
        self._deadline = None if timeout is None else time.monotonic() + timeout
        ok = self.flush(timeout)
        self._closed = True
        self._stopped.set()
        self._wake.set()
        self._urgent.set()
        t = self._thread
        if t is not None and t.is_alive() and threading.current_thread() is not t:
            t.join(timeout=1.0)
        self._http.close()
        left = self.pending()
        if left:
            self.stats.dropped_failed += left
            logger.warning("runwatch: %d event(s) not delivered before shutdown (server unreachable?)", left)
        return ok

    def _after_fork_in_child(self) -> None:
        # A forked child has no sender thread and a copy of the parent's queue. The parent delivers those
        # events; sending them here as well would store them twice. Start empty; a sender starts on demand.
        self._init_threading()
        self._http._conn = None  # the parent's socket: never use (nor close) it from the child

    # ---- sender thread --------------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopped.is_set():
            self._wake.wait()
            if self._stopped.is_set():
                break
            # Linger briefly so that events close in time share one request.
            if len(self._queue) < self.batch_size:
                self._urgent.wait(self.flush_interval)
            self._urgent.clear()
            self._wake.clear()
            self._wake_pending = False
            try:
                self._drain()
            except Exception:  # never let the sender die
                logger.exception("runwatch: unexpected error in the sender thread")
                time.sleep(0.1)
            with self._idle:
                self._idle.notify_all()

    def _take_batch(self) -> list[_Item]:
        batch: list[_Item] = []
        size = 2  # the surrounding {"events":[...]} is counted loosely
        while len(batch) < self.batch_size:
            # Counted as in flight before it leaves the queue, so flush() never sees a moment with nothing pending.
            self._inflight += 1
            if self._retry:
                item = self._retry.popleft()
            else:
                try:
                    ev = self._queue.popleft()
                except IndexError:
                    self._inflight -= 1
                    break
                try:
                    item = _Item(ev)
                except Exception as e:
                    self._inflight -= 1
                    self.stats.dropped_rejected += 1
                    logger.warning("runwatch: dropped an event that cannot be serialised: %s", e)
                    continue
                if len(item.wire) + 2 > self.max_batch_bytes:
                    self._inflight -= 1
                    self.stats.dropped_rejected += 1
                    logger.warning(
                        "runwatch: dropped %s: %d bytes is over the %d-byte request limit",
                        _describe(item.event),
                        len(item.wire),
                        self.max_batch_bytes,
                    )
                    continue
            if batch and size + len(item.wire) + 1 > self.max_batch_bytes:
                self._retry.appendleft(item)
                self._inflight -= 1
                break
            batch.append(item)
            size += len(item.wire) + 1
        return batch

    def _drain(self) -> None:
        while not self._stopped.is_set():
            wait = self._pace_until - time.monotonic()
            if wait > 0 and not self._sleep(wait):
                return
            batch = self._take_batch()
            if not batch:
                return
            try:
                retry, delay = self._send(batch)
            except Exception:
                retry, delay = batch, self._backoff(max(i.attempts for i in batch))
                logger.exception("runwatch: unexpected error while sending; will retry")
            if retry:
                self._retry.extendleft(reversed(retry))  # before the in-flight count drops: flush() sees no gap
                self.stats.retries += 1
            self._inflight -= len(batch)
            if retry:
                with self._idle:
                    self._idle.notify_all()
                if not self._sleep(delay):
                    return

    def _sleep(self, delay: float) -> bool:
        """Backoff sleep, cut short by shutdown. False if the sender should stop draining now."""
        if self._deadline is not None:
            left = self._deadline - time.monotonic()
            if left <= 0:
                self._stopped.wait(0.05)  # past the shutdown deadline: no more backoff, but no busy loop either
                return False
            delay = min(delay, left)
        return not self._stopped.wait(delay)

    def _backoff(self, attempts: int) -> float:
        # Exponential backoff with full jitter (AWS architecture blog), capped.
        cap = min(self.backoff_max, self.backoff_base * (2 ** min(attempts, 16)))
        return random.uniform(cap / 2, cap)

    def _send(self, batch: list[_Item]) -> tuple[list[_Item], float]:
        """Posts one batch. Returns the items to retry and how long to wait first."""
        body = b'{"events":[' + b",".join(i.wire for i in batch) + b"]}"
        self.stats.requests += 1
        for item in batch:
            item.attempts += 1
        attempts = max(i.attempts for i in batch)
        try:
            resp = self._http.request("POST", BATCH_PATH, body)
        except TransportError as e:
            if self.debug or attempts == 1:
                logger.warning("runwatch: cannot reach %s (%s); %d event(s) kept for retry", BATCH_PATH, e, len(batch))
            return batch, self._backoff(attempts)

        self._pace_until = time.monotonic() + _pace(resp)
        status = resp.status
        if status == 207:
            return self._per_item(batch, resp)
        if 200 <= status < 300:
            self.stats.sent += len(batch)
            return [], 0.0
        if status == 413 and len(batch) > 1:
            # Too large for this server's body limit: halve the byte budget and try again at once.
            self.max_batch_bytes = max(1024, min(self.max_batch_bytes, len(body)) // 2)
            for item in batch:
                item.attempts -= 1
            return batch, 0.0
        if status in _RETRYABLE_STATUS:
            delay = _retry_after(resp) if status in (429, 503) else None
            if status not in _UNLIMITED_RETRY_STATUS and attempts > self.max_retries:
                self._drop_failed(batch, f"HTTP {status} after {attempts} attempts: {_error_text(resp)}")
                return [], 0.0
            if self.debug or attempts == 1:
                logger.info("runwatch: server answered %d, retrying %d event(s)", status, len(batch))
            return batch, delay if delay is not None else self._backoff(attempts)
        # Any other 4xx: the request itself is refused (bad key, malformed): retrying would not help.
        self.stats.dropped_rejected += len(batch)
        logger.error("runwatch: server refused %d event(s) with HTTP %d: %s", len(batch), status, _error_text(resp))
        return [], 0.0

    def _per_item(self, batch: list[_Item], resp: Response) -> tuple[list[_Item], float]:
        try:
            results = resp.json()["results"]
        except Exception:
            self.stats.sent += len(batch)  # 207 without a readable body: the server took the request
            return [], 0.0
        retry: list[_Item] = []
        delay: float | None = None
        seen: set[int] = set()
        for r in results:
            idx = r.get("index")
            if not isinstance(idx, int) or not 0 <= idx < len(batch) or idx in seen:
                continue
            seen.add(idx)
            item, st = batch[idx], int(r.get("status", 0))
            if 200 <= st < 300:
                self.stats.sent += 1
            elif st in _RETRYABLE_STATUS and (st in _UNLIMITED_RETRY_STATUS or item.attempts <= self.max_retries):
                retry.append(item)
            else:
                self.stats.dropped_rejected += 1
                err = r.get("error") or {}
                logger.warning(
                    "runwatch: server rejected %s (HTTP %s %s): %s%s",
                    _describe(item.event),
                    st,
                    err.get("code", ""),
                    err.get("message", ""),
                    f" [field {err['field']}]" if err.get("field") else "",
                )
        for idx, item in enumerate(batch):  # results missing from the answer: send those again
            if idx not in seen:
                retry.append(item)
        if retry:
            delay = _retry_after(resp)
            attempts = max(i.attempts for i in retry)
            return retry, delay if delay is not None else self._backoff(attempts)
        return [], 0.0

    def _drop_failed(self, batch: list[_Item], why: str) -> None:
        self.stats.dropped_failed += len(batch)
        logger.error("runwatch: dropped %d event(s): %s", len(batch), why)


_live_transports: weakref.WeakSet[Transport] = weakref.WeakSet()


def _reinit_after_fork() -> None:
    for t in list(_live_transports):
        t._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reinit_after_fork)
