/**
 * POST /api/ingest (one event → 202) and POST /api/ingest/batch (≤ maxBatchEvents → 207 with a status per item).
 *
 * Order of checks: Bearer key (401) → rate limit, one token per request (429) → Content-Type (415) →
 * size (413) → JSON (400) → schema (422). A 2xx is sent only after ports.log.append resolved, i.e. the events
 * are durable; a log that cannot take them answers 503 + Retry-After and nothing is acknowledged.
 */
import type { Context } from "koa";
import { Either } from "effect";
import { parseIngestEvent } from "../../core/events/schema.js";
import { Unavailable } from "../../core/errors.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody, readJsonBodyBytes } from "../json-body.js";
import { HttpProblem } from "../http-errors.js";
import { inThreadDecoder } from "./decode-thread.js";
import type { ApiKeyAuth, KeyPrincipal } from "../middleware/api-key-auth.js";
import { enrichEvent } from "./enrich.js";
import { enforceRateLimit } from "../middleware/rate-limit.js";
import { appendEvents } from "../../core/log/events.js";

export interface IngestHandlers {
  single(ctx: Context): Promise<void>;
  batch(ctx: Context): Promise<void>;
}

export function ingestHandlers(deps: WebDeps, auth: ApiKeyAuth): IngestHandlers {
  const { config, log, limiter } = deps.ports;
  const logger = deps.logger;
  const perUser = deps.throttles.ingestPerUser;

  const admit = async (ctx: Context): Promise<KeyPrincipal> => {
    const principal = await auth.authenticate(ctx.req.headers.authorization, ctx.ip);
    await enforceRateLimit(ctx, limiter, `ingest:${principal.keyId}`, logger);
    // The same user's keys together: more keys do not buy a bigger budget.
    // RateLimit-* headers keep describing the key's budget; the user's only shows when it refuses (429).
    await enforceRateLimit(ctx, perUser, String(principal.userId), logger, { headers: false });
    return principal;
  };

  const batchDecoder = deps.batchDecoder ?? inThreadDecoder(config.maxBatchEvents);

  /** Appends durably; anything but Unavailable is an internal error (logged, 500, nothing acknowledged). */
  const append = async (write: () => Promise<void>, count: number): Promise<void> => {
    try {
      await write();
    } catch (err) {
      if ((err as { _tag?: string })._tag === "Unavailable") throw err;
      logger.error("event log append failed", { err, events: count });
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
      await append(() => appendEvents(log, [event]), 1);
      ctx.status = 202;
      ctx.body = { event_id: event.event_id, run_id: event.run_id, sdk_run_id: event.sdk_run_id };
    },

    async batch(ctx) {
      const principal = await admit(ctx);
      const body = await readJsonBodyBytes(ctx, config.maxBodyBytes);
      const decoded = await batchDecoder.decode(body, principal.userId, Date.now());
      if (!decoded.ok) throw new HttpProblem(decoded.status, decoded.error.code, decoded.error.message, decoded.error.field);
      if (decoded.accepted > 0) await append(() => log.append(decoded.events), decoded.accepted);
      ctx.status = 207;
      ctx.type = "application/json";
      ctx.body = decoded.response;
    },
  };
}
