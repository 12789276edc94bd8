/**
 * The playground page (docs/PROMPTS.md, Playground):
 *
 *   GET  /prompts/:name/playground?a=&b=   one or two versions side by side (a: default the newest; b: none), each
 *                                          editable, with a field per `{{variable}}` they name
 *   POST /prompts/:name/playground         run both sides at once (playground-run.ts): each shows the rendered
 *                                          messages, the answer, tokens, cost and latency, or why it failed
 *   POST /prompts/:name/playground/save?side=a|b  the side as edited, with a commit message, as a new version
 *   POST /prompts/:name/playground/draft   an LLM span opened from the trace view (web/static/trace/playground-link.js):
 *                                          its messages and model as side A, a draft of this prompt — which need not
 *                                          exist yet: saving the draft creates it
 *
 * Reading needs `read` (a viewer sees the versions, no run or save); running and saving `edit_prompts`.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { NotFound, ValidationError } from "../../core/errors.js";
import { promptVariables, promptVersions, pushPromptVersion, readPrompt, type PromptVersionView } from "../../prompts/index.js";
import { MAX_VERSIONS } from "../../stores/prompts.js";
import { checkPromptName, checkPromptVersion } from "../../stores/prompt-input.js";
import { projectOfRequest } from "../auth/project.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { readForm, redirectAfterPost } from "../forms.js";
import { appErrorTag, HttpProblem, toHttpError } from "../http-errors.js";
import { queryParam, renderPage } from "../common/render.js";
import { mountPages } from "../route-table.js";
import { formField, formValuesOf, versionBody } from "./prompts-page.js";
import { runPlayground, type PlaygroundRun } from "./playground-run.js";

const VERSIONS_LISTED = 200;
const SIDES = ["a", "b"] as const;
type SideKey = (typeof SIDES)[number];
const FIELDS = ["format", "prompt", "provider", "model", "parameters", "tools", "response_format"] as const;
const VAR = "var:";

/** A side as the page shows it: the version it came from, its fields as typed, what its run gave. */
export interface Side {
  readonly key: SideKey;
  readonly version: number | null;
  readonly values: Record<string, string>;
  /** Its fields differ from the version's. */
  edited?: boolean;
  run?: PlaygroundRun;
  error?: { field: string; message: string; status: number };
}

export function registerPlaygroundPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /prompts/:name/playground": playgroundPage },
    edit_prompts: {
      "POST /prompts/:name/playground": runSides, "POST /prompts/:name/playground/save": saveSide, "POST /prompts/:name/playground/draft": spanDraft,
    },
  });
}

function versionParam(v: string | undefined): number | undefined {
  const n = Number(v);
  return v !== undefined && Number.isInteger(n) && n >= 1 && n <= MAX_VERSIONS ? n : undefined;
}

const sideOfVersion = (key: SideKey, v: PromptVersionView): Side => ({ key, version: v.version, values: { ...formValuesOf(v), message: "", labels: "" }, edited: false });

/** The sides as posted: a side is there when its prompt is; `b` may be absent. */
function sidesOfForm(form: Record<string, string>): Side[] {
  return SIDES.flatMap((key) => {
    if (!(form[`${key}_prompt`] ?? "").trim() && key === "b") return [];
    const values = Object.fromEntries(FIELDS.map((f) => [f, form[`${key}_${f}`] ?? ""]));
    return [{ key, version: versionParam(form[`${key}_version`]) ?? null, values }];
  });
}

/** The variables' fields; one left empty is missing (the run says so) rather than filled with nothing. */
function variablesOfForm(form: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(form).filter(([k, v]) => k.startsWith(VAR) && v !== "").map(([k, v]) => [k.slice(VAR.length), v]));
}

/** Every variable the sides name, in order of first appearance; a side whose prompt does not parse names none. */
function variablesOf(sides: readonly Side[]): string[] {
  const names = new Set<string>();
  for (const s of sides) {
    try {
      const body = versionBody(s.values);
      for (const v of promptVariables(body.prompt as never)) names.add(v);
    } catch {
      // Shown as the side's error when it runs.
    }
  }
  return [...names];
}

/** The prompt's versions, none when it has none yet (a draft opened from a span names a new prompt). */
async function versionsOf(deps: WebDeps, projectId: number, name: string): Promise<PromptVersionView[]> {
  try {
    return await promptVersions(deps.ports.sql, projectId, name, { limit: VERSIONS_LISTED });
  } catch (err) {
    if (err instanceof NotFound && err.resource === "prompt") return [];
    throw err;
  }
}

async function render(ctx: Context, deps: WebDeps, sides: Side[], extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const name = checkPromptName(String(ctx.params.name));
  const versions = await versionsOf(deps, projectOfRequest(ctx).id, name);
  renderPage(ctx, "playground.njk", {
    title: `Playground · ${name}`, name, versions, sides, variables: variablesOf(sides), var_values: {}, save_errors: {},
    side_b: sides.some((s) => s.key === "b"), picked: { a: sides[0]?.version ?? null, b: sides[1]?.version ?? null }, ...extra,
  }, status);
}

async function playgroundPage(ctx: Context, deps: WebDeps): Promise<void> {
  const { sql } = deps.ports;
  const projectId = projectOfRequest(ctx).id;
  const name = String(ctx.params.name);
  const newest = await readPrompt(sql, projectId, name, { latest: true });
  const a = versionParam(queryParam(ctx, "a"));
  const b = versionParam(queryParam(ctx, "b"));
  const sides = [sideOfVersion("a", a ? await readPrompt(sql, projectId, name, { version: a }) : newest)];
  if (b) sides.push(sideOfVersion("b", await readPrompt(sql, projectId, name, { version: b })));
  await render(ctx, deps, sides, { flash: queryParam(ctx, "flash") });
}

/** The error a side shows: a refusal's message and field, with its status; anything else goes to the error page. */
function sideError(err: unknown): { field: string; message: string; status: number } {
  if (!(err instanceof HttpProblem) && appErrorTag(err) === undefined) throw err;
  const { status, body } = toHttpError(err);
  return { field: body.error.field ?? "form", message: body.error.message, status };
}

/** JSON with every object's keys sorted: a stored config's key order is Postgres jsonb's, not the form's. */
const canonical = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) =>
  x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x);

/** Whether a side's fields are its version's as stored (checked as a version's body is). */
async function isEdited(ctx: Context, deps: WebDeps, name: string, side: Side): Promise<boolean> {
  if (side.version === null) return true;
  const stored = await readPrompt(deps.ports.sql, projectOfRequest(ctx).id, name, { version: side.version });
  try {
    const now = checkPromptVersion(versionBody(side.values));
    return canonical([now.content, now.config]) !== canonical([stored.prompt, stored.config]);
  } catch {
    return true;
  }
}

async function runSides(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const name = String(ctx.params.name);
  const projectId = projectOfRequest(ctx).id;
  checkPromptName(name);
  const sides = sidesOfForm(form);
  const vars = variablesOfForm(form);
  // Both sides at once: the page waits for the slower one, not for both in a row.
  await Promise.all(sides.map(async (side) => {
    side.edited = await isEdited(ctx, deps, name, side);
    try {
      const body = versionBody(side.values);
      side.run = await runPlayground(deps, projectId, name, { draft: { prompt: body.prompt, config: body.config }, ...(side.version ? { from: side.version } : {}) }, vars);
    } catch (err) {
      side.error = sideError(err);
    }
  }));
  const failed = sides.find((s) => s.error);
  await render(ctx, deps, sides, { var_values: vars, message: form.message ?? "" }, failed?.error?.status ?? 200);
}

async function saveSide(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const name = String(ctx.params.name);
  const projectId = projectOfRequest(ctx).id;
  checkPromptName(name);
  const sides = sidesOfForm(form);
  const key = queryParam(ctx, "side") === "b" ? "b" : "a";
  const side = sides.find((s) => s.key === key);
  const vars = variablesOfForm(form);
  try {
    if (!side) throw new ValidationError({ field: "prompt", message: `side ${key.toUpperCase()} has no prompt to save` });
    const v = await pushPromptVersion(deps.ports.sql, projectId, (ctx.state.user as SessionUser).id, name, versionBody({ ...side.values, message: form.message ?? "" }));
    redirectAfterPost(ctx, `/prompts/${encodeURIComponent(name)}`, `Saved v${v.version}`);
  } catch (err) {
    const e = sideError(err);
    await render(ctx, deps, sides, { var_values: vars, message: form.message ?? "", save_errors: { [key]: `${formField(e.field)}: ${e.message}` } }, e.status);
  }
}

/** A span's provider as the playground names it: its own ids, Google's names for Gemini; anything else is left to pick. */
const PROVIDER_OF: Record<string, string> = { openai: "openai", anthropic: "anthropic", gemini: "gemini", google: "gemini", google_genai: "gemini", "gcp.gemini": "gemini", "gcp.vertex_ai": "gemini", vertex_ai: "gemini" };

async function spanDraft(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  let messages: unknown;
  try {
    messages = JSON.parse(form.messages ?? "");
  } catch {
    throw new ValidationError({ field: "messages", message: "messages must be the span's messages as JSON" });
  }
  // Checked as a version's body would be, so the draft shown is one the playground can run and save.
  const draft = checkPromptVersion({ prompt: messages, config: {} });
  const provider = PROVIDER_OF[(form.provider ?? "").trim().toLowerCase()] ?? "";
  const values = {
    ...formValuesOf({ type: draft.type, prompt: draft.content, config: {} }),
    provider, model: (form.model ?? "").trim().slice(0, 200),
  };
  const from = versionParam(form.version);
  await render(ctx, deps, [{ key: "a", version: null, values, edited: true }], { from_span: { version: from ?? null } });
}
