/**
 * Scale mode end to end, on the real servers (KAFKA_BROKERS, CLICKHOUSE_URL, DATABASE_URL, REDIS_URL):
 * 2 web, 2 pipeline and 2 gateway processes started with `runwatch start --role …` on loopback.
 * - events posted to either web process are stored once in ClickHouse, in order per run;
 * - a WebSocket client on either gateway receives them (Redis pub/sub from any pipeline worker);
 * - the rate limit is shared: one key gets 200 requests per minute in total across both web processes.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { exportProtobuf, hexId, traceExportClient } from "../e2e/otlp-fixtures.js";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { describeWith, eventually } from "./services.js";
import { startCluster, type Cluster } from "./cluster.js";
import { clickhouseFor, postJson, realtimeClient, runEvents, storedCounts } from "./helpers.js";

const ALL = ["KAFKA_BROKERS", "CLICKHOUSE_URL", "DATABASE_URL", "REDIS_URL"] as const;

describeWith(ALL, "scale mode: 2 web, 2 pipeline, 2 gateway processes", () => {
  let cluster: Cluster;
  let ch: ClickHouse;
  beforeAll(async () => {
    cluster = await startCluster({ roles: { web: 2, pipeline: 2, gateway: 2 } });
    ch = await clickhouseFor(cluster.env);
  }, 180_000);
  afterAll(async () => {
    await ch?.close();
    await cluster?.stop();
  });

  it("stores events posted to either web process once, in order per run, and pushes them to both gateways", async () => {
    const { userId, key } = cluster.createUserWithKey();
    const webs = cluster.byRole("web").map((p) => p.url!);
    const gateways = cluster.byRole("gateway").map((p) => p.url!);
    expect(webs).toHaveLength(2);
    expect(gateways).toHaveLength(2);
    const clients = await Promise.all(gateways.map((g) => realtimeClient(g, cluster.secret, userId)));

    const RUNS = 12;
    const PER_RUN = 40;
    // Each run's events go out in order, in requests that alternate between the two web processes:
    // single events and small batches, so both ingest paths and both processes carry every run.
    await Promise.all(Array.from({ length: RUNS }, async (_, r) => {
      const events = runEvents(`scale-run-${r}`, PER_RUN);
      for (let i = 0, req = 0; i < events.length; req++) {
        const web = webs[(r + req) % 2];
        if (req % 2 === 0) {
          const ack = await postJson(`${web}/api/ingest`, key, events[i]);
          expect(ack.status, JSON.stringify(ack.body)).toBe(202);
          i += 1;
        } else {
          const chunk = events.slice(i, i + 7);
          const ack = await postJson(`${web}/api/ingest/batch`, key, { events: chunk });
          expect(ack.status).toBe(207);
          expect(ack.body.results.every((x: { status: number }) => x.status === 202), JSON.stringify(ack.body)).toBe(true);
          i += chunk.length;
        }
      }
    }));
    const total = RUNS * PER_RUN;

    let last = { rows: 0, distinct: 0 };
    await eventually(`all ${total} events stored`, async () => (last = await storedCounts(ch, userId)).rows >= total, 120_000, 250)
      .catch((err) => { throw new Error(`${(err as Error).message}; stored ${JSON.stringify(last)}`); });
    expect(await storedCounts(ch, userId)).toEqual({ rows: total, distinct: total });

    for (let r = 0; r < RUNS; r++) {
      const res = await fetch(`${webs[r % 2]}/api/runs/scale-run-${r}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { run: { status: string; event_count: number }; events: { payload: { seq: number } }[] };
      expect(body.events.map((e) => e.payload.seq)).toEqual(Array.from({ length: PER_RUN }, (_, i) => i));
      expect(body.run.status).toBe("success");
      expect(body.run.event_count).toBe(PER_RUN);
    }

    // Both gateways delivered every event (whichever pipeline worker processed it), in order per run.
    for (const [i, c] of clients.entries()) {
      await eventually("gateway delivered all events", () => c.events.length >= total, 60_000).catch((err) => {
        const logs = cluster.procs.filter((p) => p.role !== "web").map((p) => `--- ${p.name}\n${p.output.slice(-15).join("\n")}`).join("\n");
        throw new Error(`${(err as Error).message}: gateway ${i + 1} client got ${c.events.length} of ${total} (socket ${c.state()})\n${logs}`);
      });
      const seqs = new Map<string, number[]>();
      for (const m of c.events) {
        expect(m.user_id).toBe(userId);
        const list = seqs.get(m.run.sdk_run_id) ?? [];
        list.push(m.event.payload.seq);
        seqs.set(m.run.sdk_run_id, list);
      }
      expect(seqs.size).toBe(RUNS);
      for (const list of seqs.values()) expect(list).toEqual(Array.from({ length: PER_RUN }, (_, i) => i));
      c.close();
    }
  }, 180_000);

  it("OTLP: a trace exported to both web processes (HTTP protobuf to one, gRPC to the other) goes through Kafka into one run", async () => {
    const { key } = cluster.createUserWithKey();
    const [a, b] = cluster.byRole("web");
    const traceId = hexId(16);
    const root = hexId(8);
    const t = Date.now() - 1000; // fixed times: the resent span is the very same span
    const llm = { traceId, spanId: hexId(8), parentSpanId: root, name: "chat gpt-4o", startMs: t + 10, endMs: t + 300, attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10 } };
    const http = await fetch(`${a!.url}/v1/traces`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/x-protobuf" }, body: exportProtobuf([llm]) as BodyInit });
    expect(http.status).toBe(200);
    const client = traceExportClient(`127.0.0.1:${b!.otlpGrpcPort}`);
    const rootSpan = { traceId, spanId: root, name: "invoke_agent scale-bot", startMs: t, endMs: t + 400, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "scale-bot" } };
    expect(await client.send(exportProtobuf([rootSpan, llm]), key)).toBeNull(); // llm resent: stored once
    client.close();
    let body: { run: Record<string, unknown>; events: unknown[] } | undefined;
    await eventually("the OTLP run is stored", async () => {
      const res = await fetch(`${b!.url}/api/runs/${traceId}`, { headers: { authorization: `Bearer ${key}` } });
      body = res.status === 200 ? ((await res.json()) as typeof body) : undefined;
      return body?.run.status === "success" && body.run.llm_calls === 1;
    }, 60_000, 250).catch((err: Error) => { throw new Error(`${err.message}: ${JSON.stringify(body)}`); });
    expect(body!.run).toMatchObject({ agent_name: "scale-bot", prompt_tokens: 100, event_count: 4 });
  }, 90_000);

  it("shares the rate limit across web processes: a key gets 200 requests per minute in total", async () => {
    const { key } = cluster.createUserWithKey();
    const webs = cluster.byRole("web").map((p) => p.url!);
    const acks = await Promise.all(Array.from({ length: 260 }, (_, i) =>
      postJson(`${webs[i % 2]}/api/ingest`, key, { event_type: "step", sdk_run_id: `rl-${i % 10}`, payload: { node_name: "n", phase: "start" } })));
    const ok = acks.filter((a) => a.status === 202);
    const limited = acks.filter((a) => a.status === 429);
    expect(ok).toHaveLength(200);
    expect(limited).toHaveLength(60);
    for (const a of limited) {
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
      expect(a.body.error.code).toBeTypeOf("string");
    }
  }, 120_000);
});
