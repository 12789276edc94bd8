/**
 * tool_error: a tool call fails. The signal: a tool_call event with phase "end" whose payload carries a
 * non-empty `error` (what both Runwatch SDKs send from their tool wrappers and LangChain on_tool_error /
 * handleToolError callbacks), or `status: "error"` from agents instrumented by hand.
 */
import { Schema } from "effect";
import type { AlertFiring } from "../model.js";
import type { PipelineEvent } from "../../core/events/schema.js";
import { AGENT_FIELD, COOLDOWN_FIELD, agentNameField, cooldownField, agentMatches, runLabel, defineTrigger } from "./define.js";

/** The tool_call end's failure text, or undefined when the call succeeded. */
export function toolFailure(e: Pick<PipelineEvent, "event_type" | "payload">): string | undefined {
  if (e.event_type !== "tool_call" || e.payload.phase !== "end") return undefined;
  const err = e.payload.error;
  if (typeof err === "string" && err.trim() !== "") return err;
  if (err && typeof err === "object") return JSON.stringify(err);
  if (typeof e.payload.status === "string" && e.payload.status.toLowerCase() === "error") {
    return typeof e.payload.output_preview === "string" && e.payload.output_preview ? e.payload.output_preview : "status: error";
  }
  return undefined;
}

export const toolError = defineTrigger({
  type: "tool_error",
  label: "Tool call failed",
  description: "A tool call ends with an error (tool_call end carrying an error field).",
  schema: Schema.Struct({
    tool_name: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
    agent_name: agentNameField,
    cooldown_seconds: cooldownField,
  }),
  fields: [
    { name: "tool_name", label: "Tool", kind: "text", placeholder: "any tool", help: "Only this tool (exact name)." },
    AGENT_FIELD,
    COOLDOWN_FIELD,
  ],
  defaultCooldownSeconds: 300,
  evaluate({ rule, run, events }) {
    if (!agentMatches(rule, run)) return undefined;
    const tool = typeof rule.config.tool_name === "string" ? rule.config.tool_name : "";
    let out: AlertFiring[] | undefined;
    for (const e of events) {
      const failure = toolFailure(e);
      if (failure === undefined) continue;
      const name = String(e.payload.tool_name ?? "");
      if (tool && name !== tool) continue;
      const short = failure.length > 300 ? `${failure.slice(0, 299)}…` : failure;
      (out ??= []).push({
        key: `tool:${e.event_id}`,
        rule,
        run,
        event: e,
        message: `Tool ${name} failed in ${runLabel(run)}: ${short}`,
        details: { tool_name: name, error: failure.slice(0, 2000) },
      });
    }
    return out;
  },
});
