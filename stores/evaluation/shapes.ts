/**
 * The stored shapes of the evaluation feature: what an evaluator's definition, a rule's filter and queue action, and a
 * queue's score configs hold in Postgres. Reading and checking them is evaluation/model's work; the rows are this
 * folder's.
 */
import type { ProviderId } from "../../core/agents/contract.js";

export type OutputDefinition =
  | { readonly type: "numeric"; readonly min: number; readonly max: number }
  | { readonly type: "boolean" }
  | { readonly type: "categorical"; readonly categories: readonly string[] };

export type CheckDefinition =
  | { readonly kind: "exact_match"; readonly expected?: unknown }
  | { readonly kind: "contains"; readonly value: string; readonly case_sensitive?: boolean }
  | { readonly kind: "regex"; readonly pattern: string }
  | { readonly kind: "json_valid" }
  | { readonly kind: "json_schema"; readonly schema: Record<string, unknown> }
  | { readonly kind: "numeric_closeness"; readonly expected?: number; readonly tolerance: number }
  | { readonly kind: "string_similarity"; readonly expected?: string }
  | { readonly kind: "latency_below"; readonly max_ms: number }
  | { readonly kind: "cost_below"; readonly max_usd: number };

export type EvaluatorType = "llm_judge" | "builtin";

export type EvaluatorDefinition =
  | {
      readonly type: "llm_judge";
      readonly score_name: string;
      readonly provider: ProviderId | null;
      readonly model: string | null;
      readonly temperature: number | null;
      readonly prompt: string;
      readonly output: OutputDefinition;
    }
  | { readonly type: "builtin"; readonly score_name: string; readonly check: CheckDefinition; readonly output: OutputDefinition };

export interface RuleFilter {
  readonly agent_name?: string;
  readonly config_version?: number;
  readonly status?: "success" | "error";
  readonly session_id?: string;
  readonly has_error?: boolean;
  /** An experiment's runs only: its server-side evaluators (docs/EVALUATION.md, Experiments). */
  readonly experiment_id?: string;
  readonly metadata?: Readonly<Record<string, string | number | boolean>>;
  readonly tags?: readonly string[];
  /** Span targets: the span's kind ("llm", "tool", …) and name. */
  readonly span_kind?: string;
  readonly span_name?: string;
}

export interface QueueAction {
  readonly queue_id: string;
  /** A rule without an evaluator: add when a score of this name is given (else: when the run ends). */
  readonly score_name?: string;
  /** Add when a numeric score is below this (true and false count as 1 and 0). */
  readonly below?: number;
  /** Add when the score equals this (false, "severe", …). */
  readonly equals?: number | boolean | string;
}

export type ScoreConfig = OutputDefinition & { readonly name: string; readonly description: string };
