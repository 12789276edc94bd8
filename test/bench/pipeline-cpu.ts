/**
 * The pipeline thread's own CPU per OTLP span, without storage: `npm run bench:pipeline-cpu [-- exports]`.
 *
 * Takes the realistic exports of bench:otlp (otlp-payload.ts) as the export records a receiver logs, and runs what the
 * pipeline thread does with them between its storage calls, stage by stage: expanding the records into events
 * (otlp/export-record.ts), the built-in plugins' onEvent, each payload serialised once
 * (part-processor.ts), the agent_events rows as the bytes moved to the host, the frames, the llm_calls rows and the
 * runs' rows. Storage calls are answered at once and their payloads
 * dropped. Prints µs per span per stage (the thread's wall time, its own GC pauses included) and the whole process's
 * CPU per span (V8's helper threads included), for `rounds` rounds after a warm-up. Used to find and check changes
 * to the serial path that bounds how fast spans become visible (docs/BENCHMARKS.md, "`npm run bench:otlp`").
 */
import { createEventStore } from "../../stores/runs/event-store.js";
import { encodeRows } from "../../core/clickhouse/settings.js";
import { loadConfig } from "../../core/config.js";
import type { LoggedEvent } from "../../core/events/schema.js";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { PubSub } from "../../core/ports/pubsub.js";
import { createLogger } from "../../core/logger.js";
import { expandExportRecord } from "../../otlp/export-record.js";
import { broadcast } from "../../plugins/broadcast.js";
import { costAggregation } from "../../plugins/cost-aggregation.js";
import { llmCalls } from "../../plugins/llm-calls.js";
import type { Plugin, PluginContext } from "../../plugins/plugin.js";
import { previewTruncation } from "../../plugins/preview-truncation.js";
import { scores } from "../../plugins/scores.js";
import { statusMachine } from "../../plugins/status-machine.js";
import { SPANS_PER_EXPORT } from "./otlp-payload.js";
import { applyPlugins, exportRecord, type PluginPart } from "./pipeline-part.js";

const EXPORTS = Number(process.argv[2] ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

let sink = 0; // bytes "sent" to the host, so the work cannot be optimised away
const clickhouse: ClickHouse = {
  query: async () => [],
  exec: async () => {},
  insert: async (_table, rows) => { sink += (await encodeRows(rows)).bytes.byteLength; },
  insertEncoded: async (_table, rows) => { sink += rows.bytes.byteLength; },
  sandbox: () => { throw new Error("no sandbox in this bench"); },
  close: async () => {},
};
const pubsub: PubSub = {
  publish: async (_channel, message) => { sink += message.length; },
  subscribePrefix: async () => async () => {},
  close: async () => {},
};

const records = Array.from({ length: EXPORTS }, (_, i) => exportRecord(i));

const config = loadConfig({});
const ctx = { config, clickhouse, pubsub, logger: createLogger("error") } as unknown as PluginContext;
const plugins: Plugin[] = [statusMachine(), previewTruncation(), llmCalls(), costAggregation(), scores(), broadcast()];
for (const p of plugins) await p.init?.(ctx);
const store = createEventStore(clickhouse);

const stages = { expand: 0, plugins: 0, payload_json: 0, events_rows: 0, frames: 0, llm_calls_rows: 0, runs_rows: 0 };
type Stage = keyof typeof stages;
async function timed(stage: Stage, f: () => unknown): Promise<void> {
  const t = performance.now();
  await f();
  stages[stage] += performance.now() - t;
}

async function round(): Promise<void> {
  for (const record of records) {
    let events: LoggedEvent[] = [];
    await timed("expand", () => { events = expandExportRecord(record).events; });
    let part!: PluginPart;
    await timed("plugins", () => { part = applyPlugins(events, plugins); });
    const { part: stored, drafts, payloadJson } = part;
    await timed("payload_json", () => { for (const e of stored.events) payloadJson.set(e, JSON.stringify(e.payload)); });
    await timed("events_rows", () => store.insertEvents(stored.events, payloadJson));
    await timed("frames", () => plugins.find((p) => p.name === "broadcast")!.afterEventsStored!(stored));
    await timed("llm_calls_rows", () => plugins.find((p) => p.name === "llm-calls")!.afterEventsStored!(stored));
    await timed("runs_rows", () => store.upsertRuns([...drafts.values()].map((d) => d.run)));
  }
}

await round(); // warm-up
for (const k of Object.keys(stages) as Stage[]) stages[k] = 0;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < ROUNDS; i++) await round();
const wall = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const spans = EXPORTS * SPANS_PER_EXPORT * ROUNDS;
const us = (ms: number) => ((ms * 1000) / spans).toFixed(2);
console.log(`${spans.toLocaleString()} spans in ${EXPORTS} export records × ${ROUNDS} rounds`);
for (const [k, v] of Object.entries(stages)) console.log(`  ${k.padEnd(15)} ${us(v).padStart(6)} µs per span`);
console.log(`  ${"thread, all".padEnd(15)} ${us(wall).padStart(6)} µs per span`);
console.log(`  process CPU     ${us((cpu.user + cpu.system) / 1000).padStart(6)} µs per span (V8's GC and compiler threads included)`);
console.log(`  RSS ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB; ${(sink / 2 ** 20).toFixed(0)} MiB moved`);
