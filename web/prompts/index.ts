/** Prompts: their API (prompts-api.ts, the gate on production: prompt-gate-api.ts, the playground: playground-api.ts), OpenAPI paths (prompts-openapi.ts) and pages (prompts-page.ts, playground-page.ts); docs/PROMPTS.md. */
import type { WebFeature } from "../feature.js";
import { registerPromptGateApi } from "./prompt-gate-api.js";
import { registerPromptsApi } from "./prompts-api.js";
import { registerPlaygroundApi } from "./playground-api.js";
import { PROMPT_OPERATIONS } from "./prompts-openapi.js";
import { registerPromptsPage } from "./prompts-page.js";
import { registerPlaygroundPage } from "./playground-page.js";

export const prompts: WebFeature = {
  name: "prompts",
  apis: [registerPromptsApi, registerPromptGateApi, registerPlaygroundApi],
  pages: [registerPlaygroundPage, registerPromptsPage],
  openapi: PROMPT_OPERATIONS,
};
