import { describe, expect, it } from "vitest";
import { previewTruncation, truncatePreview } from "./preview-truncation.js";
import { applyEvents, testEvent } from "./testing.js";

const cps = (s: string) => [...s].length;

describe("preview-truncation plugin", () => {
  it("cuts tool_call previews to 500 code points, marks the cut and keeps the original length", async () => {
    const long = "x".repeat(1200);
    const emoji = "😀".repeat(700); // 1,400 UTF-16 units, 700 characters
    const e = testEvent({ event_type: "tool_call", payload: { tool_name: "search", phase: "end", input_preview: long, output_preview: emoji } });
    await applyEvents([previewTruncation()], [e]);
    expect(cps(e.payload.input_preview as string)).toBe(500);
    expect(e.payload.input_preview).toBe("x".repeat(499) + "…");
    expect(e.payload.input_preview_truncated).toBe(true);
    expect(e.payload.input_preview_length).toBe(1200);
    const out = e.payload.output_preview as string;
    expect(cps(out)).toBe(500);
    expect(out.startsWith("😀".repeat(499))).toBe(true);
    expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/); // no lone high surrogate
    expect(e.payload.output_preview_length).toBe(700);
  });

  it("leaves previews of exactly 500 characters (even 1,000 UTF-16 units) untouched", async () => {
    const exact = "😀".repeat(500);
    const e = testEvent({ event_type: "tool_call", payload: { tool_name: "t", phase: "end", input_preview: exact, output_preview: "short" } });
    await applyEvents([previewTruncation()], [e]);
    expect(e.payload.input_preview).toBe(exact);
    expect(e.payload).not.toHaveProperty("input_preview_truncated");
    expect(e.payload.output_preview).toBe("short");
  });

  it("cuts step previews (OTLP content) too, touches nothing else, and honours a configured limit", async () => {
    const step = testEvent({ event_type: "step", payload: { node_name: "n", phase: "end", input_preview: "y".repeat(900), input: "x".repeat(900) } });
    const err = testEvent({ event_type: "error", payload: { error_message: "e".repeat(900), input_preview: "y".repeat(900) } });
    await applyEvents([previewTruncation()], [step, err]);
    expect(step.payload).toMatchObject({ input_preview: `${"y".repeat(499)}…`, input_preview_truncated: true, input_preview_length: 900 });
    expect((step.payload.input as string).length).toBe(900); // an SDK's input is kept whole
    expect((err.payload.input_preview as string).length).toBe(900);
    expect(truncatePreview("abcdef", 4)).toEqual({ text: "abc…", length: 6 });
    const e = testEvent({ event_type: "tool_call", payload: { tool_name: "t", phase: "end", input_preview: "z".repeat(50) } });
    await applyEvents([previewTruncation({ maxChars: 10 })], [e]);
    expect(e.payload.input_preview).toBe("zzzzzzzzz…");
  });
});
