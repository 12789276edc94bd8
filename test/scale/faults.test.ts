/**
 * Fault tests in scale mode, multi-process, against real servers:
 * - kill -9 of a pipeline worker during a load of 20,000 events: once it (and its peer) resume, every
 *   acknowledged event is stored exactly once and every run is complete and in order;
 * - Kafka stopped and restarted, then Redis, during load: the service recovers by itself and loses no
 *   acknowledged event (ingest may answer 503 + Retry-After while Kafka is down).
 * The second test runs its own Kafka and Redis (deploy/kafka.sh, deploy/redis.sh on free ports) so stopping
 * them does not disturb other suites.
 */
import { afterAll, expect, it } from "vitest";
import { describeWith, eventually, sleep } from "./services.js";
import { startCluster } from "./cluster.js";
import { clickhouseFor, postJson, runEvents, storedCounts } from "./helpers.js";
import { privateKafka, privateRedis, type PrivateServer } from "./private-servers.js";

const ALL = ["KAFKA_BROKERS", "CLICKHOUSE_URL", "DATABASE_URL", "REDIS_URL"] as const;
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => { for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => {}); });

describeWith(ALL, "scale mode faults", () => {
  it("kill -9 of a pipeline worker during 20,000 events: every acknowledged event stored exactly once", async () => {
    const cluster = await startCluster({ roles: { web: 2, pipeline: 2 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
    cleanups.push(() => cluster.stop());
    const ch = await clickhouseFor(cluster.env);
    cleanups.push(() => ch.close());
    const { userId, key } = cluster.createUserWithKey();
    const webs = cluster.byRole("web").map((p) => p.url!);
    const [victim] = cluster.byRole("pipeline");

    const RUNS = 40;
    const PER_RUN = 500;
    const BATCH = 100;
    let acked = 0;
    let killed = false;
    const load = Promise.all(Array.from({ length: RUNS }, async (_, r) => {
      const events = runEvents(`kill-run-${r}`, PER_RUN);
      for (let i = 0; i < events.length; i += BATCH) {
        const ack = await postJson(`${webs[(r + i / BATCH) % 2]}/api/ingest/batch`, key, { events: events.slice(i, i + BATCH) });
        expect(ack.status).toBe(207);
        expect(ack.body.results.filter((x: { status: number }) => x.status !== 202)).toEqual([]);
        acked += BATCH;
      }
    }));
    // Kill one worker once a quarter of the load is acknowledged and processing is under way.
    await eventually("a quarter acknowledged", () => acked >= (RUNS * PER_RUN) / 4, 120_000, 20);
    await victim.kill("SIGKILL");
    killed = true;
    await load;
    expect(killed).toBe(true);
    // The peer takes over the dead member's partitions (after the session timeout); then the victim returns.
    await sleep(2_000);
    await victim.restart();

    const total = RUNS * PER_RUN;
    await eventually("every event stored", async () => (await storedCounts(ch, userId)).rows >= total, 120_000, 500);
    expect(await storedCounts(ch, userId)).toEqual({ rows: total, distinct: total });
    for (const r of [0, 17, RUNS - 1]) {
      const res = await fetch(`${webs[0]}/api/runs/kill-run-${r}`, { headers: { authorization: `Bearer ${key}` } });
      const body = (await res.json()) as { run: { status: string; event_count: number }; events: { payload: { seq: number } }[] };
      expect(body.events.map((e) => e.payload.seq)).toEqual(Array.from({ length: PER_RUN }, (_, i) => i));
      expect(body.run.status).toBe("success");
    }
  }, 300_000);

  it("recovers by itself from a Kafka restart, then a Redis restart, during load; no acknowledged event lost", async () => {
    let kafka: PrivateServer, redis: PrivateServer;
    try {
      kafka = await privateKafka();
      cleanups.push(() => kafka.destroy());
      redis = await privateRedis();
      cleanups.push(() => redis.destroy());
    } catch (err) {
      throw new Error(`could not start a private Kafka/Redis with deploy/*.sh (run deploy/services.sh up first): ${String(err)}`);
    }
    const cluster = await startCluster({
      roles: { web: 2, pipeline: 2 },
      env: { KAFKA_BROKERS: kafka.url, REDIS_URL: redis.url, RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" },
    });
    cleanups.push(() => cluster.stop());
    const ch = await clickhouseFor(cluster.env);
    cleanups.push(() => ch.close());
    const { userId, key } = cluster.createUserWithKey();
    const webs = cluster.byRole("web").map((p) => p.url!);

    const ackedIds = new Set<string>();
    const statuses = new Map<number, number>();
    let retryAfterMissing = 0;
    let phase = "before";
    const ackedIn = new Map<string, number>();
    let stop = false;
    const worker = async (w: number) => {
      for (let n = 0; !stop; n++) {
        const events = runEvents(`fault-${w}-${n}`, 20);
        let res;
        try {
          res = await postJson(`${webs[(w + n) % 2]}/api/ingest/batch`, key, { events });
        } catch {
          await sleep(200); // connection refused/reset: the client retries later
          continue;
        }
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 207) {
          for (const r of res.body.results as { status: number; event_id?: string }[]) {
            statuses.set(1000 + r.status, (statuses.get(1000 + r.status) ?? 0) + 1);
            if (r.status === 202) { ackedIds.add(r.event_id!); ackedIn.set(phase, (ackedIn.get(phase) ?? 0) + 1); }
          }
        } else if (res.status === 503) {
          if (!res.retryAfter) retryAfterMissing++;
          await sleep(250);
        } else {
          throw new Error(`unexpected ${res.status}: ${JSON.stringify(res.body)}`);
        }
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(worker));
    await sleep(3_000);
    phase = "kafka-down";
    kafka.stop();
    await sleep(4_000);
    kafka.start();
    phase = "after-kafka";
    await eventually("acks resume after Kafka restart", () => (ackedIn.get("after-kafka") ?? 0) > 200, 60_000, 100);
    phase = "redis-down";
    redis.stop();
    await sleep(3_000);
    redis.start();
    phase = "after-redis";
    await eventually("acks continue after Redis restart", () => (ackedIn.get("after-redis") ?? 0) > 200, 60_000, 100);
    stop = true;
    await load;

    expect(retryAfterMissing).toBe(0);
    const expected = ackedIds.size;
    await eventually("every acknowledged event stored", async () => (await storedCounts(ch, userId)).distinct >= expected, 120_000, 500);
    const stored = new Set((await ch.query<{ id: string }>(
      "SELECT toString(event_id) AS id FROM agent_events FINAL WHERE user_id = {uid:UInt64}", { uid: userId })).map((r) => r.id));
    const lost = [...ackedIds].filter((id) => !stored.has(id));
    expect(lost).toEqual([]);
    const counts = await storedCounts(ch, userId);
    expect(counts.rows).toBe(counts.distinct);
    console.log("fault test:", JSON.stringify({ acked: expected, stored: counts, statuses: Object.fromEntries(statuses), ackedIn: Object.fromEntries(ackedIn) }));
  }, 300_000);
});
