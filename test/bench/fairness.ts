/**
 * Fair processing across tenants (docs/BENCHMARKS.md, "Fair processing across tenants"): `runwatch start` as a child
 * process, tenant A sends BENCH_SPANS minimal spans (default 600,000) in exports of 20,000 over OTLP/HTTP; once they
 * are acknowledged, tenant B sends one event, and the bench prints how long B's event took to be visible, how long A's
 * burst took to drain, and the server's peak RSS — with the bulk lane (the default) and without it
 * (RUNWATCH_BULK_LANE_BYTES=0), in the same run. Honours KAFKA_BROKERS etc. for scale mode.
 *
 *   npm run bench:fairness
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import { bearer, childServerWithAccount, json, runwatchCli } from "../e2e/harness.js";
import { minimalTracesExport } from "../e2e/otlp-fixtures.js";
import { rssMiB } from "./live-server.js";

const SPANS = Number(process.env.BENCH_SPANS ?? 600_000);
const PER_EXPORT = 20_000;
const children = new Set<ChildProcess>();
const dirs: string[] = [];

const visible = async (url: string, key: string, run: string, timeoutMs: number): Promise<number> => {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if ((await fetch(`${url}/api/runs/${run}`, bearer(key))).status === 200) return Date.now() - t0;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${run} not visible within ${timeoutMs} ms`);
};

async function trial(label: string, env: Record<string, string>) {
  const s = await childServerWithAccount("fairbench", { RUNWATCH_EVENT_QUOTA_PER_MINUTE: "0", ...env }, children, dirs);
  const victimEmail = `b-${s.email}`;
  runwatchCli({ ...s.env, RUNWATCH_PASSWORD: "correct horse battery" }, "user", "create", "--email", victimEmail, "--name", "b");
  const victimKey = runwatchCli(s.env, "key", "create", "--email", victimEmail, "--name", "b");
  const exports = Array.from({ length: Math.ceil(SPANS / PER_EXPORT) }, () => minimalTracesExport(PER_EXPORT, 10, "burst"));
  let peak = 0;
  const sampler = setInterval(() => { void rssMiB(s.child.pid!).then((m) => { peak = Math.max(peak, m); }, () => {}); }, 200);
  const t0 = Date.now();
  for (let i = 0; i < exports.length; i += 4) {
    const statuses = await Promise.all(exports.slice(i, i + 4).map(({ body }) =>
      fetch(`${s.url}/v1/traces`, { method: "POST", headers: { "content-type": "application/x-protobuf", authorization: `Bearer ${s.key}` }, body: body as BodyInit }).then((r) => r.status)));
    if (statuses.some((x) => x !== 200)) throw new Error(`burst refused: ${statuses.join(",")}`);
  }
  const ackMs = Date.now() - t0;
  const res = await fetch(`${s.url}/api/ingest`, json(victimKey, { event_type: "run_start", sdk_run_id: "b-run", agent_name: "b", payload: {} }));
  if (res.status !== 202) throw new Error(`tenant B's event: ${res.status}`);
  const victimMs = await visible(s.url, victimKey, "b-run", 600_000);
  const drainMs = victimMs + (await visible(s.url, s.key, exports[exports.length - 1]!.lastTrace, 600_000));
  clearInterval(sampler);
  console.log(`${label.padEnd(22)} burst acknowledged in ${(ackMs / 1000).toFixed(1)} s; B visible ${(victimMs / 1000).toFixed(2)} s after its ack; burst drained ${(drainMs / 1000).toFixed(1)} s after it; peak RSS ${Math.round(peak)} MiB`);
  s.child.kill("SIGTERM");
  await new Promise((r) => s.child.once("exit", r));
  return victimMs;
}

try {
  console.log(`fairness: ${SPANS.toLocaleString("en")} spans from tenant A in exports of ${PER_EXPORT.toLocaleString("en")}, then one event from tenant B (${process.env.KAFKA_BROKERS ? "scale mode" : "embedded"})`);
  const laned = await trial("bulk lane (default)", {});
  const single = await trial("one lane", { RUNWATCH_BULK_LANE_BYTES: "0" });
  console.log(`B's wait with the bulk lane / with one lane: ${(laned / single).toFixed(3)}`);
} finally {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
}
