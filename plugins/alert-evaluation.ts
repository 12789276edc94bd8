/**
 * alert-evaluation: where alert rules are checked on ingest (SPEC §6 rule 4), and on a timer for the triggers
 * that fire on the absence of an event (a run still running after N seconds) or on a window (error rate).
 *
 * Evaluators register per trigger_type (alert_rules.trigger_type) in an AlertRegistry; a dispatcher turns
 * firings into notification jobs (pipeline/notifications/queue.ts: a durable Postgres queue with dedupe and a
 * per-rule cooldown). The built-in triggers (plugins/alerts/) are registered on the default registry.
 *
 * Hot path: after each stored batch, for the users whose runs changed, the plugin takes their enabled rules
 * from an in-memory cache (one query per batch for the users not cached; entries live 5 s and are dropped at
 * once when /alerts publishes a change on PubSub "alerts.rules"), asks each evaluator about each changed run
 * and hands the firings to the dispatcher. A user without rules costs one Map lookup per batch. With no
 * evaluator registered the plugin does nothing at all (no query).
 *
 * Sweeps: every RUNWATCH_ALERT_SWEEP_MS (15 s) one pipeline process (a lease row in Postgres elects it) loads
 * the enabled rules of trigger types whose evaluator has `sweep` and runs those sweeps (ClickHouse queries).
 * State lives in the stores, so sweeps work across restarts and across processes.
 *
 * Delivery is at-least-once, so a firing carries a stable `key` (rule, run, event, or rule and period) that the
 * dispatcher deduplicates: replayed batches and repeated sweeps notify once.
 */
import { hostname } from "node:os";
import type { RunRecord } from "../core/events/run.js";
import { userChannel } from "../core/ports/pubsub.js";
import type { PubSub } from "../core/ports/pubsub.js";
import { registerBuiltinTriggers } from "./alerts/index.js";
import { dispatchFirings } from "../pipeline/notifications/queue.js";
import { loadNotificationSettings } from "../pipeline/notifications/settings.js";
import type { Batch, PipelineEvent, Plugin, PluginContext } from "./plugin.js";

export interface AlertRule {
  readonly id: number;
  readonly user_id: number;
  readonly name: string;
  readonly trigger_type: string;
  readonly channel: string;
  readonly target: string;
  /** The rule's config, decoded by the evaluator's parseConfig when it has one (defaults applied). */
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
  /** Stable across replays of the same batch and repeated sweeps: dispatchers deduplicate on it. */
  readonly key: string;
  readonly rule: AlertRule;
  /** The run concerned; absent for aggregate triggers (budget, error rate). */
  readonly run?: RunRecord;
  readonly event?: PipelineEvent;
  /** Human-readable one-liner, e.g. "planner run abc failed: TimeoutError: upstream timed out". */
  readonly message: string;
  /** Figures behind the firing (threshold, observed value, window...), passed on to webhooks. */
  readonly details?: Record<string, unknown>;
}

export interface AlertEvaluator {
  /** The alert_rules.trigger_type this evaluator answers, e.g. "run_error". */
  readonly triggerType: string;
  /** Decodes alert_rules.config once when rules are loaded; undefined = invalid config, the rule is skipped. */
  parseConfig?(raw: unknown): Record<string, unknown> | undefined;
  /** Per changed run, on the hot path: keep it synchronous and free of I/O when possible. */
  evaluate(check: AlertCheck): readonly AlertFiring[] | undefined | Promise<readonly AlertFiring[] | undefined>;
  /**
   * Optional: one call per batch with every check of this trigger type, in place of evaluate, for evaluators
   * that need a query (they can then make one for the whole batch).
   */
  evaluateBatch?(checks: readonly AlertCheck[], ctx: PluginContext): Promise<readonly AlertFiring[]>;
  /** Optional: called by the periodic sweep with every enabled rule of this type (all users). */
  sweep?(rules: readonly AlertRule[], ctx: PluginContext, now: Date): Promise<readonly AlertFiring[]>;
}

export type AlertDispatcher = (firings: readonly AlertFiring[], ctx: PluginContext) => Promise<void>;

/** Live notification on the user's channel only (no queue, no history): for custom registries and tests. */
export const publishNotifications: AlertDispatcher = async (firings, ctx) => {
  for (const f of firings) {
    await ctx.pubsub.publish(
      userChannel(f.rule.user_id),
      JSON.stringify({
        type: "notification",
        user_id: f.rule.user_id,
        key: f.key,
        rule: { id: f.rule.id, name: f.rule.name, trigger_type: f.rule.trigger_type, channel: f.rule.channel },
        run: f.run ? { external_id: f.run.external_id, run_id: f.run.run_id, agent_name: f.run.agent_name, status: f.run.status } : null,
        message: f.message,
      }),
    );
  }
};

/** Firings become durable notification jobs (dedupe, cooldown, retries): pipeline/notifications. */
export const enqueueNotifications: AlertDispatcher = async (firings, ctx) => {
  await dispatchFirings(ctx.sql, firings, { publicWebUrl: ctx.config.publicWebUrl, logger: ctx.logger, pubsub: ctx.pubsub });
};

export class AlertRegistry {
  private readonly byTrigger = new Map<string, AlertEvaluator[]>();
  dispatcher: AlertDispatcher;

  constructor(dispatcher: AlertDispatcher = publishNotifications) {
    this.dispatcher = dispatcher;
  }

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

  /** Trigger types with at least one evaluator that sweeps. */
  sweepTypes(): string[] {
    return [...this.byTrigger].filter(([, evs]) => evs.some((e) => e.sweep)).map(([t]) => t);
  }
}

/** The process-wide registry the default pipeline uses: the built-in triggers, delivering through the queue. */
export const alertRegistry = new AlertRegistry(enqueueNotifications);
registerBuiltinTriggers(alertRegistry);

/** PubSub channel on which /alerts announces rule changes (message: the user id). */
export const RULES_CHANGED_CHANNEL = "alerts.rules";

/** Tells every pipeline process to reload this user's rules now (best effort; the cache TTL is the fallback). */
export const publishRulesChanged = (pubsub: PubSub, userId: number): Promise<void> =>
  pubsub.publish(RULES_CHANGED_CHANNEL, String(userId));

const RULES_TTL_MS = 5_000;
const PRUNE_EVERY_MS = 3_600_000;

type RawRule = Omit<AlertRule, "id" | "user_id" | "config"> & { id: string | number; user_id: string | number; config: unknown };

const RULE_COLUMNS = "id, user_id, name, trigger_type, channel, target, config";

export const alertEvaluation = (opts: { registry?: AlertRegistry; rulesTtlMs?: number; sweepMs?: number } = {}): Plugin => {
  const registry = opts.registry ?? alertRegistry;
  const ttl = opts.rulesTtlMs ?? RULES_TTL_MS;
  let ctx: PluginContext | undefined;
  /** user_id → enabled rules of registered trigger types, with load time. */
  const cache = new Map<number, { at: number; rules: AlertRule[] }>();
  let unsubscribe: (() => Promise<void>) | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> | undefined;
  let lastPrune = 0;
  const holder = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  const warned = new Set<number>();

  /** Raw rows → rules with decoded configs; rules whose config no longer decodes are skipped (logged once). */
  function decodeRules(rows: RawRule[]): AlertRule[] {
    const out: AlertRule[] = [];
    for (const r of rows) {
      const id = Number(r.id);
      const evaluator = registry.evaluatorsFor(r.trigger_type)[0];
      const raw = typeof r.config === "string" ? JSON.parse(r.config) : r.config;
      const config = evaluator?.parseConfig ? evaluator.parseConfig(raw) : (raw as Record<string, unknown>) ?? {};
      if (!config) {
        if (!warned.has(id)) ctx?.logger.warn("alert rule skipped: its config is invalid", { rule_id: id, trigger_type: r.trigger_type });
        warned.add(id);
        continue;
      }
      out.push({ id, user_id: Number(r.user_id), name: r.name, trigger_type: r.trigger_type, channel: r.channel, target: r.target, config });
    }
    return out;
  }

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
      const rows = await ctx!.sql.query<RawRule>(
        `SELECT ${RULE_COLUMNS} FROM alert_rules
         WHERE enabled AND user_id = ANY($1::bigint[]) AND trigger_type = ANY($2::text[])
         ORDER BY id`,
        [missing, types],
      );
      for (const u of missing) out.set(u, []);
      for (const rule of decodeRules(rows)) out.get(rule.user_id)!.push(rule);
      for (const u of missing) cache.set(u, { at: now, rules: out.get(u)! });
    }
    return out;
  }

  /** Takes the sweep lease (one sweeper per interval across processes), then runs every sweeping evaluator. */
  async function sweep(intervalMs: number): Promise<void> {
    const c = ctx!;
    const types = registry.sweepTypes();
    if (types.length === 0) return;
    const won = await c.sql.query(
      `UPDATE alert_sweep_lease SET held_until = now() + make_interval(secs => $1::double precision), holder = $2
       WHERE id = 1 AND (held_until <= now() OR holder = $2) RETURNING id`,
      [(intervalMs * 0.8) / 1000, holder],
    );
    if (won.length === 0) return;
    const rows = await c.sql.query<RawRule>(
      `SELECT ${RULE_COLUMNS} FROM alert_rules WHERE enabled AND trigger_type = ANY($1::text[]) ORDER BY id`,
      [types],
    );
    const rules = decodeRules(rows);
    const now = new Date();
    const firings: AlertFiring[] = [];
    for (const type of types) {
      const ofType = rules.filter((r) => r.trigger_type === type);
      if (ofType.length === 0) continue;
      for (const ev of registry.evaluatorsFor(type)) {
        if (ev.sweep) firings.push(...(await ev.sweep(ofType, c, now)));
      }
    }
    if (firings.length > 0) await registry.dispatcher(firings, c);
    if (Date.now() - lastPrune > PRUNE_EVERY_MS) {
      lastPrune = Date.now();
      // Firing keys older than any trigger's look-back can go; the jobs (history) stay.
      await c.sql.query(`DELETE FROM alert_firings WHERE fired_at < now() - interval '30 days'`);
    }
  }

  return {
    name: "alert-evaluation",
    async init(c) {
      ctx = c;
      if (registry.triggerTypes().length === 0) return;
      unsubscribe = await c.pubsub.subscribePrefix(RULES_CHANGED_CHANNEL, (_ch, msg) => {
        const uid = Number(msg);
        if (Number.isSafeInteger(uid)) cache.delete(uid);
        else cache.clear();
      });
      if (registry.sweepTypes().length > 0) {
        const every = opts.sweepMs ?? loadNotificationSettings().sweepMs;
        sweepTimer = setInterval(() => {
          if (sweeping) return; // a slow sweep is not stacked
          sweeping = sweep(every)
            .catch((err) => c.logger.error("alert sweep failed", { err }))
            .finally(() => { sweeping = undefined; });
        }, every);
        sweepTimer.unref();
      }
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
      const batched = new Map<AlertEvaluator, AlertCheck[]>();
      for (const [k, events] of eventsByRun) {
        const run = batch.runs.get(k)!.run;
        const userRules = rules.get(run.user_id);
        if (!userRules || userRules.length === 0) continue;
        for (const rule of userRules) {
          for (const evaluator of registry.evaluatorsFor(rule.trigger_type)) {
            if (evaluator.evaluateBatch) {
              const list = batched.get(evaluator);
              if (list) list.push({ rule, run, events });
              else batched.set(evaluator, [{ rule, run, events }]);
              continue;
            }
            const r = evaluator.evaluate({ rule, run, events });
            const fired = r instanceof Promise ? await r : r; // built-ins are synchronous: no microtask per run
            if (fired) firings.push(...fired);
          }
        }
      }
      for (const [evaluator, checks] of batched) firings.push(...(await evaluator.evaluateBatch!(checks, ctx)));
      if (firings.length > 0) await registry.dispatcher(firings, ctx);
    },
    async close() {
      clearInterval(sweepTimer);
      await sweeping;
      await unsubscribe?.();
    },
  };
};

export default alertEvaluation;
