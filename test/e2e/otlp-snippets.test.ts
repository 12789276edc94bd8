/**
 * docs/OTEL.md's snippets for all three signals, run as shown (test/e2e/otel-snippets/) with the variables the page
 * sets, by Node.js and by the Python SDK (clients/python/.venv): the span is stored, its records show on it, the
 * evaluation is a score, and the metric export is answered without failing the program.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, startTestServer, until, waitForRun, type TestAccount, type TestServer } from "./harness.js";

const ROOT = path.join(import.meta.dirname, "..", "..");
const SNIPPETS = path.join(import.meta.dirname, "otel-snippets");
const PYTHON = path.join(ROOT, "clients", "python", ".venv", "bin", "python");
const docs = readFileSync(path.join(ROOT, "docs", "OTEL.md"), "utf8");

let srv: TestServer;
let acct: TestAccount;
beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  acct = await srv.account();
});
afterAll(async () => {
  await srv?.close();
});

function run(cmd: string, file: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(cmd, [path.join(SNIPPETS, file)], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "",
      OTEL_EXPORTER_OTLP_ENDPOINT: srv.url,
      OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${acct.key}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    },
  });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, output })));
}

async function checkStored(output: string): Promise<void> {
  const traceId = /\b([0-9a-f]{32})\b/.exec(output)?.[1];
  expect(traceId, output).toBeDefined();
  await waitForRun(srv.url, acct.key, traceId!, (b) => b.run.status === "success");
  const tree = (await (await fetch(`${srv.url}/api/runs/${traceId}/spans`, bearer(acct.key))).json()) as { spans: { span_id: string }[] };
  const spanId = tree.spans[0]!.span_id;
  const span = await until("the span's records and score", async () => (await fetch(`${srv.url}/api/runs/${traceId}/spans/${spanId}`, bearer(acct.key))).json() as Promise<Record<string, any>>,
    (s) => s.logs?.length === 3 && s.scores?.length === 1);
  expect(span.input).toEqual([{ role: "user", content: "Where is my order?" }]);
  expect(span.scores[0]).toMatchObject({ name: "relevance", value: 0.9, source: "otel" });
  expect(span.logs.map((l: any) => l.body)).toContain("order service answered in 120 ms");
}

describe("docs/OTEL.md: traces, logs and metrics snippets", () => {
  it("shows each snippet as it is", () => {
    for (const file of ["signals.mjs", "signals.py"]) expect(docs.includes(readFileSync(path.join(SNIPPETS, file), "utf8").trimEnd()), file).toBe(true);
  });

  it("the Node.js snippet exports all three signals", async () => {
    const out = await run(process.execPath, "signals.mjs");
    expect(out.code, out.output).toBe(0);
    await checkStored(out.output);
  });

  it.skipIf(!existsSync(PYTHON))("the Python snippet exports all three signals", async () => {
    const out = await run(PYTHON, "signals.py");
    expect(out.code, out.output).toBe(0);
    await checkStored(out.output);
  });
});
