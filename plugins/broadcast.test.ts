/** broadcast: the frame a dashboard receives, built from a head taken at the event and the payload's stored JSON. */
import { describe, expect, it } from "vitest";
import { userChannel } from "../core/ports/pubsub.js";
import type { PubSub } from "../core/ports/pubsub.js";
import { broadcast, broadcastRun } from "./broadcast.js";
import type { PluginContext } from "./plugin.js";
import { statusMachine } from "./status-machine.js";
import { applyEvents, testEvent } from "./testing.js";

function capture(): { pubsub: PubSub; sent: [string, string][] } {
  const sent: [string, string][] = [];
  return {
    sent,
    pubsub: { publish: async (channel, message) => void sent.push([channel, message]), subscribePrefix: async () => async () => {}, close: async () => {} },
  };
}

describe("broadcast", () => {
  it("sends each event with the run as it was after that event, and the payload as stored, whatever its strings", async () => {
    const { pubsub, sent } = capture();
    const plugin = broadcast();
    plugin.init!({ pubsub } as unknown as PluginContext);
    const hostile = { output_preview: '"}}, {"type":"event"} \\"\u2028 é 😀 \ud800', nested: { a: [1, null, { "}}": "}}" }] } };
    const events = [testEvent({ event_type: "run_start", sdk_run_id: "r" }), testEvent({ event_type: "step", sdk_run_id: "r", payload: hostile })];
    const { batch, run } = await applyEvents([statusMachine(), plugin], events);
    // The pipeline serialises each stored payload once (batch-processor.ts); without it the plugin does.
    const payloadJson = new Map(events.map((e) => [e, JSON.stringify(e.payload)]));
    await plugin.afterEventsStored!({ ...batch, payloadJson });
    await plugin.afterEventsStored!(batch);
    expect(sent).toHaveLength(4);
    expect(sent.slice(0, 2)).toEqual(sent.slice(2));
    const [channel, text] = sent[1]!;
    expect(channel).toBe(userChannel(1));
    const frame = JSON.parse(text) as { type: string; run: Record<string, unknown>; event: Record<string, unknown> };
    expect(frame.type).toBe("event");
    expect(frame.event).toEqual({
      event_id: events[1]!.event_id, event_type: "step", occurred_at: events[1]!.occurred_at, span_id: null, parent_span_id: null, payload: hostile,
    });
    expect(Object.keys(frame.event).at(-1)).toBe("payload");
    expect(frame.run).toEqual(JSON.parse(JSON.stringify(broadcastRun(run("r")))));
    // Each frame carries the run as it was right after its event: one event counted in the first, two in the second.
    expect((JSON.parse(sent[0]![1]) as { run: { event_count: number } }).run.event_count).toBe(1);
    expect(frame.run.event_count).toBe(2);
  });

  it("sends nothing for a duplicate", async () => {
    const { pubsub, sent } = capture();
    const plugin = broadcast();
    plugin.init!({ pubsub } as unknown as PluginContext);
    const { batch } = await applyEvents([plugin], [testEvent({ event_type: "step", duplicate: true })]);
    await plugin.afterEventsStored!(batch);
    expect(sent).toEqual([]);
  });
});
