/**
 * Scale-mode ingest benchmark: `node --import tsx test/bench/scale-ingest.ts` with KAFKA_BROKERS,
 * CLICKHOUSE_URL, DATABASE_URL and REDIS_URL set (deploy/services.sh up; . deploy/.cache/services.env).
 *
 * Starts 2 web and 2 pipeline processes (`runwatch start --role …`, as in test/scale), drives both web
 * processes with autocannon (batch ingest; a 207 means every event is acknowledged by all in-sync Kafka
 * replicas), then prints acknowledged events/s, ack latency, the consumer lag when the load stops and how
 * long the pipeline group takes to drain it, and checks that every acknowledged event was stored.
 *
 * Two phases: saturation (as fast as the web processes acknowledge) for the events/s figure, then a steady
 * load at BENCH_RATE events/s (default 15,000) for the lag the pipeline keeps under a sustainable load and
 * its drain time. On 2 cores every process (Kafka, chdb-http, web, pipeline, this client) shares the CPU, so
 * the drain after a saturation run mostly measures how far ingest outran the pipeline.
 *
 * Env: BENCH_DURATION (s, default 15), BENCH_BATCH_SIZE (default 1000), BENCH_CONNECTIONS (per web, default 8),
 * BENCH_RATE (events/s of the steady phase, default 15000), BENCH_WEB (default 2), BENCH_PIPELINE (default 2).
 */
import autocannonUntyped from "autocannon";
import { Kafka, logLevel } from "kafkajs";
import { consumerGroupId } from "../../core/log/kafka-log.js";
import { startCluster } from "../scale/cluster.js";
import { clickhouseFor, runEvents, storedCounts } from "../scale/helpers.js";

interface CannonResult { "2xx": number; non2xx: number; errors: number; duration: number; latency: { p50: number; p99: number } }
const autocannon = autocannonUntyped as unknown as (opts: Record<string, unknown>) => Promise<CannonResult>;

const DURATION = Number(process.env.BENCH_DURATION ?? 15);
const BATCH = Number(process.env.BENCH_BATCH_SIZE ?? 1000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const RATE = Number(process.env.BENCH_RATE ?? 15_000);
const WEB = Number(process.env.BENCH_WEB ?? 2);
const PIPELINE = Number(process.env.BENCH_PIPELINE ?? 2);

for (const v of ["KAFKA_BROKERS", "CLICKHOUSE_URL", "DATABASE_URL", "REDIS_URL"]) {
  if (!process.env[v]) {
    console.error(`scale-ingest needs ${v} (deploy/services.sh up, then: set -a; . deploy/.cache/services.env; set +a)`);
    process.exit(2);
  }
}

const cluster = await startCluster({ roles: { web: WEB, pipeline: PIPELINE }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "10000000", RUNWATCH_EVENT_QUOTA_PER_MINUTE: "0", LOG_LEVEL: "error" } });
const ch = await clickhouseFor(cluster.env);
const kafka = new Kafka({ brokers: cluster.env.KAFKA_BROKERS!.split(","), logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
const topic = cluster.env.KAFKA_TOPIC!;

async function lag(): Promise<number> {
  const [ends, committed] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId: consumerGroupId(topic, "pipeline"), topics: [topic] })]);
  const done = new Map(committed.flatMap((t) => t.partitions.map((p) => [p.partition, Number(p.offset)] as const)));
  return ends.reduce((n, p) => n + Number(p.high) - Math.max(Number(p.low), done.get(p.partition) ?? -1), 0);
}

try {
  const { userId, key } = cluster.createUserWithKey();
  // Bodies spread over many runs (many partitions); each repost mints new event ids (distinct events).
  const bodies = Array.from({ length: 16 }, (_, b) =>
    JSON.stringify({ events: Array.from({ length: BATCH / 20 }, (_, r) => runEvents(`bench-${b}-${r}`, 20).map((e, i) => (i === 0 ? e : { ...e, event_type: "step", payload: { seq: i, node_name: "n", phase: "start" } }))).flat() }));
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const webs = cluster.byRole("web").map((p) => p.url!);
  const cannon = (url: string, opts: number | Record<string, unknown>) =>
    autocannon({
      url,
      connections: CONNECTIONS,
      ...(typeof opts === "number" ? { duration: opts } : opts),
      requests: bodies.map((body) => ({ method: "POST", path: "/api/ingest/batch", headers, body })),
    });

  let acked = 0;
  const count = (rs: CannonResult[]) => rs.reduce((n, r) => n + r["2xx"], 0) * BATCH;
  const waitDrained = async () => { while ((await lag()) > 0) await new Promise((r) => setTimeout(r, 50)); };

  acked += count(await Promise.all(webs.map((u) => cannon(u, 2)))); // warm-up (JIT, connections, metadata)
  await waitDrained();

  async function phase(title: string, extra: Record<string, unknown>) {
    console.log(`\n${title}`);
    const results = await Promise.all(webs.map((u) => cannon(u, { ...extra })));
    const stoppedAt = Date.now();
    const lagAtStop = await lag();
    await waitDrained();
    const drainMs = Date.now() - stoppedAt;
    const ok = results.reduce((n, r) => n + r["2xx"], 0);
    const bad = results.reduce((n, r) => n + r.non2xx + r.errors, 0);
    const events = ok * BATCH;
    acked += events;
    const seconds = results[0].duration;
    console.log(`  acknowledged   ${events.toLocaleString("en")} events in ${ok} requests (${bad} not 2xx)`);
    console.log(`  throughput     ${Math.round(events / seconds).toLocaleString("en")} events/s (${(ok / seconds).toFixed(0)} req/s)`);
    console.log(`  ack latency    p50 ${Math.max(...results.map((r) => r.latency.p50))} ms, p99 ${Math.max(...results.map((r) => r.latency.p99))} ms (one batch request)`);
    console.log(`  consumer lag   ${lagAtStop.toLocaleString("en")} events when the load stopped, drained in ${drainMs} ms`);
  }

  console.log(`scale ingest: ${WEB} web + ${PIPELINE} pipeline processes, batches of ${BATCH}`);
  await phase(`saturation: ${CONNECTIONS} connections per web, ${DURATION}s`, { duration: DURATION });
  const reqPerSecPerWeb = Math.max(1, Math.round(RATE / BATCH / webs.length));
  await phase(`steady: ${(reqPerSecPerWeb * BATCH * webs.length).toLocaleString("en")} events/s offered, ${DURATION}s`, { duration: DURATION, overallRate: reqPerSecPerWeb });

  // autocannon stops counting at the deadline: requests still in flight then were appended by the server
  // but are not in `acked`, so up to (connections × webs × phases × batch) more events may be stored.
  const deadline = Date.now() + 60_000;
  let stored = await storedCounts(ch, userId);
  while (stored.rows < acked && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    stored = await storedCounts(ch, userId);
  }
  const ok = stored.rows >= acked && stored.rows === stored.distinct;
  console.log(`\nstored ${stored.rows.toLocaleString("en")} events (${stored.distinct.toLocaleString("en")} distinct) for ${acked.toLocaleString("en")} counted acknowledgements` +
    (ok ? ": none lost, none twice" : "  <-- LOST OR DUPLICATED"));
  process.exitCode = ok ? 0 : 1;
} finally {
  await admin.disconnect();
  await ch.close();
  await cluster.stop();
}
