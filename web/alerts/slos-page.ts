/**
 * /slos: the project's SLOs, each with its budget left and its burn rates now (the API's numbers) and its burn over
 * the window (a chart drawn by web/static/slos-chart.js from the JSON in the page); the role that edits alert rules
 * also creates and deletes SLOs here (the form posts the API's fields; a refusal names the field, as the API's 422).
 *
 *   GET  /slos                 the list, the charts, the form
 *   POST /slos                 create          POST /slos/:id/delete   delete
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import { projectOfRequest } from "../auth/project.js";
import { queryParam, renderPage } from "../common/render.js";
import { formAction, readForm, redirectAfterPost } from "../forms.js";
import { ValidationError } from "../../core/errors.js";
import { BURN_ALERTS, burnOverTime, sloSlices } from "../../alerts/index.js";
import { SLO_OBJECTIVES, createSlo, deleteSlo, listSlos } from "../../stores/slos.js";
import { mountPages } from "../route-table.js";
import { slosWithTallies } from "./slos-api.js";

/** Slices of an SLO's window in its chart, of whole hours: a day each of a 30-day SLO, an hour each of a 1-day one. */
const CHART_SLICES = 30;

export function registerSlosPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /slos": (ctx: Context) => slosPage(ctx, deps) },
    edit_alert_rules: {
      "POST /slos": (ctx: Context) => createFromForm(ctx, deps),
      "POST /slos/:id/delete": (ctx: Context) => deleteFromForm(ctx, deps),
    },
  });
}

async function slosPage(ctx: Context, deps: WebDeps, form: { values?: Record<string, string>; errors?: Record<string, string> } = {}, status = 200): Promise<void> {
  const project = projectOfRequest(ctx);
  const now = new Date();
  const read = await slosWithTallies(deps, project.id, await listSlos(deps.ports.sql, project.id), now);
  const charts = read.map((s) => ({ id: s.id, name: s.name, points: burnOverTime(s, sloSlices(s, s.tallies, now, CHART_SLICES)) }));
  const slos = read.map(({ tallies: _, ...s }) => s);
  renderPage(ctx, "slos.njk", {
    title: "SLOs", slos, burn: BURN_ALERTS, charts, objectives: SLO_OBJECTIVES, flash: queryParam(ctx, "flash"),
    values: form.values ?? { objective: "success_rate", target: "0.99", window_days: "30" }, errors: form.errors ?? {}, open_form: Boolean(form.errors),
  }, status);
}

/** The form's strings as the API's body: numbers where the API wants them, an empty optional field left out. */
function sloBody(form: Record<string, string>): Record<string, unknown> {
  const number = (field: string): number | undefined => {
    const raw = (form[field] ?? "").trim();
    if (raw === "") return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new ValidationError({ field, message: `${field} must be a number` });
    return n;
  };
  const body: Record<string, unknown> = {
    name: form.name ?? "", agent_name: (form.agent_name ?? "").trim(), objective: form.objective ?? "",
    target: number("target") ?? NaN, window_days: number("window_days") ?? NaN,
  };
  if (body.objective === "latency") body.threshold_seconds = number("threshold_seconds");
  if (body.objective === "score_mean") body.score_name = (form.score_name ?? "").trim() || undefined;
  return body;
}

async function createFromForm(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  await formAction({
    refuses: ["ValidationError"],
    field: "name",
    run: async () => {
      const slo = await createSlo(deps.ports.sql, projectOfRequest(ctx).id, sloBody(form));
      redirectAfterPost(ctx, "/slos", `Created the SLO “${slo.name}”.`);
    },
    refused: (r) => slosPage(ctx, deps, { values: form, errors: { [r.field]: r.message } }, r.status),
  });
}

async function deleteFromForm(ctx: Context, deps: WebDeps): Promise<void> {
  await readForm(ctx);
  const id = Number(ctx.params.id);
  if (!Number.isSafeInteger(id) || id <= 0) throw new ValidationError({ field: "id", message: "id must be a whole number" });
  await deleteSlo(deps.ports.sql, projectOfRequest(ctx).id, id);
  redirectAfterPost(ctx, "/slos", "SLO deleted.");
}
