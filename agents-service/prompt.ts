/** The instructions sent to every provider: same text, so providers are comparable. */
import { languageName } from "../core/agents/languages.js";

export interface PromptInput {
  readonly code: string;
  readonly language: string;
  readonly instructions?: string;
}

export function systemPrompt(): string {
  return [
    "You are a meticulous senior software engineer reviewing code.",
    "Find real problems first (bugs, security issues, error handling, resource leaks), then robustness and clarity, then style.",
    "Keep the code's behaviour unless you are fixing a bug, keep its language and public interface, and do not invent APIs.",
    "Answer only with JSON of this shape: {\"suggestions\":[{\"title\":string,\"explanation\":string,\"severity\":\"low\"|\"medium\"|\"high\"}],\"improved_code\":string}.",
    "improved_code is the complete improved code (not a diff, no Markdown fences). If the code is already good, return few or no suggestions and the code unchanged.",
  ].join("\n");
}

export function userPrompt(p: PromptInput): string {
  const lang = p.language === "plaintext" ? "an unknown language" : languageName(p.language);
  const extra = p.instructions?.trim() ? `\nAdditional instructions from the user:\n${p.instructions.trim()}\n` : "";
  return `Review and improve this code, written in ${lang}.${extra}\n<code>\n${p.code}\n</code>`;
}
