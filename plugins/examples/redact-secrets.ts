/**
 * Example plugin: redact secrets from event payloads before they are stored or broadcast.
 *
 * Agents log tool inputs, HTTP headers and config objects, and sooner or later one carries an API key. This
 * plugin replaces, anywhere in a payload (nested objects and arrays included):
 *   - the value of any key that names a secret (password, api_key, authorization, token, secret, ...);
 *   - substrings that look like well-known credentials (OpenAI/Anthropic keys, AWS access key ids, GitHub and
 *     Slack tokens, JWTs, Bearer tokens, PEM private keys) inside any string, e.g. a tool's input_preview.
 * Each redaction becomes "[REDACTED]"; the payload gets `redacted: <count>` so the UI can say so.
 *
 * Enable it with RUNWATCH_PLUGINS=./plugins/examples/redact-secrets.ts, or pass that path in code
 * (startPipeline / startPipelineThread `plugins`). It asks to run "early": before preview truncation, which could otherwise cut
 * a key in half so that the pattern no longer matches and half a key is stored.
 */
import type { Plugin } from "../plugin.js";

export const REDACTED = "[REDACTED]";

const SECRET_KEY = /(pass(word|wd)?|secret|token|api[-_]?key|apikey|authorization|auth[-_]?header|private[-_]?key|credential|cookie|session[-_]?id)/i;

const SECRET_VALUE_PATTERNS: readonly RegExp[] = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}/g, // OpenAI / Anthropic
  /\bAKIA[0-9A-Z]{16}\b/g, // AWS access key id
  /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g, // GitHub
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, // Slack
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, // JWT
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{16,}/g,
];

/** Redacts secret-looking substrings of s; returns the new string and how many were replaced. */
export function redactString(s: string): [string, number] {
  let count = 0;
  let out = s;
  for (const re of SECRET_VALUE_PATTERNS) {
    out = out.replace(re, (m, scheme: unknown) => {
      count++;
      return typeof scheme === "string" && /^(Bearer|Basic)$/.test(scheme) ? `${scheme} ${REDACTED}` : REDACTED;
    });
  }
  return [out, count];
}

/** Redacts a JSON value in place where possible; returns the (possibly new) value and the redaction count. */
export function redactValue(value: unknown, depth = 0): [unknown, number] {
  if (typeof value === "string") return redactString(value);
  if (depth > 32 || value === null || typeof value !== "object") return [value, 0];
  let count = 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const [v, n] = redactValue(value[i], depth + 1);
      value[i] = v;
      count += n;
    }
    return [value, count];
  }
  const obj = value as Record<string, unknown>;
  for (const [k, v] of Object.entries(obj)) {
    if (SECRET_KEY.test(k) && v !== null && v !== "" && typeof v !== "boolean" && typeof v !== "number") {
      obj[k] = REDACTED;
      count++;
      continue;
    }
    const [nv, n] = redactValue(v, depth + 1);
    obj[k] = nv;
    count += n;
  }
  return [obj, count];
}

export const redactSecrets = (): Plugin => ({
  name: "redact-secrets",
  order: "early",
  onEvent(event) {
    const [, count] = redactValue(event.payload);
    if (count > 0) event.payload.redacted = ((event.payload.redacted as number) || 0) + count;
  },
});

export default redactSecrets;
