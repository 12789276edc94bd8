/**
 * Freshness: time from the ingest acknowledgement (HTTP 202 received by the client) to the WebSocket frame
 * carrying that event arriving at a subscribed dashboard client, at a steady 2,000 events/s.
 *
 *   node --import tsx test/bench/freshness.ts [--rate 2000] [--seconds 10] [--warmup 2]
 *
 * The server is the real thing, `runwatch start` as a child process (web + pipeline + gateway, embedded
 * default) on free ports over a temporary data dir. The load generator and the WebSocket client run in this
 * process. Each event carries a client event_id, so frames are matched to acks exactly. Target (issue #18): p99 < 50 ms.
 */
import { parseArgs } from "node:util";
import { randomUUID } from "node:crypto";
import http from "node:http";
import { startLiveServer } from "./live-server.js";

const { values } = parseArgs({
  options: { rate: { type: "string", default: "2000" }, seconds: { type: "string", default: "10" }, warmup: { type: "string", default: "2" } },
});
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);

async function main() {
  const live = await startLiveServer("web,pipeline,gateway", {}, process.env.BENCH_SERVER_NODE_ARGS?.split(" ").filter(Boolean) ?? []);
  const { base, key, arrived } = live;
  try {
    const acked = new Map<string, number>();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const post = (payload: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(`${base}/api/ingest`, {
          method: "POST", agent,
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
        }, (res) => { res.resume(); res.on("end", () => resolve(res.statusCode ?? 0)); });
        req.on("error", reject);
        req.end(payload);
      });
    const body = (sdkRunId: string, i: number, eventId: string) =>
      JSON.stringify(i === 0
        ? { event_type: "run_start", sdk_run_id: sdkRunId, agent_name: "bench-agent", event_id: eventId, payload: { framework: "bench" } }
        : { event_type: "tool_call", sdk_run_id: sdkRunId, event_id: eventId, payload: { tool_name: "search", phase: i % 2 ? "start" : "end", input_preview: "x".repeat(200), duration_ms: 5 } });
    let failed = 0;
    const send = async (sdkRunId: string, i: number, measure: boolean) => {
      const id = randomUUID();
      try {
        const status = await post(body(sdkRunId, i, id));
        if (status !== 202) { failed++; return; }
        if (measure) acked.set(id, performance.now());
      } catch {
        failed++;
      }
    };

    // Open-loop load: every tick, send however many events keep the rate on schedule. 50 runs in parallel.
    const RUNS = 50;
    const perRun = new Array(RUNS).fill(0);
    const inflight = new Set<Promise<void>>();
    const total = RATE * (WARMUP + SECONDS);
    const start = performance.now();
    let sent = 0;
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * RATE));
      while (sent < due) {
        const r = sent % RUNS;
        const p = send(`fresh-${r}`, perRun[r]++, sent >= RATE * WARMUP);
        inflight.add(p);
        p.finally(() => inflight.delete(p));
        sent++;
      }
      await new Promise((res) => setTimeout(res, 2));
    }
    const elapsed = (performance.now() - start) / 1000;
    await Promise.all(inflight);
    // Let the last frames arrive.
    const deadline = performance.now() + 5000;
    while (performance.now() < deadline && [...acked.keys()].some((id) => !arrived.has(id))) await new Promise((r) => setTimeout(r, 50));

    const lat: number[] = [];
    let early = 0, missing = 0;
    for (const [id, t] of acked) {
      const f = arrived.get(id);
      if (f === undefined) { missing++; continue; }
      // The frame can beat the 202 to the client (the pipeline picks the event up as soon as it is durable).
      if (f < t) early++;
      lat.push(Math.max(0, f - t));
    }
    lat.sort((x, y) => x - y);
    const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))] ?? NaN;
    const fmt = (n: number) => `${n.toFixed(1)} ms`;
    console.log(`freshness: ingest 202 → WebSocket frame, ${RATE} events/s offered for ${SECONDS}s (+${WARMUP}s warm-up)`);
    console.log(`  achieved send rate   ${(sent / elapsed).toFixed(0)} events/s`);
    console.log(`  measured events      ${acked.size} acked, ${lat.length} frames matched, ${missing} missing, ${failed} failed requests`);
    console.log(`  frame before ack     ${early}`);
    console.log(`  p50 ${fmt(pct(50))}   p90 ${fmt(pct(90))}   p99 ${fmt(pct(99))}   max ${fmt(lat[lat.length - 1] ?? NaN)}`);
    console.log(`  target p99 < 50 ms: ${pct(99) < 50 ? "met" : "NOT met"}`);
    agent.destroy();
  } finally {
    await live.stop();
  }
}

await main();
