/**
 * The runs explorer's speed (docs/EXPLORER.md) at a million runs, embedded (chDB): each sort's first page, each filter
 * alone, filters together, free-text search and the 30-day charts, through the store (GET /api/runs' code path: the
 * filter's string form parsed, EventStore.listRuns, rows decoded; the chart module) next to the same SQL sent straight
 * to chDB in the same run (explorer-cases.ts). Targets: a first page's p95 under 300 ms and at most 1.5× the raw
 * query's; free-text search under 1 s.
 *
 * Cold: each case's first execution in a process that has just opened the data dir (a child process per case and
 * path, so no case warms another's caches; the OS page cache is not dropped). Warm: BENCH_REPS executions after one
 * warm-up, the two paths alternating, p50/p95.
 *
 * The dataset (explorer-data.ts) is made by ClickHouse itself the first time, into BENCH_DATA_DIR, and kept: a re-run
 * measures the queries only. The bench's clock (Date.now) runs from the dataset's anchor, the moment it was made, so
 * that "the last 24 h" is the dataset's last day however long ago it was made, as for a project in use.
 *
 * The raw path replays the SQL the store sent for the case when it first ran (captured from its ClickHouse port, with
 * the answers' ids the next read was given), so both paths send the same queries.
 *
 *   npm run bench:explorer
 *   env: BENCH_DATA_DIR (default <tmp>/runwatch-bench-explorer-<runs>), BENCH_RUNS=1000000, BENCH_REPS=20,
 *        BENCH_COLD=0 (warm only), BENCH_CASES=<substring> (only the cases whose name contains it)
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { drainPending } from "chdb";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { createEventStore } from "../../stores/runs/event-store.js";
import { ensureDataset, PROJECT, type DatasetInfo } from "./explorer-data.js";
import {
  benchCases, capturedQueries, openRawSessions, readSamples, runRaw, runThroughStore, type Case, type Group, type SentQuery,
} from "./explorer-cases.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 1_000_000);
const DIR = process.env.BENCH_DATA_DIR ?? path.join(os.tmpdir(), `runwatch-bench-explorer-${RUNS}`);
const REPS = Number(process.env.BENCH_REPS ?? 20);
const COLD = process.env.BENCH_COLD !== "0";
const ONLY = process.env.BENCH_CASES;
type Path = "store" | "raw";

/** A child process: one case's first execution on one path, printed as JSON. */
async function coldChild(c: Case, via: Path, now: number, rounds: SentQuery[][]): Promise<void> {
  if (via === "store") {
    const ch = await openChdb(DIR, "runwatch");
    const t = performance.now();
    await runThroughStore(c, ch, createEventStore(ch), now);
    console.log(JSON.stringify({ ms: performance.now() - t }));
    await ch.close();
  } else {
    const sessions = await openRawSessions(DIR, 2);
    const t = performance.now();
    await runRaw(rounds, sessions);
    console.log(JSON.stringify({ ms: performance.now() - t }));
    for (const s of sessions) s.close();
    await drainPending();
  }
}

/** Date.now from `anchor` on: the dataset's clock. */
function datasetClock(anchor: number): void {
  const real = Date.now.bind(Date);
  const offset = anchor - real();
  Date.now = () => real() + offset;
}

if (process.argv[2] === "--cold") {
  const { c, via, anchor, rounds } = JSON.parse(await readFile(process.argv[3]!, "utf8")) as { c: Case; via: Path; anchor: number; rounds: SentQuery[][] };
  datasetClock(anchor);
  await coldChild(c, via, anchor, rounds);
  process.exit(0);
}

const log = (line: string) => console.log(line);
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const pct = (xs: readonly number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.max(0, Math.ceil(p * xs.length) - 1))]!;
const fmt = (ms: number | undefined) => (ms === undefined ? "–" : ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

log(`machine: ${os.cpus().length} cores (nproc ${execFileSync("nproc").toString().trim()}), ${mib(os.totalmem())} memory, Node ${process.version}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
const info: DatasetInfo = await ensureDataset(DIR, RUNS, log);
log(`dataset: ${DIR}, ${info.runs.toLocaleString("en-US")} runs (made in ${info.generated_seconds} s), anchored at ${new Date(info.anchor).toISOString()}`);
datasetClock(info.anchor);

// What the dataset holds, the values some cases look for, the SQL each case sends; then the directory is let go for
// the cold children.
let cases: Case[];
const sent = new Map<Case, SentQuery[][]>();
interface Timing { cold: Partial<Record<Path, number>>; warm: Record<Path, number[]>; rows: number }
const timings = new Map<Case, Timing>();
{
  const ch = await openChdb(DIR, "runwatch");
  const [version] = await ch.query<{ v: string }>("SELECT version() AS v");
  const tables = await ch.query<{ table: string; rows: string; parts: string; disk: string; raw: string }>(
    `SELECT table, sum(rows) AS rows, count() AS parts, sum(bytes_on_disk) AS disk, sum(data_uncompressed_bytes) AS raw
       FROM system.parts WHERE database = 'runwatch' AND active AND table IN ('agent_runs', 'agent_events', 'llm_calls', 'scores')
      GROUP BY table ORDER BY table`,
  );
  const [runs] = await ch.query<{ n: string }>(`SELECT count() AS n FROM agent_runs FINAL WHERE project_id = ${PROJECT}`);
  log(`chDB ${version!.v}; project ${PROJECT}: ${Number(runs!.n).toLocaleString("en-US")} runs (FINAL)`);
  for (const t of tables) log(`  ${t.table}: ${Number(t.rows).toLocaleString("en-US")} rows in ${t.parts} parts, ${mib(Number(t.disk))} on disk (${mib(Number(t.raw))} uncompressed)`);
  log(`  data dir: ${execFileSync("du", ["-sh", DIR]).toString().split("\t")[0]}`);
  cases = benchCases(info, await readSamples(ch)).filter((c) => ONLY === undefined || c.name.includes(ONLY));
  // The SQL each case sends, captured once; the raw path replays it.
  for (const c of cases) sent.set(c, await capturedQueries(c, ch, info.anchor));
  await ch.close();
}

for (const c of cases) timings.set(c, { cold: {}, warm: { store: [], raw: [] }, rows: 0 });
if (COLD) {
  log(`cold: ${cases.length * 2} child processes, each opening the data dir and running one case once`);
  const self = fileURLToPath(import.meta.url);
  const job = path.join(await mkdtemp(path.join(os.tmpdir(), "runwatch-bench-explorer-")), "case.json");
  for (const [i, c] of cases.entries()) {
    for (const via of (i % 2 === 0 ? ["store", "raw"] : ["raw", "store"]) as Path[]) {
      await writeFile(job, JSON.stringify({ c, via, anchor: info.anchor, rounds: sent.get(c) }));
      const child = spawnSync(process.execPath, ["--import", "tsx", self, "--cold", job], { encoding: "utf8", env: process.env });
      const line = child.stdout.trim().split("\n").at(-1) ?? "";
      if (child.status !== 0 || !line.startsWith("{")) throw new Error(`cold ${via} "${c.name}" failed: ${child.stderr}`);
      timings.get(c)!.cold[via] = (JSON.parse(line) as { ms: number }).ms;
    }
  }
  await rm(path.dirname(job), { recursive: true, force: true });
}

log(`warm: ${REPS} executions of each case on each path, alternating, after one warm-up`);
const ch = await openChdb(DIR, "runwatch");
const store = createEventStore(ch);
const sessions = await openRawSessions(DIR, 2);
for (const c of cases) {
  const t = timings.get(c)!;
  const paths: Record<Path, () => Promise<unknown>> = {
    store: async () => (t.rows = await runThroughStore(c, ch, store, info.anchor)),
    raw: () => runRaw(sent.get(c)!, sessions),
  };
  await paths.store();
  await paths.raw();
  for (let i = 0; i < REPS; i++) {
    for (const via of (i % 2 === 0 ? ["store", "raw"] : ["raw", "store"]) as Path[]) {
      const t0 = performance.now();
      await paths[via]();
      t.warm[via].push(performance.now() - t0);
    }
  }
  log(`  ${c.name}: store p50 ${fmt(pct(t.warm.store, 0.5))} ms, raw p50 ${fmt(pct(t.warm.raw, 0.5))} ms`);
}
const rss = process.memoryUsage().rss;
const maxRss = process.resourceUsage().maxRSS * 1024;

/** Whether a case met its target (a first page, a search); "" for a chart, which has none. */
function verdict(group: Group, storeP95: number, rawP95: number): string {
  if (group === "chart") return "";
  if (group === "text") return storeP95 < 1000 ? "yes" : "**no**";
  return storeP95 < 300 && storeP95 <= 1.5 * rawP95 ? "yes" : "**no**";
}

log("");
log(`| Case | Rows | Queries | Cold store / raw (ms) | Warm p50 store / raw (ms) | Warm p95 store / raw (ms) | p95 ratio | Target met |`);
log(`|---|---|---|---|---|---|---|---|`);
for (const c of cases) {
  const t = timings.get(c)!;
  const [s95, r95] = [pct(t.warm.store, 0.95), pct(t.warm.raw, 0.95)];
  const queries = sent.get(c)!.map((round) => round.length).join("+");
  log(`| ${c.name.replaceAll("|", "\\|")} | ${t.rows} | ${queries} | ${fmt(t.cold.store)} / ${fmt(t.cold.raw)} | ${fmt(pct(t.warm.store, 0.5))} / ${fmt(pct(t.warm.raw, 0.5))} | ${fmt(s95)} / ${fmt(r95)} | ${(s95 / r95).toFixed(2)} | ${verdict(c.group, s95, r95)} |`);
}
log("");
log(`RSS of the bench process (store and raw sessions on one chDB): ${mib(rss)} after the warm runs, peak ${mib(maxRss)}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
for (const s of sessions) s.close();
await ch.close();
process.exit(0);
