/**
 * Helpers for testing plugins without storage: build events the way ingest does and push them through
 * onEvent hooks exactly as the pipeline runner does (log order, one draft per run, `fresh` until the first
 * event). For afterEventsStored and afterCommit, pass `stored(part)` to the hook. See plugins/examples/*.test.ts.
 */
import { newRunRecord, type RunRecord } from "../core/events/run.js";
import { runKey, runKeyOfEvent, type RunKey } from "../core/events/run-key.js";
import type { EventType } from "../core/events/schema.js";
import { copyRunAttributes, type RunAttributes } from "../core/events/attributes.js";
import { runIdFor, uuidv7 } from "../core/ids.js";
import type { Part, PipelineEvent, Plugin, RunDraft, StoredPart } from "./plugin.js";

/** An event's fields, with its run's tags, metadata, end user, environment and release when given. */
export interface TestEventInput extends RunAttributes {
  event_type: EventType;
  payload?: Record<string, unknown>;
  sdk_run_id?: string;
  user_id?: number;
  /** Default: the user's personal project (the user's id). */
  project_id?: number;
  agent_name?: string | null;
  occurred_at?: string;
  config_version?: number | null;
  duplicate?: boolean;
  span_id?: string;
}

export function testEvent(input: TestEventInput): PipelineEvent {
  const user = input.user_id ?? 1;
  const project = input.project_id ?? user;
  const sdk = input.sdk_run_id ?? "run-1";
  const at = input.occurred_at ?? new Date().toISOString();
  return {
    event_id: uuidv7(),
    project_id: project,
    user_id: user,
    run_id: runIdFor(project, sdk),
    sdk_run_id: sdk,
    event_type: input.event_type,
    agent_name: input.agent_name ?? (input.event_type === "run_start" ? "test-agent" : null),
    payload: input.payload ?? {},
    occurred_at: at,
    received_at: at,
    config_version: input.config_version ?? null,
    duplicate: input.duplicate ?? false,
    ...(input.span_id !== undefined ? { span_id: input.span_id } : {}),
    ...attributesOf(input),
  };
}

function attributesOf(input: RunAttributes): RunAttributes {
  const out: { -readonly [K in keyof RunAttributes]: RunAttributes[K] } = {};
  copyRunAttributes(input, out);
  return out;
}

/** Runs the onEvent hooks of `plugins` over `events`; `runs` carries drafts across calls (like the cache). */
export async function applyEvents(
  plugins: readonly Plugin[],
  events: readonly PipelineEvent[],
  runs: Map<RunKey, RunDraft & { fresh: boolean }> = new Map(),
): Promise<{ part: Part; run: (sdkRunId?: string, userId?: number) => RunRecord }> {
  const drafts = new Map<RunKey, RunDraft & { fresh: boolean }>();
  for (const e of events) {
    const k = runKeyOfEvent(e);
    let d = runs.get(k);
    if (!d) runs.set(k, (d = { run: newRunRecord(e, e.sdk_run_id, e.run_id, e.occurred_at), fresh: true, pluginState: new Map() }));
    drafts.set(k, d);
  }
  const part: Part = { events, runs: drafts, scratch: new Map() };
  for (const e of events) {
    const d = drafts.get(runKeyOfEvent(e))!;
    for (const p of plugins) await p.onEvent?.(e, d, part);
    d.fresh = false;
  }
  return { part, run: (sdk = "run-1", user = 1) => runs.get(runKey(user, sdk))!.run };
}

/** The part as the after-storage hooks get it: its stored events' payloads serialised. */
export const stored = (part: Part): StoredPart => ({
  ...part,
  payloadJson: new Map(part.events.filter((e) => !e.duplicate).map((e) => [e, JSON.stringify(e.payload)])),
});
