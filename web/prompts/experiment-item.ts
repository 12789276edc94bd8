/**
 * One dataset item of a prompt page's experiment (docs/PROMPTS.md, Experiments over prompt versions): the item's
 * input fills the version's variables, the completion goes through the project's keys and judge caps, and the item's
 * run is what the SDKs' run_experiment sends — run_start naming the experiment, the item and the repetition, one LLM
 * step carrying the prompt's name and version, then run_end with the answer or an error — so the experiment's page,
 * the comparison and the gate read it as any other.
 *
 * What is the item's own failure (a missing variable, a provider that refused or timed out) becomes its run's error
 * and the job goes on; what stops every item (the budget spent, no key the project may use) is thrown for the job.
 */
import { Either } from "effect";
import { isAgentsFailure } from "../../core/agents/client.js";
import type { CompleteRequest } from "../../core/agents/contract.js";
import { enrichEvent } from "../../core/events/enrich.js";
import { parseIngestEvent, type LoggedEvent } from "../../core/events/schema.js";
import type { Sender } from "../../core/events/sender.js";
import { eventIdFor, uuidv7 } from "../../core/ids.js";
import { ValidationError } from "../../core/errors.js";
import type { CompleteCall } from "../../evaluation/index.js";
import { playgroundRequest } from "../../prompts/index.js";
import type { PromptConfigValue, PromptContent } from "../../stores/prompt-input.js";

/** The agent name of the runs a prompt page's experiment makes (the SDKs' default for an experiment's runs). */
export const EXPERIMENT_AGENT = "experiment";

export interface ItemSubject {
  readonly experimentId: string;
  readonly promptName: string;
  readonly version: number;
  readonly prompt: PromptContent;
  readonly config: PromptConfigValue;
}

/** An item's input as the template's variables: an object's fields, anything else as `input`. */
export function variablesOf(input: unknown): Record<string, unknown> {
  return typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : { input };
}

/** Runs one item × repetition; resolves with its run's events and whether it failed. Throws what stops the job. */
export async function runItem(
  subject: ItemSubject, item: { id: string; input: unknown }, repetition: number, complete: CompleteCall, sender: Sender,
): Promise<{ events: LoggedEvent[]; failed: boolean }> {
  const sdkRunId = uuidv7();
  const startedMs = Date.now();
  let req: CompleteRequest | undefined;
  let end: Record<string, unknown>;
  let llm: Record<string, unknown> | undefined;
  try {
    req = playgroundRequest(subject.prompt, subject.config, variablesOf(item.input));
    const r = await complete(req);
    if (isAgentsFailure(r)) {
      end = { event_type: "error", payload: { error_type: r.code, error_message: r.message } };
    } else {
      llm = {
        model: r.model, provider: r.provider, output: r.text, prompt_tokens: r.usage.prompt_tokens, completion_tokens: r.usage.completion_tokens,
        ...(r.usage.cost_usd !== null ? { cost_usd: r.usage.cost_usd } : {}), duration_ms: r.duration_ms,
      };
      end = { event_type: "run_end", payload: { output: r.text } };
    }
  } catch (err) {
    // A variable the item lacks, or a config the version cannot run with: this item's result, not the job's end.
    if (!(err instanceof ValidationError)) throw err;
    end = { event_type: "error", payload: { error_type: "invalid_item", error_message: `${err.field ? `${err.field}: ` : ""}${err.message}` } };
  }
  const endMs = Math.max(startedMs + 1, Date.now());
  const ev = (part: string, ms: number, rank: number, e: Record<string, unknown>) => ({
    event_id: eventIdFor(`prompt-experiment:${sdkRunId}:${part}`, ms, rank),
    sdk_run_id: sdkRunId, agent_name: EXPERIMENT_AGENT, occurred_at: new Date(ms).toISOString(), ...e,
  });
  const raw = [
    ev("start", startedMs, 0, {
      event_type: "run_start",
      payload: { input: item.input, framework: "runwatch-prompt-experiment", experiment_id: subject.experimentId, dataset_item_id: item.id, repetition },
    }),
    ...(req && llm ? [ev("llm", endMs, 1, {
      event_type: "step", span_id: "llm",
      payload: {
        node_name: subject.promptName, phase: "end", kind: "llm", input: req.messages, ...llm,
        prompt_name: subject.promptName, prompt_version: subject.version,
      },
    })] : []),
    ev("end", endMs, 2, end),
  ];
  const received = new Date();
  const events = raw.flatMap((r) => {
    const parsed = parseIngestEvent(r);
    return Either.isRight(parsed) ? [enrichEvent(parsed.right, sender, received)] : [];
  });
  return { events, failed: end.event_type === "error" };
}
