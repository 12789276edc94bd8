/**
 * One event log made of two lanes, so that one tenant's burst does not delay every other tenant's events by the
 * time it takes to process it (docs/PIPELINE.md, "Fair processing across tenants").
 *
 * Appends go to the main lane unless their tenant is a bulk tenant (lane-router.ts: more than a threshold of bytes
 * in a short window). The consumer reads both lanes and runs their batches one at a time, alternating when both
 * have one (lane-gate.ts); the bulk lane's batches are kept small, so a light tenant's event waits behind at most
 * one of them. Both lanes are logs of the same kind (two file logs embedded, two topics in scale mode), each with
 * its own offsets: at-least-once delivery holds per lane.
 *
 * Order: events with one log key stay in append order within a lane. A tenant moving between lanes can have a
 * run's later events processed before its earlier ones; the pipeline already orders a run's status by each event's
 * `occurred_at` (the ordering rule, docs/PIPELINE.md), as it must for clients' retries and replays.
 */
import type { EncodedEvents } from "../events/wire.js";
import type { ConsumeOptions, EventLog, LogConsumer } from "../ports/event-log.js";
import { LaneGate } from "./lane-gate.js";
import type { LaneRouter } from "./lane-router.js";

/** The most bytes of one bulk-lane batch (it always holds at least one record). */
export const BULK_BATCH_BYTES = 1024 * 1024;

export function lanedLog(lanes: { readonly main: EventLog; readonly bulk: EventLog }, router: LaneRouter): EventLog {
  const consumers = new Set<LogConsumer>();
  return {
    async append(events: EncodedEvents) {
      const lane = await router.laneFor(events.keys, events.data.byteLength);
      return lanes[lane].append(events);
    },
    async consume(opts: ConsumeOptions) {
      const gate = new LaneGate();
      const main = await lanes.main.consume({ ...opts, handler: (batch) => gate.run("main", () => opts.handler(batch)) });
      let bulk: LogConsumer;
      try {
        bulk = await lanes.bulk.consume({
          ...opts,
          maxBytes: Math.min(opts.maxBytes ?? Infinity, BULK_BATCH_BYTES),
          handler: (batch) => gate.run("bulk", () => opts.handler(batch)),
        });
      } catch (err) {
        await main.stop();
        throw err;
      }
      const both: LogConsumer = {
        lag: async () => {
          const [a, b] = await Promise.all([main.lag(), bulk.lag()]);
          return a + b;
        },
        stop: async () => {
          consumers.delete(both);
          await Promise.all([main.stop(), bulk.stop()]);
        },
      };
      consumers.add(both);
      return both;
    },
    async close() {
      await Promise.allSettled([...consumers].map((c) => c.stop()));
      await Promise.allSettled([lanes.main.close(), lanes.bulk.close()]);
    },
  };
}
