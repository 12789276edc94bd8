/** The built-in alert triggers, in the order /alerts lists them. Each module is one defineTrigger(...). */
import { anomaly } from "./anomaly.js";
import { agentBudgetExceeded } from "./agent-budget-exceeded.js";
import { errorRateAbove } from "./error-rate-above.js";
import { evaluationFailureRateAbove } from "./evaluation-failure-rate-above.js";
import type { TriggerDefinition } from "./define.js";
import { runCostAbove } from "./run-cost-above.js";
import { runDurationAbove } from "./run-duration-above.js";
import { runError } from "./run-error.js";
import { sloBurnRate } from "./slo-burn-rate.js";
import { scoreBelow } from "./score-below.js";
import { toolError } from "./tool-error.js";
import { waitingForInput } from "./waiting-for-input.js";

export const BUILTIN_TRIGGERS: readonly TriggerDefinition[] = [
  runError, waitingForInput, runCostAbove, agentBudgetExceeded, runDurationAbove, errorRateAbove, toolError, scoreBelow, evaluationFailureRateAbove, anomaly, sloBurnRate,
];
