/**
 * Cost of reporting on the agent's thread, and end-to-end delivery rate, against a loopback ingest server.
 * Run: node --import tsx clients/js/bench/overhead.ts
 */
import { Runwatch } from "../src/index.js";
import { LoopbackServer } from "../test/loopback.js";

const server = await new LoopbackServer().start();
const client = new Runwatch({ apiKey: "f".repeat(64), baseUrl: server.url, maxQueueSize: 1_000_000 });

const run = client.startRun({ agentName: "bench", sdkRunId: "bench-1" });
const payload = { node_name: "node", phase: "end", duration_ms: 12, output: { answer: "x".repeat(200), items: [1, 2, 3] } } as const;

// Warm-up.
for (let i = 0; i < 20_000; i++) run.emit("step", payload);
await client.flush(60_000);

const rounds = 50;
const perRound = 2_000;
let busy = 0;
const t0 = performance.now();
for (let r = 0; r < rounds; r++) {
  const s = performance.now();
  for (let i = 0; i < perRound; i++) run.emit("step", payload);
  busy += performance.now() - s;
  await new Promise((res) => setImmediate(res)); // let the transport work between bursts, as a real agent awaits I/O
}
await client.flush(60_000);
const wall = performance.now() - t0;
const n = rounds * perRound;
const bodyBytes = JSON.stringify(server.requests.at(-1)?.body ?? {}).length;
console.log(`events: ${n}`);
console.log(`agent-thread cost per event (emit: id, timestamp, serialize, enqueue): ${((busy / n) * 1000).toFixed(2)} µs`);
console.log(`end-to-end delivered: ${(n / (wall / 1000)).toFixed(0)} events/s to a loopback server (${server.requests.length} requests in all, last body ${bodyBytes} bytes)`);

// An LLM span through the public API (llmCall: ids, context, start and end events with usage), per span.
const messages = [{ role: "user", content: "What is the weather in Paris?" }];
const spans = 20_000;
for (let i = 0; i < 2_000; i++) await run.llmCall("chat", { model: "gpt-4o-mini", provider: "openai", input: messages }, (c) => c.setUsage({ promptTokens: 42, completionTokens: 7 }));
let spanBusy = 0;
for (let r = 0; r < spans / 1_000; r++) {
  const s = performance.now();
  for (let i = 0; i < 1_000; i++) {
    await run.llmCall("chat", { model: "gpt-4o-mini", provider: "openai", input: messages }, (c) => {
      c.setOutput("Sunny, 21°C.");
      c.setUsage({ promptTokens: 42, completionTokens: 7, cachedTokens: 32 });
    });
  }
  spanBusy += performance.now() - s;
  await new Promise((res) => setImmediate(res));
}
await client.flush(60_000);
console.log(`agent-thread cost per LLM span (run.llmCall: 2 events, ids, async context): ${((spanBusy / spans) * 1000).toFixed(2)} µs`);
console.log(`stats: ${JSON.stringify(client.stats)}`);
await client.shutdown();
await server.stop();
