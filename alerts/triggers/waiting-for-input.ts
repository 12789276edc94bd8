/** waiting_for_input: an agent asks a human (human_input_requested). One firing per question. */
import { Schema } from "effect";
import type { AlertFiring } from "../model.js";
import { AGENT_FIELD, COOLDOWN_FIELD, agentNameField, cooldownField, agentMatches, runLabel, defineTrigger } from "./define.js";

export const waitingForInput = defineTrigger({
  type: "waiting_for_input",
  label: "Waiting for input",
  description: "An agent asks a human a question and waits for the answer.",
  schema: Schema.Struct({ agent_name: agentNameField, cooldown_seconds: cooldownField }),
  fields: [AGENT_FIELD, COOLDOWN_FIELD],
  defaultCooldownSeconds: 0,
  evaluate({ rule, run, events }) {
    if (!agentMatches(rule, run)) return undefined;
    let out: AlertFiring[] | undefined;
    for (const e of events) {
      if (e.event_type !== "human_input_requested") continue;
      const q = typeof e.payload.question === "string" ? e.payload.question : "";
      (out ??= []).push({
        key: `ask:${e.event_id}`,
        rule,
        run,
        event: e,
        message: `${runLabel(run)} is waiting for your input${q ? `: “${q.length > 300 ? `${q.slice(0, 299)}…` : q}”` : ""}`,
        details: { question: q, channel: e.payload.channel ?? null },
      });
    }
    return out;
  },
});
