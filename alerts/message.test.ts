import { describe, expect, it } from "vitest";
import type { NotificationJob } from "../stores/alerts/jobs.js";
import { factsOf } from "./message.js";

const job = (run: Record<string, unknown>): Pick<NotificationJob, "rule_name" | "trigger_type" | "payload"> => ({
  rule_name: "Production failures",
  trigger_type: "run_error",
  payload: {
    message: "planner run r-1 failed", fired_at: "2026-11-23T10:00:00.000Z", url: "https://runwatch.example.com/dashboard/r-1",
    rule: { id: 7, name: "Production failures", trigger_type: "run_error" },
    run: { run_id: "00000000-0000-0000-0000-000000000001", agent_name: "planner", status: "error", started_at: null, ended_at: null, cost_usd: 0, error_count: 1, last_error: "", ...run } as NotificationJob["payload"]["run"],
    event: null, details: {}, suppressed_since_last: 0, test: false,
  },
});

describe("a notification's run", () => {
  it("names the run by its sdk_run_id, as the API does", () => {
    expect(factsOf(job({ sdk_run_id: "r-1" }))).toContainEqual(["Run", "r-1"]);
  });

  it("reads the id of a job stored before the run's id was called sdk_run_id", () => {
    expect(factsOf(job({ external_id: "r-old" }))).toContainEqual(["Run", "r-old"]);
  });
});
