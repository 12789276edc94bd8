/**
 * The plugin chain: built-ins in their fixed order, with custom plugins (from code, and from module paths in
 * config.extraPlugins / RUNWATCH_PLUGINS) placed after the built-ins that shape the data and before the ones
 * that publish it, so alerts and the live broadcast see what custom plugins changed (e.g. redacted secrets):
 *
 *   [custom, order "early"…] → status-machine → preview-truncation → llm-calls → cost-aggregation
 *     → scores → [custom, order "late" (default)…] → online-evaluation → alert-evaluation → broadcast
 */
import { loadTriggers, type TriggerDefinition } from "../alerts/index.js";
import { importConfigured } from "../core/modules.js";
import { alertEvaluation } from "./alert-evaluation.js";
import { broadcast } from "./broadcast.js";
import { countAgentRunsProcedure } from "../stores/agent-run-starts.js";
import { costAggregation } from "./cost-aggregation.js";
import { llmCalls } from "./llm-calls.js";
import { onlineEvaluation } from "./online-evaluation.js";
import { scores } from "./scores.js";
import type { Plugin, PluginContext, PluginFactory } from "./plugin.js";
import { previewTruncation } from "./preview-truncation.js";
import { statusMachine } from "./status-machine.js";

export type { Batch, Part, PipelineEvent, Plugin, PluginContext, PluginFactory, RunDraft, RunSnapshot, StoredPart } from "./plugin.js";
export { definePlugin } from "./plugin.js";

/** The built-in plugins' SQL procedures (see core/ports/sql.ts: transactions run where the connection lives). */
export const PLUGIN_PROCEDURES = [countAgentRunsProcedure] as const;

const isPlugin = (v: unknown): v is Plugin =>
  typeof v === "object" && v !== null && typeof (v as Plugin).name === "string";

/**
 * Imports a plugin module (a path relative to the working directory, an absolute path or a package name).
 * It must export a Plugin or a factory `(ctx) => Plugin` as default or as `plugin`.
 */
export async function loadPluginModule(spec: string, ctx: PluginContext): Promise<Plugin> {
  const mod = await importConfigured(spec);
  const exported = mod.plugin ?? mod.default;
  const plugin = typeof exported === "function" ? await (exported as PluginFactory)(ctx) : exported;
  if (!isPlugin(plugin)) {
    throw new Error(`plugin module ${spec} must export a Plugin ({ name, onEvent?, afterEventsStored?, afterCommit? }) or a factory of one`);
  }
  return plugin;
}

export async function buildChain(
  ctx: PluginContext,
  opts: { extra?: readonly (string | Plugin)[]; triggers?: readonly TriggerDefinition[] } = {},
): Promise<Plugin[]> {
  const custom: Plugin[] = [];
  for (const p of [...ctx.config.extraPlugins, ...(opts.extra ?? [])]) custom.push(typeof p === "string" ? await loadPluginModule(p, ctx) : p);
  const chain = [
    ...custom.filter((p) => p.order === "early"),
    statusMachine(),
    previewTruncation(),
    llmCalls(),
    costAggregation(),
    scores(),
    ...custom.filter((p) => p.order !== "early"),
    onlineEvaluation(),
    alertEvaluation({ triggers: await loadTriggers(ctx.config, opts.triggers) }),
    broadcast(),
  ];
  const names = new Set<string>();
  for (const p of chain) {
    if (names.has(p.name)) throw new Error(`two pipeline plugins are named ${p.name}`);
    names.add(p.name);
  }
  return chain;
}
