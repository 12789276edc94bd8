import { Either } from "effect";
import { describe, expect, it } from "vitest";
import { checkBuiltEvent, parseIngestEvent, type IngestEvent } from "../core/events/schema.js";
import { mapExport, type RawEvent } from "./mapping.js";
import type { AttrValue, OtlpSpan } from "./trace-model.js";

const T = "0af7651916cd43dd8448eb211c80319c";
const t0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const attrs = (a: Record<string, AttrValue>) => new Map(Object.entries(a));

function span(attributes: Record<string, AttrValue>, resource: Record<string, AttrValue> = { "service.name": "svc" }): OtlpSpan {
  return {
    traceId: T, spanId: "b7ad6b7169203331", parentSpanId: "", name: "span", startMs: t0, endMs: t0 + 1500, statusCode: 0, statusMessage: "",
    events: [], resource: attrs(resource), scope: "my.instrumentation", attributes: attrs(attributes),
  };
}
/** The span's own event (its end), checked against the ingest schema as every mapped event must pass it. */
function spanEvent(s: OtlpSpan): RawEvent {
  const m = mapExport([s]);
  const all = [m.traces[0]!.runStart, ...m.traces[0]!.spans.flatMap((x) => x.events)];
  for (const e of all) {
    const full = parseIngestEvent(e);
    if (Either.isLeft(full)) throw new Error(`${String(e.event_type)} refused by the schema: ${full.left.message}`);
    const fast = checkBuiltEvent(e as unknown as IngestEvent);
    if (Either.isLeft(fast)) throw new Error(`${String(e.event_type)} refused by checkBuiltEvent: ${fast.left.message}`);
  }
  return all.find((e) => e.span_id === s.spanId && e.event_type === "step")!;
}
const labels = (e: RawEvent) => ({ tags: e.tags, metadata: e.metadata === undefined ? undefined : { ...(e.metadata as object) }, end_user: e.end_user, environment: e.environment, release: e.release });

describe("run labels from OTLP conventions", () => {
  it("OpenInference: tag.tags, metadata (JSON text), user.id", () => {
    const e = spanEvent(span({ "tag.tags": ["vip", "beta"], metadata: '{"customer":"acme","tier":2,"trial":true,"nested":{"a":1}}', "user.id": "cust-42" }));
    expect(labels(e)).toEqual({ tags: ["vip", "beta"], metadata: { customer: "acme", tier: 2, trial: true, nested: '{"a":1}' }, end_user: "cust-42", environment: undefined, release: undefined });
  });

  it("the resource: deployment.environment.name (or the older deployment.environment) and service.version", () => {
    expect(labels(spanEvent(span({}, { "service.name": "svc", "deployment.environment.name": "production", "service.version": "1.4.2" })))).toMatchObject({ environment: "production", release: "1.4.2" });
    expect(labels(spanEvent(span({}, { "deployment.environment": "staging" })))).toMatchObject({ environment: "staging", release: undefined });
    const none = spanEvent(span({}));
    for (const k of ["tags", "metadata", "end_user", "environment", "release"]) expect(none).not.toHaveProperty(k);
  });

  it("the Vercel AI SDK: ai.telemetry.metadata.<key>", () => {
    const e = spanEvent(span({ "ai.operationId": "ai.generateText", "ai.telemetry.metadata.customer": "acme", "ai.telemetry.metadata.tier": 3, "ai.telemetry.metadata.flags": ["a", "b"] }));
    expect(labels(e).metadata).toEqual({ customer: "acme", tier: 3, flags: '["a","b"]' });
  });

  it("Langfuse: trace tags (a list or JSON text), trace metadata per key, user, environment and release over the resource's", () => {
    const e = spanEvent(span(
      { "langfuse.trace.tags": '["vip","beta"]', "langfuse.trace.metadata.customer": "acme", "langfuse.user.id": "lf-user", "user.id": "other", "langfuse.environment": "canary", "langfuse.release": "r-9" },
      { "deployment.environment.name": "production", "service.version": "1.0" },
    ));
    expect(labels(e)).toEqual({ tags: ["vip", "beta"], metadata: { customer: "acme" }, end_user: "lf-user", environment: "canary", release: "r-9" });
    expect(spanEvent(span({ "langfuse.trace.tags": ["a", "b"] })).tags).toEqual(["a", "b"]);
    expect(spanEvent(span({ "langfuse.trace.tags": "solo" })).tags).toEqual(["solo"]);
  });

  it("values past a bound are cut, not refused; what could not be an identifier is left out", () => {
    const e = spanEvent(span({
      "tag.tags": [...Array.from({ length: 60 }, (_, i) => `t${i}`), ""],
      metadata: JSON.stringify({ ["k".repeat(300)]: "v".repeat(2000), nul: null, ...Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`m${i}`, i])) }),
      "user.id": "u".repeat(500),
      "langfuse.environment": "bad\u0000env",
    }, { "service.version": `${"r".repeat(199)}😀` }));
    expect(e.tags).toHaveLength(50);
    const metadata = e.metadata as Record<string, unknown>;
    expect(Object.keys(metadata)).toHaveLength(64);
    expect(metadata["k".repeat(200)]).toBe("v".repeat(1024));
    expect("nul" in metadata).toBe(false);
    expect(e.end_user).toBe("u".repeat(200));
    expect(e).not.toHaveProperty("environment");
    expect(e.release).toBe("r".repeat(199));
    // Numbers that are not finite are left out; an empty tag list sets nothing.
    const odd = spanEvent(span({ "ai.telemetry.metadata.x": Number.NaN, "tag.tags": [] }));
    expect(odd).not.toHaveProperty("metadata");
    expect(odd).not.toHaveProperty("tags");
  });
});
