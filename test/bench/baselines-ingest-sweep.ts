/**
 * The alert sweep on a simulated clock, for bench:baselines-ingest (test/bench/baselines-ingest.ts): what
 * alerts/evaluation.ts's sweep does every 15 s — load the enabled rules of the trigger types that sweep, decode them,
 * call each trigger's own `sweep(rules, ctx, now)`, hand the firings to the durable notification queue
 * (enqueueNotifications: alert_firings is where the episodes' state lives) — with `now` given instead of the wall
 * clock. Every trigger takes `now` already (the roll-up, the window, the baselines, the burn windows are read as of
 * it), so no product code changes. Left out: the lease (this process is the only sweeper) and the hourly pruning of
 * old firing keys. The product sweeps a type's rules one after another; here they are swept side by side (each
 * rule's check reads and writes only its own state, and a project's roll-up under way is shared), which changes
 * nothing but the time a simulated week takes.
 */
import { Either } from "effect";
import type { Ports } from "../../core/runtime.js";
import { createLogger } from "../../core/logger.js";
import { createEventStore } from "../../stores/runs/event-store.js";
import { enabledRulesOfTypes } from "../../stores/alerts/rules.js";
import { enqueueNotifications } from "../../alerts/dispatch.js";
import { TriggerRegistry } from "../../alerts/registry.js";
import { decodeTriggerConfig } from "../../alerts/triggers/define.js";
import type { AlertContext, AlertFiring, AlertRule } from "../../alerts/model.js";

export class SimulatedSweep {
  private readonly registry = new TriggerRegistry();
  private readonly ctx: AlertContext;
  private rules: AlertRule[] = [];
  /** Time spent in each trigger type's sweep and in the dispatch, ms. */
  readonly ms = new Map<string, number>();

  constructor(ports: Ports) {
    this.ctx = { config: ports.config, logger: createLogger("error"), sql: ports.sql, clickhouse: ports.clickhouse, pubsub: ports.pubsub, store: createEventStore(ports.clickhouse) };
  }

  /** Loads the enabled rules as the sweep does (once: the rules do not change during a replay). */
  async loadRules(): Promise<readonly AlertRule[]> {
    const rows = await enabledRulesOfTypes(this.ctx.sql, this.registry.sweepTypes());
    this.rules = rows.flatMap((r) => {
      const config = Either.getOrUndefined(decodeTriggerConfig(this.registry.get(r.trigger_type)!, r.config));
      if (!config) throw new Error(`rule ${r.id} (${r.trigger_type}) does not decode`);
      return [{ id: r.id, project_id: r.project_id, name: r.name, trigger_type: r.trigger_type, channel: r.channel, target: r.target, config }];
    });
    return this.rules;
  }

  /** One sweep at `now` of the rules `which` keeps; returns the firings dispatched. */
  async sweepAt(now: Date, which: (r: AlertRule) => boolean = () => true): Promise<AlertFiring[]> {
    const firings: AlertFiring[] = [];
    await Promise.all(this.registry.sweepTypes().map(async (type) => {
      const ofType = this.rules.filter((r) => r.trigger_type === type && which(r));
      if (ofType.length === 0) return;
      const t0 = performance.now();
      const sweep = this.registry.get(type)!.sweep!;
      for (const out of await Promise.all(ofType.map((r) => sweep([r], this.ctx, now)))) firings.push(...out);
      this.ms.set(type, (this.ms.get(type) ?? 0) + performance.now() - t0);
    }));
    if (firings.length > 0) {
      const t0 = performance.now();
      await enqueueNotifications(firings, this.ctx, this.registry);
      this.ms.set("dispatch", (this.ms.get("dispatch") ?? 0) + performance.now() - t0);
    }
    return firings;
  }
}
