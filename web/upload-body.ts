/**
 * An uploaded file's body, handed to its reader as it arrives instead of buffered whole (json-body.ts's
 * readBodyBytes buffers): a reader that stops at a bound (stores/datasets/import.ts) has not held or parsed the
 * rest, and is answered at once. 413 past the limit (before a byte is read when Content-Length says so), 400 when
 * the client stops sending.
 *
 * What the reader leaves unread — after any answer, the 413 of a body found too large on its way included — is then
 * read and dropped, up to twice the limit: the client is still sending it, and a socket closed with unread bytes
 * resets, and the reset can lose the answer on its way (a browser shows a network error instead of the refusal),
 * while a body left unread would stall the connection. Past twice the limit the connection is closed.
 */
import type { Context } from "koa";
import { HttpProblem } from "./http-errors.js";

export async function readUpload<T>(ctx: Context, limitBytes: number, tooLargeMessage: string, read: (chunks: AsyncIterable<Buffer>) => Promise<T>): Promise<T> {
  const tooLarge = () => new HttpProblem(413, "payload_too_large", tooLargeMessage);
  const declared = ctx.req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limitBytes) {
    // Connection: close so the unread body does not poison the keep-alive socket.
    ctx.set("Connection", "close");
    throw tooLarge();
  }
  // Taken by next() only, never ended early: an async iterator's return() would destroy the request, socket and all.
  const source = ctx.req[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let received = 0;
  let ended = false;
  let bodyFailed = false;
  const next = async (): Promise<Buffer | undefined> => {
    let step: IteratorResult<Buffer>;
    try {
      step = await source.next();
    } catch {
      bodyFailed = true;
      throw new HttpProblem(400, "request_aborted", "the client aborted the request");
    }
    if (step.done) {
      ended = true;
      if (declared !== undefined && received !== Number(declared)) {
        bodyFailed = true;
        throw new HttpProblem(400, "malformed_body", "the body length does not match Content-Length");
      }
      return undefined;
    }
    received += step.value.length;
    if (received > limitBytes) throw tooLarge();
    return step.value;
  };
  const chunks: AsyncIterable<Buffer> = {
    async *[Symbol.asyncIterator]() {
      for (let chunk = await next(); chunk; chunk = await next()) yield chunk;
    },
  };
  try {
    return await read(chunks);
  } finally {
    if (!ended && !bodyFailed) void dropRest();
  }

  async function dropRest(): Promise<void> {
    try {
      for (let step = await source.next(); !step.done; step = await source.next()) {
        received += step.value.length;
        if (received > 2 * limitBytes) return void ctx.req.destroy();
      }
    } catch {
      // The client went away: nothing is left to drop.
    }
  }
}
