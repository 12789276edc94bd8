/**
 * cost-aggregation: puts run_end's tokens, cost and model onto the run, and counts runs per agent.
 *
 * Cost: a client-sent cost_usd is kept (cost_source "client"). When run_end has tokens and a model but no
 * cost_usd, the cost is computed from the bundled price table of @pydantic/genai-prices at the event's
 * time (cost_source "computed"). A model the table does not know leaves cost_usd 0 (cost_source "none").
 *
 * Agents: the first run_start of a run creates the agent row (Postgres `agents`, unique per user and name)
 * if needed and adds one to its total_runs. Parts can be processed twice (at-least-once), so each counted
 * run is recorded in agent_run_starts and only runs inserted there for the first time are added, in one
 * transaction per part (stores/agent-run-starts.ts): the count is exact under replays. A run whose start this
 * plugin has counted is not sent again while the pipeline keeps its draft: an OTLP trace sent over many exports
 * has a run_start in each.
 */
import { countAgentRuns, type AgentRunStart } from "../stores/agent-run-starts.js";
import type { Part, Plugin, PluginContext, RunDraft } from "./plugin.js";
import { computeCost } from "./prices.js";

const SCRATCH = "cost-aggregation";

const count = (v: unknown): number | undefined => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined);

export const costAggregation = (): Plugin => {
  let ctx: PluginContext | undefined;
  // The part's first run_start of each run, by the run's draft.
  const startsOf = (part: Part): Map<RunDraft, AgentRunStart> => {
    let m = part.scratch.get(SCRATCH) as Map<RunDraft, AgentRunStart> | undefined;
    if (!m) part.scratch.set(SCRATCH, (m = new Map()));
    return m;
  };
  return {
    name: "cost-aggregation",
    init(c) {
      ctx = c;
    },
    onEvent(event, draft, part) {
      const run = draft.run;
      if (event.event_type === "run_start" && event.agent_name) {
        // Counted already: a committed countAgentRuns recorded this draft's start (the mark goes with the draft).
        if (draft.pluginState.has(SCRATCH)) return;
        if (!startsOf(part).has(draft)) {
          startsOf(part).set(draft, {
            project_id: event.project_id,
            external_id: event.sdk_run_id,
            agent_name: event.agent_name,
            framework: typeof event.payload.framework === "string" ? event.payload.framework : "",
            started_at: event.occurred_at,
          });
        }
        return;
      }
      if (event.event_type !== "run_end") return;
      const p = event.payload;
      // The totals rule (docs/API.md, Spans): a run with LLM-call spans sums them; run_end's figures are ignored.
      if (run.llm_calls > 0) {
        if (run.model === "" && typeof p.model === "string") run.model = p.model;
        return;
      }
      const prompt = count(p.prompt_tokens);
      const completion = count(p.completion_tokens);
      if (prompt !== undefined) run.prompt_tokens = prompt;
      if (completion !== undefined) run.completion_tokens = completion;
      run.total_tokens = count(p.total_tokens) ?? run.prompt_tokens + run.completion_tokens;
      if (typeof p.model === "string" && p.model !== "") run.model = p.model;
      if (typeof p.cost_usd === "number" && Number.isFinite(p.cost_usd) && p.cost_usd >= 0) {
        run.cost_usd = p.cost_usd;
        run.cost_source = "client";
      } else if (run.model !== "" && (prompt !== undefined || completion !== undefined)) {
        const cost = computeCost(run.model, run.prompt_tokens, run.completion_tokens, event.occurred_at);
        if (cost !== undefined) {
          run.cost_usd = cost;
          run.cost_source = "computed";
        }
      }
    },
    async afterEventsStored(part) {
      const starts = part.scratch.get(SCRATCH) as Map<RunDraft, AgentRunStart> | undefined;
      if (!starts || !ctx) return;
      await countAgentRuns(ctx.sql, [...starts.values()]);
      for (const draft of starts.keys()) draft.pluginState.set(SCRATCH, true);
    },
  };
};

export default costAggregation;
