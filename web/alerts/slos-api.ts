/**
 * SLOs (docs/ALERTS.md, SLOs): GET /api/slos (each with its budget and burn rates now), POST /api/slos (422 naming the
 * field), GET /api/slos/{id}, DELETE /api/slos/{id} (Bearer key; reading needs read, changing edit_alert_rules). The
 * budget and burn arithmetic is alerts/slos/budget.ts, the tallies stores/slos.ts; the `/slos` page shows the same.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { objectiveInWords, sloStatus, sloTalliesAt, type SloStatus } from "../../alerts/index.js";
import { createSlo, deleteSlo, getSlo, listSlos, type Slo } from "../../stores/slos.js";
import type { SloTallies } from "../../stores/slo-hours.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import { readJsonBody } from "../json-body.js";
import { mountApi } from "../route-table.js";

export interface SloWithStatus extends Slo {
  readonly objective_text: string;
  readonly status: SloStatus;
}

/**
 * Each SLO with its budget and burn rates as of `now`, and the tallies they came from (the page charts their hours):
 * one read for all of them (alerts/slos/tallies.ts).
 */
export async function slosWithTallies(deps: WebDeps, projectId: number, slos: readonly Slo[], now = new Date()): Promise<(SloWithStatus & { readonly tallies: SloTallies })[]> {
  const tallies = await sloTalliesAt(deps.ports.clickhouse, projectId, slos, now);
  return slos.map((slo, i) => ({ ...slo, objective_text: objectiveInWords(slo), status: sloStatus(slo, tallies[i]!.windows), tallies: tallies[i]! }));
}

/** Each SLO with its budget and burn rates as of `now`. */
export async function slosWithStatus(deps: WebDeps, projectId: number, slos: readonly Slo[], now = new Date()): Promise<SloWithStatus[]> {
  return (await slosWithTallies(deps, projectId, slos, now)).map(({ tallies: _, ...s }) => s);
}

export function registerSlosApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), {
    read: {
      "GET /api/slos": async (ctx) => {
        const p = keyPrincipalOf(ctx);
        ctx.body = { slos: await slosWithStatus(deps, p.projectId, await listSlos(deps.ports.sql, p.projectId)) };
      },
      "GET /api/slos/:id": async (ctx) => {
        const p = keyPrincipalOf(ctx);
        ctx.body = { slo: (await slosWithStatus(deps, p.projectId, [await getSlo(deps.ports.sql, p.projectId, sloId(ctx))]))[0] };
      },
    },
    edit_alert_rules: {
      "POST /api/slos": async (ctx) => {
        const p = keyPrincipalOf(ctx);
        const slo = await createSlo(deps.ports.sql, p.projectId, await readJsonBody(ctx, 16 * 1024));
        ctx.status = 201;
        ctx.body = { slo: (await slosWithStatus(deps, p.projectId, [slo]))[0] };
      },
      "DELETE /api/slos/:id": async (ctx) => {
        await deleteSlo(deps.ports.sql, keyPrincipalOf(ctx).projectId, sloId(ctx));
        ctx.status = 204;
      },
    },
  });
}

function sloId(ctx: Context): number {
  const raw = String(ctx.params.id);
  const n = Number(raw);
  if (!/^\d{1,15}$/.test(raw) || !Number.isSafeInteger(n)) throw new ValidationError({ field: "id", message: "id must be a whole number" });
  return n;
}
