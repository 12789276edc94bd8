/**
 * Evaluation, the feature (docs/EVALUATION.md, docs/EVALUATORS.md): evaluators (LLM judges and built-in checks), online
 * rules that turn ended runs into jobs, the worker that runs them, backfills, the playground, and annotation queues
 * where people review runs. Everything outside evaluation/ enters here; the rows live in stores/evaluation/.
 *
 *   model/        what a definition, a rule filter, a judge's template and verdict are (pure: parse, check, render)
 *   judging/      asking a judge about one subject: the subject's values, the project's keys, caps, the judge's trace; the prompts
 *                 playground's completions under the same keys and caps
 *   jobs/         the job queue's worker, a job's run, backfills
 *   online/       the pipeline's side: rules matched against ended runs, runs routed to queues
 *   *.ts          the actions the API and pages call: evaluators, rules, annotation queues and their review
 */
export { CHECK_KINDS } from "./model/checks.js";
export { describeOutput } from "./model/output.js";
export { JUDGE_TEMPLATES } from "./model/templates.js";

export { changedDefinition, createEvaluator, updateEvaluator } from "./evaluators.js";
export { createRule, deleteRule, setRuleEnabled } from "./rules.js";
export { createQueue, deleteQueue, mayReview } from "./annotation-queues.js";
export { addRunsToQueue } from "./annotation-queue-items.js";
export { completeReview } from "./annotation-queue-review.js";

export { parseTryTarget, tryEvaluator, tryJson } from "./judging/try-evaluator.js";
export { projectCompletion, type CompleteCall } from "./judging/project-completion.js";
export { parseRange } from "./jobs/backfill.js";
export { backfill } from "./jobs/start-backfill.js";
export { loadEvaluationWorkerSettings, startEvaluationWorker, type EvaluationWorker, type EvaluationWorkerSettings } from "./jobs/worker.js";

export { createOnlineEvaluation, RULES_TTL_MS, type OnlineEvaluation } from "./online/online-rules.js";
export { routeGivenScores, type GivenScore } from "./online/routing.js";

export type { EvaluationDeps } from "./deps.js";
