import type { ProviderId } from "../settings.js";
import type { Provider } from "./types.js";
import { openai } from "./openai.js";
import { anthropic } from "./anthropic.js";
import { gemini } from "./gemini.js";

export const PROVIDERS: Readonly<Record<ProviderId, Provider>> = { openai, anthropic, gemini };
