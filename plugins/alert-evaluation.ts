/**
 * alert-evaluation: hands every stored part to the alert engine (alerts/evaluation.ts), which checks the
 * users' rules and queues notifications. The triggers come from the pipeline's TriggerRegistry (built-ins plus
 * RUNWATCH_ALERT_TRIGGERS); this plugin is only the adapter between the plugin chain and alerts/.
 */
import { createAlertEvaluation, type AlertDispatcher, type TriggerRegistry } from "../alerts/index.js";
import type { RunRecord } from "../core/events/run.js";
import type { RunKey } from "../core/events/run-key.js";
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
    afterCommit(part) {
      const runs = new Map<RunKey, Readonly<RunRecord>>();
      for (const [k, draft] of part.runs) runs.set(k, draft.run);
      return engine.evaluate(part.events, runs);
    },
    close: () => engine.close(),
  });
};

export default alertEvaluation;
