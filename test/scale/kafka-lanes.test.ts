/**
 * The event log's two lanes on a real broker (KAFKA_BROKERS): the topics KAFKA_TOPIC and KAFKA_TOPIC.bulk, each
 * with its own consumer group, are assigned so that one process owns a key's partition in both
 * (core/log/kafka-assigner.ts): two pipeline processes never hold state of the same run.
 */
import { randomUUID } from "node:crypto";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, expect, it } from "vitest";
import { openKafkaLog } from "../../core/log/kafka-log.js";
import { encodeEvents } from "../../core/events/wire.js";
import { decodeRecord } from "../../core/events/wire.js";
import type { EventLog, LogConsumer } from "../../core/ports/event-log.js";
import { describeWith, eventually, testConfig } from "./services.js";
import { loggedEvent } from "./fixtures/make-events.js";

const opened: EventLog[] = [];
const consumers: LogConsumer[] = [];
afterAll(async () => {
  await Promise.allSettled(consumers.map((c) => c.stop()));
  await Promise.allSettled(opened.map((l) => l.close()));
});

describeWith(["KAFKA_BROKERS"], "kafka lanes", () => {
  it("two processes consuming both lanes: every key's main and bulk partitions belong to the same one", async () => {
    const config = testConfig();
    const group = `g-${randomUUID()}`;
    const seenBy = { main: new Map<string, string>(), bulk: new Map<string, string>() };
    const lane = async (name: "main" | "bulk", instance: string) => {
      const log = await openKafkaLog(config, { instance, ...(name === "bulk" ? { topic: `${config.kafkaTopic}.bulk` } : {}) });
      opened.push(log);
      consumers.push(await log.consume({
        group, maxBatch: 500, maxWaitMs: 20,
        handler: async (batch) => {
          for (const r of batch) seenBy[name].set(decodeRecord(r).sdk_run_id, instance);
        },
      }));
      return log;
    };
    // Process A opens both lanes, then process B: the group rebalances over the two.
    const [mainA, bulkA] = [await lane("main", "process-a"), await lane("bulk", "process-a")];
    await lane("main", "process-b");
    await lane("bulk", "process-b");
    // Let both groups settle on two members before appending.
    await new Promise((r) => setTimeout(r, 4_000));
    const runs = Array.from({ length: 60 }, (_, i) => `lane-run-${i}`);
    await mainA.append(encodeEvents(runs.map((run) => loggedEvent(42, run, 0))));
    await bulkA.append(encodeEvents(runs.map((run) => loggedEvent(42, run, 1))));
    await eventually("both lanes consumed", () => seenBy.main.size === runs.length && seenBy.bulk.size === runs.length, 60_000);
    for (const run of runs) expect(seenBy.bulk.get(run), run).toBe(seenBy.main.get(run));
    // Both processes took part (the assignment spreads partitions).
    expect(new Set(seenBy.main.values()).size).toBe(2);
  }, 120_000);

  it("the bulk lane's topic gets as many partitions as the main topic has (a key's partition index is the same in both)", async () => {
    const config = testConfig();
    opened.push(await openKafkaLog(config, { partitions: 5 }));
    opened.push(await openKafkaLog(config, { topic: `${config.kafkaTopic}.bulk`, partitionsLike: config.kafkaTopic }));
    const admin = new Kafka({ clientId: "lanes-test", brokers: [...config.kafkaBrokers!], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [config.kafkaTopic, `${config.kafkaTopic}.bulk`] });
      expect(topics.map((t) => t.partitions.length)).toEqual([5, 5]);
    } finally {
      await admin.disconnect();
    }
  });
});
