/** Shared pieces of the multi-process scale tests: ingest over HTTP, ClickHouse checks, WebSocket clients. */
import WebSocket from "ws";
import { openClickHouseServer } from "../../core/clickhouse/server.js";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { REALTIME_SUBPROTOCOL, signRealtimeToken, TOKEN_PROTOCOL_PREFIX } from "../../core/tokens.js";

export interface Ack { status: number; retryAfter: string | null; body: any }

export async function postJson(url: string, key: string, body: unknown): Promise<Ack> {
  const res = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: parsed };
}

/** A run's events: run_start, n-2 steps carrying `seq`, run_end. */
export function runEvents(sdkRunId: string, n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) =>
    i === 0
      ? { event_type: "run_start", sdk_run_id: sdkRunId, agent_name: "scale-agent", payload: { seq: i, framework: "test" } }
      : i === n - 1
        ? { event_type: "run_end", sdk_run_id: sdkRunId, payload: { seq: i, total_tokens: 10, cost_usd: 0.001, model: "gpt-4o-mini" } }
        : { event_type: "step", sdk_run_id: sdkRunId, payload: { seq: i, node_name: `node-${i % 5}`, phase: i % 2 ? "start" : "end" } },
  );
}

export async function clickhouseFor(env: NodeJS.ProcessEnv): Promise<ClickHouse> {
  return openClickHouseServer(env.CLICKHOUSE_URL!, env.CLICKHOUSE_DATABASE!);
}

/** Stored events of a user: total rows after dedup (FINAL) and distinct event ids. */
export async function storedCounts(ch: ClickHouse, userId: number): Promise<{ rows: number; distinct: number }> {
  const [r] = await ch.query<{ rows: string; distinct: string }>(
    "SELECT count() AS rows, uniqExact(event_id) AS distinct FROM agent_events FINAL WHERE user_id = {uid:UInt64}",
    { uid: userId },
  );
  return { rows: Number(r.rows), distinct: Number(r.distinct) };
}

/**
 * A browser-less realtime client: subscribes to user.{id} on a gateway and collects the events of its "events"
 * messages, one entry per event: {user_id, run, event}.
 */
export async function realtimeClient(gatewayUrl: string, secret: string, userId: number) {
  const { token } = signRealtimeToken(secret, userId, `scale-test-session-${userId}-0000`, 600);
  const ws = new WebSocket(`${gatewayUrl}/ws`, [REALTIME_SUBPROTOCOL, `${TOKEN_PROTOCOL_PREFIX}${token}`]);
  const events: any[] = [];
  let subscribed!: () => void;
  const ready = new Promise<void>((r) => { subscribed = r; });
  ws.on("message", (data) => {
    const msg = JSON.parse(String(data));
    if (msg.type === "hello") ws.send(JSON.stringify({ type: "subscribe", channel: `user.${userId}` }));
    else if (msg.type === "subscribed") subscribed();
    else if (msg.type === "events") for (const r of msg.runs) for (const event of r.events) events.push({ user_id: msg.user_id, run: r.run, event });
  });
  await new Promise<void>((resolve, reject) => { ws.once("open", () => resolve()); ws.once("error", reject); });
  await Promise.race([ready, new Promise((_, rej) => setTimeout(() => rej(new Error("no subscribed frame")), 10_000))]);
  const closed: string[] = [];
  ws.on("close", (code, reason) => closed.push(`closed ${code} ${String(reason)}`));
  return { events, close: () => ws.close(), state: () => closed.join(", ") || "open" };
}
