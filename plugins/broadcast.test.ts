/** broadcast: the `events` messages a dashboard receives, run by run, with the payloads' stored JSON. */
import { describe, expect, it } from "vitest";
import { projectChannel, userChannel } from "../core/ports/pubsub.js";
import { setDefaultSliceMs, SLICE_MS } from "../core/time-slice.js";
import type { PubSub } from "../core/ports/pubsub.js";
import { runJson } from "../core/events/run-json.js";
import { broadcast, MAX_MESSAGE_CHARS } from "./broadcast.js";
import type { PipelineEvent, PluginContext } from "./plugin.js";
import { statusMachine } from "./status-machine.js";
import { applyEvents, stored, testEvent } from "./testing.js";

interface Message {
  type: string;
  user_id: number;
  project_id: number;
  runs: { run: Record<string, unknown>; events: Record<string, unknown>[] }[];
}

function capture(): { pubsub: PubSub; sent: [string, string][] } {
  const sent: [string, string][] = [];
  return {
    sent,
    pubsub: { publish: async (channel, message) => void sent.push([channel, message]), subscribePrefix: async () => async () => {}, close: async () => {} },
  };
}

async function broadcastOf(events: PipelineEvent[], withPayloadJson = true) {
  const { pubsub, sent } = capture();
  const plugin = broadcast();
  plugin.init!({ pubsub } as unknown as PluginContext);
  const { part, run } = await applyEvents([statusMachine(), plugin], events);
  // The pipeline serialises each stored payload once (part-processor.ts); without it the plugin does.
  await plugin.afterEventsStored!(withPayloadJson ? stored(part) : { ...part, payloadJson: new Map() });
  const all = sent.map(([channel, text]) => ({ channel, text, msg: JSON.parse(text) as Message }));
  // Every message goes to its sender's channel and, the same text, to its project's (docs/TEAMS.md).
  const onUser = all.filter((m) => m.channel.startsWith("user."));
  const onProject = all.filter((m) => m.channel.startsWith("project."));
  expect(onUser.length + onProject.length).toBe(all.length);
  expect(onProject.map((m) => [m.channel, m.text])).toEqual(onUser.map((m) => [projectChannel(m.msg.project_id), m.text]));
  for (const m of onUser) expect(m.channel).toBe(userChannel(m.msg.user_id));
  return { sent, run, messages: onUser };
}

describe("broadcast", () => {
  it("sends a run's events together, with the run after the part's last event and each payload as stored, whatever its strings", async () => {
    const hostile = { output_preview: '"}}, {"type":"events"} ]} \\"\u2028 é 😀 \ud800', nested: { a: [1, null, { "}]}": "]}}" }] } };
    const events = [
      testEvent({ event_type: "run_start", sdk_run_id: "r" }),
      testEvent({ event_type: "step", sdk_run_id: "r", payload: hostile }),
      testEvent({ event_type: "run_end", sdk_run_id: "r" }),
    ];
    const { sent, run, messages } = await broadcastOf(events);
    expect(messages).toHaveLength(1);
    const { channel, msg } = messages[0]!;
    expect(channel).toBe(userChannel(1));
    expect(msg.type).toBe("events");
    expect(msg.user_id).toBe(1);
    expect(msg.runs).toHaveLength(1);
    expect(msg.runs[0]!.run).toEqual(JSON.parse(JSON.stringify(runJson(run("r")))));
    expect(msg.runs[0]!.run).toMatchObject({ sdk_run_id: "r", status: "success", event_count: 3 });
    expect(msg.runs[0]!.events).toEqual(events.map((e) => ({
      event_id: e.event_id, event_type: e.event_type, occurred_at: e.occurred_at, span_id: null, parent_span_id: null, payload: e.payload,
    })));
    expect(Object.keys(msg.runs[0]!.events[1]!).at(-1)).toBe("payload");
    // The same bytes whether the pipeline handed the payloads' JSON over or the plugin made it.
    expect((await broadcastOf(events, false)).sent).toEqual(sent);
  });

  it("keeps each user's runs on their own channel", async () => {
    const events = [
      testEvent({ event_type: "run_start", user_id: 1, sdk_run_id: "a" }),
      testEvent({ event_type: "run_start", user_id: 2, sdk_run_id: "a" }),
      testEvent({ event_type: "step", user_id: 1, sdk_run_id: "b" }),
    ];
    const { messages } = await broadcastOf(events);
    expect(messages.map((m) => [m.channel, m.msg.user_id, m.msg.runs.map((r) => [r.run.sdk_run_id, r.events.map((e) => e.event_id)])])).toEqual([
      [userChannel(1), 1, [["a", [events[0]!.event_id]], ["b", [events[2]!.event_id]]]],
      [userChannel(2), 2, [["a", [events[1]!.event_id]]]],
    ]);
  });

  it("sends a team project's run to each sender's own channel and to the project's, once per sender", async () => {
    const events = [
      testEvent({ event_type: "run_start", user_id: 1, project_id: 9, sdk_run_id: "shared" }),
      testEvent({ event_type: "step", user_id: 2, project_id: 9, sdk_run_id: "shared" }),
      testEvent({ event_type: "run_start", user_id: 1, sdk_run_id: "shared" }),
    ];
    const { sent, messages } = await broadcastOf(events);
    expect(messages.map((m) => [m.channel, m.msg.project_id, m.msg.runs.map((r) => [r.run.sdk_run_id, r.events.map((e) => e.event_id)])])).toEqual([
      [userChannel(1), 9, [["shared", [events[0]!.event_id]]]],
      [userChannel(2), 9, [["shared", [events[1]!.event_id]]]],
      [userChannel(1), 1, [["shared", [events[2]!.event_id]]]],
    ]);
    expect(sent.filter(([c]) => c === projectChannel(9))).toHaveLength(2);
    expect(sent.filter(([c]) => c === projectChannel(1))).toHaveLength(1);
  });

  it("splits a big part into messages of at most MAX_MESSAGE_CHARS plus one event, every event once and in order", async () => {
    const text = "x".repeat(3000);
    const events = [
      ...Array.from({ length: 90 }, (_, i) => testEvent({ event_type: "step", sdk_run_id: "long", payload: { i, text } })),
      ...Array.from({ length: 60 }, (_, i) => testEvent({ event_type: "step", sdk_run_id: `short-${i % 6}`, payload: { i, text } })),
      // One event alone over the limit still goes out, in a message of its own.
      testEvent({ event_type: "step", sdk_run_id: "huge", payload: { text: "y".repeat(MAX_MESSAGE_CHARS + 10) } }),
    ];
    const { messages, run } = await broadcastOf(events);
    expect(messages.length).toBeGreaterThan(3);
    for (const m of messages) {
      const last = m.msg.runs.at(-1)!.events.at(-1)!;
      const withoutLast = m.text.length - JSON.stringify(last).length;
      if (m.msg.runs.length > 1 || m.msg.runs[0]!.events.length > 1) expect(withoutLast).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
      // A run split over messages carries its state after the part's last event of it in each.
      for (const r of m.msg.runs) expect(r.run).toEqual(JSON.parse(JSON.stringify(runJson(run(r.run.sdk_run_id as string)))));
    }
    expect(messages.at(-1)!.msg.runs.map((r) => r.run.sdk_run_id)).toEqual(["huge"]);
    const order = messages.flatMap((m) => m.msg.runs.flatMap((r) => r.events.map((e) => e.event_id)));
    expect([...order].sort()).toEqual(events.map((e) => e.event_id).sort());
    // Runs in the order their first event came, and each run's events in log order.
    const flat = messages.flatMap((m) => m.msg.runs.flatMap((r) => r.events.map((e) => [r.run.sdk_run_id, e.event_id])));
    expect([...new Set(flat.map(([r]) => r))]).toEqual([...new Set(events.map((e) => e.sdk_run_id))]);
    for (const r of new Set(events.map((e) => e.sdk_run_id))) {
      expect(flat.filter(([x]) => x === r).map(([, id]) => id)).toEqual(events.filter((e) => e.sdk_run_id === r).map((e) => e.event_id));
    }
  });

  it("carries the runs as the part left them, though the next part changes the drafts while the messages are made", async () => {
    const { pubsub, sent } = capture();
    const plugin = broadcast();
    plugin.init!({ pubsub } as unknown as PluginContext);
    const events = Array.from({ length: 400 }, (_, i) => testEvent({ event_type: i % 2 ? "step" : "run_start", sdk_run_id: `run-${Math.floor(i / 2)}` }));
    const { part } = await applyEvents([statusMachine(), plugin], events);
    setDefaultSliceMs(0); // making the messages yields to the event loop after every run
    try {
      const storing = plugin.afterEventsStored!(stored(part));
      // What overlapped-parts.ts allows once the part has released its drafts: the next part's plugins change them.
      for (const d of part.runs.values()) d.run.status = "error";
      await storing;
    } finally {
      setDefaultSliceMs(SLICE_MS);
    }
    const runs = sent.filter(([c]) => c.startsWith("user.")).flatMap(([, t]) => (JSON.parse(t) as Message).runs);
    // A run whose events a message split carries its state in each message.
    expect(new Set(runs.map((r) => r.run.sdk_run_id)).size).toBe(200);
    expect(runs.every((r) => r.run.status === "running" && r.run.event_count === 2)).toBe(true);
  });

  it("sends nothing for duplicates", async () => {
    const { sent } = await broadcastOf([testEvent({ event_type: "step", duplicate: true })]);
    expect(sent).toEqual([]);
    const events = [testEvent({ event_type: "step", duplicate: true }), testEvent({ event_type: "step" })];
    const { messages } = await broadcastOf(events);
    expect(messages.flatMap((m) => m.msg.runs.flatMap((r) => r.events.map((e) => e.event_id)))).toEqual([events[1]!.event_id]);
  });
});
