import { calcPrice } from "@pydantic/genai-prices";
import { describe, expect, it } from "vitest";
import { costAggregation } from "./cost-aggregation.js";
import { computeCost } from "./prices.js";
import { applyEvents, testEvent } from "./testing.js";

describe("cost-aggregation plugin", () => {
  it("keeps a client-sent cost and the run_end tokens and model", async () => {
    const { run } = await applyEvents([costAggregation()], [
      testEvent({ event_type: "run_end", payload: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500, cost_usd: 0.042, model: "gpt-4o" } }),
    ]);
    expect(run()).toMatchObject({ prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500, cost_usd: 0.042, model: "gpt-4o", cost_source: "client" });
  });

  it("computes the cost from the price table when run_end has tokens and a model but no cost", async () => {
    const { run } = await applyEvents([costAggregation()], [
      testEvent({ event_type: "run_end", occurred_at: "2026-11-23T10:00:00.000Z", payload: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000, model: "gpt-4o" } }),
    ]);
    // gpt-4o lists at $2.50 per million input and $10 per million output tokens.
    expect(run().cost_usd).toBeCloseTo(12.5, 6);
    expect(run()).toMatchObject({ cost_source: "computed", total_tokens: 2_000_000 });
    const expected = calcPrice({ input_tokens: 1_000_000, output_tokens: 1_000_000 }, "gpt-4o")!.total_price;
    expect(run().cost_usd).toBeCloseTo(expected, 9);
  });

  it("understands provider-qualified model names and leaves unknown models uncosted", async () => {
    expect(computeCost("openai/gpt-4o", 1_000_000, 0)).toBeCloseTo(2.5, 6);
    expect(computeCost("no-such-model-xyz", 10, 10)).toBeUndefined();
    const { run } = await applyEvents([costAggregation()], [
      testEvent({ event_type: "run_end", payload: { prompt_tokens: 10, completion_tokens: 5, model: "no-such-model-xyz" } }),
    ]);
    expect(run()).toMatchObject({ cost_usd: 0, cost_source: "none", total_tokens: 15, model: "no-such-model-xyz" });
  });

  it("prices cache reads and writes counted apart from the prompt tokens on top of them, where the price table would throw", () => {
    const at = "2026-11-25T10:00:00.000Z";
    const table = (usage: Record<string, number>) => calcPrice(usage, "claude-sonnet-4-5", { providerId: "anthropic", timestamp: new Date(at) })!.total_price;
    expect(() => table({ input_tokens: 12, cache_read_tokens: 9000, output_tokens: 40 })).toThrow(/cannot exceed/);
    expect(computeCost("claude-sonnet-4-5", 12, 40, at, { provider: "anthropic", cachedTokens: 9000, cacheWriteTokens: 500 }))
      .toBeCloseTo(table({ input_tokens: 9512, cache_read_tokens: 9000, cache_write_tokens: 500, output_tokens: 40 }), 12);
    // Counts that fit stay as they are: the cache is a part of the prompt.
    expect(computeCost("claude-sonnet-4-5", 9512, 40, at, { provider: "anthropic", cachedTokens: 9000, cacheWriteTokens: 500 }))
      .toBeCloseTo(table({ input_tokens: 9512, cache_read_tokens: 9000, cache_write_tokens: 500, output_tokens: 40 }), 12);
  });

  it("collects each run's first run_start for the agents' total_runs", async () => {
    const { part } = await applyEvents([costAggregation()], [
      testEvent({ event_type: "run_start", agent_name: "a", sdk_run_id: "r1", payload: { framework: "langgraph" } }),
      testEvent({ event_type: "run_start", agent_name: "a", sdk_run_id: "r1" }),
      testEvent({ event_type: "run_start", agent_name: "b", sdk_run_id: "r2" }),
    ]);
    const starts = [...(part.scratch.get("cost-aggregation") as Map<string, { agent_name: string; framework: string }>).values()];
    expect(starts.map((s) => [s.agent_name, s.framework])).toEqual([["a", "langgraph"], ["b", ""]]);
  });
});
