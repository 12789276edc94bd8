/** Prompts: their API (prompts-api.ts), OpenAPI paths (prompts-openapi.ts) and pages (prompts-page.ts); docs/PROMPTS.md. */
import type { WebFeature } from "../feature.js";
import { registerPromptsApi } from "./prompts-api.js";
import { PROMPT_OPERATIONS } from "./prompts-openapi.js";

export const prompts: WebFeature = {
  name: "prompts",
  apis: [registerPromptsApi],
  pages: [],
  openapi: PROMPT_OPERATIONS,
};
