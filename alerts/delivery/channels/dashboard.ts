/**
 * dashboard: an in-app notification on the user's realtime channel `user.{id}` (type "notification"); the
 * gateway forwards it to every open tab, web/static/notifications.js shows it as a toast. Best effort like
 * every live message: the /alerts history is the durable record.
 */
import { projectChannel } from "../../../core/ports/pubsub.js";
import type { NotificationChannel } from "./types.js";
import { runIdOf } from "../../../stores/alerts/jobs.js";

export const dashboardChannel: NotificationChannel = {
  name: "dashboard",
  label: "Dashboard",
  targetHelp: "Shown in your open Runwatch tabs; no target needed.",
  targetPlaceholder: "",
  async validateTarget() {
    return "";
  },
  async send(job, ctx) {
    const p = job.payload;
    await ctx.pubsub.publish(
      projectChannel(job.project_id),
      JSON.stringify({
        type: "notification",
        project_id: job.project_id,
        id: job.id,
        test: job.kind === "test",
        rule: { id: job.rule_id, name: job.rule_name, trigger_type: job.trigger_type },
        message: p.message,
        url: p.url,
        run: p.run ? { sdk_run_id: runIdOf(p.run), agent_name: p.run.agent_name, status: p.run.status } : null,
        fired_at: p.fired_at,
        suppressed_since_last: p.suppressed_since_last,
      }),
    );
  },
};
