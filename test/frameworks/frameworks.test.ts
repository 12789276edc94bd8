/**
 * Agent frameworks' own telemetry, end to end: each framework (installed at pinned versions, workspace.ts) runs the
 * snippet docs/OTEL.md shows — a small agent with one tool — against an OpenAI-compatible server on loopback
 * (fake-openai.ts), exporting OTLP to a Runwatch server; then the stored runs are checked as a user reads them:
 * the agent's name, the status, each LLM call's model and tokens equal to the usage the server sent (cached tokens
 * where the framework reports them), the tool span with its name, input and output under the agent, the cost, the
 * run's totals as the sum of its calls, and a failed run's error.
 *
 * The mapping does not depend on the storage mode, so CI's scale pass skips these (its embedded pass runs them).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, startTestServer, type TestAccount, type TestServer } from "../e2e/harness.js";
import { computeCost } from "../../plugins/prices.js";
import { FAIL_MARKER, startFakeOpenAI, type FakeOpenAI, type Usage } from "./fake-openai.js";
import { jsWorkspace, pythonVenv, snippet } from "./workspace.js";

const skip = process.env.RUNWATCH_TEST_SCALE_PASS === "1";
let srv: TestServer;
let llm: FakeOpenAI;
let python = ""; // frameworks on the openai 3 client
let python2 = ""; // frameworks that refuse it
let pythonAdk = ""; // Google ADK, on a newer OpenTelemetry SDK
let pythonCrew = ""; // CrewAI
let js = "";
let jsAi7 = "";

beforeAll(async () => {
  if (skip) return;
  [srv, llm] = await Promise.all([
    startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } }),
    startFakeOpenAI(),
  ]);
  [python, python2, pythonAdk, pythonCrew, js, jsAi7] = await Promise.all([
    pythonVenv("openai3"), pythonVenv("openai2"), pythonVenv("adk"), pythonVenv("crewai"), jsWorkspace(), jsWorkspace("js-ai7"),
  ]);
}, 900_000);
afterAll(async () => {
  await Promise.all([srv?.close(), llm?.close()]);
});

interface Outcome { readonly code: number | null; readonly output: string }

/** Runs a snippet as a user would, with the variables docs/OTEL.md sets, pointed at the test server and fake LLM. */
function runSnippet(account: TestAccount, cmd: string, args: readonly string[], cwd: string, env: Record<string, string> = {}): Promise<Outcome> {
  const child = spawn(cmd, args, {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "",
      OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-test",
      OTEL_EXPORTER_OTLP_ENDPOINT: srv.url,
      OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${account.key}`,
      ...env,
    },
  });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, output })));
}

type Json = Record<string, any>;
const get = async (account: TestAccount, url: string): Promise<Json> => {
  const r = await fetch(`${srv.url}${url}`, bearer(account.key));
  expect(r.status, url).toBe(200);
  return (await r.json()) as Json;
};

/** The account's runs once `count` of them have ended. */
async function endedRuns(account: TestAccount, count: number): Promise<Json[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { runs } = await get(account, "/api/runs?limit=50");
    const ended = (runs as Json[]).filter((r) => r.status === "success" || r.status === "error");
    if (ended.length >= count) return ended;
    if (Date.now() > deadline) throw new Error(`expected ${count} ended runs; got ${JSON.stringify(runs).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const spansOf = async (account: TestAccount, run: Json): Promise<Json[]> =>
  (await get(account, `/api/runs/${run.sdk_run_id}/spans?limit=1000`)).spans as Json[];

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-12 + 1e-9 * Math.abs(b);

/**
 * The checks every framework's successful run passes: the agent, the two LLM calls with the tokens the server sent
 * (`cached`: whether the framework reports cached tokens), their cost, the tool span under the agent, the totals.
 */
async function expectAgentRun(account: TestAccount, run: Json, sent: Usage[], opts: { cached: boolean; agent?: string }): Promise<void> {
  expect(run).toMatchObject({ agent_name: opts.agent ?? "support-bot", status: "success", llm_calls: 2 });
  const spans = await spansOf(account, run);
  const calls = spans.filter((s) => s.kind === "llm");
  expect(calls.map((c) => [c.model, c.prompt_tokens, c.completion_tokens])).toEqual(sent.map((u) => [u.model, u.input, u.output]));
  for (const [i, call] of calls.entries()) {
    const u = sent[i]!;
    if (opts.cached) expect(call.cached_tokens ?? 0).toBe(u.cached);
    const price = computeCost(u.model, u.input, u.output, undefined, opts.cached ? { cachedTokens: u.cached } : {})!;
    expect(close(call.cost_usd, price), `cost of call ${i}: ${call.cost_usd} vs ${price}`).toBe(true);
  }
  const tool = spans.find((s) => s.kind === "tool");
  expect(tool).toMatchObject({ name: "weather", status: "ok" });
  expect(tool!.input_preview).toContain("Paris");
  expect(tool!.output_preview).toContain("sunny");
  const parent = spans.find((s) => s.span_id === tool!.parent_span_id);
  expect(parent, "the tool span's parent").toBeDefined();
  expect(["agent", "chain", "step"]).toContain(parent!.kind);
  expect(run.prompt_tokens).toBe(sent.reduce((n, u) => n + u.input, 0));
  expect(run.completion_tokens).toBe(sent.reduce((n, u) => n + u.output, 0));
  expect(close(run.cost_usd, calls.reduce((n, c) => n + c.cost_usd, 0))).toBe(true);
}

/** A run that stays running (its root span never came) has a span that failed with the LLM server's error. */
async function expectFailedSpanOfOpenRun(account: TestAccount): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { runs } = await get(account, "/api/runs?limit=50");
    const open = (runs as Json[]).find((r) => r.status === "running");
    const failedSpan = open && (await spansOf(account, open)).find((s) => s.status === "error");
    if (failedSpan) return void expect(failedSpan.error).toMatch(/server had an error|500/);
    if (Date.now() > deadline) throw new Error(`no failed span in a running run: ${JSON.stringify(runs).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The run of the failed invocation: failed, named, with the LLM server's error. */
function expectFailedRun(runs: readonly Json[], agent = "support-bot"): void {
  const failed = runs.find((r) => r.status === "error");
  expect(failed, JSON.stringify(runs)).toMatchObject({ agent_name: agent });
  expect(failed!.last_error).toMatch(/server had an error|500/);
}

/** The AI SDK snippets' runs: generateText's, then streamText's (two calls each), and the failed one. */
async function expectGenerateAndStream(account: TestAccount, sent: Usage[]): Promise<void> {
  const runs = await endedRuns(account, 3);
  const ok = runs.filter((r) => r.status === "success").sort((a, b) => a.started_at.localeCompare(b.started_at));
  expect(ok).toHaveLength(2);
  expect(sent).toHaveLength(4);
  await expectAgentRun(account, ok[0]!, sent.slice(0, 2), { cached: true });
  await expectAgentRun(account, ok[1]!, sent.slice(2), { cached: true });
  expect((await spansOf(account, ok[0]!)).find((s) => s.kind === "llm")!.cached_tokens).toBeGreaterThan(0);
  expectFailedRun(runs);
}

/** Runs the snippet once as asked and once with a question the LLM server answers 500. */
async function tryFramework(cmd: string, args: readonly string[], cwd: string, env?: Record<string, string>) {
  const account = await srv.account();
  const before = llm.usages.length;
  const ok = await runSnippet(account, cmd, args, cwd, env);
  expect(ok.code, ok.output).toBe(0);
  const sent = llm.usages.slice(before);
  const failed = await runSnippet(account, cmd, [...args, `${FAIL_MARKER}: what is the weather?`], cwd, env);
  expect(failed.code, failed.output).not.toBe(0);
  return { account, sent };
}

const docs = readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "OTEL.md"), "utf8");

// Each test starts the framework twice (an interpreter and its imports: seconds) and waits for the export.
describe.skipIf(skip)("agent frameworks exporting OTLP to Runwatch", { timeout: 120_000 }, () => {
  it("docs/OTEL.md shows each tested snippet as it is", () => {
    const files = [
      "js/vercel-ai.mjs", "js/openai-agents.mjs", "python/pydantic_ai_agent.py", "python/openai_agents_agent.py", "python/openai_instrumentation_agent.py",
      "python/smolagents_agent.py", "python/strands_agent.py", "python/llama_index_agent.py", "python/google_adk_agent.py",
      "python/crewai_agent.py", "js/mastra.mjs", "js-ai7/vercel-ai-7.mjs",
    ];
    for (const file of files) {
      expect(docs.includes(snippet(file)), `${file} in docs/OTEL.md`).toBe(true);
    }
  });

  it("the Vercel AI SDK (generateText and streamText with a tool): the functionId names the agent, ai.toolCall is the tool, cached tokens price the call", async () => {
    const { account, sent } = await tryFramework(process.execPath, ["vercel-ai.mjs"], js);
    await expectGenerateAndStream(account, sent);
  });

  it.skipIf(Number(process.versions.node.split(".")[0]) < 22)("the Vercel AI SDK 7 (its OpenTelemetry integration, @ai-sdk/otel): the same run as with AI SDK 6", async () => {
    const { account, sent } = await tryFramework(process.execPath, ["vercel-ai-7.mjs"], jsAi7);
    await expectGenerateAndStream(account, sent);
  });

  // openai 7, which the JS Agents SDK uses, needs Node.js 22 or later.
  it.skipIf(Number(process.versions.node.split(".")[0]) < 22)("the OpenAI Agents SDK for JS through OpenInference: the agent named by its span; a failed run's agent span shows the error", async () => {
    const { account, sent } = await tryFramework(process.execPath, ["openai-agents.mjs"], js);
    const [ok] = await endedRuns(account, 1);
    await expectAgentRun(account, ok!, sent, { cached: true });
    // When run() throws, the instrumentation (0.2.15) exports the failed agent's spans but never the trace's root
    // span: the run stays running, its agent span failed with the error.
    await expectFailedSpanOfOpenRun(account);
  });

  // Mastra 1.x needs Node.js 22.13 or later.
  const [major, minor] = process.versions.node.split(".").map(Number);
  it.skipIf(major! < 22 || (major === 22 && minor! < 13))("Mastra (its own OpenTelemetry exporter): the agent, calls with cached tokens, the tool, a failed run's error", async () => {
    const { account, sent } = await tryFramework(process.execPath, ["mastra.mjs"], js);
    const runs = await endedRuns(account, 2);
    await expectAgentRun(account, runs.find((r) => r.status === "success")!, sent, { cached: true });
    expectFailedRun(runs);
  });

  it("Pydantic AI: the agent's name, its prompt and answer on the run, cached tokens", async () => {
    const { account, sent } = await tryFramework(python, [path.join(import.meta.dirname, "python", "pydantic_ai_agent.py")], import.meta.dirname);
    const runs = await endedRuns(account, 2);
    const ok = runs.find((r) => r.status === "success")!;
    await expectAgentRun(account, ok, sent, { cached: true });
    const { events } = await get(account, `/api/runs/${ok.sdk_run_id}`);
    expect((events as Json[]).find((e) => e.event_type === "run_start")!.payload.input).toContain("What is the weather in Paris?");
    expect((events as Json[]).find((e) => e.event_type === "run_end")!.payload.output).toContain("It is sunny in Paris.");
    expectFailedRun(runs);
  });

  it("the OpenAI Agents SDK through OpenInference: the agent span's failure fails the run although the workflow span is OK", async () => {
    const { account, sent } = await tryFramework(python, [path.join(import.meta.dirname, "python", "openai_agents_agent.py")], import.meta.dirname);
    const runs = await endedRuns(account, 2);
    await expectAgentRun(account, runs.find((r) => r.status === "success")!, sent, { cached: true });
    expectFailedRun(runs);
  });

  it("the OpenTelemetry OpenAI instrumentation (openai-v2) around a hand-written agent: calls, tokens and content", async () => {
    const env = { OTEL_SEMCONV_STABILITY_OPT_IN: "gen_ai_latest_experimental", OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "SPAN_ONLY" };
    const { account, sent } = await tryFramework(python, [path.join(import.meta.dirname, "python", "openai_instrumentation_agent.py")], import.meta.dirname, env);
    const runs = await endedRuns(account, 2);
    const ok = runs.find((r) => r.status === "success")!;
    // The instrumentation does not report cached tokens: its calls are priced at the full input rate.
    await expectAgentRun(account, ok, sent, { cached: false });
    const first = (await spansOf(account, ok)).find((s) => s.kind === "llm")!;
    expect(first.input_preview).toContain("What is the weather in Paris?");
    expect(runs.find((r) => r.status === "error")!.last_error).toMatch(/server had an error|500/);
  });

  it("smolagents through OpenInference: the agent named by its run span, tokens, the tool; a failed model call shows on its span", async () => {
    const { account, sent } = await tryFramework(python, [path.join(import.meta.dirname, "python", "smolagents_agent.py")], import.meta.dirname);
    const [ok] = await endedRuns(account, 1);
    // smolagents does not report cached tokens to its instrumentation.
    await expectAgentRun(account, ok!, sent, { cached: false, agent: "support_bot" });
    // On an exception the instrumentation (0.1.43) never ends the agent's run span: the run stays running, and only
    // the failed model call's span, exported, shows the error.
    await expectFailedSpanOfOpenRun(account);
  });

  it("Strands Agents (its own OpenTelemetry spans): messages and tool calls sent as span events", async () => {
    const env = { OTEL_SERVICE_NAME: "support-service" };
    const { account, sent } = await tryFramework(python2, [path.join(import.meta.dirname, "python", "strands_agent.py")], import.meta.dirname, env);
    const runs = await endedRuns(account, 2);
    const ok = runs.find((r) => r.status === "success")!;
    await expectAgentRun(account, ok, sent, { cached: true });
    const calls = (await spansOf(account, ok)).filter((s) => s.kind === "llm");
    expect(calls[0]!.input_preview).toContain("What is the weather in Paris?");
    expect(calls[1]!.output_preview).toContain("It is sunny in Paris.");
    expectFailedRun(runs);
  });

  it("Google ADK (its own OpenTelemetry spans) through LiteLLM: the agent, calls, tool arguments and results", async () => {
    // LiteLLM fetches its price map from GitHub at start unless told to use its own copy.
    const env = { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "SPAN_ONLY", LITELLM_LOCAL_MODEL_COST_MAP: "True" };
    const { account, sent } = await tryFramework(pythonAdk, [path.join(import.meta.dirname, "python", "google_adk_agent.py")], import.meta.dirname, env);
    const runs = await endedRuns(account, 2);
    const ok = runs.find((r) => r.status === "success")!;
    // The model as the agent names it to LiteLLM, provider prefix and all; priced as the model it names.
    await expectAgentRun(account, ok, sent.map((u) => ({ ...u, model: `openai/${u.model}` })), { cached: true, agent: "support_bot" });
    const calls = (await spansOf(account, ok)).filter((s) => s.kind === "llm");
    expect(calls[0]!.input_preview).toContain("What is the weather in Paris?");
    expect(calls[1]!.output_preview).toContain("It is sunny in Paris.");
    expectFailedRun(runs, "support_bot");
  });

  it("CrewAI through OpenInference (CrewAI's and OpenAI's instrumentations): the agent's role, calls, the tool", async () => {
    // CrewAI's own telemetry to its vendor stays off (no internet here, and not what this test is about).
    const env = { CREWAI_DISABLE_TELEMETRY: "true" };
    const { account, sent } = await tryFramework(pythonCrew, [path.join(import.meta.dirname, "python", "crewai_agent.py")], import.meta.dirname, env);
    const runs = await endedRuns(account, 2);
    const ok = runs.find((r) => r.status === "success")!;
    await expectAgentRun(account, ok, sent, { cached: true });
    expectFailedRun(runs);
  });

  it("LlamaIndex through OpenInference: the model calls and the tool; its streamed agent calls report no tokens", async () => {
    const { account } = await tryFramework(python2, [path.join(import.meta.dirname, "python", "llama_index_agent.py")], import.meta.dirname);
    const runs = await endedRuns(account, 2);
    const ok = runs.find((r) => r.status === "success")!;
    // No span names the agent (FunctionAgent.run is a CHAIN span): the run takes the service's name.
    expect(ok).toMatchObject({ agent_name: "support-service", prompt_tokens: 0 });
    const spans = await spansOf(account, ok);
    expect(spans.filter((s) => s.kind === "llm").every((s) => s.model === "gpt-4o-mini")).toBe(true);
    const tool = spans.find((s) => s.kind === "tool")!;
    expect(tool).toMatchObject({ name: "weather", status: "ok" });
    expect(tool.input_preview).toContain("Paris");
    expect(tool.output_preview).toContain("sunny");
    expect(runs.find((r) => r.status === "error")!.last_error).toMatch(/server had an error|500/);
  });
});
