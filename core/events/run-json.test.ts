import { describe, expect, it } from "vitest";
import { newRunRecord, type RunRecord } from "./run.js";
import { runJson } from "./run-json.js";
import { mergeMetadata } from "./run-attributes.js";

const run = (fields: Partial<RunRecord> = {}): RunRecord => ({ ...newRunRecord({ project_id: 3, user_id: 4 }, "ext-1", "run-uuid", "2026-11-23T10:00:00.000Z"), ...fields });

describe("runJson", () => {
  it("names the run's id sdk_run_id, leaves the record's own keys out, and nulls the empty optional fields", () => {
    const json = runJson(run());
    expect(json).toMatchObject({ sdk_run_id: "ext-1", run_id: "run-uuid", session_id: null, experiment_id: null, dataset_item_id: null, repetition: null, duration_ms: null });
    for (const internal of ["external_id", "project_id", "user_id", "status_at", "version"]) expect(json).not.toHaveProperty(internal);
  });

  it("gives the repetition only inside an experiment", () => {
    expect(runJson(run({ repetition: 3 })).repetition).toBeNull();
    expect(runJson(run({ experiment_id: "e", dataset_item_id: "i", repetition: 3 }))).toMatchObject({ experiment_id: "e", dataset_item_id: "i", repetition: 3 });
  });

  it("measures duration_ms as Date.parse would, whatever the timestamps' form, and never negative or NaN", () => {
    const ms = (started: string | null, ended: string | null) => runJson(run({ started_at: started, ended_at: ended })).duration_ms;
    expect(ms("2026-11-23T10:00:00.000Z", "2026-11-23T10:00:01.875Z")).toBe(1875);
    expect(ms("2026-11-23T10:00:00Z", "2026-11-23T12:00:01.5+02:00")).toBe(1500);
    expect(ms("2026-11-23T10:00:05.000Z", "2026-11-23T10:00:00.000Z")).toBe(0);
    expect(ms("2026-11-23T10:00:00.000Z", null)).toBeNull();
    expect(ms(null, "2026-11-23T10:00:00.000Z")).toBeNull();
    expect(ms("", "2026-11-23T10:00:00.000Z")).toBeNull();
    expect(ms("not a time", "2026-11-23T10:00:00.000Z")).toBeNull();
  });

  it("carries the run's tags, metadata of the type each value was sent as, end user, environment, release and previews", () => {
    const metadata = mergeMetadata({}, { customer: "acme", tier: 2, ratio: 0.5, trial: false, code: "42", flag: "true" });
    const json = runJson(run({ tags: ["beta", "vip"], metadata, end_user: "cust-42", environment: "production", release: "v1.2", input_preview: "in", output_preview: "out" }));
    expect(json).toMatchObject({ tags: ["beta", "vip"], end_user: "cust-42", environment: "production", release: "v1.2", input_preview: "in", output_preview: "out" });
    const back = JSON.parse(JSON.stringify(json)) as { metadata: unknown };
    expect(back.metadata).toEqual({ customer: "acme", tier: 2, ratio: 0.5, trial: false, code: "42", flag: "true" });
    // None: empty lists and objects, null names, empty previews.
    expect(runJson(run())).toMatchObject({ tags: [], metadata: {}, end_user: null, environment: null, release: null, input_preview: "", output_preview: "" });
  });

  it("lists the models of the run's LLM calls; null for a run with calls whose record names no model (recorded before it kept them)", () => {
    expect(runJson(run({ llm_calls: 3, models: ["claude-sonnet-4", "gpt-4o-mini"] })).models).toEqual(["claude-sonnet-4", "gpt-4o-mini"]);
    expect(runJson(run()).models).toEqual([]);
    expect(runJson(run({ llm_calls: 2, models: [] })).models).toBeNull();
  });
});
