/**
 * A span's links (OTLP Span.links: a handoff to another agent's trace, a batch, a retry) as stored in its end event's
 * payload, `links: [{trace_id, span_id, attributes?}]`. Bounded like every value a span carries: at most MAX_LINKS
 * links, each with at most MAX_LINK_ATTRIBUTES attributes, each attribute's text cut; a link without both ids is left
 * out. The trace view resolves them when the span is read (web/runs/span-links.ts).
 */
import { attrText, type OtlpSpanLink } from "./trace-model.js";

export const MAX_LINKS = 32;
const MAX_LINK_ATTRIBUTES = 16;
const MAX_LINK_TEXT = 1_024;

export function linksPayload(links: readonly OtlpSpanLink[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const l of links) {
    if (out.length >= MAX_LINKS) break;
    if (!l.traceId || !l.spanId) continue;
    const link: Record<string, unknown> = { trace_id: l.traceId, span_id: l.spanId };
    if (l.attributes.size > 0) {
      const attributes: Record<string, string | number | boolean> = {};
      let n = 0;
      for (const [key, value] of l.attributes) {
        if (n++ >= MAX_LINK_ATTRIBUTES) break;
        if (value === null) continue;
        attributes[key.slice(0, 200)] = typeof value === "number" || typeof value === "boolean" ? value : attrText(value).slice(0, MAX_LINK_TEXT);
      }
      link.attributes = attributes;
    }
    out.push(link);
  }
  return out;
}
