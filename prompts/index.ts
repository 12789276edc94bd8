/**
 * Prompt management (docs/PROMPTS.md): versioned prompts with labels.
 *   template.ts  `{{variable}}` extraction and compile
 *   diff.ts      the bounded line diff between two versions
 *   versions.ts  pushing a version, moving a label, reading by label or number, the diff of two versions
 *   experiments.ts  the experiments that ran its versions, each paired with production's
 *   gate.ts      the gate on moving `production`: its latest experiment against production's
 *   playground.ts  a version's run in the playground: variables filled, messages and settings for a completion
 * The rows are stores/prompts.ts's; what a version may hold, stores/prompt-input.ts's.
 */
export { compilePrompt, promptVariables } from "./template.js";
export { diffText, diffVersions, promptAsText, type DiffPart, type SideDiff, type VersionDiff } from "./diff.js";
export { diffPromptVersions, labelPrompt, promptVersions, pushPromptVersion, readPrompt, type PromptVersionView } from "./versions.js";
export { EXPERIMENTS_SHOWN, promptExperiments, type PromptExperiment } from "./experiments.js";
export { checkPromptGate, GATED_LABEL, labelThroughGate, promptGateRefusal, type LabelOutcome, type PromptGateCheck } from "./gate.js";
export { MAX_PLAYGROUND_ANSWER_TOKENS, PLAYGROUND_ANSWER_TOKENS, playgroundMessages, playgroundRequest } from "./playground.js";
