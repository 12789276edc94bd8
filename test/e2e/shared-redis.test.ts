/**
 * Two deployments on one Redis (scale mode), each on a PostgreSQL database of its own, so their user and project ids
 * overlap: with different REDIS_PREFIXes one deployment's live messages never reach the other's dashboards, and a
 * user's rate limit is not spent by the other deployment's user of the same id (docs/SCALE.md, sharing servers).
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import { afterAll, expect, it } from "vitest";
import WebSocket from "ws";
import { describeWith } from "../scale/services.js";
import { childServerWithAccount, json, loginJar, ownPostgres, until } from "./harness.js";

const children = new Set<ChildProcess>();
const dirs: string[] = [];
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

/** The account's dashboard socket, subscribed to its project's channel, as web/static/live.js opens it. */
async function dashboardSocket(s: Awaited<ReturnType<typeof childServerWithAccount>>) {
  const gatewayPort = Number(s.env.RUNWATCH_GATEWAY_PORT);
  for (const end = Date.now() + 30_000; Date.now() < end;) {
    if (await fetch(`http://127.0.0.1:${gatewayPort}/health`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const jar = await loginJar(s.url, s.email);
  const token = await (await jar.fetch(`${s.url}/api/realtime/token`)).json() as { protocols: string[]; channel: string };
  const ws = new WebSocket(`ws://127.0.0.1:${gatewayPort}/ws`, token.protocols);
  const frames: string[] = [];
  ws.on("message", (d) => frames.push(d.toString()));
  const hasType = (type: string) => (all: string[]) => all.some((f) => JSON.parse(f).type === type);
  await until("hello", () => frames, hasType("hello"), 20_000);
  ws.send(JSON.stringify({ type: "subscribe", channel: token.channel }));
  await until("subscribed", () => frames, hasType("subscribed"), 20_000);
  return { ws, frames, channel: token.channel };
}

describeWith(["REDIS_URL", "DATABASE_URL"], "two deployments sharing one Redis, with their own REDIS_PREFIX", () => {
  it("a run of one deployment's project shows live on its own dashboard only, and the rate limits stay apart", async () => {
    const limit = { RUNWATCH_RATE_LIMIT_PER_MINUTE: "3" };
    const a = await childServerWithAccount("redisa", { ...(await ownPostgres("redisa")), ...limit }, children, dirs);
    const b = await childServerWithAccount("redisb", { ...(await ownPostgres("redisb")), ...limit }, children, dirs);
    expect(a.env.REDIS_PREFIX).not.toBe(b.env.REDIS_PREFIX);
    const [liveA, liveB] = [await dashboardSocket(a), await dashboardSocket(b)];
    // The overlap is real: each deployment's first project has the same id, so the same channel.
    expect(liveA.channel).toBe(liveB.channel);

    const run = `shared-redis-${Date.now()}`;
    const post = (s: typeof a, i: number) =>
      fetch(`${s.url}/api/ingest`, json(s.key, { event_type: "run_start", sdk_run_id: `${run}-${i}`, agent_name: "shared", payload: {} })).then((r) => r.status);
    expect(await post(a, 0)).toBe(202);
    await until("deployment A's run on A's dashboard", () => liveA.frames, (all) => all.some((f) => f.includes(`${run}-0`)), 20_000);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(liveB.frames.filter((f) => f.includes(run))).toEqual([]);

    // A's key spends its 3 a minute; B's key, the same key id in B's database, still has all of its own.
    expect([await post(a, 1), await post(a, 2), await post(a, 3)]).toEqual([202, 202, 429]);
    expect([await post(b, 1), await post(b, 2), await post(b, 3)]).toEqual([202, 202, 202]);
    liveA.ws.close();
    liveB.ws.close();
  }, 180_000);
});
