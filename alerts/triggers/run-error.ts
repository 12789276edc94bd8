/** run_error: a run fails (an `error` event). Optional filters: agent, error_type. One firing per error event. */
import { Schema } from "effect";
import { AGENT_FIELD, COOLDOWN_FIELD, agentNameField, cooldownField, agentMatches, runLabel, defineTrigger } from "./define.js";

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export const runError = defineTrigger({
  type: "run_error",
  label: "Run failed",
  description: "A run reports an error (its status becomes error).",
  schema: Schema.Struct({
    agent_name: agentNameField,
    error_type: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
    cooldown_seconds: cooldownField,
  }),
  fields: [
    AGENT_FIELD,
    { name: "error_type", label: "Error type", kind: "text", placeholder: "any error", help: "Only errors whose error_type is exactly this, e.g. TimeoutError." },
    COOLDOWN_FIELD,
  ],
  defaultCooldownSeconds: 300,
  evaluate({ rule, run, events }) {
    if (!agentMatches(rule, run)) return undefined;
    const wantType = str(rule.config.error_type);
    let out: { key: string; rule: typeof rule; run: typeof run; event: (typeof events)[number]; message: string; details: Record<string, unknown> }[] | undefined;
    for (const e of events) {
      if (e.event_type !== "error") continue;
      const type = str(e.payload.error_type);
      if (wantType && type !== wantType) continue;
      const msg = str(e.payload.error_message);
      (out ??= []).push({
        key: `error:${e.event_id}`,
        rule,
        run,
        event: e,
        message: clip(`${runLabel(run)} failed${type || msg ? `: ${[type, msg].filter(Boolean).join(": ")}` : ""}`, 500),
        details: { error_type: type, error_message: clip(msg, 2000) },
      });
    }
    return out;
  },
});
