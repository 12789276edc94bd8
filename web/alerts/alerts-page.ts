/**
 * /alerts: the user's alert rules and their notification history.
 *
 *   GET  /alerts                     rules, history (delivered / retrying / dead, attempts, last error)
 *   GET  /alerts/new                 create form          POST /alerts            create
 *   GET  /alerts/:id/edit            edit form            POST /alerts/:id        update
 *   POST /alerts/:id/toggle          enable / disable     POST /alerts/:id/delete delete
 *   POST /alerts/:id/test            queue a test notification and try it once now
 *   POST /alerts/:id/rotate-secret   new webhook signing secret
 *   POST /alerts/jobs/:id/retry      put a dead notification back in the queue
 *
 * Forms carry the CSRF token (web/auth/session.ts checks it). Every change tells the pipelines to reload the
 * user's rules (PubSub "alerts.rules").
 */
import type Router from "@koa/router";
import { check, refuse, waitText } from "../middleware/throttles.js";
import type { Context } from "koa";
import type { SessionUser, WebDeps } from "../deps.js";
import { projectOfRequest } from "../auth/project.js";
import { readForm } from "../forms.js";
import { renderPage } from "../common/render.js";
import * as alerts from "../../alerts/index.js";
import type { FieldErrors, StoredRule, TriggerRegistry } from "../../alerts/index.js";
import { mountPages } from "../route-table.js";

const HISTORY_LIMIT = 100;

const NOTICES: Record<string, string> = {
  created: "Rule created.",
  updated: "Rule saved.",
  deleted: "Rule deleted.",
  enabled: "Rule enabled.",
  disabled: "Rule disabled.",
  rotated: "New signing secret generated: update your receiver.",
  requeued: "Notification queued again.",
};

export function registerAlertsPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: {
      "GET /alerts": alertsPage,
      "GET /alerts/new": (ctx: Context) => ruleFormPage(ctx, deps, { values: formValues() }),
      "GET /alerts/:id/edit": editRulePage,
    },
    edit_alert_rules: {
      "POST /alerts": createRule,
      "POST /alerts/:id": updateRule,
      "POST /alerts/:id/toggle": toggleRule,
      "POST /alerts/:id/delete": deleteRule,
      "POST /alerts/:id/rotate-secret": rotateSecret,
      "POST /alerts/:id/test": sendTest,
      "POST /alerts/jobs/:id/retry": retryJob,
    },
  });
}

async function alertsPage(ctx: Context, deps: WebDeps): Promise<void> {
  const { sql } = deps.ports;
  const project = projectOfRequest(ctx);
  const [rules, jobs] = await Promise.all([alerts.listRules(sql, project.id), alerts.listJobs(sql, project.id, { limit: HISTORY_LIMIT })]);
  const notice = NOTICES[String(ctx.query.notice ?? "")];
  let testResult: unknown;
  const testId = Number(ctx.query.test);
  if (Number.isSafeInteger(testId) && testId > 0) {
    const job = await alerts.getJob(sql, testId);
    if (job && job.project_id === project.id) testResult = job;
  }
  renderPage(ctx, "alerts.njk", {
    title: "Alerts",
    rules: rules.map((r) => ruleView(r, deps.triggers)),
    jobs,
    limit: alerts.MAX_RULES,
    notice,
    testResult,
    smtpConfigured: Boolean(settings().smtp.host),
  });
}

function ruleFormPage(ctx: Context, deps: WebDeps, vars: { rule?: StoredRule; values: Record<string, string>; errors?: FieldErrors; notice?: string }, status = 200): void {
  renderPage(ctx, "alerts-form.njk", {
    notice: vars.notice,
    title: vars.rule ? `Edit ${vars.rule.name}` : "New alert rule",
    rule: vars.rule ?? null,
    values: vars.values,
    errors: vars.errors ?? {},
    triggers: deps.triggers.all().map((t) => ({ type: t.type, label: t.label, description: t.description, fields: t.fields, defaultCooldown: t.defaultCooldownSeconds })),
    channels: alerts.CHANNELS.map((c) => ({ name: c.name, label: c.label, help: c.targetHelp, placeholder: c.targetPlaceholder })),
    smtpConfigured: Boolean(settings().smtp.host),
  }, status);
}

async function createRule(ctx: Context, deps: WebDeps): Promise<void> {
  const user = ctx.state.user as SessionUser;
  const project = projectOfRequest(ctx);
  const form = await readForm(ctx);
  const parsed = await alerts.parseRuleForm(form, settings(), deps.triggers);
  if (!parsed.ok) return ruleFormPage(ctx, deps, { values: form, errors: parsed.errors }, 422);
  const id = await alerts.createRule(deps.ports.sql, project.id, parsed.value);
  if (id === "limit") return ruleFormPage(ctx, deps, { values: form, errors: { name: `You have ${alerts.MAX_RULES} rules, the most an account can have.` } }, 422);
  deps.logger.info("alert rule created", { user_id: user.id, rule_id: id, trigger_type: parsed.value.trigger_type, channel: parsed.value.channel });
  await announceRulesChanged(deps, project.id);
  ctx.redirect(parsed.value.channel === "webhook" ? `/alerts/${id}/edit?notice=created` : "/alerts?notice=created");
}

async function editRulePage(ctx: Context, deps: WebDeps): Promise<void> {
  const rule = await ownedRule(ctx, deps);
  if (!rule) return;
  ruleFormPage(ctx, deps, { rule, values: formValues(rule), notice: NOTICES[String(ctx.query.notice ?? "")] });
}

async function updateRule(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const rule = await ownedRule(ctx, deps);
  if (!rule) return;
  const form = await readForm(ctx);
  const parsed = await alerts.parseRuleForm(form, settings(), deps.triggers);
  if (!parsed.ok) return ruleFormPage(ctx, deps, { rule, values: form, errors: parsed.errors }, 422);
  await alerts.updateRule(deps.ports.sql, project.id, rule.id, parsed.value);
  await announceRulesChanged(deps, project.id);
  ctx.redirect("/alerts?notice=updated");
}

async function toggleRule(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const rule = await ownedRule(ctx, deps);
  if (!rule) return;
  await alerts.setRuleEnabled(deps.ports.sql, project.id, rule.id, !rule.enabled);
  await announceRulesChanged(deps, project.id);
  ctx.redirect(`/alerts?notice=${rule.enabled ? "disabled" : "enabled"}`);
}

async function deleteRule(ctx: Context, deps: WebDeps): Promise<void> {
  const user = ctx.state.user as SessionUser;
  const project = projectOfRequest(ctx);
  const rule = await ownedRule(ctx, deps);
  if (!rule) return;
  await alerts.deleteRule(deps.ports.sql, project.id, rule.id);
  await announceRulesChanged(deps, project.id);
  deps.logger.info("alert rule deleted", { user_id: user.id, rule_id: rule.id });
  ctx.redirect("/alerts?notice=deleted");
}

async function rotateSecret(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const rule = await ownedRule(ctx, deps);
  if (!rule) return;
  await alerts.rotateRuleSecret(deps.ports.sql, project.id, rule.id);
  ctx.redirect(`/alerts/${rule.id}/edit?notice=rotated`);
}

async function sendTest(ctx: Context, deps: WebDeps): Promise<void> {
  const rule = await ownedRule(ctx, deps);
  if (!rule) return;
  const user = ctx.state.user as SessionUser;
  // Each test reaches an outside address (a mailbox, a webhook): a per-user budget, so the server cannot be
  // used to spam or probe. The attempt runs after the answer; the history on /alerts shows how it went.
  const quota = await check(() => deps.throttles.testSendsPerUser.consume(String(user.id)), deps.logger);
  if (!quota.allowed) {
    const wait = waitText(refuse(ctx, quota));
    return renderPage(ctx, "error.njk", { title: "Slow down", heading: "Too many test notifications", message: `You can send ${deps.ports.config.testSendsPerHour} test notifications an hour. Try again in ${wait}.` }, 429);
  }
  const s = settings();
  const { sql, pubsub } = deps.ports;
  const jobId = await alerts.enqueueTest(sql, rule, { publicWebUrl: deps.ports.config.publicWebUrl, maxAttempts: s.maxAttempts });
  void alerts.deliverNow({ sql, pubsub, settings: s, logger: deps.logger }, jobId).catch((err: unknown) =>
    deps.logger.warn("test notification attempt failed; the workers retry it", { job_id: jobId, err }),
  );
  ctx.redirect(`/alerts?test=${jobId}#history`);
}

async function retryJob(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const id = idParam(ctx);
  const ok = id !== undefined && (await alerts.requeueJob(deps.ports.sql, project.id, id));
  if (!ok) {
    return renderPage(ctx, "error.njk", { title: "Not found", heading: "Notification not found", message: "There is no dead notification with this id in your account." }, 404);
  }
  await deps.ports.pubsub.publish(alerts.JOBS_CHANNEL, "1");
  ctx.redirect("/alerts?notice=requeued#history");
}

const settings = () => alerts.loadNotificationSettings();

/** Tells the pipelines to reload the project's rules; a change not announced is logged, not refused. */
const announceRulesChanged = (deps: WebDeps, projectId: number) =>
  alerts.publishRulesChanged(deps.ports.pubsub, projectId).catch((err) => deps.logger.warn("rules change not announced", { err }));

const idParam = (ctx: Context): number | undefined => {
  const id = Number(ctx.params.id);
  return Number.isSafeInteger(id) && id > 0 ? id : undefined;
};

/** The project's rule the URL names; when there is none, a 404 page is the answer and this is undefined. */
async function ownedRule(ctx: Context, deps: WebDeps): Promise<StoredRule | undefined> {
  const id = idParam(ctx);
  const rule = id === undefined ? undefined : await alerts.getRule(deps.ports.sql, projectOfRequest(ctx).id, id);
  if (!rule) {
    renderPage(ctx, "error.njk", { title: "Rule not found", heading: "Rule not found", message: "There is no such alert rule in your account." }, 404);
  }
  return rule;
}

/** What the list shows for a rule: its config as "key=value" pairs and its effective cooldown. */
function ruleView(r: StoredRule, triggers: TriggerRegistry) {
  const trigger = triggers.get(r.trigger_type);
  const conditions = (trigger?.fields ?? [])
    .filter((f) => f.name !== "cooldown_seconds" && r.config[f.name] !== undefined && r.config[f.name] !== "")
    // A select's value is shown as its option's words ("p95 latency", not latency_p95).
    .map((f) => `${f.label.replace(/ \(.*\)$/, "").toLowerCase()}: ${f.options?.find((o) => o.value === String(r.config[f.name]))?.label ?? r.config[f.name]}`);
  return { ...r, trigger_label: trigger?.label ?? r.trigger_type, conditions, cooldown: alerts.cooldownSecondsOf(trigger, r.config) };
}

/** The form's field values for a stored rule (or the defaults of a new one). */
function formValues(r?: StoredRule): Record<string, string> {
  if (!r) return { name: "", trigger_type: "run_error", channel: "dashboard", target: "", enabled: "on" };
  const v: Record<string, string> = { name: r.name, trigger_type: r.trigger_type, channel: r.channel, target: r.target, enabled: r.enabled ? "on" : "" };
  for (const [k, val] of Object.entries(r.config)) v[`config.${k}`] = String(val);
  return v;
}
