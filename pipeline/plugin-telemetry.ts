/**
 * Each plugin's own figures (core/pipeline-counters.ts PLUGIN_HOOK_HELP): per hook, its calls, the events and runs
 * handed to it, its errors and the time spent in it, so an operator sees which plugin costs what. plugin-hooks.ts
 * fills them as it calls the hooks: a typed array per figure, indexed by the plugin's place in that hook's list, so
 * counting an event allocates nothing. Sent with the pipeline's counters (counters.ts).
 */
import type { PluginHookFigure, PluginHookName, PluginsSnapshot } from "../core/pipeline-counters.js";
import type { Plugin } from "../plugins/plugin.js";

/** One hook's figures for the plugins that have it; seconds are kept in ms until a snapshot. */
export class HookFigures {
  readonly calls: Float64Array;
  readonly events: Float64Array;
  readonly runs: Float64Array;
  readonly errors: Float64Array;
  readonly ms: Float64Array;

  constructor(readonly plugins: readonly Plugin[]) {
    const zeros = () => new Float64Array(plugins.length);
    this.calls = zeros();
    this.events = zeros();
    this.runs = zeros();
    this.errors = zeros();
    this.ms = zeros();
  }
}

export class PluginTelemetry {
  constructor(private readonly hooks: Readonly<Record<PluginHookName, HookFigures>>) {}

  snapshot(): PluginsSnapshot {
    const out: Record<string, Partial<Record<PluginHookName, Record<PluginHookFigure, number>>>> = {};
    for (const [hook, f] of Object.entries(this.hooks) as [PluginHookName, HookFigures][]) {
      f.plugins.forEach((p, i) => {
        const byHook = (out[p.name] ??= {});
        // Names are unique in a chain; were two the same, their figures add up.
        const s = (byHook[hook] ??= { calls: 0, events: 0, runs: 0, errors: 0, seconds: 0 });
        s.calls += f.calls[i];
        s.events += f.events[i];
        s.runs += f.runs[i];
        s.errors += f.errors[i];
        s.seconds += f.ms[i] / 1000;
      });
    }
    return out;
  }
}
