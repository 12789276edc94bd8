/**
 * GET /dead-letters: this project's events that were acknowledged but could not be stored (docs/PIPELINE.md,
 * "Failure isolation"): when, why, and the event as it was received. The dashboard and the errors page show a
 * banner with the count while there are any. Operators replay or purge them with `runwatch dead-letters`.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import { countDeadLetters, listDeadLetters } from "../../stores/dead-letters.js";
import { projectOfRequest } from "../auth/project.js";
import { renderPage } from "../common/render.js";
import { mountPages } from "../route-table.js";

const SHOWN = 100;
const RAW_CHARS = 20_000;

/** The banner's count for a project (0 when the store cannot be read: the banner is a hint, not the page). */
export const deadLetterCount = (deps: WebDeps, projectId: number): Promise<number> =>
  countDeadLetters(deps.ports.sql, { projectId }).catch(() => 0);

export function registerDeadLettersPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /dead-letters": deadLettersPage },
  });
}

async function deadLettersPage(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const [total, letters] = await Promise.all([
    countDeadLetters(deps.ports.sql, { projectId: project.id }),
    listDeadLetters(deps.ports.sql, { projectId: project.id, limit: SHOWN, maxRawChars: RAW_CHARS }),
  ]);
  renderPage(ctx, "dead-letters.njk", { title: "Events not stored", total, letters, shown: SHOWN });
}
