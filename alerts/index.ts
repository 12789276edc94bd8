/**
 * Alerting, as the rest of Runwatch sees it (the only module outside alerts/ imports):
 *
 *   triggers/     what can fire: defineTrigger + the built-ins; a registry per process (registry.ts)
 *   evaluation    rules checked on each stored batch and on a timer (driven by plugins/alert-evaluation.ts)
 *   rules         the /alerts form's validation and the rule writes
 *   queue         firings → durable notification jobs (dedupe, cooldown), the same in both modes
 *   delivery/     the worker and its channels (email, Slack, webhook, dashboard)
 *   baselines/    learned baselines of the anomaly trigger: bands, the hourly roll-up, change points, explanations
 *   slos/         SLOs' error budgets and burn rates (the slo_burn_rate trigger)
 *
 * Layering: alerts imports core and its data access, stores/alerts/ (every query it makes); plugins, web and deploy
 * import alerts through this file.
 */
export type { AlertCheck, AlertContext, AlertDispatcher, AlertEvaluator, AlertFiring, AlertRule } from "./model.js";
export { defineTrigger, decodeTriggerConfig, agentMatches, runLabel, usd, type ConfigField, type TriggerDefinition } from "./triggers/define.js";
export { BUILTIN_TRIGGERS } from "./triggers/index.js";
export { TriggerRegistry, loadTriggers, loadTriggerModule } from "./registry.js";
export { createAlertEvaluation, type AlertEvaluation, type AlertEvaluationOptions } from "./evaluation.js";
export { enqueueNotifications, publishNotifications } from "./dispatch.js";
export {
  MAX_RULES, RULES_CHANGED_CHANNEL, createRule, deleteRule, getRule, listRules, parseRuleForm, publishRulesChanged,
  rotateRuleSecret, setRuleEnabled, updateRule, type FieldErrors, type FormValues, type RuleInput, type StoredRule,
} from "./rules.js";
export { JOBS_CHANNEL, cooldownSecondsOf, dispatchFirings, enqueueTest, getJob, listJobs, recordFirings, requeueJob } from "./queue.js";
export { loadNotificationSettings, type NotificationSettings } from "./settings.js";
export { CHANNELS, type NotificationChannel } from "./delivery/channels/index.js";
export { deliverNow, startNotificationWorker, type NotificationWorker } from "./delivery/worker.js";
export { agentReads, explainBaseline, type AgentReads, type BaselineExplanation } from "./baselines/explain.js";
export { outsideBand, type Band } from "./baselines/band.js";
export { METRICS as BASELINE_METRICS, METRIC_NAMES as BASELINE_METRIC_NAMES, type MetricName as BaselineMetric } from "./baselines/metrics.js";
export { BURN_ALERTS, burnOverTime, objectiveInWords, sloStatus, sloWindows, type BurnPoint, type SloStatus } from "./slos/budget.js";
export { sloSlices, sloTalliesAt } from "./slos/tallies.js";
export { verifySignature, SIGNATURE_HEADER, TIMESTAMP_HEADER } from "./signature.js";

import { recordFirings } from "./queue.js";

/** The SQL procedures of alerts (transactions the pipeline thread runs on its host in one call). */
export const ALERT_PROCEDURES = [recordFirings] as const;
