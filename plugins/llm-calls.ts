/**
 * llm-calls: an LLM call is a `step` of kind "llm" (docs/API.md, Spans). When one ends, this plugin prices it
 * from its own model and provider (@pydantic/genai-prices, cache reads and writes at their rates) unless the
 * client sent cost_usd, writes the cost and its source into the event (so the stored event, the spans API and a
 * recount agree), and adds the call to its run: a run with LLM calls takes its tokens and cost from them (the
 * totals rule; cost-aggregation then ignores run_end's figures), and its `models` gain the call's model. Once the
 * part's events are stored, each call becomes a row of ClickHouse `llm_calls` (docs/STORAGE.md): written again on a
 * replay, folded by its key.
 *
 * Before cost-aggregation in the chain, so a run_end in the same part already sees the calls.
 */
import { withModel, type RunRecord } from "../core/events/run.js";
import { toChTime } from "../stores/runs/event-store.js";
import { insertLlmCallRows } from "../stores/llm-calls.js";
import { isoOfMs, msOfIso } from "../core/events/iso-time.js";
import { runKeyOfEvent } from "../core/events/run-key.js";
import { errorOf, isLlmCallEnd } from "../core/events/spans.js";
import { computeCost } from "./prices.js";
import type { PipelineEvent, Plugin, PluginContext, StoredPart } from "./plugin.js";

const count = (v: unknown): number => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0);
const text = (v: unknown): string => (typeof v === "string" ? v : "");


type CostSource = RunRecord["cost_source"];
const SOURCE_RANK: Record<CostSource, number> = { none: 0, client: 1, computed: 2 };

/** Prices the call in place (payload.cost_usd, payload.cost_source) and returns its cost. */
export function priceLlmCall(e: PipelineEvent): { cost: number; source: CostSource } {
  const p = e.payload;
  if (typeof p.cost_usd === "number" && Number.isFinite(p.cost_usd) && p.cost_usd >= 0) {
    p.cost_source = "client";
    return { cost: p.cost_usd, source: "client" };
  }
  const model = text(p.model);
  const cost = model
    ? computeCost(model, count(p.prompt_tokens), count(p.completion_tokens), e.occurred_at, {
        provider: text(p.provider) || undefined,
        cachedTokens: count(p.cached_tokens),
        cacheWriteTokens: count(p.cache_write_tokens),
      })
    : undefined;
  if (cost === undefined) {
    p.cost_source = "none";
    return { cost: 0, source: "none" };
  }
  p.cost_usd = cost;
  p.cost_source = "computed";
  return { cost, source: "computed" };
}

/** Adds one priced call to its run; the first call replaces whatever run_end had set. */
export function addCallToRun(run: RunRecord, e: PipelineEvent, priced: { cost: number; source: CostSource }): void {
  const p = e.payload;
  if (run.llm_calls === 0) {
    run.prompt_tokens = 0;
    run.completion_tokens = 0;
    run.total_tokens = 0;
    run.cost_usd = 0;
    run.cost_source = "none";
  }
  run.llm_calls += 1;
  const prompt = count(p.prompt_tokens);
  const completion = count(p.completion_tokens);
  run.prompt_tokens += prompt;
  run.completion_tokens += completion;
  run.total_tokens += count(p.total_tokens) || prompt + completion;
  run.cost_usd += priced.cost;
  if (SOURCE_RANK[priced.source] > SOURCE_RANK[run.cost_source]) run.cost_source = priced.source;
  if (run.model === "" && text(p.model)) run.model = text(p.model);
}

/** The llm_calls row of an ended call of `run`. */
export function llmCallRow(e: PipelineEvent, run: Readonly<RunRecord>): Record<string, unknown> {
  const p = e.payload;
  const prompt = count(p.prompt_tokens);
  const completion = count(p.completion_tokens);
  const ended = toChTime(e.occurred_at);
  const duration = count(p.duration_ms);
  return {
    user_id: e.user_id,
    // The run's project: the column's default is user_id, the sender, which is another number in a team's project.
    project_id: run.project_id,
    run_id: e.run_id,
    sdk_run_id: e.sdk_run_id,
    call_id: e.span_id || e.event_id,
    span_id: e.span_id ?? "",
    parent_span_id: e.parent_span_id ?? "",
    event_id: e.event_id,
    agent_name: run.agent_name,
    config_version: run.config_version,
    name: text(p.node_name),
    model: text(p.model),
    provider: text(p.provider),
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: count(p.total_tokens) || prompt + completion,
    cached_tokens: count(p.cached_tokens),
    cache_write_tokens: count(p.cache_write_tokens),
    reasoning_tokens: count(p.reasoning_tokens),
    cost_usd: typeof p.cost_usd === "number" ? p.cost_usd : 0,
    cost_source: text(p.cost_source) || "none",
    status: errorOf(p) ? "error" : "ok", // as the spans API says it
    started_at: toChTime(isoOfMs(msOfIso(e.occurred_at) - duration)),
    ended_at: ended,
    duration_ms: duration,
    day: ended.slice(0, 10),
    prompt_name: text(p.prompt_name),
    prompt_version: count(p.prompt_version),
  };
}

export const llmCalls = (): Plugin => {
  let ctx: PluginContext | undefined;
  return {
    name: "llm-calls",
    init(c) {
      ctx = c;
    },
    onEvent(event, draft) {
      if (!isLlmCallEnd(event)) return;
      const priced = priceLlmCall(event); // a duplicate is priced the same, so its stored row is unchanged
      if (!event.duplicate) addCallToRun(draft.run, event, priced);
      // Duplicates too, as the run's tags: a run loaded after a failed attempt lacks the models of its stored calls.
      if (typeof event.payload.model === "string") draft.run.models = withModel(draft.run.models, event.payload.model);
    },
    async afterEventsStored(part: StoredPart) {
      // Every ended call of the part, replays included: the row may be missing if the last attempt died
      // after storing the events; a row written twice folds away.
      const rows: Record<string, unknown>[] = [];
      for (const e of part.events) {
        if (!isLlmCallEnd(e)) continue;
        const draft = part.runs.get(runKeyOfEvent(e));
        if (draft) rows.push(llmCallRow(e, draft.run));
      }
      if (rows.length > 0 && ctx) await insertLlmCallRows(ctx.clickhouse, rows);
    },
  };
};

export default llmCalls;
