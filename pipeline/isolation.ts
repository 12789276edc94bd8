/**
 * Failure isolation (docs/PIPELINE.md): one event that cannot be stored must not stop every other event.
 *
 * A batch that fails is either an outage (storage down: every event would fail) or carries a poison event
 * (it fails alone while others succeed). This module tells them apart:
 *   - If storage does not answer a probe (SELECT 1 on Postgres and ClickHouse), it is an outage: the batch
 *     fails as a whole and the log retries it with backoff, as before. Nothing is dead-lettered during an outage.
 *   - Otherwise the batch is split by tenant first, so that other tenants' events are stored after a single
 *     extra attempt, whatever one tenant sent; a tenant's events that still fail are bisected: each half is
 *     processed on its own, a failing half is split again, and a single event that still fails after a short
 *     retry (and while storage answers) is a dead letter: it is written to the dead-letter store with its
 *     error, and the batch goes on. Parts run in log order, so the events of one run keep their order.
 * Processing is idempotent (storage dedups on event_id, run counters are reconciled), so re-processing the
 * halves that an earlier attempt partly stored is safe. The cost is O(k·log n) batch attempts for k poison
 * events in a batch of n.
 */
import type { LoggedEvent } from "../core/events/schema.js";
import type { Logger } from "../core/logger.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { Sql } from "../core/ports/sql.js";

export interface IsolationDeps {
  /** Processes a batch (all or nothing as far as the log is concerned). */
  readonly process: (events: readonly LoggedEvent[]) => Promise<void>;
  /** Stores a dead letter for one event; must be durable when it resolves. */
  readonly deadLetter: (event: LoggedEvent, error: unknown) => Promise<void>;
  /** True when storage answers (an outage is not a poison event). */
  readonly storageUp: () => Promise<boolean>;
  readonly logger: Logger;
  /** Pauses before a single failing event is tried again; default one retry after 50 ms. */
  readonly singleRetryDelaysMs?: readonly number[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Processes `events`; dead-letters only events that fail on their own; throws (for a retry) on an outage. */
export async function processIsolated(events: readonly LoggedEvent[], deps: IsolationDeps): Promise<void> {
  try {
    await deps.process(events);
    return;
  } catch (err) {
    if (!(await deps.storageUp())) throw err;
    deps.logger.warn("a batch failed while storage answers: isolating the events that fail", { events: events.length, err });
    const tenants = byTenant(events);
    if (tenants.length === 1) return isolate(events, err, deps);
    for (const part of tenants) {
      try {
        await deps.process(part);
      } catch (e) {
        await isolate(part, e, deps);
      }
    }
  }
}

/** The events of each user_id, in log order (a run belongs to one user, so each run's order is kept). */
function byTenant(events: readonly LoggedEvent[]): LoggedEvent[][] {
  const groups = new Map<unknown, LoggedEvent[]>();
  for (const e of events) {
    const key = (e as Partial<LoggedEvent> | null)?.user_id;
    const g = groups.get(key);
    if (g) g.push(e);
    else groups.set(key, [e]);
  }
  return [...groups.values()];
}

async function isolate(events: readonly LoggedEvent[], error: unknown, deps: IsolationDeps): Promise<void> {
  if (events.length === 1) {
    for (const delay of deps.singleRetryDelaysMs ?? [50]) {
      await sleep(delay);
      try {
        await deps.process(events);
        return; // it was transient
      } catch (err) {
        error = err;
      }
    }
    if (!(await deps.storageUp())) throw error; // storage went down meanwhile: retry the whole batch later
    const e = events[0]!;
    deps.logger.error("dead-lettering an event that cannot be stored", {
      user_id: e.user_id, sdk_run_id: e.sdk_run_id, event_id: e.event_id, event_type: e.event_type, err: error,
    });
    await deps.deadLetter(e, error);
    return;
  }
  const mid = events.length >>> 1;
  for (const half of [events.slice(0, mid), events.slice(mid)]) {
    try {
      await deps.process(half);
    } catch (err) {
      await isolate(half, err, deps);
    }
  }
}

/** The probe: both stores answer a trivial query within `timeoutMs`. */
export function storageProbe(sql: Sql, clickhouse: ClickHouse, timeoutMs = 5_000): () => Promise<boolean> {
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([
        Promise.all([sql.query("SELECT 1"), clickhouse.query("SELECT 1")]).then(() => true, () => false),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  };
}
