/**
 * Delivery of events to POST /api/ingest/batch.
 *
 * - A bounded in-memory queue: enqueue() is synchronous and cheap (one JSON.stringify), never throws and never
 *   waits on the network. When the queue is full the new event is dropped and reported.
 * - One request in flight at a time, so a run's events reach the server in the order they were produced.
 *   A batch is at most `maxBatchSize` (≤ 1000) events and `maxBatchBytes` of body (the server takes ≤ 1 MiB).
 * - Retries: network errors, 429 and 503 are "server unavailable" and retried without limit (with backoff, and
 *   the queue bound keeps memory in check); other 5xx and per-item retryable statuses count against
 *   `maxAttempts`. 429/503 honour Retry-After. Backoff is exponential with full jitter. Every event carries a
 *   client-minted event_id, so a retry of something the server already stored is deduplicated there.
 * - Per-item 207 results: accepted items leave the queue, retryable items stay (in order), rejected ones are
 *   dropped and reported through onError.
 * - Timers are unref'd (the client never keeps a process alive) except while somebody awaits flush().
 */
import { MAX_BATCH, RETRYABLE_ITEM, byteLength, paceMs, retryAfterMs, type BatchResultItem, type FlushWaiter, type Item, type TransportOptions, type TransportStats } from "./batching.js";
import { describe, errorMessage, RunwatchError } from "./errors.js";
import { onBeforeExit, refTimer, unrefTimer, type TimerHandle } from "./platform.js";

export { RunwatchError, type RunwatchErrorCode } from "./errors.js";
export { retryAfterMs, type TransportOptions, type TransportStats } from "./batching.js";

export class Transport {
  private readonly url: string;
  private readonly fetchImpl: typeof fetch;
  private readonly o: Required<Omit<TransportOptions, "fetch" | "onError" | "baseUrl" | "apiKey">>;
  private readonly onError: ((err: RunwatchError) => void) | undefined;
  private readonly headers: Record<string, string>;

  private queue: Item[] = [];
  private seq = 0;
  private sending = false;
  private timer: TimerHandle | undefined;
  private timerDue = 0;
  private retryAt = 0;
  /** The next request not before this (ms since the epoch): the key's rate-limit window spread out (paceMs). */
  private paceUntil = 0;
  private consecutiveFailures = 0;
  private waiters: FlushWaiter[] = [];
  private closed = false;
  private exitFlushDoneAtSeq = -1;
  private removeExitHook: (() => void) | undefined;
  readonly stats: TransportStats = { queued: 0, sent: 0, dropped: 0, rejected: 0, requests: 0, failedRequests: 0 };

  constructor(options: TransportOptions) {
    this.url = options.baseUrl.replace(/\/+$/, "") + "/api/ingest/batch";
    this.fetchImpl = options.fetch ?? ((...args) => globalThis.fetch(...args));
    this.onError = options.onError;
    this.headers = { "content-type": "application/json", authorization: `Bearer ${options.apiKey}` };
    this.o = {
      maxQueueSize: options.maxQueueSize ?? 10_000,
      maxBatchSize: Math.max(1, Math.min(MAX_BATCH, options.maxBatchSize ?? MAX_BATCH)),
      maxBatchBytes: options.maxBatchBytes ?? 900 * 1024,
      flushIntervalMs: options.flushIntervalMs ?? 250,
      requestTimeoutMs: options.requestTimeoutMs ?? 15_000,
      backoffBaseMs: options.backoffBaseMs ?? 500,
      backoffMaxMs: options.backoffMaxMs ?? 30_000,
      maxAttempts: options.maxAttempts ?? 8,
      exitFlushTimeoutMs: options.exitFlushTimeoutMs ?? 5_000,
    };
  }

  /** Number of events not yet acknowledged (queued or in flight). */
  get pending(): number {
    return this.queue.length;
  }

  /**
   * Queues one event, given as the function that writes its JSON text: called only when the event is taken, so an
   * event the queue would drop (the server down, the queue full) is never serialized. Synchronous; never throws.
   */
  enqueue(serialize: () => string): void {
    try {
      if (this.closed) {
        this.drop(1, "the client is shut down");
        return;
      }
      if (this.queue.length >= this.o.maxQueueSize) {
        this.drop(1, `the queue is full (${this.o.maxQueueSize} events waiting; is the server reachable?)`);
        return;
      }
      const json = serialize();
      const bytes = byteLength(json);
      if (bytes + 16 > this.o.maxBatchBytes) {
        this.drop(1, `an event of ${bytes} bytes exceeds the batch size limit of ${this.o.maxBatchBytes} bytes`);
        return;
      }
      this.queue.push({ seq: ++this.seq, json, bytes, attempts: 0 });
      // Hooked into beforeExit only while events are pending: an idle client holds no global reference.
      this.removeExitHook ??= onBeforeExit(() => this.onBeforeExit());
      this.stats.queued++;
      this.schedule(this.queue.length >= this.o.maxBatchSize ? 0 : this.o.flushIntervalMs);
    } catch (err) {
      this.report(new RunwatchError("dropped", `could not queue an event: ${(err as Error)?.message}`, { count: 1, cause: err }));
    }
  }

  /**
   * Sends everything queued so far. Resolves true when all of it was delivered (or definitively rejected),
   * false on timeout. Never rejects.
   */
  flush(timeoutMs: number = 30_000, stopOnUnavailable = false): Promise<boolean> {
    if (this.queue.length === 0) return Promise.resolve(true);
    // Known to be down (waiting out a retry backoff): a flush that stops on unavailability has nothing to try,
    // and waiting for the backoff would hold a finished process open for seconds.
    if (stopOnUnavailable && this.consecutiveFailures > 0 && this.retryAt > Date.now()) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      let timeout: TimerHandle | undefined;
      const waiter: FlushWaiter = {
        target: this.seq,
        stopOnUnavailable,
        resolve: (ok) => {
          if (timeout !== undefined) clearTimeout(timeout);
          this.waiters = this.waiters.filter((w) => w !== waiter);
          if (this.waiters.length === 0 && this.timer !== undefined) unrefTimer(this.timer);
          resolve(ok);
        },
      };
      this.waiters.push(waiter);
      if (Number.isFinite(timeoutMs)) {
        // The timeout itself may keep the process alive: the caller is awaiting this promise.
        timeout = setTimeout(() => waiter.resolve(false), Math.max(0, timeoutMs));
      }
      if (this.timer !== undefined) refTimer(this.timer);
      this.schedule(0);
    });
  }

  /** Flushes, then stops: later events are dropped. Resolves true if everything queued was delivered. */
  async shutdown(timeoutMs: number = 10_000): Promise<boolean> {
    const ok = await this.flush(timeoutMs);
    this.closed = true;
    this.removeExitHook?.();
    this.removeExitHook = undefined;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queue.length > 0) this.drop(this.queue.splice(0).length, "undelivered at shutdown");
    return ok;
  }

  private onBeforeExit(): void {
    // beforeExit fires again whenever the loop drains; try once per batch of new events so an unreachable
    // server cannot keep a finished process alive.
    if (this.closed || this.queue.length === 0 || this.exitFlushDoneAtSeq >= this.seq) return;
    this.exitFlushDoneAtSeq = this.seq;
    void this.flush(this.o.exitFlushTimeoutMs, true);
  }

  private schedule(delayMs: number): void {
    if (this.sending || this.queue.length === 0) return;
    const now = Date.now();
    if (this.waiters.length > 0) delayMs = 0;
    const due = Math.max(now + delayMs, this.retryAt, this.paceUntil);
    if (this.timer !== undefined) {
      if (this.timerDue <= due) return;
      clearTimeout(this.timer);
    }
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.pump();
    }, Math.max(0, due - now));
    if (this.waiters.length === 0) unrefTimer(this.timer);
  }

  private takeBatch(): Item[] {
    const batch: Item[] = [];
    let bytes = 12; // {"events":[]}
    for (const item of this.queue) {
      if (batch.length >= this.o.maxBatchSize) break;
      if (batch.length > 0 && bytes + item.bytes + 1 > this.o.maxBatchBytes) break;
      batch.push(item);
      bytes += item.bytes + 1;
    }
    return batch;
  }

  private async pump(): Promise<void> {
    if (this.sending || this.queue.length === 0) return;
    this.sending = true;
    let unavailable = false;
    try {
      const batch = this.takeBatch();
      unavailable = await this.send(batch);
    } catch (err) {
      // send() handles its own errors; this is a bug guard so the loop never dies.
      this.report(new RunwatchError("network", `unexpected transport failure: ${(err as Error)?.message}`, { cause: err }));
    } finally {
      this.sending = false;
    }
    this.settleWaiters(unavailable);
    if (this.queue.length === 0) {
      this.removeExitHook?.();
      this.removeExitHook = undefined;
    } else {
      const full = this.queue.length >= this.o.maxBatchSize;
      this.schedule(full ? 0 : this.o.flushIntervalMs);
    }
  }

  private settleWaiters(unavailable: boolean): void {
    const head = this.queue[0]?.seq ?? Infinity;
    for (const w of [...this.waiters]) {
      if (head > w.target) w.resolve(true);
      else if (unavailable && w.stopOnUnavailable) w.resolve(false);
    }
  }

  /** Sends one batch and updates the queue. Returns true when the server was unavailable. */
  private async send(batch: Item[]): Promise<boolean> {
    const body = `{"events":[${batch.map((i) => i.json).join(",")}]}`;
    this.stats.requests++;
    const controller = typeof AbortController === "function" ? new AbortController() : undefined;
    const abortTimer = controller ? setTimeout(() => controller.abort(), this.o.requestTimeoutMs) : undefined;
    if (abortTimer !== undefined && this.waiters.length === 0) unrefTimer(abortTimer);
    let res: Response;
    try {
      res = await this.fetchImpl(this.url, { method: "POST", headers: this.headers, body, signal: controller?.signal });
    } catch (err) {
      this.stats.failedRequests++;
      const retryIn = this.backoff();
      this.report(
        new RunwatchError("network", `could not reach ${this.url}: ${describe(err)}; retrying ${batch.length} events in ${retryIn} ms`, {
          count: batch.length,
          cause: err,
          retryInMs: retryIn,
        }),
      );
      return true;
    } finally {
      if (abortTimer !== undefined) clearTimeout(abortTimer);
    }

    this.paceUntil = Date.now() + paceMs(res.headers);
    const status = res.status;
    let parsed: unknown;
    try {
      const text = await res.text();
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }

    if (status === 207 || (status >= 200 && status < 300)) {
      const results = (parsed as { results?: BatchResultItem[] } | undefined)?.results;
      this.consecutiveFailures = 0;
      this.retryAt = 0;
      if (status !== 207 || !Array.isArray(results)) {
        this.remove(batch);
        this.stats.sent += batch.length;
        return false;
      }
      this.applyItemResults(batch, results);
      return false;
    }

    this.stats.failedRequests++;
    if (status === 429 || status === 503) {
      const retryIn = this.backoff(retryAfterMs(res.headers.get("retry-after")));
      this.report(
        new RunwatchError("http", `server answered ${status}; retrying ${batch.length} events in ${retryIn} ms`, {
          status,
          count: batch.length,
          body: parsed,
          retryInMs: retryIn,
        }),
      );
      return true;
    }
    if (status === 413 && batch.length > 1) {
      // Smaller batches next time; nothing is lost.
      this.o.maxBatchBytes = Math.max(1024, Math.floor(this.o.maxBatchBytes / 2));
      this.report(new RunwatchError("http", `batch too large (413); retrying with batches of ≤ ${this.o.maxBatchBytes} bytes`, { status }));
      return false;
    }
    if (status >= 500 || status === 408) {
      const retryIn = this.backoff(retryAfterMs(res.headers.get("retry-after")));
      const givenUp = this.countAttempt(batch);
      this.report(
        new RunwatchError("http", `server answered ${status}; retrying in ${retryIn} ms${givenUp ? ` (gave up on ${givenUp} events)` : ""}`, {
          status,
          count: batch.length,
          body: parsed,
          retryInMs: retryIn,
        }),
      );
      return false;
    }
    // 400, 401, 403, 413 (single event), 415, 422...: retrying the same request cannot succeed.
    this.remove(batch);
    this.stats.rejected += batch.length;
    const hint = status === 401 || status === 403 ? " (check RUNWATCH_API_KEY)" : "";
    this.report(
      new RunwatchError("rejected", `server rejected a batch of ${batch.length} events with ${status}${hint}: ${errorMessage(parsed)}`, {
        status,
        count: batch.length,
        body: parsed,
      }),
    );
    return false;
  }

  private applyItemResults(batch: Item[], results: BatchResultItem[]): void {
    const retry = new Set<Item>();
    const done = new Set<Item>();
    const rejected: { status: number; error: unknown }[] = [];
    let retryAfter = 0;
    results.forEach((r, i) => {
      const item = batch[typeof r.index === "number" ? r.index : i];
      if (!item) return;
      const st = typeof r.status === "number" ? r.status : 0;
      if (st >= 200 && st < 300) done.add(item);
      else if (RETRYABLE_ITEM.has(st)) {
        retry.add(item);
        if (st === 429 || st === 503) retryAfter = Math.max(retryAfter, this.o.backoffBaseMs);
      } else {
        done.add(item);
        rejected.push({ status: st, error: r.error });
      }
    });
    // Items the server did not mention are retried: nothing is assumed delivered without a 2xx.
    for (const item of batch) if (!done.has(item)) retry.add(item);
    this.remove([...done]);
    this.stats.sent += done.size - rejected.length;
    if (rejected.length > 0) {
      this.stats.rejected += rejected.length;
      const first = rejected[0]!;
      this.report(
        new RunwatchError("rejected", `server rejected ${rejected.length} event(s), e.g. ${first.status}: ${errorMessage({ error: first.error })}`, {
          status: first.status,
          count: rejected.length,
          body: rejected,
        }),
      );
    }
    if (retry.size > 0) {
      const givenUp = this.countAttempt([...retry]);
      const retryIn = this.backoff(retryAfter || undefined);
      this.report(
        new RunwatchError("http", `${retry.size} event(s) not accepted yet; retrying in ${retryIn} ms${givenUp ? ` (gave up on ${givenUp})` : ""}`, {
          count: retry.size,
          retryInMs: retryIn,
        }),
      );
    }
  }

  /** Counts an attempt for each item; drops those that used up maxAttempts. Returns how many were dropped. */
  private countAttempt(items: Item[]): number {
    const exhausted = items.filter((i) => ++i.attempts >= this.o.maxAttempts);
    if (exhausted.length > 0) {
      this.remove(exhausted);
      this.drop(exhausted.length, `gave up after ${this.o.maxAttempts} attempts`);
    }
    return exhausted.length;
  }

  private remove(items: Item[]): void {
    if (items.length === 0) return;
    const gone = new Set(items);
    this.queue = this.queue.filter((i) => !gone.has(i));
  }

  /** Arms the retry delay: the server's Retry-After when given, else exponential backoff with full jitter. */
  private backoff(serverDelayMs?: number): number {
    this.consecutiveFailures++;
    const exp = Math.min(this.o.backoffMaxMs, this.o.backoffBaseMs * 2 ** Math.min(20, this.consecutiveFailures - 1));
    const jittered = Math.round(exp / 2 + Math.random() * (exp / 2));
    const delay = serverDelayMs !== undefined ? Math.max(serverDelayMs, 0) : jittered;
    this.retryAt = Date.now() + delay;
    return delay;
  }

  private drop(count: number, reason: string): void {
    this.stats.dropped += count;
    this.report(new RunwatchError("dropped", `dropped ${count} event(s): ${reason}`, { count }));
  }

  private report(err: RunwatchError): void {
    if (!this.onError) return;
    try {
      this.onError(err);
    } catch {
      /* a faulty error handler must not break delivery */
    }
  }
}

