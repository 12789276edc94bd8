/**
 * GET/POST /improve: the code-improvement page. The logged-in user pastes code, picks provider, model and
 * temperature (defaults from their project_settings row, else the agents service's defaults) and gets the detected
 * language, suggestions and a diff. web calls agents-service server-side with X-Agent-Secret (config.agentsUrl);
 * the secret never reaches the browser. The form is CSRF-protected by the app-wide csrfProtection middleware.
 */
import { loadUserLlmSettings, saveUserLlmSettings } from "../../stores/user-settings.js";
import type Router from "@koa/router";
import { addSpend, spentToday } from "../../stores/improve-spend.js";
import { check, refuse, waitText } from "../middleware/throttles.js";
import type { Context } from "koa";
import type { SessionUser, WebDeps } from "../deps.js";
import { projectOfRequest } from "../auth/project.js";
import { readForm } from "../forms.js";
import { renderPage } from "../common/render.js";
import { resolveAgentSecret } from "../../core/agents/secret.js";
import { LANGUAGES, languageName } from "../../core/agents/languages.js";
import type { ImproveResponse } from "../../core/agents/contract.js";
import { callAgents, isAgentsFailure } from "../../core/agents/client.js";
import { mountPages } from "../route-table.js";

/** Longer than the service's own provider timeout (120 s by default), so its 504 arrives first. */
const IMPROVE_TIMEOUT_MS = 150_000;
const PROVIDERS_TIMEOUT_MS = 3_000;

interface ProviderEntry {
  id: string;
  name: string;
  configured: boolean;
  default_model: string;
  max_temperature: number;
  models: Array<{ id: string; price_usd: { input_per_mtok: number; output_per_mtok: number } | null }>;
}
interface ProvidersBody {
  default_provider: string | null;
  providers: ProviderEntry[];
}

const isFailure = isAgentsFailure;

/** Diff lines with a CSS class each, for server-side rendering. */
export function diffRows(diff: string): Array<{ cls: string; text: string }> {
  if (!diff) return [];
  return diff.replace(/\n$/, "").split("\n").map((text) => ({
    text,
    cls: text.startsWith("+++") || text.startsWith("---") ? "meta" : text.startsWith("@@") ? "hunk" : text.startsWith("+") ? "add" : text.startsWith("-") ? "del" : text.startsWith("\\") ? "meta" : "ctx",
  }));
}

interface FormValues {
  code: string;
  language: string;
  provider: string;
  model: string;
  temperature: string;
  instructions: string;
  save_defaults: boolean;
}

export function registerImprovePage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /improve": (ctx) => improvePage(ctx, deps, undefined) },
    edit_agents: { "POST /improve": improve },
  });
}

/** The page: the form (as typed, else with the saved defaults) and `extra`, a result or a failure. */
async function improvePage(ctx: Context, deps: WebDeps, form: FormValues | undefined, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const project = projectOfRequest(ctx);
  const [saved, providers] = await Promise.all([
    loadUserLlmSettings(deps.ports.sql, project.id),
    callAgents<ProvidersBody>(deps.ports.config, "/providers", { method: "GET", timeoutMs: PROVIDERS_TIMEOUT_MS }),
  ]);
  const list = isFailure(providers) ? null : providers;
  const provider = form?.provider || saved.provider || list?.default_provider || "";
  const entry = list?.providers.find((p) => p.id === provider);
  const values: FormValues = form ?? {
    code: "",
    language: "",
    provider,
    model: (saved.provider === provider || !saved.provider ? saved.model : null) ?? entry?.default_model ?? "",
    temperature: saved.temperature !== null ? String(saved.temperature) : "",
    instructions: "",
    save_defaults: false,
  };
  renderPage(ctx, "improve.njk", {
    title: "Improve code",
    values,
    saved,
    providers: list?.providers ?? [],
    providersError: isFailure(providers) ? providers.message : null,
    languages: LANGUAGES.filter((l) => l.id !== "plaintext").map((l) => ({ id: l.id, name: l.name })),
    ...extra,
  }, status);
}

const formValues = (f: Record<string, string>): FormValues => ({
  code: f.code ?? "",
  language: (f.language ?? "").trim(),
  provider: (f.provider ?? "").trim(),
  model: (f.model ?? "").trim(),
  temperature: (f.temperature ?? "").trim(),
  instructions: f.instructions ?? "",
  save_defaults: f.save_defaults === "on",
});

/** POST /improve: the agents service's suggestions for the code, and the saved defaults when asked. */
async function improve(ctx: Context, deps: WebDeps): Promise<void> {
  const user = ctx.state.user as SessionUser;
  const project = projectOfRequest(ctx);
  const values = formValues(await readForm(ctx));
  const temperature = values.temperature === "" ? undefined : Number(values.temperature);
  if (temperature !== undefined && !Number.isFinite(temperature)) {
    return improvePage(ctx, deps, values, { failure: { status: 422, code: "validation_failed", message: "temperature must be a number", field: "temperature" } }, 422);
  }
  if (await overQuota(ctx, deps, user, values)) return;
  let secret: string;
  try {
    secret = await resolveAgentSecret(deps.ports.config);
  } catch (err) {
    return improvePage(ctx, deps, values, { failure: { status: 503, code: "agents_not_configured", message: (err as Error).message } }, 503);
  }
  const result = await askAgents(deps, secret, values, temperature);
  if (!isFailure(result)) await addSpend(deps.ports.sql, result.usage?.cost_usd ?? 0);
  if (isFailure(result)) {
    deps.logger.warn("improve failed", { user_id: user.id, code: result.code, status: result.status });
    return improvePage(ctx, deps, values, { failure: result }, result.status >= 500 ? 502 : result.status);
  }
  if (values.save_defaults) {
    await saveUserLlmSettings(deps.ports.sql, project.id, { provider: result.provider, model: values.model || null, temperature: temperature ?? null });
  }
  return improvePage(ctx, deps, { ...values, provider: result.provider }, {
    result,
    languageLabel: languageName(result.language),
    diffRows: diffRows(result.diff),
    savedDefaults: values.save_defaults,
  });
}

/**
 * The per-user quota, then the operator's daily spend cap: each call spends the operator's LLM credit. True when one
 * refuses the call (the page says which, 429 + Retry-After).
 */
async function overQuota(ctx: Context, deps: WebDeps, user: SessionUser, values: FormValues): Promise<boolean> {
  const { config } = deps.ports;
  const quota = await check(() => deps.throttles.improvePerUser.consume(String(user.id)), deps.logger);
  if (!quota.allowed) {
    const wait = waitText(refuse(ctx, quota));
    await improvePage(ctx, deps, values, { failure: { status: 429, code: "rate_limited", message: `You have used your ${config.improvePerHour} improvements for this hour. Try again in ${wait}.` } }, 429);
    return true;
  }
  if (config.improveDailyBudgetUsd > 0 && (await spentToday(deps.ports.sql)) >= config.improveDailyBudgetUsd) {
    ctx.set("Retry-After", String(secondsToMidnightUtc()));
    await improvePage(ctx, deps, values, { failure: { status: 429, code: "budget_exhausted", message: `Today's budget for code improvement ($${config.improveDailyBudgetUsd.toFixed(2)}) is used up. It resets at midnight UTC.` } }, 429);
    return true;
  }
  return false;
}

/** The agents service's POST /improve, with only the fields the user filled in (the service's defaults for the rest). */
function askAgents(deps: WebDeps, secret: string, values: FormValues, temperature: number | undefined) {
  const body = {
    code: values.code,
    ...(values.language ? { language: values.language } : {}),
    ...(values.provider ? { provider: values.provider } : {}),
    ...(values.model ? { model: values.model } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(values.instructions.trim() ? { instructions: values.instructions } : {}),
  };
  return callAgents<ImproveResponse>(deps.ports.config, "/improve", {
    method: "POST",
    headers: { "content-type": "application/json", "x-agent-secret": secret },
    body: JSON.stringify(body),
    timeoutMs: IMPROVE_TIMEOUT_MS,
  });
}

const secondsToMidnightUtc = (): number => {
  const now = new Date();
  return Math.max(1, Math.ceil((Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000));
};
