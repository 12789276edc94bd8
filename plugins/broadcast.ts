/**
 * broadcast: as soon as a batch's events are stored (afterEventsStored: it does not wait for the runs' new
 * versions, so a dashboard frame waits for one ClickHouse insert, not two), publishes every (non-duplicate) event
 * to the owner's channel
 * `user.{id}` with the run as it was right after that event (so a live view steps through every status):
 *   {"type":"event","user_id":42,"run":{...},"event":{event_id,event_type,occurred_at,payload}}
 * Delivery is best-effort: the dashboard reloads from the stores, so a lost message costs freshness only.
 */
import type { RunRecord } from "../core/events/run.js";
import { userChannel } from "../core/ports/pubsub.js";
import { publishAll } from "../core/pubsub/publish-all.js";
import type { PipelineEvent, Plugin, PluginContext } from "./plugin.js";

const SCRATCH = "broadcast";

/** The run fields the broadcast message carries (the `event` frame of docs/REALTIME.md). */
export function broadcastRun(run: RunRecord) {
  return {
    external_id: run.external_id,
    run_id: run.run_id,
    agent_name: run.agent_name,
    status: run.status,
    started_at: run.started_at,
    ended_at: run.ended_at,
    duration_ms: run.started_at !== null && run.ended_at !== null ? Math.max(0, Date.parse(run.ended_at) - Date.parse(run.started_at)) : null,
    model: run.model,
    prompt_tokens: run.prompt_tokens,
    completion_tokens: run.completion_tokens,
    total_tokens: run.total_tokens,
    cost_usd: run.cost_usd,
    llm_calls: run.llm_calls,
    event_count: run.event_count,
    error_count: run.error_count,
    last_error: run.last_error,
    pending_question: run.pending_question,
    config_version: run.config_version,
    session_id: run.session_id || null,
  };
}

/**
 * The message without its payload, ending in `}}`: the payload is stored after the run snapshot is taken, and its
 * JSON (serialised once for the stored row, Batch.payloadJson) goes in then (withPayload).
 */
export function broadcastHead(event: PipelineEvent, run: RunRecord): string {
  return JSON.stringify({
    type: "event",
    user_id: event.user_id,
    run: broadcastRun(run),
    event: {
      event_id: event.event_id, event_type: event.event_type, occurred_at: event.occurred_at,
      // Where the event sits in the run's tree, so a live client can place it (docs/API.md, Spans).
      span_id: event.span_id || null, parent_span_id: event.parent_span_id || null,
    },
  });
}

/** The whole message: the head with `"payload":<payload JSON>` as the event's last member. */
export const withPayload = (head: string, payloadJson: string): string => `${head.slice(0, -2)},"payload":${payloadJson}}}`;

/** Put it last in the chain: the run snapshot must include every other plugin's changes. */
export const broadcast = (): Plugin => {
  let ctx: PluginContext | undefined;
  return {
    name: "broadcast",
    init(c) {
      ctx = c;
    },
    onEvent(event, draft, batch) {
      if (event.duplicate) return;
      let out = batch.scratch.get(SCRATCH) as [PipelineEvent, string][] | undefined;
      if (!out) batch.scratch.set(SCRATCH, (out = []));
      // Serialised now: the snapshot of the run after this event, not after the whole batch.
      out.push([event, broadcastHead(event, draft.run)]);
    },
    async afterEventsStored(batch) {
      const out = batch.scratch.get(SCRATCH) as [PipelineEvent, string][] | undefined;
      if (!out || !ctx) return;
      const messages = out.map(([event, head]): [string, string] => [
        userChannel(event.user_id),
        withPayload(head, batch.payloadJson?.get(event) ?? JSON.stringify(event.payload)),
      ]);
      await publishAll(ctx.pubsub, messages);
    },
  };
};

export default broadcast;
