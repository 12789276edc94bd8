/**
 * Human in the loop, the feature (docs/REGISTRY-COSTS-HITL.md): a person answers the question a waiting run asked,
 * from its page or the API, and the agent waiting for the answer is woken, on this web process or another. Everything
 * outside human-input/ enters here; the question and answer rows live in stores/human-input.ts.
 *
 *   answer.ts     checking and keeping an answer, then waking the waiters
 *   notifier.ts   the waiters of this process, and PubSub channel `input.{projectId}` between processes
 *   wait.ts       an agent's long poll for its answer
 */
export { answerQuestion, type AnswerInput, type Responder } from "./answer.js";
export { waitForAnswer } from "./wait.js";
export type { HumanInputDeps } from "./deps.js";
