/**
 * An evaluator's definition (one version of it; docs/EVALUATION.md), read from a POST /api/evaluators body or a
 * form: an LLM judge (provider, model, prompt template, output) or a built-in check. Every refusal is a
 * ValidationError naming the field.
 */
import { Either } from "effect";
import { PROVIDER_IDS, type ProviderId } from "../../core/agents/contract.js";
import { displayTextProblem } from "../../core/display-text.js";
import { ValidationError } from "../../core/errors.js";
import { checkOutput, parseCheck } from "./checks.js";
import { parseOutputDefinition } from "./output.js";
import { templateProblem } from "./template.js";
import { refuseUnstorableSetting } from "../../core/storable-setting.js";
import type { EvaluatorDefinition } from "../../stores/evaluation/shapes.js";
export type { EvaluatorType, EvaluatorDefinition } from "../../stores/evaluation/shapes.js";


export const MAX_EVALUATOR_NAME = 100;
const MODEL_NAME = /^[A-Za-z0-9][\w.:/@+-]{0,199}$/;

const fail = (field: string, message: string): never => {
  throw new ValidationError({ field, message: `${field} ${message}` });
};

/** A name of an evaluator or a score: 1..100 characters, no control characters. */
export function nameProblem(field: string, v: unknown): string {
  if (typeof v !== "string" || v.trim() === "" || v.length > MAX_EVALUATOR_NAME) return fail(field, `must be text of 1 to ${MAX_EVALUATOR_NAME} characters`);
  const p = displayTextProblem(v);
  if (p) fail(field, p);
  return v.trim();
}

/** The definition in a body (its `type`, and the fields that type needs); `name` is the default score name. */
export function parseDefinition(body: Record<string, unknown>, name: string): EvaluatorDefinition {
  refuseUnstorableSetting(body);
  const scoreName = body.score_name === undefined || body.score_name === "" ? name : nameProblem("score_name", body.score_name);
  if (body.type === "builtin") {
    const check = parseCheck(body.check);
    return { type: "builtin", score_name: scoreName, check, output: checkOutput(check) };
  }
  if (body.type !== "llm_judge") return fail("type", 'must be "llm_judge" or "builtin"');
  const provider = body.provider === undefined || body.provider === null || body.provider === "" ? null : body.provider;
  if (provider !== null && !(PROVIDER_IDS as readonly unknown[]).includes(provider)) fail("provider", `must be one of ${PROVIDER_IDS.join(", ")}`);
  const model = body.model === undefined || body.model === null || body.model === "" ? null : body.model;
  if (model !== null && (typeof model !== "string" || !MODEL_NAME.test(model))) fail("model", "must be a model name such as gpt-4.1-mini");
  const temperature = body.temperature === undefined || body.temperature === null || body.temperature === "" ? null : Number(body.temperature);
  if (temperature !== null && (!Number.isFinite(temperature) || temperature < 0 || temperature > 1)) fail("temperature", "must be a number from 0 to 1");
  if (typeof body.prompt !== "string") return fail("prompt", "is required: a template such as “Is {{output}} correct for {{input}}?”");
  const problem = templateProblem(body.prompt);
  if (problem) fail("prompt", problem);
  const output = parseOutputDefinition(body.output);
  if (Either.isLeft(output)) throw new ValidationError({ field: output.left.field, message: output.left.message });
  return { type: "llm_judge", score_name: scoreName, provider: provider as ProviderId | null, model: model as string | null, temperature, prompt: body.prompt, output: output.right };
}
