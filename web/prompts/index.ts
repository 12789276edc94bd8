/** Prompts: their API (prompts-api.ts, the gate on production: prompt-gate-api.ts, the playground: playground-api.ts, experiments the server runs: prompt-experiments-api.ts and experiment-worker.ts), OpenAPI paths (prompts-openapi.ts) and pages (prompts-page.ts, prompt-gate-page.ts, playground-page.ts, prompt-experiments-page.ts); docs/PROMPTS.md. */
import type { WebFeature } from "../feature.js";
import { registerPromptGateApi } from "./prompt-gate-api.js";
import { registerPromptsApi } from "./prompts-api.js";
import { registerPlaygroundApi } from "./playground-api.js";
import { registerPromptExperimentsApi } from "./prompt-experiments-api.js";
import { PROMPT_EXPERIMENT_OPERATIONS } from "./prompt-experiments-openapi.js";
import { PROMPT_OPERATIONS } from "./prompts-openapi.js";
import { registerPromptsPage } from "./prompts-page.js";
import { registerPlaygroundPage } from "./playground-page.js";
import { registerPromptGatePage } from "./prompt-gate-page.js";
import { registerPromptExperimentsPage } from "./prompt-experiments-page.js";

export const prompts: WebFeature = {
  name: "prompts",
  apis: [registerPromptsApi, registerPromptGateApi, registerPlaygroundApi, registerPromptExperimentsApi],
  pages: [registerPlaygroundPage, registerPromptGatePage, registerPromptExperimentsPage, registerPromptsPage],
  openapi: { ...PROMPT_OPERATIONS, ...PROMPT_EXPERIMENT_OPERATIONS },
};
