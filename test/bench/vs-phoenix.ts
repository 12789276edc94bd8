/**
 * The same OTLP export to Arize Phoenix and to Runwatch: `npm run bench:vs-phoenix` (opt-in: the first run makes a
 * venv with `arize-phoenix` under deploy/.cache/phoenix-venv, a few minutes).
 *
 * Both servers run here at once, each on its defaults (Phoenix: `phoenix serve`, SQLite; Runwatch: `runwatch
 * start`, embedded), and take turns: BENCH_EXPORTS protobuf exports of 512 realistic agent spans (otlp-payload.ts)
 * to POST /v1/traces with BENCH_CONCURRENCY in flight — Phoenix takes only protobuf, so that is what both get.
 * Printed per server: spans/s acknowledged, then how long until the last trace sent can be read back through the
 * server's API (Phoenix: GET /v1/projects/default/spans?trace_id=…; Runwatch: GET /api/runs/{trace_id}/spans), and RSS.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../e2e/harness.js";
import { exportProtobuf, type SpanSpec } from "../e2e/otlp-fixtures.js";
import { rssMiB, startLiveServer } from "./live-server.js";
import { exportSpans, SPANS_PER_EXPORT, SPANS_PER_TRACE } from "./otlp-payload.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const VENV = path.join(ROOT, "deploy/.cache/phoenix-venv");
const EXPORTS = Number(process.env.BENCH_EXPORTS ?? 30);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);

interface Target {
  readonly name: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly pid: number;
  /** Spans of the trace that the server's read API returns. */
  count(traceId: string): Promise<number>;
}

function ensureVenv(): void {
  if (existsSync(path.join(VENV, "bin/phoenix"))) return;
  console.log(`making ${VENV} with arize-phoenix (once; a few minutes)…`);
  const steps: [string, string[]][] = [["python3", ["-m", "venv", VENV]], [path.join(VENV, "bin/pip"), ["install", "-q", "--disable-pip-version-check", "arize-phoenix"]]];
  for (const [cmd, args] of steps) {
    const r = spawnSync(cmd, args, { stdio: "inherit" });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed`);
  }
}

const getJson = async (url: string, headers: Record<string, string> = {}) => {
  const r = await fetch(url, { headers });
  return r.ok ? r.json() : undefined;
};

async function startPhoenix(): Promise<{ target: Target; stop: () => Promise<void> }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "phoenix-bench-"));
  const port = await freePort();
  const proc = spawn(path.join(VENV, "bin/phoenix"), ["serve"], {
    env: { ...process.env, PHOENIX_WORKING_DIR: dir, PHOENIX_PORT: String(port), PHOENIX_GRPC_PORT: String(await freePort()), PHOENIX_HOST: "127.0.0.1" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  proc.stderr!.on("data", (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; !(await fetch(`${base}/healthz`).then((r) => r.ok, () => false)); i++) {
    if (i > 1200 || proc.exitCode !== null) throw new Error(`phoenix did not start:\n${log.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    target: {
      name: "Phoenix", url: `${base}/v1/traces`, headers: {}, pid: proc.pid!,
      count: async (traceId) => ((await getJson(`${base}/v1/projects/default/spans?trace_id=${traceId}&limit=100`)) as { data?: unknown[] } | undefined)?.data?.length ?? 0,
    },
    stop: async () => {
      proc.kill("SIGTERM");
      await new Promise((r) => proc.once("exit", r));
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const post = (t: Target, body: Uint8Array) =>
  new Promise<number>((resolve) => {
    const req = http.request(t.url, { method: "POST", agent, headers: { ...t.headers, "content-type": "application/x-protobuf", "content-length": body.byteLength } },
      (res) => { res.resume(); res.on("end", () => resolve(res.statusCode ?? 0)); });
    req.on("error", () => resolve(0));
    req.end(body);
  });

async function measure(t: Target, exports: { spans: SpanSpec[]; body: Uint8Array }[]): Promise<string> {
  let next = 0, ok = 0, failed = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < exports.length) {
      const status = await post(t, exports[next++]!.body);
      if (status === 200) ok++;
      else failed++;
    }
  }));
  const acked = performance.now();
  const last = exports.at(-1)!.spans.at(-1)!.traceId;
  while ((await t.count(last)) < SPANS_PER_TRACE) {
    if (performance.now() - acked > 900_000) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const visible = performance.now() - acked;
  const rate = (ok * SPANS_PER_EXPORT) / ((acked - t0) / 1000);
  return `${t.name.padEnd(9)} ${Math.round(rate).toLocaleString("en").padStart(8)} spans/s acknowledged` +
    `   the last trace readable ${(visible / 1000).toFixed(1)} s after the last ack   RSS ${(await rssMiB(t.pid)).toFixed(0)} MiB` +
    (failed ? `   (${failed} exports failed)` : "");
}

async function main() {
  ensureVenv();
  const phoenix = await startPhoenix();
  const runwatch = await startLiveServer("web,pipeline,gateway");
  try {
    const rw: Target = {
      name: "Runwatch", url: `${runwatch.base}/v1/traces`, headers: { authorization: `Bearer ${runwatch.key}` }, pid: runwatch.pid,
      count: async (traceId) => ((await getJson(`${runwatch.base}/api/runs/${traceId}/spans`, { authorization: `Bearer ${runwatch.key}` })) as { spans?: unknown[] } | undefined)?.spans?.length ?? 0,
    };
    console.log(`Phoenix vs Runwatch: ${EXPORTS} OTLP/HTTP protobuf exports of ${SPANS_PER_EXPORT} spans (${(EXPORTS * SPANS_PER_EXPORT).toLocaleString("en")} spans), ${CONCURRENCY} in flight, ${os.cpus().length} cores`);
    // Runwatch first: Phoenix keeps working through its queue long after its acks, which would slow the other.
    for (const t of [rw, phoenix.target]) {
      const make = () => Array.from({ length: EXPORTS }, () => { const spans = exportSpans(); return { spans, body: exportProtobuf(spans) }; });
      await measure(t, make().slice(0, 2)); // warm-up
      console.log(await measure(t, make()));
    }
  } finally {
    agent.destroy();
    await Promise.allSettled([runwatch.stop(), phoenix.stop()]);
  }
}

await main();
