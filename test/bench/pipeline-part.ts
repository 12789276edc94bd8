/**
 * A pipeline part of the realistic OTLP traces, made without the pipeline's storage, for the benchmarks that time
 * what the pipeline does with it (pipeline-cpu.ts, chdb-merges.ts).
 */
import { decodeBatch } from "../../core/events/wire.js";
import { encodeExportRecord, type ExportRecord } from "../../core/events/export-record.js";
import { newRunRecord } from "../../core/events/run.js";
import { logKey, type LoggedEvent } from "../../core/events/schema.js";
import type { Batch, PipelineEvent, Plugin, RunDraft } from "../../plugins/plugin.js";
import { exportProtobuf } from "../e2e/otlp-fixtures.js";
import { exportSpans } from "./otlp-payload.js";

/** An export of otlp-payload.ts as a receiver logs it whole, for user 1 + (i % 4). */
export const exportRecord = (i: number): ExportRecord =>
  decodeBatch(encodeExportRecord(exportProtobuf(exportSpans()), "protobuf", 1 + (i % 4), Date.now()), () => {})[0] as unknown as ExportRecord;

export interface PluginPart {
  readonly batch: Batch;
  readonly drafts: Map<string, RunDraft & { fresh: boolean }>;
  /** Empty: filled by the caller, as the batch processor fills it once the plugins have run. */
  readonly payloadJson: Map<PipelineEvent, string>;
}

/** The events as a batch after every plugin's onEvent, as the batch processor runs them for runs it has not seen. */
export function applyPlugins(events: readonly LoggedEvent[], plugins: readonly Plugin[]): PluginPart {
  const drafts = new Map<string, RunDraft & { fresh: boolean }>();
  const payloadJson = new Map<PipelineEvent, string>();
  const batch: Batch = { events: events as PipelineEvent[], runs: drafts, scratch: new Map(), payloadJson };
  for (const e of batch.events) {
    (e as { duplicate: boolean }).duplicate = false;
    const k = logKey(e);
    let d = drafts.get(k);
    if (!d) drafts.set(k, (d = { run: newRunRecord(e.user_id, e.sdk_run_id, e.run_id, e.occurred_at), fresh: true }));
    for (const p of plugins) p.onEvent?.(e, d, batch);
    d.fresh = false;
  }
  return { batch, drafts, payloadJson };
}
