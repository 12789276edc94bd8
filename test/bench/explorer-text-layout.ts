/**
 * Free-text search's read in the two layouts it has had, on the explorer bench's dataset (explorer-data.ts; make it
 * with `npm run bench:explorer` first): the events' own `search_text` column (migration 195) against a table of its
 * own as `run_text` was (made here once as `run_text_layout`, a copy of the dataset's texts in run_text's schema and
 * trigram index, merged to one part). Each term's subquery alternates between the two, REPS times, and prints the
 * medians and their ratio, then RSS. docs/BENCHMARKS.md ("npm run bench:explorer") quotes it.
 *
 *   BENCH_DATA_DIR=<the explorer dataset> node --import tsx test/bench/explorer-text-layout.ts
 *   env: BENCH_REPS=8, BENCH_TERMS="connection reset|#4242"
 */
import os from "node:os";
import path from "node:path";
import { openChdb } from "../../core/clickhouse/chdb.js";

const DIR = process.env.BENCH_DATA_DIR ?? path.join(os.tmpdir(), "runwatch-bench-explorer-1000000");
const REPS = Number(process.env.BENCH_REPS ?? 8);
const TERMS = (process.env.BENCH_TERMS ?? "connection reset|#4242").split("|");
const ch = await openChdb(DIR, "runwatch");
const [{ n }] = (await ch.query<{ n: string }>("SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = 'run_text_layout'")) as [{ n: string }];
if (Number(n) === 0) {
  await ch.exec("CREATE TABLE run_text_layout AS run_text");
  await ch.exec(`INSERT INTO run_text_layout SELECT project_id, run_id, sdk_run_id, event_id, occurred_at, search_text FROM agent_events WHERE search_text != ''`);
  await ch.exec("OPTIMIZE TABLE run_text_layout FINAL");
}
const sizes = await ch.query<{ table: string; column: string; rows: string; c: string; u: string }>(
  `SELECT table, column, sum(rows) AS rows, formatReadableSize(sum(column_data_compressed_bytes)) AS c, formatReadableSize(sum(column_data_uncompressed_bytes)) AS u
   FROM system.parts_columns WHERE active AND database = currentDatabase() AND (table, column) IN (('run_text_layout', 'text'), ('agent_events', 'search_text'))
   GROUP BY table, column ORDER BY table`,
);
console.log(`machine: ${os.cpus().length} cores, Node ${process.version}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
for (const s of sizes) console.log(`  ${s.table}.${s.column}: ${Number(s.rows).toLocaleString("en")} rows, ${s.c} on disk (${s.u} uncompressed)`);
const like = (term: string) => `'%${term.toLowerCase().replace(/[\\%_']/g, (c) => `\\${c}`)}%'`;
const forms = {
  "agent_events.search_text": (t: string) => `SELECT count() AS c FROM (SELECT sdk_run_id FROM agent_events WHERE project_id = 1 AND search_text LIKE ${like(t)})`,
  "a table of its own": (t: string) => `SELECT count() AS c FROM (SELECT sdk_run_id FROM run_text_layout WHERE project_id = 1 AND text LIKE ${like(t)})`,
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const term of TERMS) {
  const times = new Map<string, number[]>();
  const counts = new Set<string>();
  for (let r = 0; r <= REPS; r++) {
    for (const [name, sql] of Object.entries(forms)) {
      const t0 = performance.now();
      const [{ c }] = (await ch.query<{ c: string }>(sql(term))) as [{ c: string }];
      counts.add(c);
      if (r > 0) times.set(name, [...(times.get(name) ?? []), performance.now() - t0]); // the first round warms up
    }
  }
  if (counts.size !== 1) throw new Error(`the layouts disagree on ${term}: ${[...counts].join(" vs ")}`);
  const [col, table] = [median(times.get("agent_events.search_text")!), median(times.get("a table of its own")!)];
  console.log(`"${term}" (${[...counts][0]} matching texts): search_text ${col.toFixed(0)} ms, a table of its own ${table.toFixed(0)} ms (median of ${REPS}); ratio ${(col / table).toFixed(2)}`);
}
console.log(`RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
await ch.close();
