/**
 * preview-truncation: tool_call and step input_preview / output_preview longer than config.previewMaxChars (500)
 * characters are cut to that many characters, counted in Unicode code points (an emoji is one character,
 * never split into a lone surrogate). A cut preview ends with "…" (so it is still ≤ the limit) and the payload
 * records `<field>_truncated: true` and `<field>_length` (the original length in code points), so the UI can
 * say "showing 500 of 12,345 characters".
 */
import type { Plugin } from "./plugin.js";

export const PREVIEW_FIELDS = ["input_preview", "output_preview"] as const;
const ELLIPSIS = "…";

/** Length in code points (a surrogate pair counts once; a lone surrogate counts as one). */
function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  }
  return n;
}

/** The first `count` code points of s. */
function firstCodePoints(s: string, count: number): string {
  let i = 0;
  for (let n = 0; n < count && i < s.length; n++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return s.slice(0, i);
}

/** Truncates to at most max code points; undefined when s already fits. */
export function truncatePreview(s: string, max: number): { text: string; length: number } | undefined {
  if (s.length <= max) return undefined; // UTF-16 length ≥ code points: certainly fits
  const length = codePointLength(s);
  if (length <= max) return undefined;
  return { text: firstCodePoints(s, Math.max(0, max - 1)) + (max > 0 ? ELLIPSIS : ""), length };
}

export const previewTruncation = (opts: { maxChars?: number } = {}): Plugin => {
  let max = opts.maxChars ?? 500;
  return {
    name: "preview-truncation",
    init(ctx) {
      max = opts.maxChars ?? ctx.config.previewMaxChars;
    },
    onEvent(event) {
      if (event.event_type !== "tool_call" && event.event_type !== "step") return;
      for (const field of PREVIEW_FIELDS) {
        const value = event.payload[field];
        if (typeof value !== "string") continue;
        const cut = truncatePreview(value, max);
        if (cut === undefined) continue;
        event.payload[field] = cut.text;
        event.payload[`${field}_truncated`] = true;
        event.payload[`${field}_length`] = cut.length;
      }
    },
  };
};

export default previewTruncation;
