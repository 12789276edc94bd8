/**
 * Alert evaluation: rules are checked on every stored batch (the pipeline's alert-evaluation plugin hands it
 * over), and on a timer for the triggers that fire on the absence of an event (a run still running after N
 * seconds) or on a window (error rate).
 *
 * Hot path: for the projects whose runs changed, the enabled rules come from an in-memory cache (one query per
 * batch for the projects not cached; entries live 5 s and are dropped at once when /alerts publishes a change on
 * PubSub "alerts.rules"); each rule's trigger is asked about each changed run and the firings go to the
 * dispatcher (by default the durable queue, alerts/queue.ts). A user without rules costs one Map lookup.
 *
 * Sweeps: every RUNWATCH_ALERT_SWEEP_MS (15 s) one pipeline process (a lease row in Postgres elects it) loads
 * the enabled rules of trigger types that sweep and runs those sweeps (ClickHouse queries). State lives in the
 * stores, so sweeps work across restarts and across processes.
 *
 * Delivery is at-least-once, so a firing carries a stable `key` (rule, run, event, or rule and period) that the
 * dispatcher deduplicates: replayed batches and repeated sweeps notify once.
 */
import { Either } from "effect";
import type { RunRecord } from "../core/events/run.js";
import { runKeyOfEvent, type RunKey } from "../core/events/run-key.js";
import type { PipelineEvent } from "../core/events/schema.js";
import { enqueueNotifications } from "./dispatch.js";
import type { AlertCheck, AlertContext, AlertDispatcher, AlertFiring, AlertRule } from "./model.js";
import type { TriggerRegistry } from "./registry.js";
import { RULES_CHANGED_CHANNEL } from "./rules.js";
import { loadNotificationSettings } from "./settings.js";
import { decodeTriggerConfig, type TriggerDefinition } from "./triggers/define.js";
import { leaseHolder, takeLease } from "../core/postgres/lease.js";
import { ProjectCache, projectIdOf } from "../core/project-cache.js";
import { pruneFirings } from "../stores/alerts/notifications.js";
import { enabledRulesOf, enabledRulesOfTypes, type EnabledRuleRow } from "../stores/alerts/rules.js";

const RULES_TTL_MS = 5_000;
const PRUNE_EVERY_MS = 3_600_000;

export interface AlertEvaluationOptions {
  readonly triggers: TriggerRegistry;
  /** Where firings go; default: the durable notification queue. */
  readonly dispatcher?: AlertDispatcher;
  readonly rulesTtlMs?: number;
  readonly sweepMs?: number;
}

/** The alert engine the pipeline drives: start it, hand it every stored batch, close it. */
export interface AlertEvaluation {
  start(ctx: AlertContext): Promise<void>;
  /** Evaluates a stored part: `events` in log order, `runs` by run key (core/events/run-key.ts). */
  evaluate(events: readonly PipelineEvent[], runs: ReadonlyMap<RunKey, Readonly<RunRecord>>): Promise<void>;
  close(): Promise<void>;
}

export function createAlertEvaluation(opts: AlertEvaluationOptions): AlertEvaluation {
  const registry = opts.triggers;
  const dispatch: AlertDispatcher = opts.dispatcher ?? ((firings, c) => enqueueNotifications(firings, c, registry));
  const ttl = opts.rulesTtlMs ?? RULES_TTL_MS;
  let ctx: AlertContext | undefined;
  /** project_id → enabled rules of registered trigger types. */
  const cache = new ProjectCache<number, AlertRule[]>({ ttlMs: ttl });
  let unsubscribe: (() => Promise<void>) | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> | undefined;
  let lastPrune = 0;
  const holder = leaseHolder();
  const warned = new Set<number>();

  /** Rows → rules with decoded configs; rules whose config no longer decodes are skipped (logged once). */
  function decodeRules(rows: EnabledRuleRow[]): AlertRule[] {
    const out: AlertRule[] = [];
    for (const r of rows) {
      const trigger = registry.get(r.trigger_type);
      const config = trigger ? Either.getOrUndefined(decodeTriggerConfig(trigger, r.config)) : undefined;
      if (!config) {
        if (!warned.has(r.id)) ctx?.logger.warn("alert rule skipped: its config is invalid", { rule_id: r.id, trigger_type: r.trigger_type });
        warned.add(r.id);
        continue;
      }
      out.push({ id: r.id, project_id: r.project_id, name: r.name, trigger_type: r.trigger_type, channel: r.channel, target: r.target, config });
    }
    return out;
  }

  function rulesOf(projectIds: number[], types: string[]): Promise<Map<number, AlertRule[]>> {
    return cache.getMany(projectIds, async (missing) => {
      const rows = await enabledRulesOf(ctx!.sql, missing, types);
      const out = new Map<number, AlertRule[]>(missing.map((u) => [u, []]));
      for (const rule of decodeRules(rows)) out.get(rule.project_id)!.push(rule);
      return out;
    });
  }

  /** Takes the sweep lease (one sweeper per interval across processes), then runs every sweeping evaluator. */
  async function sweep(intervalMs: number): Promise<void> {
    const c = ctx!;
    const types = registry.sweepTypes();
    if (types.length === 0) return;
    if (!(await takeLease(c.sql, "alert_sweep_lease", holder, (intervalMs * 0.8) / 1000))) return;
    const rules = decodeRules(await enabledRulesOfTypes(c.sql, types));
    const now = new Date();
    const firings: AlertFiring[] = [];
    for (const type of types) {
      const ofType = rules.filter((r) => r.trigger_type === type);
      if (ofType.length === 0) continue;
      const trigger = registry.get(type)!;
      firings.push(...(await trigger.sweep!(ofType, c, now)));
    }
    if (firings.length > 0) await dispatch(firings, c);
    if (Date.now() - lastPrune > PRUNE_EVERY_MS) {
      lastPrune = Date.now();
      // Firing keys older than any trigger's look-back can go; the jobs (history) stay.
      await pruneFirings(c.sql);
    }
  }

  return {
    async start(c) {
      ctx = c;
      if (registry.types().length === 0) return;
      unsubscribe = await cache.invalidateOn(c.pubsub, RULES_CHANGED_CHANNEL, projectIdOf);
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
    async evaluate(events, runs) {
      const types = registry.types();
      if (types.length === 0 || !ctx || events.length === 0) return;
      const projects = new Set<number>();
      for (const e of events) projects.add(e.project_id);
      const rules = await rulesOf([...projects], types);
      // Most parts are of projects without rules (the rules are cached): their events are not grouped at all.
      if (![...rules.values()].some((r) => r.length > 0)) return;
      const eventsByRun = new Map<RunKey, PipelineEvent[]>();
      // Duplicates included: a batch retried after a failed hook must still be evaluated (firing keys dedupe).
      for (const e of events) {
        if (!rules.get(e.project_id)?.length) continue;
        const k = runKeyOfEvent(e);
        const list = eventsByRun.get(k);
        if (list) list.push(e);
        else eventsByRun.set(k, [e]);
      }
      const firings: AlertFiring[] = [];
      const batched = new Map<TriggerDefinition, AlertCheck[]>();
      for (const [k, runEvents] of eventsByRun) {
        const run = runs.get(k)!;
        const userRules = rules.get(run.project_id);
        if (!userRules || userRules.length === 0) continue;
        for (const rule of userRules) {
          const trigger = registry.get(rule.trigger_type);
          if (!trigger) continue;
          if (trigger.evaluateBatch) {
            const list = batched.get(trigger);
            if (list) list.push({ rule, run, events: runEvents });
            else batched.set(trigger, [{ rule, run, events: runEvents }]);
            continue;
          }
          if (!trigger.evaluate) continue; // sweep only
          const r = trigger.evaluate({ rule, run, events: runEvents });
          const fired = r instanceof Promise ? await r : r; // built-ins are synchronous: no microtask per run
          if (fired) firings.push(...fired);
        }
      }
      for (const [trigger, checks] of batched) firings.push(...(await trigger.evaluateBatch!(checks, ctx)));
      if (firings.length > 0) await dispatch(firings, ctx);
    },
    async close() {
      clearInterval(sweepTimer);
      await sweeping;
      await unsubscribe?.();
    },
  };
}
