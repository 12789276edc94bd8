/**
 * The judge call's own run (docs/EVALUATION.md): each LLM-judge evaluation is reported as a run of the project's
 * agent "runwatch-judge" — run_start (what was judged), one LLM step (the prompt, the raw answer, tokens and cost),
 * run_end (the verdict) or an error — through the event log like any run, so its tokens and cost are counted there,
 * apart from the judged agent's. Event ids are named after the job's score id: a job that runs twice reports once.
 */
import { Either } from "effect";
import { enrichEvent } from "../../core/events/enrich.js";
import { parseIngestEvent, type LoggedEvent } from "../../core/events/schema.js";
import type { Sender } from "../../core/events/sender.js";
import { eventIdFor } from "../../core/ids.js";
import type { EvaluationOutcome } from "./evaluate.js";
import { JUDGE_AGENT } from "../../core/events/judge-runs.js";

/** The judge run of a job's score: what a score's judge_run names. */
export const judgeRunId = (scoreId: string): string => `judge-${scoreId}`;

const PREVIEW = 20_000;
const cut = (s: string | null) => (s === null ? undefined : s.length > PREVIEW ? `${s.slice(0, PREVIEW)}…` : s);

export function judgeTraceEvents(
  sender: Sender,
  judged: { scoreId: string; evaluator: { id: string; name: string; version: number }; sdk_run_id: string; span_id: string },
  outcome: EvaluationOutcome,
  startedMs: number,
): LoggedEvent[] {
  const runId = judgeRunId(judged.scoreId);
  const endMs = startedMs + Math.max(1, outcome.duration_ms);
  const at = (ms: number) => new Date(ms).toISOString();
  const ev = (part: string, ms: number, rank: number, e: Record<string, unknown>) => ({
    event_id: eventIdFor(`judge:${judged.scoreId}:${part}`, ms, rank),
    sdk_run_id: runId,
    agent_name: JUDGE_AGENT,
    occurred_at: at(ms),
    ...e,
  });
  const raw = [
    ev("start", startedMs, 0, {
      event_type: "run_start",
      payload: {
        framework: "runwatch-evaluation",
        input: { evaluator: judged.evaluator, judged_run: judged.sdk_run_id, ...(judged.span_id ? { judged_span: judged.span_id } : {}) },
      },
    }),
    ev("llm", endMs, 1, {
      event_type: "step",
      span_id: "judge",
      payload: {
        node_name: "judge",
        phase: "end",
        kind: "llm",
        ...(outcome.model ? { model: outcome.model } : {}),
        ...(outcome.provider ? { provider: outcome.provider } : {}),
        input: cut(outcome.prompt),
        output: cut(outcome.raw_answer),
        prompt_tokens: outcome.prompt_tokens,
        completion_tokens: outcome.completion_tokens,
        cost_usd: outcome.cost_usd,
        duration_ms: outcome.duration_ms,
      },
    }),
    outcome.verdict
      ? ev("end", endMs, 2, { event_type: "run_end", payload: { output: outcome.verdict } })
      : ev("end", endMs, 2, { event_type: "error", payload: { error_type: outcome.error?.code ?? "evaluation_error", error_message: outcome.error?.message ?? "" } }),
  ];
  const received = new Date();
  return raw.flatMap((r) => {
    const parsed = parseIngestEvent(r);
    return Either.isRight(parsed) ? [enrichEvent(parsed.right, sender, received)] : [];
  });
}
