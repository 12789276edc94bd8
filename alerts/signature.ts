/**
 * Webhook signatures: X-Runwatch-Signature = "sha256=" + hex HMAC-SHA256(rule secret, `${timestamp}.${body}`),
 * X-Runwatch-Timestamp = unix seconds. A receiver recomputes the HMAC over the raw body, compares in constant
 * time and rejects timestamps older than a few minutes (replays). verifySignature is that check.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "x-runwatch-signature";
export const TIMESTAMP_HEADER = "x-runwatch-timestamp";

export const newRuleSecret = (): string => `whsec_${randomBytes(24).toString("hex")}`;

export function sign(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

export function verifySignature(
  secret: string,
  body: string,
  headers: { signature: string | undefined; timestamp: string | undefined },
  opts: { toleranceSeconds?: number; now?: number } = {},
): { ok: true } | { ok: false; reason: string } {
  const ts = Number(headers.timestamp);
  if (!headers.timestamp || !Number.isInteger(ts)) return { ok: false, reason: "missing or malformed timestamp" };
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - ts) > (opts.toleranceSeconds ?? 300)) return { ok: false, reason: "timestamp outside the tolerance (replay?)" };
  const expected = Buffer.from(sign(secret, ts, body));
  const got = Buffer.from(headers.signature ?? "");
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) return { ok: false, reason: "signature mismatch" };
  return { ok: true };
}
