/**
 * A run's tags, metadata, end user, environment and release: what the client sends (over a loopback ingest server)
 * from client.run options, run.addTags / setMetadata and the LangChain.js handler (a real LangGraph.js graph whose
 * model calls the fake LLM on loopback), and how values beyond the server's bounds are cut and reported; then what a
 * real Runwatch server keeps of them (GET /api/runs/{id}).
 */
import { Annotation, Command, END, MemorySaver, START, StateGraph, interrupt } from "@langchain/langgraph";
import { RunnableLambda } from "@langchain/core/runnables";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Runwatch, RunwatchError } from "../src/index.js";
import { CallbackHandler } from "../src/langchain.js";
import { HttpChatModel, startFakeLlm, type FakeLlm } from "./fake-llm.js";
import { LoopbackServer } from "./loopback.js";
import { startRealServer, waitForRun, type RealServer } from "./real-server.js";

const KEYS = ["tags", "metadata", "end_user", "environment", "release"] as const;
const attributes = (e: Record<string, unknown>) => Object.fromEntries(KEYS.filter((k) => k in e).map((k) => [k, e[k]]));
const ofRun = (server: LoopbackServer, id: string): any[] => server.accepted.filter((e) => e.sdk_run_id === id);

let server: LoopbackServer;
let llm: FakeLlm;
const errors: RunwatchError[] = [];
const clients: Runwatch[] = [];
const makeClient = (extra: ConstructorParameters<typeof Runwatch>[0] = {}): Runwatch => {
  const c = new Runwatch({ apiKey: "e".repeat(64), baseUrl: server.url, flushIntervalMs: 20, onError: (e) => errors.push(e), ...extra });
  clients.push(c);
  return c;
};

beforeEach(async () => {
  server = await new LoopbackServer().start();
  llm = await startFakeLlm();
  errors.length = 0;
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.shutdown(1000)));
  await server.stop();
  await llm.close();
});

describe("run attributes on the wire", () => {
  it("run_start carries them all; addTags / setMetadata go with the next event only", async () => {
    const client = makeClient();
    const run = client.startRun({
      agentName: "refund-agent",
      sdkRunId: "attrs-1",
      input: { q: "refund?" },
      tags: ["vip", "beta", "vip"],
      metadata: { customer: "acme", tier: 2, score: 0.5, trial: false, plan: { seats: 3 }, gone: null, missing: undefined },
      endUser: "cust-42",
      environment: "production",
      release: "v1.2.3",
      startFields: { experiment_id: "exp-1" },
    });
    await run.step("plan", async () => {
      run.addTags("escalated", "vip");
      run.setMetadata({ tier: 3, region: "eu" });
    });
    await run.toolCall("lookup", "x", () => "y");
    run.end("done");
    expect(await client.flush(5000)).toBe(true);
    const [start, planStart, planEnd, toolStart, toolEnd, end] = ofRun(server, "attrs-1");
    expect(attributes(start)).toEqual({
      tags: ["vip", "beta"],
      metadata: { customer: "acme", tier: 2, score: 0.5, trial: false, plan: '{"seats":3}' },
      end_user: "cust-42",
      environment: "production",
      release: "v1.2.3",
    });
    expect(start.payload).toEqual({ experiment_id: "exp-1", framework: "custom", input: { q: "refund?" } });
    expect(attributes(planStart)).toEqual({});
    expect(attributes(planEnd)).toEqual({ tags: ["escalated"], metadata: { tier: 3, region: "eu" } });
    expect([toolStart, toolEnd, end].map(attributes)).toEqual([{}, {}, {}]);
    expect(run.tags).toEqual(["vip", "beta", "escalated"]);
    expect(run.metadata).toMatchObject({ tier: 3, plan: '{"seats":3}' });
    expect(errors).toEqual([]);
  });

  it("a run without attributes sends none; the client's environment and release are every run's default", async () => {
    const plain = makeClient();
    await plain.run({ agentName: "plain", sdkRunId: "attrs-none", tags: [], metadata: {}, endUser: "" }, () => "ok");
    process.env.RUNWATCH_ENVIRONMENT = "staging";
    process.env.RUNWATCH_RELEASE = "build-7";
    try {
      const fromEnv = makeClient();
      await fromEnv.run({ agentName: "a", sdkRunId: "attrs-env" }, () => 1);
      await fromEnv.run({ agentName: "a", sdkRunId: "attrs-own", environment: "production" }, () => 1);
      const own = makeClient({ environment: "qa", release: "r1" });
      await own.run({ agentName: "a", sdkRunId: "attrs-client" }, () => 1);
    } finally {
      delete process.env.RUNWATCH_ENVIRONMENT;
      delete process.env.RUNWATCH_RELEASE;
    }
    await Promise.all(clients.map((c) => c.flush(5000)));
    expect(ofRun(server, "attrs-none").map(attributes)).toEqual([{}, {}]);
    expect(attributes(ofRun(server, "attrs-env")[0])).toEqual({ environment: "staging", release: "build-7" });
    expect(attributes(ofRun(server, "attrs-own")[0])).toEqual({ environment: "production", release: "build-7" });
    expect(attributes(ofRun(server, "attrs-client")[0])).toEqual({ environment: "qa", release: "r1" });
  });

  it("values beyond the server's bounds are cut and reported (code invalid), never thrown", async () => {
    const client = makeClient();
    const run = client.startRun({
      agentName: "bounded",
      sdkRunId: "attrs-cut",
      tags: [...Array.from({ length: 60 }, (_, i) => `t${i}`), "x".repeat(250)],
      metadata: { ...Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`k${i}`, i])), ["y".repeat(300)]: "v" },
      endUser: "u".repeat(300),
      environment: "e".repeat(150),
      release: "r".repeat(300),
    });
    run.setMetadata({ k0: "again", late: Number.NaN });
    run.addTags("late");
    run.end();
    run.addTags("after-end");
    const long = client.startRun({ agentName: "long", sdkRunId: "attrs-long", tags: ["x".repeat(250)] });
    long.setMetadata({ text: "z".repeat(2000), bad: Number.POSITIVE_INFINITY, big: 10n });
    long.end();
    expect(await client.flush(5000)).toBe(true);
    const [start, end] = ofRun(server, "attrs-cut");
    expect(start.tags).toEqual(Array.from({ length: 50 }, (_, i) => `t${i}`)); // a run keeps 50 tags, as the server does
    expect(Object.keys(start.metadata)).toEqual(Array.from({ length: 64 }, (_, i) => `k${i}`)); // and 64 keys
    expect([start.end_user.length, start.environment.length, start.release.length]).toEqual([200, 100, 200]);
    expect(attributes(end)).toEqual({ metadata: { k0: "again" } }); // a known key may change; new ones past 64 are left out
    const [longStart, longEnd] = ofRun(server, "attrs-long");
    expect(longStart.tags).toEqual(["x".repeat(200)]);
    expect(longEnd.metadata).toEqual({ text: "z".repeat(1024), bad: "Infinity", big: "10" });
    const messages = errors.map((e) => `${e.code}: ${e.message}`);
    expect(messages).toEqual(expect.arrayContaining([
      'invalid: run attrs-cut has 50 tags, the most a run keeps; left out: "t50", "t51", "t52", "t53", "t54" and 6 more',
      'invalid: run attrs-cut has 64 metadata keys, the most a run keeps; left out: "late"',
      "invalid: endUser is 300 characters long; cut to 200",
      "invalid: environment is 150 characters long; cut to 100",
      "invalid: run attrs-cut has ended; tags and metadata added now are not sent",
      "invalid: a metadata value is 2000 characters long; cut to 1024",
    ]));
  });

  it("values of the wrong kind are left out and reported; the run goes on", async () => {
    const client = makeClient();
    const out = await client.run(
      { agentName: "loose", sdkRunId: "attrs-kind", tags: ["ok", 42, null] as any, metadata: ["k", "v"] as any, endUser: 1234 as any, release: { v: 1 } as any },
      (run) => {
        run.addTags(undefined as any, "fine");
        run.setMetadata("nope" as any);
        return "still runs";
      },
    );
    expect(out).toBe("still runs");
    await client.flush(5000);
    const [start, end] = ofRun(server, "attrs-kind");
    expect(attributes(start)).toEqual({ tags: ["ok"], end_user: "1234" });
    expect(attributes(end)).toEqual({ tags: ["fine"] });
    expect(errors.map((e) => e.message)).toEqual([
      "release must be a string, not object; left out",
      "tags[1] must be a string, not number; left out",
      "tags[2] must be a string, not null; left out",
      "metadata must be an object, not an array; left out",
      "tags[0] must be a string, not undefined; left out",
      "metadata must be an object, not string; left out",
    ]);
  });
});

const Ticket = Annotation.Root({ question: Annotation<string>(), answer: Annotation<string>(), verdict: Annotation<string>() });
const INTERNAL_TAG = /^(seq:step:|graph:step:|langsmith:)/;
const INTERNAL_KEY = /^(thread_id|checkpoint_ns|ls_integration|langgraph_\w+|runwatch_\w+)$/;

/** respond (a chat model over HTTP: the fake LLM) → review (interrupt) → END. */
function ticketGraph(llmUrl: string) {
  const model = new HttpChatModel(llmUrl);
  return new StateGraph(Ticket)
    .addNode("respond", async (s) => ({ answer: String((await model.invoke(s.question)).content) }))
    .addNode("review", async (s) => ({ verdict: String(interrupt({ question: "Send it?", draft: s.answer })) }))
    .addEdge(START, "respond")
    .addEdge("respond", "review")
    .addEdge("review", END)
    .compile({ checkpointer: new MemorySaver(), name: "refund-graph" });
}

function expectNoInternalAttributes(events: any[]): void {
  for (const e of events) {
    expect((e.tags ?? []).filter((t: string) => INTERNAL_TAG.test(t))).toEqual([]);
    expect(Object.keys(e.metadata ?? {}).filter((k) => INTERNAL_KEY.test(k))).toEqual([]);
  }
}

describe("runwatch/langchain: the config's own tags and metadata are the run's", () => {
  it("a LangGraph.js graph: run_start carries them, the resume adds its own, nodes and model calls add nothing", async () => {
    const client = makeClient();
    const handler = new CallbackHandler({ client });
    const threadId = `attrs-thread-${Date.now()}`;
    const config = { configurable: { thread_id: threadId }, callbacks: [handler], tags: ["vip", "beta"], metadata: { customer: "acme", tier: 2, beta: true, limits: { max: 3 } } };
    const graph = ticketGraph(llm.url);
    const first = await graph.invoke({ question: "Can I get a refund?" }, config);
    expect(first.answer).toBe("Can I get a refund?"); // the fake LLM echoes the question
    const runId = handler.sdkRunIdFor(threadId)!;
    const final = await graph.invoke(new Command({ resume: "yes" }), { ...config, tags: ["vip", "resumed"], metadata: { reviewer: "lead" } });
    expect(final.verdict).toBe("yes");
    expect(await client.flush(5000)).toBe(true);
    const events = ofRun(server, runId);
    expect(server.accepted.every((e) => e.sdk_run_id === runId)).toBe(true); // the resume continued the paused run
    expect(events.filter((e) => e.event_type !== "step").map((e) => e.event_type)).toEqual(["run_start", "human_input_requested", "human_input_received", "run_end"]);
    const [start] = events;
    expect(start.payload.framework).toBe("langgraph");
    expect(attributes(start)).toEqual({ tags: ["vip", "beta"], metadata: { customer: "acme", tier: 2, beta: true, limits: '{"max":3}' } });
    const received = events.find((e) => e.event_type === "human_input_received");
    expect(attributes(received)).toEqual({ tags: ["resumed"], metadata: { reviewer: "lead" } });
    expect(events.filter((e) => e !== start && e !== received).map(attributes).every((a) => Object.keys(a).length === 0)).toBe(true);
    expect(events.some((e) => e.payload.kind === "llm")).toBe(true); // the model call went through the fake LLM
    expectNoInternalAttributes(server.accepted);
  });

  it("an LCEL chain's config tags and metadata; inside client.run they go to that run", async () => {
    const client = makeClient();
    const handler = new CallbackHandler({ client });
    const chain = RunnableLambda.from((x: number) => x + 1).pipe(RunnableLambda.from((x: number) => x * 2));
    expect(await chain.invoke(1, { callbacks: [handler], tags: ["lcel"], metadata: { k: "v" }, runName: "math" })).toBe(4);
    await client.run({ agentName: "outer", sdkRunId: "attrs-outer" }, () => chain.invoke(1, { callbacks: [handler], tags: ["inside"] }));
    await client.flush(5000);
    const math = server.accepted.find((e) => e.event_type === "run_start" && e.agent_name === "math");
    expect(attributes(math)).toEqual({ tags: ["lcel"], metadata: { k: "v" } });
    const outer = ofRun(server, "attrs-outer");
    expect(attributes(outer[0])).toEqual({});
    expect(attributes(outer.at(-1))).toEqual({ tags: ["inside"] }); // run_end: the run's next event
    expectNoInternalAttributes(server.accepted);
  });
});

describe("against a real Runwatch server: GET /api/runs/{id} reads back what the client sent", () => {
  let real: RealServer;
  beforeAll(async () => {
    real = await startRealServer();
  }, 120_000);
  afterAll(async () => {
    await real?.stop();
  });
  const realClient = (extra: ConstructorParameters<typeof Runwatch>[0] = {}) => makeClient({ baseUrl: real.url, apiKey: real.key, ...extra });

  it("run options, setMetadata during the run and values past the bounds: kept, nothing refused", async () => {
    const client = realClient({ release: "v1.2.3" });
    const sdkRunId = `js-attrs-${Date.now()}`;
    const many = Array.from({ length: 60 }, (_, i) => `t${String(i).padStart(2, "0")}`);
    await client.run(
      {
        agentName: "js-attrs-agent",
        sdkRunId,
        input: { q: "refund?" },
        tags: ["vip", "beta", ...many], // past the server's bounds on purpose: the client cuts them
        metadata: { customer: "acme", tier: 2, score: 0.5, trial: false, plan: { seats: 3 } },
        endUser: "cust-" + "😀".repeat(150),
        environment: "production",
      },
      async (run) => {
        await run.step("plan", () => run.setMetadata({ tier: 3, region: "eu" }));
        return "ok";
      },
    );
    expect(await client.flush(10_000)).toBe(true);
    const { run } = await waitForRun(real, sdkRunId, (v) => v.run.status === "success");
    expect(client.stats.rejected).toBe(0);
    expect(run.tags).toEqual(["vip", "beta", ...many.slice(0, 48)].sort());
    expect(run.metadata).toEqual({ customer: "acme", tier: 3, score: 0.5, trial: false, plan: '{"seats":3}', region: "eu" });
    expect(run.end_user).toBe("cust-" + "😀".repeat(97)); // 200 UTF-16 code units, no half surrogate pair
    expect([run.environment, run.release]).toEqual(["production", "v1.2.3"]);
  });

  it("a LangGraph.js graph's config tags and metadata, and its resume's, are the run's", async () => {
    const client = realClient({ environment: "staging" });
    const handler = new CallbackHandler({ client });
    const threadId = `js-attrs-thread-${Date.now()}`;
    const config = { configurable: { thread_id: threadId }, callbacks: [handler], tags: ["vip", "beta"], metadata: { customer: "acme", tier: 2, beta: true, limits: { max: 3 } } };
    const graph = ticketGraph(llm.url);
    await graph.invoke({ question: "Can I get a refund?" }, config);
    const sdkRunId = handler.sdkRunIdFor(threadId)!;
    expect(await client.flush(10_000)).toBe(true);
    await waitForRun(real, sdkRunId, (v) => v.run.status === "waiting_for_input");
    await graph.invoke(new Command({ resume: "yes" }), { ...config, tags: ["resumed"], metadata: { reviewer: "lead" } });
    expect(await client.flush(10_000)).toBe(true);
    const { run } = await waitForRun(real, sdkRunId, (v) => v.run.status === "success");
    expect(run.session_id).toBe(threadId);
    expect(run.tags).toEqual(["beta", "resumed", "vip"]);
    expect(run.metadata).toEqual({ customer: "acme", tier: 2, beta: true, limits: '{"max":3}', reviewer: "lead" });
    expect([run.end_user, run.environment, run.release]).toEqual([null, "staging", null]);
    expect(run.llm_calls).toBe(1); // the model call reached the fake LLM and was reported
    expect(client.stats.rejected).toBe(0);
  });
});
