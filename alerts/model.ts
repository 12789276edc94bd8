/**
 * The alerting model: a rule (a row of alert_rules, its config decoded), what an evaluator is asked about (a
 * check: a rule and a run that just changed), what it answers (firings), and the context it may query.
 * Everything else in alerts/ is built on these types; nothing here does I/O.
 */
import type { RunRecord } from "../core/events/run.js";
import type { PipelineEvent } from "../core/events/schema.js";
import type { PipelineContext } from "../core/pipeline-context.js";
import type { RuleHeader } from "../stores/alerts/rules.js";

export interface AlertRule extends RuleHeader {
  /** The rule's config, decoded by its trigger's schema (defaults applied). */
  readonly config: Record<string, unknown>;
}

/** What evaluators and sweeps may read and write: what every pipeline component gets. */
export type AlertContext = PipelineContext;

export interface AlertCheck {
  readonly rule: AlertRule;
  /** The run after this batch. */
  readonly run: Readonly<RunRecord>;
  /** This run's events in the batch, in log order (replayed duplicates included: see AlertFiring.key). */
  readonly events: readonly PipelineEvent[];
}

export interface AlertFiring {
  /** Stable across replays of the same batch and repeated sweeps: dispatchers deduplicate on it. */
  readonly key: string;
  readonly rule: AlertRule;
  /** The run concerned; absent for aggregate triggers (budget, error rate). */
  readonly run?: Readonly<RunRecord>;
  readonly event?: PipelineEvent;
  /** Human-readable one-liner, e.g. "planner run abc failed: TimeoutError: upstream timed out". */
  readonly message: string;
  /** Figures behind the firing (threshold, observed value, window...), passed on to webhooks. */
  readonly details?: Record<string, unknown>;
}

/** How a trigger is evaluated: at least one of the three. */
export interface AlertEvaluator {
  /** Per changed run, on the hot path: keep it synchronous and free of I/O when possible. */
  evaluate?(check: AlertCheck): readonly AlertFiring[] | undefined | Promise<readonly AlertFiring[] | undefined>;
  /**
   * Optional: one call per batch with every check of this trigger type, in place of evaluate, for evaluators
   * that need a query (they can then make one for the whole batch).
   */
  evaluateBatch?(checks: readonly AlertCheck[], ctx: AlertContext): Promise<readonly AlertFiring[]>;
  /** Optional: called by the periodic sweep with every enabled rule of this type (all users). */
  sweep?(rules: readonly AlertRule[], ctx: AlertContext, now: Date): Promise<readonly AlertFiring[]>;
}

/** Where firings go: the durable queue (alerts/dispatch.ts enqueueNotifications) or a live-only publish. */
export type AlertDispatcher = (firings: readonly AlertFiring[], ctx: AlertContext) => Promise<void>;

/** A rule as the /alerts form gives it: its row lives in stores/alerts/rules.ts. */
export type { RuleInput } from "../stores/alerts/rules.js";
