import { describe, expect, it } from "vitest";
import type { LoggedEvent } from "./schema.js";
import { decodeBatch, encodeBatch, encodeEvents, recordAt } from "./wire.js";
import { enrichEvent } from "./enrich.js";
import { encodeRecords, frameRecords } from "../log/framing.js";
import { isShared, SharedArena } from "../threads/shared-arena.js";

const event = (i: number, text = ""): LoggedEvent => ({
  event_id: `0190b6a0-0000-7000-8000-${String(i).padStart(12, "0")}`,
  project_id: 1 + (i % 3), user_id: 1 + (i % 3),
  run_id: "00000000-0000-5000-8000-000000000001",
  sdk_run_id: `run-${i % 4}`,
  event_type: "tool_call",
  agent_name: null,
  payload: { tool_name: "search", phase: "end", output_preview: `${text}${i}` },
  occurred_at: "2026-11-23T10:00:00.000Z",
  received_at: "2026-11-23T10:00:00.000Z",
  config_version: null,
});

describe("encoded batches", () => {
  const events = Array.from({ length: 50 }, (_, i) => event(i, "é✓😀\n\"quoted\"".repeat(i % 3)));

  it("round-trips events, multi-byte text included, with each record's log key", () => {
    const encoded = encodeEvents(events);
    expect(encoded.keys).toEqual(events.map((e) => `${e.user_id}:${e.sdk_run_id}`));
    expect(decodeBatch(encoded, () => {})).toEqual(events);
    expect(JSON.parse(Buffer.from(recordAt(encoded, 7)).toString("utf8"))).toEqual(events[7]);
  });

  it("carries an event's tags, metadata, end user, environment and release from ingest through the log", () => {
    const attributes = { tags: ["vip", "é✓"], metadata: { customer: "acme", tier: 2, trial: true }, end_user: "cust-42", environment: "production", release: "v1.2" };
    const logged = enrichEvent({ event_type: "step", sdk_run_id: "r", payload: { node_name: "n", phase: "end" }, ...attributes }, { projectId: 5, userId: 7 }, new Date());
    expect(logged).toMatchObject(attributes);
    const [back] = decodeBatch(encodeEvents([logged]), () => {});
    expect(back).toEqual(logged);
    // An event without them carries none of the keys.
    const plain = enrichEvent({ event_type: "step", sdk_run_id: "r", payload: { node_name: "n", phase: "end" } }, { projectId: 5, userId: 7 }, new Date());
    for (const k of Object.keys(attributes)) expect(plain).not.toHaveProperty(k);
  });

  it("grows its buffer for text of several bytes per character, and encodes an empty batch", () => {
    const wide = Array.from({ length: 20 }, (_, i) => event(i, "😀é✓".repeat(500 * (i % 4))));
    const encoded = encodeEvents(wide);
    expect(decodeBatch(encoded, () => {})).toEqual(wide);
    expect(Buffer.from(encoded.data).toString("utf8")).toBe(JSON.stringify(wide));
    expect(Buffer.from(recordAt(encoded, 19)).toString("utf8")).toBe(JSON.stringify(wide[19]));
    expect(Buffer.from(encodeEvents([]).data).toString("utf8")).toBe("[]");
  });

  it("frames encoded records byte for byte as the file log frames events", () => {
    expect(Buffer.concat(frameRecords(encodeEvents(events)).pieces).equals(encodeRecords(events))).toBe(true);
  });

  it("encodes a batch into the view it is given room in (a lent view of shared memory), else into a buffer of its own", () => {
    const records = events.map((e) => new TextEncoder().encode(JSON.stringify(e)));
    const arena = new SharedArena(1 << 20);
    const lent = encodeBatch(records, (n) => arena.lend(n));
    expect(isShared(lent.data)).toBe(true);
    expect(decodeBatch(lent, () => {})).toEqual(events);
    expect(JSON.parse(Buffer.from(recordAt(lent, 3)).toString("utf8"))).toEqual(events[3]);
    const own = encodeBatch(records, () => undefined);
    expect(isShared(own.data)).toBe(false);
    expect(Buffer.from(own.data).equals(Buffer.from(lent.data))).toBe(true);
  });

  it("encodes raw records (the log's bytes) the same way, an empty batch included", () => {
    const records = events.map((e) => new TextEncoder().encode(JSON.stringify(e)));
    expect(decodeBatch(encodeBatch(records), () => {})).toEqual(events);
    expect(decodeBatch(encodeBatch([]), () => {})).toEqual([]);
  });

  it("skips a record that is not JSON and keeps the others", () => {
    const records = [JSON.stringify(events[0]), "not json {", JSON.stringify(events[1])].map((s) => new TextEncoder().encode(s));
    const skipped: number[] = [];
    expect(decodeBatch(encodeBatch(records), (i) => skipped.push(i))).toEqual([events[0], events[1]]);
    expect(skipped).toEqual([1]);
  });
});
