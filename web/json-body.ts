/**
 * Reads a JSON request body: 415 unless the Content-Type is JSON, 413 past the byte limit (raw-body stops
 * reading there, so an oversized body is never buffered), 400 when it is not valid JSON, 422 for what cannot be
 * stored as a setting unless the caller repairs it.
 */
import type { Context } from "koa";
import getRawBody from "raw-body";
import { refuseUnstorableSetting } from "../core/storable-setting.js";
import { HttpProblem } from "./http-errors.js";

/** application/json, or any application/*+json type, with optional parameters (charset). */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const semi = header.indexOf(";");
  const type = (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/** The body's bytes: 415 unless the Content-Type is JSON, 413 past the limit, 400 when cut short. */
export async function readJsonBodyBytes(ctx: Context, limitBytes: number): Promise<Buffer> {
  if (!isJsonContentType(ctx.req.headers["content-type"])) {
    throw new HttpProblem(415, "unsupported_media_type", "the request body must be JSON (Content-Type: application/json)");
  }
  return readBodyBytes(ctx, limitBytes, `the request body exceeds the limit of ${limitBytes} bytes`);
}

/**
 * The body's bytes, whatever its type: 413 (`tooLargeMessage`) past the limit — refused before reading a byte when
 * Content-Length says so, and raw-body stops reading there, so an oversized body is never buffered —, 400 when
 * the body is cut short.
 */
export async function readBodyBytes(ctx: Context, limitBytes: number, tooLargeMessage: string): Promise<Buffer> {
  const tooLarge = () => {
    // Connection: close so the unread rest of the body does not poison the keep-alive socket.
    ctx.set("Connection", "close");
    return new HttpProblem(413, "payload_too_large", tooLargeMessage);
  };
  const declared = ctx.req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limitBytes) throw tooLarge();
  try {
    // A Buffer, decoded by the caller: Buffer#toString is cheaper than raw-body's iconv decoder on the hot path.
    return await getRawBody(ctx.req, { length: declared, limit: limitBytes });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === "entity.too.large") throw tooLarge();
    if (type === "request.size.invalid") throw new HttpProblem(400, "malformed_body", "the body length does not match Content-Length");
    if (type === "request.aborted") throw new HttpProblem(400, "request_aborted", "the client aborted the request");
    throw err;
  }
}

export interface JsonBodyOptions {
  /**
   * What a body that cannot be stored as a setting (core/storable-setting.ts: U+0000, a lone surrogate, nesting past
   * 64 levels) gets: "refuse" (the default) a 422 naming its place; "repair" leaves it to the caller, whose content
   * rules repair or bound it as events' are (core/events/storable.ts).
   */
  readonly unstorable?: "refuse" | "repair";
}

export async function readJsonBody(ctx: Context, limitBytes: number, options: JsonBodyOptions = {}): Promise<unknown> {
  const text = (await readJsonBodyBytes(ctx, limitBytes)).toString("utf8");
  if (text.length === 0) throw new HttpProblem(400, "malformed_json", "the request body is empty; expected a JSON object");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new HttpProblem(400, "malformed_json", `the request body is not valid JSON: ${(err as Error).message}`);
  }
  if (options.unstorable !== "repair") refuseUnstorableSetting(body);
  return body;
}
