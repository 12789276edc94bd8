/** waiting_for_input: an agent asks a human (human_input_requested). One firing per question. */
import { Either, Schema } from "effect";
import type { AlertFiring } from "../alert-evaluation.js";
import { AGENT_FIELD, COOLDOWN_FIELD, agentNameField, cooldownField, decodeTriggerConfig, agentMatches, runLabel, type TriggerDefinition } from "./trigger.js";

export const waitingForInput: TriggerDefinition = {
  type: "waiting_for_input",
  label: "Waiting for input",
  description: "An agent asks a human a question and waits for the answer.",
  schema: Schema.Struct({ agent_name: agentNameField, cooldown_seconds: cooldownField }),
  fields: [AGENT_FIELD, COOLDOWN_FIELD],
  defaultCooldownSeconds: 0,
  evaluator: {
    triggerType: "waiting_for_input",
    parseConfig: (raw) => Either.getOrUndefined(decodeTriggerConfig(waitingForInput, raw)),
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
  },
};
