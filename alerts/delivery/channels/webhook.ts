/** webhook: POST JSON, signed (X-Runwatch-Signature over `${timestamp}.${body}` with the rule's secret). */
import { webhookBody } from "../../message.js";
import { sign } from "../../signature.js";
import { postJson, validateUrlTarget } from "./http.js";
import { PermanentFailure, type NotificationChannel } from "./types.js";

export const webhookChannel: NotificationChannel = {
  name: "webhook",
  label: "Webhook",
  targetHelp: "An http(s) URL that receives a signed JSON POST.",
  targetPlaceholder: "https://example.com/hooks/runwatch",
  validateTarget: validateUrlTarget,
  async send(job, ctx) {
    if (!job.secret) throw new PermanentFailure("the rule has no signing secret (was it deleted?)");
    const body = webhookBody(job);
    const ts = Math.floor(Date.now() / 1000);
    await postJson(job.target, body, {
      "user-agent": "Runwatch-Webhooks/1",
      "x-runwatch-timestamp": String(ts),
      "x-runwatch-signature": sign(job.secret, ts, body),
      "x-runwatch-delivery": String(job.id),
      "x-runwatch-event": job.kind === "test" ? "alert.test" : "alert.fired",
    }, ctx.settings);
  },
};
