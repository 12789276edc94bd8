/**
 * What the pipeline's inserts cost chDB at the sustained OTLP rate, background merges included:
 * `npm run bench:chdb-merges`.
 *
 * Maps the realistic exports of bench:otlp (otlp-payload.ts) into the rows a pipeline part writes (8 exports of 512
 * spans a part: agent_events, llm_calls, agent_runs and run_costs, as the pipeline serialises them), then inserts
 * them into a fresh embedded chDB at 5 parts a second (20,480 spans/s), table by table as the pipeline does, and
 * waits for the merges to settle. Twice: with the tables' merge settings as migration 110 leaves them, and with
 * ClickHouse's defaults (RESET SETTING), alternating `BENCH_ROUNDS` times (default 2). Prints the process's CPU per
 * 1,000 spans, each table's insert CPU per part, and what the merges rewrote (system.events), then RSS.
 * docs/STORAGE.md ("Merges") quotes it.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { createEventStore } from "../../stores/runs/event-store.js";
import { encodeRows } from "../../core/clickhouse/settings.js";
import { loadConfig } from "../../core/config.js";
import type { ClickHouse, EncodedRows } from "../../core/ports/clickhouse.js";
import { createLogger } from "../../core/logger.js";
import { expandExportRecord } from "../../otlp/export-record.js";
import { costAggregation } from "../../plugins/cost-aggregation.js";
import { llmCalls } from "../../plugins/llm-calls.js";
import type { Plugin, PluginContext } from "../../plugins/plugin.js";
import { previewTruncation } from "../../plugins/preview-truncation.js";
import { statusMachine } from "../../plugins/status-machine.js";
import { SPANS_PER_EXPORT } from "./otlp-payload.js";
import { applyPlugins, exportRecord } from "./pipeline-part.js";

const PARTS = Number(process.env.BENCH_PARTS ?? 100);
const EXPORTS_PER_PART = 8;
const PARTS_PER_SECOND = 5;
const SETTLE_SECONDS = 15;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const TUNED_TABLES = ["agent_events", "agent_runs", "llm_calls", "run_costs"];
const MERGE_EVENTS = ["Merge", "MergedRows", "MergedUncompressedBytes", "MergeTotalMilliseconds", "InsertedRows", "MergeTreeDataWriterUncompressedBytes"];

type Insert = { table: string; rows: EncodedRows };

/** The inserts of every part, captured from the event store and the llm-calls plugin writing to a recording port. */
async function pipelineParts(): Promise<Insert[][]> {
  let part: Insert[] = [];
  const recorder: ClickHouse = {
    query: async () => [],
    exec: async () => {},
    insert: async (table, rows) => { part.push({ table, rows: await encodeRows(rows) }); },
    insertEncoded: async (table, { columns, bytes }) => { part.push({ table, rows: { columns, bytes: bytes.slice() } }); },
    sandbox: () => { throw new Error("no sandbox in this bench"); },
    close: async () => {},
  };
  const ctx = { config: loadConfig({}), clickhouse: recorder, logger: createLogger("error") } as unknown as PluginContext;
  const plugins: Plugin[] = [statusMachine(), previewTruncation(), llmCalls(), costAggregation()];
  for (const p of plugins) await p.init?.(ctx);
  const store = createEventStore(recorder);
  const parts: Insert[][] = [];
  let version = Date.now() * 1000;
  for (let n = 0; n < PARTS; n++) {
    part = [];
    const events = Array.from({ length: EXPORTS_PER_PART }, (_, i) => expandExportRecord(exportRecord(i)).events).flat();
    const { part: stored, drafts, payloadJson } = applyPlugins(events, plugins);
    for (const e of stored.events) payloadJson.set(e, JSON.stringify(e.payload));
    await store.insertEvents(stored.events, payloadJson);
    await plugins.find((p) => p.name === "llm-calls")!.afterEventsStored!(stored);
    await store.upsertRuns([...drafts.values()].map((d) => ({ ...d.run, version: version++ })));
    parts.push(part);
  }
  return parts;
}

const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;

async function round(parts: Insert[][], tuned: boolean): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-bench-merges-"));
  const ch = await openChdb(dir, "runwatch");
  try {
    await migrateClickHouse(ch);
    if (!tuned) for (const t of TUNED_TABLES) await ch.exec(`ALTER TABLE ${t} RESET SETTING merge_selector_base, min_bytes_for_wide_part`);
    const before = await mergeEvents(ch);
    const perTable: Record<string, number> = {};
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < parts.length; i++) {
      const wait = t0 + (i * 1000) / PARTS_PER_SECOND - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      for (const { table, rows } of parts[i]!) {
        const c = process.cpuUsage();
        await ch.insertEncoded(table, rows);
        perTable[table] = (perTable[table] ?? 0) + cpuMs(process.cpuUsage(c));
      }
    }
    await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000));
    const cpu = cpuMs(process.cpuUsage(cpu0));
    const after = await mergeEvents(ch);
    const d = (k: string) => (after[k] ?? 0) - (before[k] ?? 0);
    const activeParts = await ch.query<{ table: string; n: string }>(
      "SELECT table, count() AS n FROM system.parts WHERE active AND database = currentDatabase() GROUP BY table ORDER BY table",
    );
    const spans = parts.length * EXPORTS_PER_PART * SPANS_PER_EXPORT;
    return (
      `${tuned ? "migration 110" : "defaults     "}: ${((cpu / spans) * 1000).toFixed(1)} ms of CPU per 1,000 spans;` +
      ` inserts per part ${Object.entries(perTable).map(([t, ms]) => `${t} ${(ms / parts.length).toFixed(1)}`).join(", ")} ms;` +
      ` ${d("Merge")} merges, ${(d("MergeTotalMilliseconds") / 1000).toFixed(1)} s, rewrote ${(d("MergedUncompressedBytes") / d("MergeTreeDataWriterUncompressedBytes")).toFixed(2)}× the bytes inserted;` +
      ` active parts ${activeParts.map((p) => `${p.table} ${p.n}`).join(", ")}`
    );
  } finally {
    await ch.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function mergeEvents(ch: ClickHouse): Promise<Record<string, number>> {
  const rows = await ch.query<{ event: string; value: string }>("SELECT event, value FROM system.events WHERE event IN {names:Array(String)}", { names: MERGE_EVENTS });
  return Object.fromEntries(rows.map((r) => [r.event, Number(r.value)]));
}

const parts = await pipelineParts();
const mib = (table: string) => parts.flat().filter((i) => i.table === table).reduce((n, i) => n + i.rows.bytes.byteLength, 0) / 2 ** 20;
console.log(
  `chDB under the pipeline's inserts: ${PARTS} parts of ${EXPORTS_PER_PART * SPANS_PER_EXPORT} spans at ${PARTS_PER_SECOND} parts/s, then ${SETTLE_SECONDS} s for merges` +
    ` (${TUNED_TABLES.map((t) => `${t} ${mib(t).toFixed(0)} MiB`).join(", ")} of rows; node ${process.version}, ${os.cpus().length} cores)`,
);
for (let r = 0; r < ROUNDS; r++) for (const tuned of [true, false]) console.log(`  ${await round(parts, tuned)}`);
console.log(`  RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
