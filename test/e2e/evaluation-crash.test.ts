/**
 * Evaluation jobs survive a crash (docs/EVALUATION.md, Online rules): `runwatch start` as a child process judging 40
 * runs through its agents-service and a slow fake OpenAI server on loopback; kill -9 while judge calls are in flight;
 * restart on the same data dir: every run is judged, none is lost, and each has exactly one score of the rule and
 * one judge run, however often its job ran.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../clients/js/test/fake-llm.js";
import { bearer, childServerWithAccount, json, ownPostgres, startChildServer } from "./harness.js";

const children = new Set<ChildProcess>();
const dirs: string[] = [];
let llm: FakeLlm | undefined;
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  await llm?.close();
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

describe("evaluation jobs across a crash", () => {
  it("kill -9 while judging: every run judged after the restart, each exactly once", async () => {
    llm = await startFakeLlm(300);
    const server = await childServerWithAccount("evalcrash", {
      OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-test", RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000",
      RUNWATCH_EVALUATION_CONCURRENCY: "4", RUNWATCH_EVALUATION_POLL_MS: "100", RUNWATCH_EVALUATION_LEASE_S: "3",
      ...(await ownPostgres("evalcrash")),
    }, children, dirs);
    const { url, key } = server;
    const post = async (path: string, body: unknown) => (await fetch(`${url}${path}`, json(key, body))).json() as Promise<any>;
    const get = async (path: string) => (await fetch(`${url}${path}`, bearer(key))).json() as Promise<any>;

    const evaluator = (await post("/api/evaluators", { name: "correct", type: "llm_judge", provider: "openai", prompt: "Correct? {{output}}", output: { type: "boolean" } })).evaluator;
    expect((await post("/api/evaluation-rules", { evaluator_id: evaluator.id, filter: { agent_name: "crash-bot" }, sampling: 1 })).rule.id).toBeTruthy();
    const ids = Array.from({ length: 40 }, (_, i) => `ec-${i}`);
    const events = ids.flatMap((id, i) => [
      { event_type: "run_start", sdk_run_id: id, agent_name: "crash-bot", payload: { input: i } },
      { event_type: "run_end", sdk_run_id: id, payload: { output: `answer ${i}` } },
    ]);
    expect((await post("/api/ingest/batch", { events })).accepted).toBe(80);

    const totals = async () => (await get(`/api/evaluators/${evaluator.id}`)).totals as { done: number; pending: number; retrying: number; failed: number };
    for (let i = 0; i < 300 && (await totals()).done < 8; i++) await new Promise((r) => setTimeout(r, 100));
    const before = await totals();
    expect(before.done).toBeGreaterThanOrEqual(8);
    expect(before.done).toBeLessThan(40); // judge calls still in flight
    server.child.kill("SIGKILL");
    await new Promise<void>((r) => (server.child.exitCode !== null || server.child.signalCode !== null ? r() : server.child.once("exit", () => r())));

    await startChildServer(server.env, url, children);
    let after = await totals();
    for (let i = 0; i < 600 && after.done < 40; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await totals();
    }
    expect(after).toMatchObject({ done: 40, failed: 0, pending: 0, retrying: 0 });
    for (const id of ids) {
      const scores = (await get(`/api/runs/${id}/scores`)).scores as { name: string; judge_run: string }[];
      expect([id, scores.length, scores[0]?.name]).toEqual([id, 1, "correct"]);
    }
    // One judge run per judged run, each ended once.
    const judged = [];
    for (let cursor: string | null = ""; cursor !== null;) {
      const page: { runs: { status: string }[]; next_cursor: string | null } = await get(`/api/runs?agent_name=runwatch-judge&limit=100${cursor ? `&cursor=${cursor}` : ""}`);
      judged.push(...page.runs);
      cursor = page.next_cursor;
    }
    expect(judged.length).toBe(40);
    expect(judged.every((r) => r.status === "success")).toBe(true);
    console.log(`evaluation crash: ${before.done} judged before kill -9, 40 after the restart; the fake LLM answered ${llm.calls} judge calls`);
  }, 180_000);
});
