/**
 * POST /api/ingest (one event → 202) and POST /api/ingest/batch (≤ maxBatchEvents → 207 with a status per item).
 *
 * Order of checks: Bearer key (401) → rate limit, one token per request (429) → Content-Type (415) →
 * size (413) → JSON (400) → schema (422) → the user's quota in events (429). A 2xx is sent only after ports.log.append resolved, i.e. the events
 * are durable; a log that cannot take them answers 503 + Retry-After and nothing is acknowledged.
 */
import type { Context } from "koa";
import { Either } from "effect";
import { parseIngestEvent } from "../../core/events/schema.js";
import type { WebDeps } from "../deps.js";
import { readJsonBody, readJsonBodyBytes } from "../json-body.js";
import { HttpProblem } from "../http-errors.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { enrichEvent } from "../../core/events/enrich.js";
import { createAdmission, type Admitted } from "./admission.js";
import { appendDurably } from "./durable-append.js";
import { appendEvents } from "../../core/log/events.js";

export interface IngestHandlers {
  single(ctx: Context): Promise<void>;
  batch(ctx: Context): Promise<void>;
}

export function ingestHandlers(deps: WebDeps, auth: ApiKeyAuth): IngestHandlers {
  const { config, log } = deps.ports;
  const logger = deps.logger;

  const admission = createAdmission(deps, auth);
  const admit = async (ctx: Context): Promise<Admitted> => {
    const admitted = await admission(ctx.req.headers.authorization, ctx.ip);
    ctx.set(admitted.headers);
    return admitted;
  };

  const { batchDecoder } = deps;

  const append = (write: () => Promise<void>, count: number) => appendDurably(write, count, logger);

  return {
    async single(ctx) {
      const { principal, take } = await admit(ctx);
      const body = await readJsonBody(ctx, config.maxBodyBytes, { unstorable: "repair" });
      const parsed = parseIngestEvent(body);
      if (Either.isLeft(parsed)) throw parsed.left;
      await take(1);
      const event = enrichEvent(parsed.right, principal, new Date());
      await append(() => appendEvents(log, [event]), 1);
      ctx.status = 202;
      ctx.body = { event_id: event.event_id, run_id: event.run_id, sdk_run_id: event.sdk_run_id };
    },

    async batch(ctx) {
      const { principal, take } = await admit(ctx);
      const body = await readJsonBodyBytes(ctx, config.maxBodyBytes);
      const decoded = await batchDecoder.decode(body, principal, Date.now());
      if (!decoded.ok) throw new HttpProblem(decoded.status, decoded.error.code, decoded.error.message, decoded.error.field);
      await take(decoded.accepted);
      if (decoded.accepted > 0) await append(() => log.append(decoded.events), decoded.accepted);
      ctx.status = 207;
      ctx.type = "application/json";
      ctx.body = decoded.response;
    },
  };
}
