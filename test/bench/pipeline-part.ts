/**
 * A pipeline part of the realistic OTLP traces, made without the pipeline's storage, for the benchmarks that time
 * what the pipeline does with it (pipeline-cpu.ts, chdb-merges.ts).
 */
import { decodeBatch } from "../../core/events/wire.js";
import { encodeExportRecord, type ExportRecord } from "../../core/events/export-record.js";
import { newRunRecord } from "../../core/events/run.js";
import { runKeyOfEvent, type RunKey } from "../../core/events/run-key.js";
import { pipelineEvent, type LoggedEvent } from "../../core/events/schema.js";
import type { Part, PipelineEvent, Plugin, RunDraft, StoredPart } from "../../plugins/plugin.js";
import { exportProtobuf } from "../e2e/otlp-fixtures.js";
import { exportSpans } from "./otlp-payload.js";

/** An export of otlp-payload.ts as a receiver logs it whole, for user 1 + (i % 4). */
export const exportRecord = (i: number): ExportRecord =>
  decodeBatch(encodeExportRecord(exportProtobuf(exportSpans()), "protobuf", { projectId: 1 + (i % 4), userId: 1 + (i % 4) }, Date.now()), () => {})[0] as unknown as ExportRecord;

export interface PluginPart {
  /** As the after-storage hooks get it; `payloadJson` is empty: filled by the caller, as the part processor fills it once the plugins have run. */
  readonly part: StoredPart;
  readonly drafts: Map<RunKey, RunDraft & { fresh: boolean }>;
  readonly payloadJson: Map<PipelineEvent, string>;
}

/** The events as a part after every plugin's onEvent, as the part processor runs them for runs it has not seen. */
export function applyPlugins(logged: readonly LoggedEvent[], plugins: readonly Plugin[]): PluginPart {
  const drafts = new Map<RunKey, RunDraft & { fresh: boolean }>();
  const payloadJson = new Map<PipelineEvent, string>();
  const events = logged.map((e) => pipelineEvent(e, false));
  const part: StoredPart = { events, runs: drafts, scratch: new Map(), payloadJson };
  const applying: Part = { events, runs: drafts, scratch: part.scratch };
  for (const e of events) {
    const k = runKeyOfEvent(e);
    let d = drafts.get(k);
    if (!d) drafts.set(k, (d = { run: newRunRecord({ project_id: e.user_id, user_id: e.user_id }, e.sdk_run_id, e.run_id, e.occurred_at), fresh: true, pluginState: new Map() }));
    for (const p of plugins) p.onEvent?.(e, d, applying);
    d.fresh = false;
  }
  return { part, drafts, payloadJson };
}
