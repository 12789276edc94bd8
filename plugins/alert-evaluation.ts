/**
 * alert-evaluation: the hook point where alert rules are checked on ingest (SPEC §6 rule 4).
 *
 * Evaluators register per trigger_type (alert_rules.trigger_type) in an AlertRegistry; a dispatcher turns
 * firings into notification jobs. After each stored batch, for the users whose runs changed, the plugin loads
 * their enabled rules of the registered trigger types (one query per batch, cached briefly), asks each
 * evaluator about each changed run and hands the firings to the dispatcher.
 *
 * With no evaluator registered the plugin does nothing at all (no query). Delivery is at-least-once, so a
 * firing carries a stable `key` (rule, run, event) for the dispatcher to deduplicate repeated batches.
 */
import type { RunRecord } from "../core/events/run.js";
import { userChannel } from "../core/ports/pubsub.js";
import type { Batch, PipelineEvent, Plugin, PluginContext } from "./plugin.js";

export interface AlertRule {
  readonly id: number;
  readonly user_id: number;
  readonly name: string;
  readonly trigger_type: string;
  readonly channel: string;
  readonly target: string;
  readonly config: Record<string, unknown>;
}

export interface AlertCheck {
  readonly rule: AlertRule;
  /** The run after this batch. */
  readonly run: RunRecord;
  /** This run's events in the batch, in log order (replayed duplicates included: see AlertFiring.key). */
  readonly events: readonly PipelineEvent[];
}

export interface AlertFiring {
  /** Stable across replays of the same batch: dispatchers deduplicate on it. */
  readonly key: string;
  readonly rule: AlertRule;
  readonly run: RunRecord;
  readonly event?: PipelineEvent;
  /** Human-readable one-liner, e.g. "Run abc of agent planner failed: Timeout". */
  readonly message: string;
}

export interface AlertEvaluator {
  /** The alert_rules.trigger_type this evaluator answers, e.g. "run_error" or "cost_threshold". */
  readonly triggerType: string;
  evaluate(check: AlertCheck): readonly AlertFiring[] | undefined | Promise<readonly AlertFiring[] | undefined>;
}

export type AlertDispatcher = (firings: readonly AlertFiring[], ctx: PluginContext) => Promise<void>;

/** Live notification on the user's channel; the alerts module replaces it with real notification jobs. */
export const publishNotifications: AlertDispatcher = async (firings, ctx) => {
  for (const f of firings) {
    await ctx.pubsub.publish(
      userChannel(f.run.user_id),
      JSON.stringify({
        type: "notification",
        user_id: f.run.user_id,
        key: f.key,
        rule: { id: f.rule.id, name: f.rule.name, trigger_type: f.rule.trigger_type, channel: f.rule.channel },
        run: { external_id: f.run.external_id, run_id: f.run.run_id, agent_name: f.run.agent_name, status: f.run.status },
        message: f.message,
      }),
    );
  }
};

export class AlertRegistry {
  private readonly byTrigger = new Map<string, AlertEvaluator[]>();
  dispatcher: AlertDispatcher = publishNotifications;

  register(evaluator: AlertEvaluator): () => void {
    const list = this.byTrigger.get(evaluator.triggerType) ?? [];
    list.push(evaluator);
    this.byTrigger.set(evaluator.triggerType, list);
    return () => {
      const l = this.byTrigger.get(evaluator.triggerType)?.filter((e) => e !== evaluator) ?? [];
      if (l.length) this.byTrigger.set(evaluator.triggerType, l);
      else this.byTrigger.delete(evaluator.triggerType);
    };
  }

  setDispatcher(dispatcher: AlertDispatcher): void {
    this.dispatcher = dispatcher;
  }

  triggerTypes(): string[] {
    return [...this.byTrigger.keys()];
  }

  evaluatorsFor(triggerType: string): readonly AlertEvaluator[] {
    return this.byTrigger.get(triggerType) ?? [];
  }
}

/** The process-wide registry the default pipeline uses; the alerts module registers its evaluators here. */
export const alertRegistry = new AlertRegistry();

const RULES_TTL_MS = 5_000;

export const alertEvaluation = (opts: { registry?: AlertRegistry; rulesTtlMs?: number } = {}): Plugin => {
  const registry = opts.registry ?? alertRegistry;
  const ttl = opts.rulesTtlMs ?? RULES_TTL_MS;
  let ctx: PluginContext | undefined;
  /** user_id → enabled rules of registered trigger types, with load time. Rule edits show within ttl. */
  const cache = new Map<number, { at: number; rules: AlertRule[] }>();

  async function rulesOf(userIds: number[], types: string[]): Promise<Map<number, AlertRule[]>> {
    const now = Date.now();
    const out = new Map<number, AlertRule[]>();
    const missing: number[] = [];
    for (const u of userIds) {
      const hit = cache.get(u);
      if (hit && now - hit.at < ttl) out.set(u, hit.rules);
      else missing.push(u);
    }
    if (missing.length > 0) {
      const rows = await ctx!.sql.query<AlertRule & { id: string | number; user_id: string | number }>(
        `SELECT id, user_id, name, trigger_type, channel, target, config FROM alert_rules
         WHERE enabled AND user_id = ANY($1::bigint[]) AND trigger_type = ANY($2::text[])`,
        [missing, types],
      );
      for (const u of missing) out.set(u, []);
      for (const r of rows) {
        const rule = { ...r, id: Number(r.id), user_id: Number(r.user_id) };
        out.get(rule.user_id)!.push(rule);
      }
      for (const u of missing) cache.set(u, { at: now, rules: out.get(u)! });
    }
    return out;
  }

  return {
    name: "alert-evaluation",
    init(c) {
      ctx = c;
    },
    async afterCommit(batch: Batch) {
      const types = registry.triggerTypes();
      if (types.length === 0 || !ctx) return;
      const eventsByRun = new Map<string, PipelineEvent[]>();
      // Duplicates included: a batch retried after a failed hook must still be evaluated (firing keys dedupe).
      for (const e of batch.events) {
        const k = `${e.user_id}:${e.sdk_run_id}`;
        const list = eventsByRun.get(k);
        if (list) list.push(e);
        else eventsByRun.set(k, [e]);
      }
      if (eventsByRun.size === 0) return;
      const users = [...new Set([...eventsByRun.keys()].map((k) => batch.runs.get(k)!.run.user_id))];
      const rules = await rulesOf(users, types);
      const firings: AlertFiring[] = [];
      for (const [k, events] of eventsByRun) {
        const run = batch.runs.get(k)!.run;
        for (const rule of rules.get(run.user_id) ?? []) {
          for (const evaluator of registry.evaluatorsFor(rule.trigger_type)) {
            const fired = await evaluator.evaluate({ rule, run, events });
            if (fired) firings.push(...fired);
          }
        }
      }
      if (firings.length > 0) await registry.dispatcher(firings, ctx);
    },
  };
};

export default alertEvaluation;
