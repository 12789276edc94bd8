/**
 * A log export record (core/events/export-record.ts, `"signal":"logs"`) → the rows the pipeline stores: one
 * otel_logs row per record (stores/otel-logs.ts), and a score for each `gen_ai.evaluation.result` record of a trace
 * (evaluations.ts; on the span the record names, else on the run). A record is tied to its span and run by ids
 * alone, at read time: one that arrives before its span is shown once the span is stored, and a trace id is looked
 * up only within the record's project.
 *
 * Like the span mapping it is total: only a record with a malformed id is skipped (the receiver already refused it
 * in partial_success). Each text is cut to MAX_LOG_TEXT characters (a deeper attribute than 64 levels is null, as
 * for spans), times outside 1970–2200 become the receive time, and text that could not be stored (U+0000, a lone
 * surrogate) is repaired. Ids derive from the record's content and place, so a record read twice writes the same rows.
 */
import { Either } from "effect";
import type { ExportRecord } from "../core/events/export-record.js";
import { isStorableTime } from "../core/events/schema.js";
import { repairString } from "../core/events/storable.js";
import { eventIdFor, runIdFor } from "../core/ids.js";
import type { LogRow } from "../stores/otel-logs.js";
import { toChTime } from "../stores/runs/event-store.js";
import { parseScore, scoreRow } from "../stores/scores.js";
import { EVALUATION_EVENT, SERVICE_NAME } from "./conventions.js";
import { evaluationScore } from "./evaluations.js";
import { decodeJsonLogs, decodeProtobufLogs, logRefusalOf, type OtlpLog } from "./otlp-logs.js";
import { attrText, type Attributes, type AttrValue } from "./trace-model.js";

/** The most characters of a record's body, and of its attributes' JSON, that are kept. */
export const MAX_LOG_TEXT = 16_384;
const MAX_NAME = 200;

const cut = (s: string, max: number): string => repairString(s.length > max ? s.slice(0, max) : s);

/**
 * A value with every string in it, keys included, repaired. Repairing its JSON text afterwards is not enough:
 * JSON.stringify writes a lone surrogate as the text "\ud800", which parses back into the lone surrogate.
 */
const repaired = (v: AttrValue): AttrValue =>
  typeof v === "string" ? repairString(v)
    : Array.isArray(v) ? v.map(repaired)
    : v !== null && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [repairString(k), repaired(x as AttrValue)]))
    : v;

/** The attributes as a JSON object of at most MAX_LOG_TEXT characters: keys past that are left out, and it says so. */
function attributesJson(attrs: Attributes): string {
  const out: Record<string, unknown> = {};
  let size = 2;
  for (const [key, value] of attrs) {
    const text = JSON.stringify(value) ?? "null";
    size += key.length + text.length + 4;
    if (size > MAX_LOG_TEXT) {
      out["runwatch.attributes_cut"] = true;
      break;
    }
    out[repairString(key)] = repaired(value);
  }
  return JSON.stringify(out);
}

export interface MappedLogs {
  readonly rows: LogRow[];
  readonly scores: Record<string, unknown>[];
}

export function mapLogs(logs: readonly OtlpLog[], record: Pick<ExportRecord, "project_id" | "user_id" | "received_at_ms">): MappedLogs {
  const rows: LogRow[] = [];
  const scores: Record<string, unknown>[] = [];
  const receivedAt = toChTime(new Date(record.received_at_ms).toISOString());
  logs.forEach((log, index) => {
    if (logRefusalOf(log, index) !== undefined) return;
    const ms = isStorableTime(log.timeMs) ? log.timeMs : record.received_at_ms;
    const traceId = log.traceId ?? "";
    const spanId = log.spanId ?? "";
    const body = log.body === null ? "" : cut(attrText(repaired(log.body)), MAX_LOG_TEXT);
    const attributes = attributesJson(log.attributes);
    // The content is part of the id: a split export's parts number their records from 0 each (logs-split.ts).
    const logId = eventIdFor(`otlplog:${record.project_id}:${traceId}:${spanId}:${log.timeMs}:${index}:${log.eventName}:${body}:${attributes}`, ms);
    const time = toChTime(new Date(Math.floor(ms)).toISOString());
    const timeSubNs = Math.min(999_999, Math.max(0, Math.round((ms - Math.floor(ms)) * 1e6)));
    const service = log.resource.get(SERVICE_NAME);
    rows.push({
      project_id: record.project_id,
      user_id: record.user_id,
      log_id: logId,
      trace_id: traceId,
      span_id: spanId,
      time,
      time_sub_ns: timeSubNs,
      seq: index,
      severity_number: Math.min(24, Math.max(0, Math.trunc(log.severityNumber) || 0)),
      severity_text: cut(log.severityText, 100),
      event_name: cut(log.eventName, MAX_NAME),
      body,
      attributes,
      service_name: service === undefined || service === null ? "" : cut(attrText(service), MAX_NAME),
      scope: cut(log.scope, MAX_NAME),
      received_at: receivedAt,
    });
    if (log.eventName !== EVALUATION_EVENT || !traceId) return;
    const score = evaluationScore(log.attributes);
    const parsed = score && parseScore({ ...score, sdk_run_id: traceId, ...(spanId ? { span_id: spanId } : {}) });
    if (!parsed || Either.isLeft(parsed)) return;
    const run = { project_id: record.project_id, user_id: record.user_id, run_id: runIdFor(record.project_id, traceId), external_id: traceId };
    scores.push(scoreRow(run, parsed.right, eventIdFor(`score:${logId}`, ms), new Date(Math.floor(ms)).toISOString()));
  });
  return { rows, scores };
}

/** A log export record's rows; throws MalformedExport when its body is not a log export. */
export function expandLogsRecord(record: ExportRecord): MappedLogs {
  const body = Buffer.from(record.body, "base64");
  return mapLogs(record.format === "json" ? decodeJsonLogs(body) : decodeProtobufLogs(body), record);
}
