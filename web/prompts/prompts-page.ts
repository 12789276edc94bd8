/**
 * The dashboard's prompts (docs/PROMPTS.md):
 *
 *   GET  /prompts                     the project's prompts; POST /prompts pushes the first version of a new one
 *   GET  /prompts/:name?version&from&to  a version (default the newest), the versions, the labels, the diff of two
 *   POST /prompts/:name/versions      a new version from the form (prefilled with the version shown)
 *   POST /prompts/:name/labels        point a label at a version: a move, or a rollback to an older one; `production`
 *                                     through the gate (prompts/gate.ts), forced by an admin with `force` and a reason
 *
 * Reads need `read`, writes `edit_prompts` (core/access/roles.ts); a viewer sees no form.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { can } from "../../core/access/roles.js";
import { ValidationError } from "../../core/errors.js";
import { diffPromptVersions, labelThroughGate, promptExperiments, promptVersions, pushPromptVersion, readPrompt, type PromptVersionView, type SideDiff } from "../../prompts/index.js";
import { listPrompts, MAX_VERSIONS } from "../../stores/prompts.js";
import { promptVersionScores, promptVersionUsage } from "../../stores/llm-calls.js";
import { promptGateRules } from "../../stores/prompt-gate-rules.js";
import { projectOfRequest } from "../auth/project.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { formAction, readForm, redirectAfterPost } from "../forms.js";
import { queryParam, renderPage } from "../common/render.js";
import { mountPages } from "../route-table.js";
import { experimentFormVars } from "./experiment-form.js";

/** The versions a prompt's page lists; older ones are read by number (?version=). */
const VERSIONS_SHOWN = 200;
const promptPath = (name: string) => `/prompts/${encodeURIComponent(name)}`;
const userOf = (ctx: Context) => (ctx.state.user as SessionUser).id;

export function registerPromptsPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /prompts": promptsPage, "GET /prompts/:name": promptPage },
    edit_prompts: { "POST /prompts": createPrompt, "POST /prompts/:name/versions": addVersion, "POST /prompts/:name/labels": moveLabel },
  });
}

async function promptsPage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const prompts = await listPrompts(deps.ports.sql, projectOfRequest(ctx).id);
  const withLabels = prompts.map((p) => ({ ...p, label_list: Object.entries(p.labels).map(([label, version]) => ({ label, version })) }));
  renderPage(ctx, "prompts.njk", { title: "Prompts", prompts: withLabels, values: { format: "text" }, errors: {}, ...extra }, status);
}

/**
 * A version's body from the form: the prompt as text, or chat messages as a JSON array; the model config's fields;
 * labels comma-separated. A JSON that does not parse is refused naming its field.
 */
export function versionBody(form: Readonly<Record<string, string | undefined>>): Record<string, unknown> {
  const json = (field: string, text: string | undefined) => {
    if (!text?.trim()) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ValidationError({ field, message: `${field} must be JSON` });
    }
  };
  const prompt = form.format === "chat" ? json("prompt", form.prompt) ?? [] : form.prompt ?? "";
  const config: Record<string, unknown> = {};
  if (form.provider?.trim()) config.provider = form.provider.trim();
  if (form.model?.trim()) config.model = form.model.trim();
  const parameters = json("parameters", form.parameters);
  if (parameters !== undefined) config.parameters = parameters;
  const tools = json("tools", form.tools);
  if (tools !== undefined) config.tools = tools;
  const responseFormat = json("response_format", form.response_format);
  if (responseFormat !== undefined) config.response_format = responseFormat;
  const labels = (form.labels ?? "").split(",").map((l) => l.trim()).filter(Boolean);
  return { prompt, config, message: form.message ?? "", ...(labels.length ? { labels } : {}) };
}

/** The page's field a refusal names: `config.model` → `model`, `prompt.0.role` → `prompt`, `labels.1` → `labels`. */
export const formField = (field: string) => (field.startsWith("config.") ? field.split(".")[1]! : field.split(".")[0]!);

async function createPrompt(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  await formAction({
    refuses: ["ValidationError", "Conflict"],
    run: async () => {
      const name = (form.name ?? "").trim();
      const exists = (await listPrompts(deps.ports.sql, projectOfRequest(ctx).id)).some((p) => p.name === name);
      if (exists) throw new ValidationError({ field: "name", message: `a prompt named ${JSON.stringify(name)} exists: open it to add a version` });
      const v = await pushPromptVersion(deps.ports.sql, projectOfRequest(ctx).id, userOf(ctx), name, versionBody(form));
      redirectAfterPost(ctx, promptPath(v.name), `Created ${v.name} v${v.version}`);
    },
    refused: (r) => promptsPage(ctx, deps, { values: form, errors: { [formField(r.field)]: r.message }, open_form: true }, r.status),
  });
}

/** Form values that show `v` in the new-version form, to change it into the next version. */
export function formValuesOf(v: Pick<PromptVersionView, "type" | "prompt" | "config">): Record<string, string> {
  const json = (x: unknown) => (x === undefined ? "" : JSON.stringify(x, null, 2));
  return {
    format: v.type, prompt: typeof v.prompt === "string" ? v.prompt : json(v.prompt),
    provider: v.config.provider ?? "", model: v.config.model ?? "",
    parameters: json(v.config.parameters), tools: json(v.config.tools), response_format: json(v.config.response_format), message: "", labels: "",
  };
}

/** The diff as the page's lines: `add`, `del` or `ctx`, each one line of text. */
function diffLinesOf(side: SideDiff): { kind: string; text: string }[] | null {
  if (!side.parts) return null;
  return side.parts.flatMap((p) => p.text.replace(/\n$/, "").split("\n")
    .map((text) => ({ kind: p.op === "add" ? "add" : p.op === "remove" ? "del" : "ctx", text: `${p.op === "add" ? "+" : p.op === "remove" ? "-" : " "} ${text}` })));
}

function versionParam(ctx: Context, name: string): number | undefined {
  const n = Number(queryParam(ctx, name));
  return Number.isInteger(n) && n >= 1 && n <= MAX_VERSIONS ? n : undefined;
}

export async function promptPage(ctx: Context, deps: WebDeps, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const { sql } = deps.ports;
  const projectId = projectOfRequest(ctx).id;
  const name = String(ctx.params.name);
  const asked = versionParam(ctx, "version");
  const shown = await readPrompt(sql, projectId, name, asked ? { version: asked } : { latest: true });
  const versions = await promptVersions(sql, projectId, name, { limit: VERSIONS_SHOWN });
  const [summary, usage, scores, gateRules] = await Promise.all([
    listPrompts(sql, projectId).then((all) => all.find((p) => p.name === name)!),
    promptVersionUsage(deps.ports.clickhouse, projectId, name, VERSIONS_SHOWN),
    promptVersionScores(deps.ports.clickhouse, projectId, name),
    promptGateRules(sql, projectId, name),
  ]);
  const scoresByVersion: Record<number, { name: string; mean: number; count: number }[]> = {};
  for (const s of scores) (scoresByVersion[s.version] ??= []).push({ name: s.name, mean: s.mean, count: s.count });
  const experiments = await promptExperiments(sql, deps.ports.clickhouse, projectId, name, summary.labels.production ?? null);
  const labels = Object.entries(summary.labels).map(([label, version]) => ({ label, version }));
  const runForm = await experimentFormVars(deps, projectId, name, can(projectOfRequest(ctx).role, "edit_prompts"));
  const newest = versions[0]!.version;
  const from = versionParam(ctx, "from") ?? (newest > 1 ? newest - 1 : newest);
  const to = versionParam(ctx, "to") ?? newest;
  let diff: { prompt: ReturnType<typeof diffLinesOf>; config: ReturnType<typeof diffLinesOf>; from: number; to: number } | null = null;
  if (from !== to && from <= newest && to <= newest) {
    const d = await diffPromptVersions(sql, projectId, name, from, to);
    diff = { prompt: diffLinesOf(d.diff.prompt), config: d.diff.config.changed ? diffLinesOf(d.diff.config) : [], from, to };
  }
  renderPage(ctx, "prompt.njk", {
    title: `Prompt ${name}`, name, shown, versions, labels, newest, usage: Object.fromEntries(usage.map((u) => [u.version, u])), scores: scoresByVersion, gate_rules: gateRules, gate_values: {}, gate_errors: {}, experiments, diff, diff_from: from, diff_to: to,
    values: formValuesOf(shown), errors: {}, label_values: {}, label_errors: {}, ...runForm, run_values: {}, run_errors: {}, flash: queryParam(ctx, "flash"), ...extra,
  }, status);
}

async function addVersion(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const name = String(ctx.params.name);
  await readPrompt(deps.ports.sql, projectOfRequest(ctx).id, name, { latest: true });
  await formAction({
    refuses: ["ValidationError"],
    run: async () => {
      const v = await pushPromptVersion(deps.ports.sql, projectOfRequest(ctx).id, userOf(ctx), name, versionBody(form));
      redirectAfterPost(ctx, promptPath(name), `Saved v${v.version}`);
    },
    refused: (r) => promptPage(ctx, deps, { values: form, errors: { [formField(r.field)]: r.message }, open_form: true }, r.status),
  });
}

async function moveLabel(ctx: Context, deps: WebDeps): Promise<void> {
  const form = await readForm(ctx);
  const name = String(ctx.params.name);
  await formAction({
    refuses: ["ValidationError", "AuthError"],
    field: "label",
    run: async () => {
      const version = Number(form.version);
      if (!Number.isInteger(version) || version < 1) throw new ValidationError({ field: "version", message: "pick a version" });
      const project = projectOfRequest(ctx);
      const force = form.force === "on" ? { reason: form.reason ?? "", allowed: can(project.role, "force_activation") } : undefined;
      const moved = await labelThroughGate(deps.ports.sql, deps.ports.clickhouse, project.id, userOf(ctx), name, (form.label ?? "").trim(), version, force);
      if (!moved.moved) {
        // Refused by the gate on production: the page again, saying why, with the force form for an admin.
        return promptPage(ctx, deps, { label_values: form, label_errors: { label: moved.refusal.message }, gate_refused: { version } }, 409);
      }
      const what = moved.previous === null ? `set to v${moved.version}` : moved.previous === moved.version ? `already at v${moved.version}` : `moved v${moved.previous} → v${moved.version}`;
      redirectAfterPost(ctx, promptPath(name), `${moved.label} ${what}${moved.forced ? " (forced past the gate)" : ""}`);
    },
    refused: (r) => promptPage(ctx, deps, { label_values: form, label_errors: { [r.field]: r.message } }, r.status),
  });
}
