/**
 * Failure isolation (docs/PIPELINE.md): one event that cannot be stored must not stop every other event.
 *
 * A batch that fails is either an outage (storage down: every event would fail) or carries a poison event
 * (it fails alone while others succeed). This module tells them apart:
 *   - If storage does not answer a probe (SELECT 1 on Postgres and ClickHouse), it is an outage: the batch
 *     fails as a whole and the log retries it with backoff, as before. Nothing is dead-lettered during an outage.
 *   - When a plugin failed on particular events, the processor names them (EventsFailed): they are set aside and
 *     the rest goes on at once; the suspects are then tried again together (and one by one only when a failure is
 *     not attributed).
 *   - Otherwise the batch is split by tenant first, so that other tenants' events are stored after a single
 *     extra attempt, whatever one tenant sent; a tenant's events that still fail are bisected.
 *   - A single event that still fails alone after a short retry, while storage answers, is a dead letter: it is
 *     written to the dead-letter store with its error, and the batch goes on. Parts run in log order, so the
 *     events of one run keep their order (an event set aside and then stored after a retry comes later).
 * Processing is idempotent (storage dedups on event_id, run counters are reconciled), so re-processing the
 * parts that an earlier attempt partly stored is safe. Cost, for k poison events in a batch of n: a few attempts
 * when plugins name them (however many and however spread), O(k·log n) when only storage can fail on them.
 */
import type { LoggedEvent } from "../core/events/schema.js";
import type { Logger } from "../core/logger.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { Sql } from "../core/ports/sql.js";
import { settleWithin } from "../core/settle-within.js";

/**
 * Thrown by the batch processor when plugins failed on particular events (an onEvent hook threw): the batch
 * stored nothing, and `failures` names each failing event by its index in the batch. Later events of a run
 * whose event failed were not tried in that pass.
 */
export class EventsFailed extends Error {
  constructor(readonly failures: readonly { readonly index: number; readonly plugin: string; readonly error: unknown }[]) {
    super(`${failures.length} event(s) failed in plugins: ${failures.slice(0, 3).map((f) => `#${f.index} in ${f.plugin}: ${(f.error as Error)?.message ?? String(f.error)}`).join("; ")}`);
    this.name = "EventsFailed";
  }
}

export interface IsolationDeps {
  /** Processes a batch (all or nothing as far as the log is concerned). */
  readonly process: (events: readonly LoggedEvent[]) => Promise<void>;
  /** Stores dead letters; must be durable when it resolves. */
  readonly deadLetter: (failed: readonly { event: LoggedEvent; error: unknown }[]) => Promise<void>;
  /** True when storage answers (an outage is not a poison event). */
  readonly storageUp: () => Promise<boolean>;
  readonly logger: Logger;
  /** Each entry is one more try of the suspects (isolation.ts settleSuspects), after that pause; default one at once ([0]). */
  readonly singleRetryDelaysMs?: readonly number[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Processes `events`; dead-letters only events that fail on their own; throws (for a retry of the whole batch)
 * on an outage.
 * - Events a plugin failed on (EventsFailed) are set aside and the rest is processed again at once.
 * - Any other failure while storage answers: the events are split (by tenant when several are in the batch,
 *   else in halves) and each part is processed the same way, down to single events.
 * - The events set aside are then tried again (settleSuspects); those that still fail while storage answers are
 *   dead-lettered.
 */
export async function processIsolated(events: readonly LoggedEvent[], deps: IsolationDeps): Promise<void> {
  const suspects: Suspect[] = [];
  let rest = events;
  while (rest.length > 0) {
    try {
      await deps.process(rest);
      break;
    } catch (err) {
      if (err instanceof EventsFailed && err.failures.length > 0) {
        const failed = new Set<LoggedEvent>();
        for (const f of err.failures) {
          const event = rest[f.index]!;
          failed.add(event);
          suspects.push({ event, error: f.error });
        }
        rest = rest.filter((e) => !failed.has(e));
        continue;
      }
      if (!(await deps.storageUp())) throw err;
      if (rest.length === 1) {
        suspects.push({ event: rest[0]!, error: err });
        break;
      }
      deps.logger.warn("a batch failed while storage answers: isolating the events that fail", { events: rest.length, err });
      for (const part of split(rest)) await processIsolated(part, deps);
      break;
    }
  }
  if (suspects.length > 0) await settleSuspects(suspects, deps);
}

/** A failing batch's parts: one per tenant, so other tenants' events pass after one extra attempt; else halves. */
function split(events: readonly LoggedEvent[]): LoggedEvent[][] {
  const groups = new Map<unknown, LoggedEvent[]>();
  for (const e of events) {
    const key = (e as Partial<LoggedEvent> | null)?.project_id;
    const g = groups.get(key);
    if (g) g.push(e);
    else groups.set(key, [e]);
  }
  if (groups.size > 1) return [...groups.values()];
  const mid = events.length >>> 1;
  return [events.slice(0, mid), events.slice(mid)];
}

/**
 * Each suspect is tried again (after each pause of singleRetryDelaysMs): together while the processor names the
 * ones that fail (so k suspects cost a few attempts, not k), one by one when a failure is not attributed. One
 * that now passes was transient or failed only beside another event; the others, if storage still answers,
 * are dead-lettered together.
 */
async function settleSuspects(suspects: readonly Suspect[], deps: IsolationDeps): Promise<void> {
  let failing = suspects;
  for (const delay of deps.singleRetryDelaysMs ?? [0]) {
    if (failing.length === 0) return;
    if (delay > 0) await sleep(delay);
    failing = await retry(failing, deps);
  }
  if (failing.length === 0) return;
  if (!(await deps.storageUp())) throw failing[0]!.error; // storage went down meanwhile: retry the whole batch later
  for (const { event, error } of failing.slice(0, 20)) {
    deps.logger.error("dead-lettering an event that cannot be stored", {
      project_id: event.project_id, user_id: event.user_id, sdk_run_id: event.sdk_run_id, event_id: event.event_id, event_type: event.event_type, err: error,
    });
  }
  if (failing.length > 20) deps.logger.error("dead-lettering more events that cannot be stored", { events: failing.length - 20 });
  await deps.deadLetter(failing);
}

interface Suspect {
  readonly event: LoggedEvent;
  readonly error: unknown;
}

/** The suspects that still fail. */
async function retry(suspects: readonly Suspect[], deps: IsolationDeps): Promise<Suspect[]> {
  const still: Suspect[] = [];
  let rest = suspects;
  while (rest.length > 0) {
    try {
      await deps.process(rest.map((s) => s.event));
      return still;
    } catch (err) {
      if (err instanceof EventsFailed && err.failures.length > 0) {
        const failed = new Set(err.failures.map((f) => f.index));
        for (const f of err.failures) still.push({ event: rest[f.index]!.event, error: f.error });
        rest = rest.filter((_, i) => !failed.has(i));
        continue;
      }
      for (const s of rest) {
        try {
          await deps.process([s.event]);
        } catch (e) {
          still.push({ event: s.event, error: e instanceof EventsFailed && e.failures.length === 1 ? e.failures[0]!.error : e });
        }
      }
      return still;
    }
  }
  return still;
}

/** The probe: both stores answer a trivial query within `timeoutMs`. */
export function storageProbe(sql: Sql, clickhouse: ClickHouse, timeoutMs = 5_000): () => Promise<boolean> {
  return () => settleWithin(Promise.all([sql.query("SELECT 1"), clickhouse.query("SELECT 1")]).then(() => true), timeoutMs, false);
}
