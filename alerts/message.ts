/** How a notification reads, shared by the channels: subject line, plain text, HTML (escaped), webhook body. */
import { runIdOf, type NotificationJob } from "../stores/alerts/jobs.js";

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export const TRIGGER_LABELS: Record<string, string> = {
  run_error: "Run failed",
  waiting_for_input: "Waiting for input",
  run_cost_above: "Run cost above",
  agent_budget_exceeded: "Agent over budget",
  run_duration_above: "Run too long",
  error_rate_above: "Error rate above",
  tool_error: "Tool call failed",
};

export function subjectOf(job: Pick<NotificationJob, "rule_name" | "payload" | "kind">): string {
  if (job.kind === "test") return `[Runwatch] Test: ${clip(job.rule_name, 100)}`;
  return clip(`[Runwatch] ${job.rule_name}: ${job.payload.message}`, 160);
}

/** Facts listed under the message: [label, value]. */
export function factsOf(job: Pick<NotificationJob, "rule_name" | "trigger_type" | "payload">): [string, string][] {
  const p = job.payload;
  const facts: [string, string][] = [["Rule", `${job.rule_name} (${TRIGGER_LABELS[job.trigger_type] ?? job.trigger_type})`]];
  if (p.run) {
    if (p.run.agent_name) facts.push(["Agent", p.run.agent_name]);
    facts.push(["Run", runIdOf(p.run)], ["Status", p.run.status]);
    if (p.run.cost_usd > 0) facts.push(["Cost", `$${p.run.cost_usd.toFixed(4)}`]);
  }
  facts.push(["Fired at", p.fired_at]);
  if (p.suppressed_since_last > 0) {
    facts.push(["Suppressed", `${p.suppressed_since_last} more firing${p.suppressed_since_last === 1 ? "" : "s"} of this rule during the cooldown since the last notification`]);
  }
  return facts;
}

export function textOf(job: Pick<NotificationJob, "rule_name" | "trigger_type" | "payload">): string {
  const lines = [job.payload.message, "", ...factsOf(job).map(([k, v]) => `${k}: ${v}`), "", `Open: ${job.payload.url}`];
  return lines.join("\n");
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

export function htmlOf(job: Pick<NotificationJob, "rule_name" | "trigger_type" | "payload">): string {
  const rows = factsOf(job).map(([k, v]) => `<tr><td style="color:#6b7280;padding:2px 12px 2px 0">${esc(k)}</td><td>${esc(v)}</td></tr>`).join("");
  return `<div style="font-family:system-ui,sans-serif;font-size:14px;color:#111827">
<p style="font-size:16px;margin:0 0 12px">${esc(job.payload.message)}</p>
<table style="border-collapse:collapse;margin-bottom:16px">${rows}</table>
<p><a href="${esc(job.payload.url)}" style="color:#4f46e5">Open in Runwatch</a></p>
</div>`;
}

/** The JSON a webhook receives (documented in docs/ALERTS.md). */
export function webhookBody(job: NotificationJob): string {
  const p = job.payload;
  return JSON.stringify({
    id: String(job.id),
    type: job.kind === "test" ? "alert.test" : "alert.fired",
    created_at: p.fired_at,
    rule: { id: job.rule_id, name: job.rule_name, trigger_type: job.trigger_type },
    message: p.message,
    url: p.url,
    run: p.run,
    event: p.event,
    details: p.details,
    suppressed_since_last: p.suppressed_since_last,
  });
}
