/**
 * The trace's answers as JSON, gzipped when the client takes it and the answer is big: a page of 20,000 span
 * skeletons is a few MB of repetitive keys and ids, a tenth of that gzipped. Gzip runs on libuv's pool (zlib's async
 * call), not on the thread that serves requests.
 */
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { Context } from "koa";

const gzipped = promisify(gzip);
/** Smaller answers go as they are: gzip would save less than it costs. */
const MIN_GZIP_BYTES = 32 * 1024;

export async function answerJson(ctx: Context, body: unknown, { cache = false } = {}): Promise<void> {
  if (!cache) ctx.set("Cache-Control", "no-store");
  const text = JSON.stringify(body);
  ctx.type = "application/json";
  ctx.vary("Accept-Encoding");
  if (text.length < MIN_GZIP_BYTES || ctx.acceptsEncodings("gzip", "identity") !== "gzip") {
    ctx.body = text;
    return;
  }
  ctx.set("Content-Encoding", "gzip");
  ctx.body = await gzipped(text, { level: 4 });
}
