/**
 * What an evaluator judges: one run (or one span of it) as the evaluator sees it. Built from the run's own stored
 * events in its own project (evaluation/judging/subjects.ts), so nothing a template names can reach another run.
 */
export interface EvaluationSubject {
  readonly input: unknown;
  readonly output: unknown;
  /** A dataset item's expected output (experiment runs, the playground on an item); undefined otherwise. */
  readonly expected_output?: unknown;
  /** The run's last error message, "" when none. */
  readonly error: string;
  /** The run_start payload's fields other than `input` (where the SDKs put metadata), with any `metadata` object merged in. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** The run's spans by name (the last of each name): what a template's {{span:NAME.input}} reads. */
  readonly spans: ReadonlyMap<string, { readonly input: unknown; readonly output: unknown }>;
  readonly status: string;
  readonly duration_ms: number | null;
  readonly cost_usd: number;
}
