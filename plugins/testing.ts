/**
 * Helpers for testing plugins without storage: build events the way ingest does and push them through
 * onEvent hooks exactly as the pipeline runner does (log order, one draft per run, `fresh` until the first
 * event). For afterCommit, pass the returned batch to the hook. See plugins/examples/*.test.ts.
 */
import { newRunRecord, type RunRecord } from "../core/events/run.js";
import { logKey, type EventType } from "../core/events/schema.js";
import { runIdFor, uuidv7 } from "../core/ids.js";
import type { Batch, PipelineEvent, Plugin, RunDraft } from "./plugin.js";

export interface TestEventInput {
  event_type: EventType;
  payload?: Record<string, unknown>;
  sdk_run_id?: string;
  user_id?: number;
  agent_name?: string | null;
  occurred_at?: string;
  config_version?: number | null;
  duplicate?: boolean;
}

export function testEvent(input: TestEventInput): PipelineEvent {
  const user = input.user_id ?? 1;
  const sdk = input.sdk_run_id ?? "run-1";
  const at = input.occurred_at ?? new Date().toISOString();
  return {
    event_id: uuidv7(),
    user_id: user,
    run_id: runIdFor(user, sdk),
    sdk_run_id: sdk,
    event_type: input.event_type,
    agent_name: input.agent_name ?? (input.event_type === "run_start" ? "test-agent" : null),
    payload: input.payload ?? {},
    occurred_at: at,
    received_at: at,
    config_version: input.config_version ?? null,
    duplicate: input.duplicate ?? false,
  };
}

/** Runs the onEvent hooks of `plugins` over `events`; `runs` carries drafts across calls (like the cache). */
export async function applyEvents(
  plugins: readonly Plugin[],
  events: readonly PipelineEvent[],
  runs: Map<string, RunDraft & { fresh: boolean }> = new Map(),
): Promise<{ batch: Batch; run: (sdkRunId?: string, userId?: number) => RunRecord }> {
  const drafts = new Map<string, RunDraft & { fresh: boolean }>();
  for (const e of events) {
    const k = logKey(e);
    let d = runs.get(k);
    if (!d) runs.set(k, (d = { run: newRunRecord(e.user_id, e.sdk_run_id, e.run_id, e.occurred_at), fresh: true }));
    drafts.set(k, d);
  }
  const batch: Batch = { events, runs: drafts, scratch: new Map() };
  for (const e of events) {
    const d = drafts.get(logKey(e))!;
    for (const p of plugins) await p.onEvent?.(e, d, batch);
    d.fresh = false;
  }
  return { batch, run: (sdk = "run-1", user = 1) => runs.get(`${user}:${sdk}`)!.run };
}
