/** slack: an incoming-webhook POST with Block Kit blocks (text is the fallback for notifications). */
import { factsOf, subjectOf } from "../../message.js";
import type { ClaimedJob } from "../../../stores/alerts/jobs.js";
import { postJson, validateUrlTarget } from "./http.js";
import type { NotificationChannel } from "./types.js";

/** Slack mrkdwn: escape &, <, > (the only characters Slack requires escaped). */
const md = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function slackMessage(job: ClaimedJob): { text: string; blocks: unknown[] } {
  const p = job.payload;
  const facts = factsOf(job).slice(0, 10); // section fields: at most 10
  return {
    text: subjectOf(job),
    blocks: [
      { type: "header", text: { type: "plain_text", text: clip(`${p.test ? "Test: " : "🔔 "}${job.rule_name}`, 150), emoji: true } },
      { type: "section", text: { type: "mrkdwn", text: clip(md(p.message), 3000) } },
      { type: "section", fields: facts.map(([k, v]) => ({ type: "mrkdwn", text: clip(`*${md(k)}*\n${md(v)}`, 2000) })) },
      {
        type: "actions",
        elements: [{ type: "button", text: { type: "plain_text", text: p.run ? "Open run" : "Open Runwatch" }, url: p.url }],
      },
    ],
  };
}

export const slackChannel: NotificationChannel = {
  name: "slack",
  label: "Slack",
  targetHelp: "A Slack incoming-webhook URL (Slack app → Incoming Webhooks).",
  targetPlaceholder: "https://hooks.slack.com/services/T000/B000/XXXX",
  validateTarget: validateUrlTarget,
  async send(job, ctx) {
    await postJson(job.target, JSON.stringify(slackMessage(job)), { "user-agent": "Runwatch-Notifier/1" }, ctx.settings);
  },
};
