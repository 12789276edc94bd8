/**
 * POST /api/ingest (one event → 202) and POST /api/ingest/batch (≤ maxBatchEvents → 207 with a status per item).
 *
 * Order of checks: Bearer key (401) → rate limit, one token per request (429) → Content-Type (415) →
 * size (413) → JSON (400) → schema (422). A 2xx is sent only after ports.log.append resolved, i.e. the events
 * are durable; a log that cannot take them answers 503 + Retry-After and nothing is acknowledged.
 */
import type { Context } from "koa";
import { Either } from "effect";
import { parseIngestEvent, type LoggedEvent } from "../../core/events/schema.js";
import { Unavailable, ValidationError } from "../../core/errors.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody } from "../json-body.js";
import { toHttpError } from "../http-errors.js";
import type { ApiKeyAuth, KeyPrincipal } from "./api-key-auth.js";
import { enrichEvent } from "./enrich.js";
import { enforceRateLimit } from "./rate-limit.js";

export interface IngestHandlers {
  single(ctx: Context): Promise<void>;
  batch(ctx: Context): Promise<void>;
}

type BatchResult =
  | { index: number; status: 202; event_id: string; run_id: string; sdk_run_id: string }
  | { index: number; status: 422; error: { code: string; message: string; field?: string } };

export function ingestHandlers(deps: WebDeps, auth: ApiKeyAuth): IngestHandlers {
  const { config, log, limiter } = deps.ports;
  const logger = deps.logger;

  const admit = async (ctx: Context): Promise<KeyPrincipal> => {
    const principal = await auth.authenticate(ctx.req.headers.authorization);
    await enforceRateLimit(ctx, limiter, `ingest:${principal.keyId}`, logger);
    return principal;
  };

  /** Appends durably; anything but Unavailable is an internal error (logged, 500, nothing acknowledged). */
  const append = async (events: readonly LoggedEvent[]): Promise<void> => {
    try {
      await log.append(events);
    } catch (err) {
      if ((err as { _tag?: string })._tag === "Unavailable") throw err;
      logger.error("event log append failed", { err, events: events.length });
      throw new Unavailable({ service: "event log", message: "the event could not be stored", cause: err });
    }
  };

  return {
    async single(ctx) {
      const principal = await admit(ctx);
      const body = await readJsonBody(ctx, config.maxBodyBytes);
      const parsed = parseIngestEvent(body);
      if (Either.isLeft(parsed)) throw parsed.left;
      const event = enrichEvent(parsed.right, principal.userId, new Date());
      await append([event]);
      ctx.status = 202;
      ctx.body = { event_id: event.event_id, run_id: event.run_id, sdk_run_id: event.sdk_run_id };
    },

    async batch(ctx) {
      const principal = await admit(ctx);
      const body = await readJsonBody(ctx, config.maxBodyBytes);
      const items = (body as { events?: unknown } | null)?.events;
      if (typeof body !== "object" || body === null || Array.isArray(body)) {
        throw new ValidationError({ message: 'the body must be an object like {"events": [...]}', field: "events" });
      }
      if (!Array.isArray(items)) throw new ValidationError({ message: "events is required and must be an array of events", field: "events" });
      if (items.length === 0) throw new ValidationError({ message: "events must contain at least one event", field: "events" });
      if (items.length > config.maxBatchEvents) {
        throw new ValidationError({ message: `a batch holds at most ${config.maxBatchEvents} events; got ${items.length}`, field: "events" });
      }
      const receivedAt = new Date();
      const results: BatchResult[] = new Array(items.length);
      const accepted: LoggedEvent[] = [];
      const runIds = new Map<string, string>();
      for (let i = 0; i < items.length; i++) {
        const parsed = parseIngestEvent(items[i]);
        if (Either.isLeft(parsed)) {
          results[i] = { index: i, status: 422, error: toHttpError(parsed.left).body.error };
        } else {
          const e = enrichEvent(parsed.right, principal.userId, receivedAt, runIds);
          accepted.push(e);
          results[i] = { index: i, status: 202, event_id: e.event_id, run_id: e.run_id, sdk_run_id: e.sdk_run_id };
        }
      }
      if (accepted.length > 0) await append(accepted);
      ctx.status = 207;
      ctx.body = { accepted: accepted.length, rejected: items.length - accepted.length, results };
    },
  };
}
