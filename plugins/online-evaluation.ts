/**
 * online-evaluation: hands every committed part to online evaluation (evaluation/online/online-rules.ts), which turns
 * ended runs and spans into evaluation jobs and routes runs to annotation queues. Only the adapter between the plugin
 * chain and evaluation/, like alert-evaluation.ts.
 */
import { createOnlineEvaluation } from "../evaluation/index.js";
import { definePlugin, type Plugin } from "./plugin.js";

export const onlineEvaluation = (opts: { rulesTtlMs?: number } = {}): Plugin => {
  const engine = createOnlineEvaluation(opts);
  return definePlugin({
    name: "online-evaluation",
    init: (ctx) => engine.start(ctx),
    afterCommit: (part) => engine.afterCommit(part.events, (key) => part.runs.get(key)?.run),
    close: () => engine.close(),
  });
};

export default onlineEvaluation;
