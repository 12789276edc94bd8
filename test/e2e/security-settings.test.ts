/**
 * Security rows that need a server configured otherwise than security.test.ts's (one chDB data dir per process,
 * so one server per file): registration closed, an https public URL (HSTS), small ingest budgets (row h).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startTestServer, type TestServer } from "./harness.js";

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({
    env: {
      RUNWATCH_REGISTRATION: "closed",
      RUNWATCH_PUBLIC_URL: "https://runwatch.example.com",
      RUNWATCH_RATE_LIMIT_PER_MINUTE: "100",
      RUNWATCH_USER_RATE_LIMIT_PER_MINUTE: "6",
    },
  });
});
afterAll(() => srv?.close());

const runStart = (i: number) => ({ event_type: "run_start", sdk_run_id: `k${i}`, agent_name: "a", payload: {} });

describe("registration closed", () => {
  it("RUNWATCH_REGISTRATION=closed: /register refuses with 403 (the CLI still creates accounts)", async () => {
    const page = await fetch(`${srv.url}/register`);
    expect(page.status).toBe(403);
    expect(await page.text()).toContain("Registration is closed");
    const post = await fetch(`${srv.url}/register`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "email=a%40b.co&name=A&password=long+enough&password_confirm=long+enough" });
    expect(post.status).toBe(403);
  });
});

describe("k: HSTS", () => {
  it("is sent when the public URL is https", async () => {
    expect((await fetch(`${srv.url}/login`)).headers.get("strict-transport-security")).toBe("max-age=31536000; includeSubDomains");
  });
});

describe("h: more keys do not buy more budget; guessing keys is throttled per IP", () => {
  it("a user's keys share one budget", async () => {
    const u = await srv.user();
    const keys = [await srv.key(u.id), await srv.key(u.id), await srv.key(u.id)];
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push((await fetch(`${srv.url}/api/ingest`, json(keys[i % 3]!, runStart(i)))).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 202, 429, 429, 429]);
  });

  it("30 failed key lookups a minute from one address, then 429 before any lookup", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 32; i++) statuses.push((await fetch(`${srv.url}/api/ingest`, json("f".repeat(63) + (i % 10), runStart(i)))).status);
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(30)).toEqual([429, 429]);
    const refused = await fetch(`${srv.url}/api/runs`, { headers: { authorization: `Bearer ${"e".repeat(64)}` } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBeTruthy();
  });
});
