/** run_cost_above: a run's cost_usd goes over a threshold (checked when run_end or an LLM call brings cost). Once per run. */
import { Schema } from "effect";
import { isLlmCallEnd } from "../../core/events/spans.js";
import { AGENT_FIELD, COOLDOWN_FIELD, agentNameField, cooldownField, agentMatches, positiveNumber, runLabel, usd, defineTrigger } from "./define.js";

export const runCostAbove = defineTrigger({
  type: "run_cost_above",
  label: "Run cost above",
  description: "A run costs more than a threshold (USD).",
  schema: Schema.Struct({ threshold_usd: positiveNumber("the threshold"), agent_name: agentNameField, cooldown_seconds: cooldownField }),
  fields: [
    { name: "threshold_usd", label: "Threshold (USD)", kind: "number", step: "any", required: true, placeholder: "0.50" },
    AGENT_FIELD,
    COOLDOWN_FIELD,
  ],
  defaultCooldownSeconds: 300,
  evaluate({ rule, run, events }) {
    const threshold = rule.config.threshold_usd as number;
    if (!(run.cost_usd > threshold) || !agentMatches(rule, run)) return undefined;
    const end = events.find((e) => e.event_type === "run_end" || isLlmCallEnd(e));
    if (!end) return undefined; // the cost only changes with these (the key makes it once per run)
    return [{
      key: `cost:${run.run_id}`,
      rule,
      run,
      event: end,
      message: `${runLabel(run)} cost ${usd(run.cost_usd)}, above the ${usd(threshold)} threshold`,
      details: { cost_usd: run.cost_usd, threshold_usd: threshold, model: run.model, total_tokens: run.total_tokens },
    }];
  },
});
