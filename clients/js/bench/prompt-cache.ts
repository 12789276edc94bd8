/**
 * Cost of client.getPrompt on the agent's event loop (docs/PROMPTS.md): from a fresh cache entry, and from a stale
 * one (cacheTtlS 0: every call is past the TTL and returns the cached prompt while one background refresh at a time
 * revalidates it against the server — a 304 each). The twin of clients/python/bench/prompt_cache.py.
 *
 *   node --import tsx clients/js/bench/prompt-cache.ts [calls, default 200000]
 *
 * A real server (the app embedded on a temporary data dir, as the e2e tests start it) answers the first fetch and
 * the refreshes. Prints the mean and the p50/p99 of single calls, and how many requests reached the server.
 */
import { startTestServer } from "../../../test/e2e/harness.js";
import { Runwatch } from "../src/index.js";

const calls = Number(process.argv[2] ?? 200_000);

async function measure(label: string, n: number, fn: () => unknown, yieldEvery = 0): Promise<void> {
  const single: number[] = [];
  let busy = 0;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    const dt = performance.now() - t0;
    busy += dt;
    if (i % 100 === 0) single.push(dt);
    // A real agent awaits I/O between calls: let the background refresh's request and answer through.
    if (yieldEvery && i % yieldEvery === 0) await new Promise((r) => setImmediate(r));
  }
  single.sort((a, b) => a - b);
  const p = (q: number) => single[Math.min(single.length - 1, Math.floor(q * single.length))]! * 1000;
  console.log(`${label.padEnd(34)} mean ${((busy / n) * 1000).toFixed(2).padStart(6)} µs   p50 ${p(0.5).toFixed(2).padStart(6)} µs   p99 ${p(0.99).toFixed(2).padStart(6)} µs`);
}

const srv = await startTestServer();
try {
  const account = await srv.account();
  const res = await fetch(`${srv.url}/api/prompts/bench/versions`, {
    method: "POST",
    headers: { authorization: `Bearer ${account.key}`, "content-type": "application/json" },
    body: JSON.stringify({ prompt: [{ role: "system", content: "You are {{persona}}." }, { role: "user", content: "{{q}}" }], labels: ["production"] }),
  });
  if (res.status !== 201) throw new Error(`push: HTTP ${res.status} ${await res.text()}`);
  const client = new Runwatch({ apiKey: account.key, baseUrl: srv.url });
  await client.getPrompt("bench");
  await measure("fresh entry (cacheTtlS 60)", calls, () => client.getPrompt("bench"));
  const before = client.promptCache.requests;
  await measure("stale entry (cacheTtlS 0, refreshing)", calls, () => client.getPrompt("bench", { cacheTtlS: 0 }), 1_000);
  console.log(`requests during the stale run: ${client.promptCache.requests - before}`);
  const prompt = await client.getPrompt("bench");
  await measure("compile({persona, q})", Math.floor(calls / 4), () => prompt.compile({ persona: "a tutor", q: "2+2?" }));
  await client.shutdown();
} finally {
  await srv.close();
}
