/**
 * The built-in alert triggers. Each module exports a TriggerDefinition: its config Schema, form fields and
 * evaluator. Add a trigger by writing a module like these and listing it here.
 */
import type { AlertRegistry } from "../alert-evaluation.js";
import { agentBudgetExceeded } from "./agent-budget-exceeded.js";
import { errorRateAbove } from "./error-rate-above.js";
import { runCostAbove } from "./run-cost-above.js";
import { runDurationAbove } from "./run-duration-above.js";
import { runError } from "./run-error.js";
import { toolError } from "./tool-error.js";
import type { TriggerDefinition } from "./trigger.js";
import { waitingForInput } from "./waiting-for-input.js";

export type { TriggerDefinition, ConfigField } from "./trigger.js";
export { decodeTriggerConfig } from "./trigger.js";

export const TRIGGERS: readonly TriggerDefinition[] = [
  runError, waitingForInput, runCostAbove, agentBudgetExceeded, runDurationAbove, errorRateAbove, toolError,
];

export const triggerByType = (type: string): TriggerDefinition | undefined => TRIGGERS.find((t) => t.type === type);

export function registerBuiltinTriggers(registry: AlertRegistry): void {
  for (const t of TRIGGERS) registry.register(t.evaluator);
}
