/** Where firings go: the durable notification queue (the default), or a live-only publish for custom setups and tests. */
import { projectChannel } from "../core/ports/pubsub.js";
import type { AlertContext, AlertDispatcher, AlertFiring } from "./model.js";
import { dispatchFirings } from "./queue.js";
import type { TriggerRegistry } from "./registry.js";

/** Live notification on the user's channel only (no queue, no history). */
export const publishNotifications: AlertDispatcher = async (firings, ctx) => {
  for (const f of firings) {
    await ctx.pubsub.publish(
      projectChannel(f.rule.project_id),
      JSON.stringify({
        type: "notification",
        project_id: f.rule.project_id,
        key: f.key,
        rule: { id: f.rule.id, name: f.rule.name, trigger_type: f.rule.trigger_type, channel: f.rule.channel },
        run: f.run ? { sdk_run_id: f.run.external_id, run_id: f.run.run_id, agent_name: f.run.agent_name, status: f.run.status } : null,
        message: f.message,
      }),
    );
  }
};

/** Firings become durable notification jobs (dedupe, cooldown, retries): alerts/queue.ts. */
export async function enqueueNotifications(firings: readonly AlertFiring[], ctx: AlertContext, triggers: TriggerRegistry): Promise<void> {
  await dispatchFirings(ctx.sql, firings, { publicWebUrl: ctx.config.publicWebUrl, logger: ctx.logger, pubsub: ctx.pubsub, triggers });
}
