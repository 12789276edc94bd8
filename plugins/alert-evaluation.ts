/**
 * alert-evaluation: hands every stored batch to the alert engine (alerts/evaluation.ts), which checks the
 * users' rules and queues notifications. The triggers come from the pipeline's TriggerRegistry (built-ins plus
 * RUNWATCH_ALERT_TRIGGERS); this plugin is only the adapter between the plugin chain and alerts/.
 */
import { createAlertEvaluation, type AlertDispatcher, type TriggerRegistry } from "../alerts/index.js";
import type { RunRecord } from "../core/events/run.js";
import { definePlugin, type Plugin } from "./plugin.js";

export interface AlertEvaluationPluginOptions {
  readonly triggers: TriggerRegistry;
  readonly dispatcher?: AlertDispatcher;
  readonly rulesTtlMs?: number;
  readonly sweepMs?: number;
}

export const alertEvaluation = (opts: AlertEvaluationPluginOptions): Plugin => {
  const engine = createAlertEvaluation(opts);
  return definePlugin({
    name: "alert-evaluation",
    init: (ctx) => engine.start(ctx),
    afterCommit(batch) {
      const runs = new Map<string, RunRecord>();
      for (const [k, draft] of batch.runs) runs.set(k, draft.run);
      return engine.evaluate(batch.events, runs);
    },
    close: () => engine.close(),
  });
};

export default alertEvaluation;
