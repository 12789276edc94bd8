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
 * transaction per part: the count is exact under replays. A run whose start this plugin has counted is not sent
 * again while the pipeline keeps its draft: an OTLP trace sent over many exports has a run_start in each.
 */
import { defineProcedure, type Sql } from "../core/ports/sql.js";
import type { Part, Plugin, PluginContext, RunDraft } from "./plugin.js";
import { computeCost } from "./prices.js";

const SCRATCH = "cost-aggregation";

interface RunStart {
  project_id: number;
  external_id: string;
  agent_name: string;
  framework: string;
  started_at: string;
}

const count = (v: unknown): number | undefined => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined);

/** Creates missing agents and adds each run not yet counted to its agent's total_runs, exactly once. */
export async function countAgentRuns(sql: Sql, starts: readonly RunStart[]): Promise<void> {
  if (starts.length > 0) await sql.run(countAgentRunsProcedure, starts);
}

/** countAgentRuns' transaction, run where the connection lives (one call from the pipeline thread). */
export const countAgentRunsProcedure = defineProcedure("plugins.count-agent-runs", async (sql, starts: readonly RunStart[]) => {
  const col = <K extends keyof RunStart>(k: K) => starts.map((s) => s[k]);
  await sql.transaction(async (tx) => {
    // Only for projects that still exist (a project deleted while its events were in flight must not wedge the pipeline).
    await tx.query(
      `INSERT INTO agents (project_id, name, framework)
       SELECT DISTINCT ON (s.project_id, s.name) s.project_id, s.name, s.framework
       FROM unnest($1::bigint[], $2::text[], $3::text[]) AS s(project_id, name, framework)
       JOIN projects p ON p.id = s.project_id
       ORDER BY s.project_id, s.name, s.framework DESC
       ON CONFLICT (project_id, name) DO NOTHING`,
      [col("project_id"), col("agent_name"), col("framework")],
    );
    await tx.query(
      `WITH fresh AS (
         INSERT INTO agent_run_starts (project_id, external_id, agent_id, started_at)
         SELECT s.project_id, s.external_id, a.id, s.started_at
         FROM unnest($1::bigint[], $2::text[], $3::text[], $4::timestamptz[]) AS s(project_id, external_id, name, started_at)
         JOIN agents a ON a.project_id = s.project_id AND a.name = s.name
         ON CONFLICT (project_id, external_id) DO NOTHING
         RETURNING agent_id
       )
       UPDATE agents SET total_runs = agents.total_runs + c.n, updated_at = now()
       FROM (SELECT agent_id, count(*) AS n FROM fresh GROUP BY agent_id) c
       WHERE agents.id = c.agent_id`,
      [col("project_id"), col("external_id"), col("agent_name"), col("started_at")],
    );
    // An agent created before its framework was known learns it from a later run_start.
    await tx.query(
      `UPDATE agents SET framework = s.framework, updated_at = now()
       FROM unnest($1::bigint[], $2::text[], $3::text[]) AS s(project_id, name, framework)
       WHERE agents.project_id = s.project_id AND agents.name = s.name AND agents.framework = '' AND s.framework <> ''`,
      [col("project_id"), col("agent_name"), col("framework")],
    );
  });
});

export const costAggregation = (): Plugin => {
  let ctx: PluginContext | undefined;
  // The part's first run_start of each run, by the run's draft.
  const startsOf = (part: Part): Map<RunDraft, RunStart> => {
    let m = part.scratch.get(SCRATCH) as Map<RunDraft, RunStart> | undefined;
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
      const starts = part.scratch.get(SCRATCH) as Map<RunDraft, RunStart> | undefined;
      if (!starts || !ctx) return;
      await countAgentRuns(ctx.sql, [...starts.values()]);
      for (const draft of starts.keys()) draft.pluginState.set(SCRATCH, true);
    },
  };
};

export default costAggregation;
