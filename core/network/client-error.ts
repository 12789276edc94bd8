/**
 * What an HTTP server answers a request Node's parser refused before any handler saw it (a request line and headers
 * over Node's 16 KiB, bytes that are not HTTP, a request that took too long to arrive): the status Node would send,
 * with a JSON body saying why, in the shape every other error of Runwatch has. Node's own answer has no body.
 */
import type { Duplex } from "node:stream";

const ANSWERS: Record<string, readonly [status: string, code: string, message: string]> = {
  HPE_HEADER_OVERFLOW: ["431 Request Header Fields Too Large", "request_too_large", "the request line and headers are over 16 KiB: shorten the URL (a long filter belongs in a POST body or a saved view) or the headers"],
  ERR_HTTP_REQUEST_TIMEOUT: ["408 Request Timeout", "request_timeout", "the request did not arrive in time"],
};
const MALFORMED = ["400 Bad Request", "bad_request", "malformed HTTP request"] as const;

/** A `clientError` listener for an http.Server: answers when the socket can still take an answer, else closes it. */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || err.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const [status, code, message] = ANSWERS[err.code ?? ""] ?? MALFORMED;
  const json = JSON.stringify({ error: { code, message } });
  socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`);
}
