/**
 * A run's spans without their payloads (kind, name, parent, times, status): what the agent graph is built from
 * (web/runs/agent-graph.ts). ClickHouse reads only the few fields a skeleton needs out of each span event (from
 * span_payload, whose long values are already cut, migration 130), so a run of 100,000 spans with large messages
 * costs what one with none does; the events are paired into spans by core/events/spans.ts as everywhere else.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { StoredEvent } from "../../core/ports/event-store.js";
import type { EventType } from "../../core/events/schema.js";
import { buildSpans, type Span } from "../../core/events/spans.js";
import { mapInSlices } from "../../core/time-slice.js";

/** The payload with its long values cut (migration 130), as event-store.ts reads span events. */
const SPAN_PAYLOAD = "if(span_payload = '', payload, span_payload)";

/** Span events read for one run's skeletons: a run of 100,000 spans. */
export const SKELETON_EVENTS = 200_000;

interface Row {
  event_id: string;
  event_type: string;
  occurred_at: string;
  span_id: string;
  parent_span_id: string;
  phase: string;
  kind: string;
  node_name: string;
  tool_name: string;
  duration_ms: number | null;
  failed: number;
}

/** The event as buildSpans reads it: the skeleton's fields, an error as `true` (its text is not read here). */
function skeletonEvent(r: Row): StoredEvent {
  const payload: Record<string, unknown> = { phase: r.phase, node_name: r.node_name, tool_name: r.tool_name };
  if (r.kind) payload.kind = r.kind;
  if (r.duration_ms !== null) payload.duration_ms = Number(r.duration_ms);
  if (Number(r.failed)) payload.error = true;
  return {
    event_id: r.event_id, run_id: "", sdk_run_id: "", event_type: r.event_type as EventType, agent_name: "", payload,
    occurred_at: r.occurred_at, received_at: r.occurred_at, config_version: null, span_id: r.span_id, parent_span_id: r.parent_span_id,
  };
}

/** The run's spans in start order (their previews and error texts empty), from its first SKELETON_EVENTS span events. */
export async function spanSkeletons(ch: ClickHouse, projectId: number, runId: string, limit = SKELETON_EVENTS): Promise<Span[]> {
  const rows = await ch.query<Row>(
    `SELECT toString(event_id) AS event_id, event_type, occurred_at, span_id, parent_span_id,
       JSONExtractString(p, 'phase') AS phase, JSONExtractString(p, 'kind') AS kind,
       JSONExtractString(p, 'node_name') AS node_name, JSONExtractString(p, 'tool_name') AS tool_name,
       JSONExtract(p, 'duration_ms', 'Nullable(Float64)') AS duration_ms,
       JSONExtractRaw(p, 'error') NOT IN ('', 'null', '""', 'false') AS failed
     FROM (
       SELECT event_id, event_type, occurred_at, span_id, parent_span_id, ${SPAN_PAYLOAD} AS p FROM agent_events
       WHERE project_id = {project_id:UInt64} AND run_id = {run_id:UUID} AND event_type IN ('step', 'tool_call')
       ORDER BY toString(event_id)
       LIMIT 1 BY event_id
       LIMIT {take:UInt32}
     )`,
    { project_id: projectId, run_id: runId, take: limit },
  );
  return buildSpans(await mapInSlices(rows, skeletonEvent));
}
