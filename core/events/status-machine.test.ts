import { describe, expect, it } from "vitest";
import { transition, type StatusState } from "./status-machine.js";
import type { EventType } from "./schema.js";

const t0 = "2026-11-23T10:00:00.000Z";
const at = (s: number) => new Date(Date.parse(t0) + s * 1000).toISOString();

function replay(events: [EventType, number][]): StatusState | undefined {
  let s: StatusState | undefined;
  for (const [event_type, sec] of events) s = transition(s, { event_type, occurred_at: at(sec) });
  return s;
}

describe("run status machine (docs/API.md, Run statuses)", () => {
  it("follows the spec's transitions", () => {
    expect(replay([["run_start", 0]])?.status).toBe("running");
    expect(replay([["run_start", 0], ["step", 1], ["tool_call", 2]])?.status).toBe("running");
    expect(replay([["run_start", 0], ["human_input_requested", 1]])?.status).toBe("waiting_for_input");
    expect(replay([["run_start", 0], ["human_input_requested", 1], ["human_input_received", 2]])?.status).toBe("running");
    expect(replay([["run_start", 0], ["run_end", 3]])?.status).toBe("success");
    expect(replay([["run_start", 0], ["error", 3]])?.status).toBe("error");
  });

  it("starts an unknown run as running whatever arrives first", () => {
    expect(replay([["step", 0]])?.status).toBe("running");
    expect(replay([["run_end", 0]])?.status).toBe("success");
  });

  it("never lets a late event with an earlier occurred_at move the status back", () => {
    // human_input_received happened at t=2 but arrives after run_end (t=3)
    expect(replay([["run_start", 0], ["human_input_requested", 1], ["run_end", 3], ["human_input_received", 2]])?.status).toBe("success");
    expect(replay([["run_start", 0], ["error", 5], ["run_start", 1]])?.status).toBe("error");
  });

  it("lets a genuinely later event move the status (ties go to arrival order)", () => {
    expect(replay([["run_start", 0], ["run_end", 3], ["run_start", 10]])?.status).toBe("running");
    expect(replay([["run_start", 0], ["human_input_requested", 3], ["human_input_received", 3]])?.status).toBe("running");
  });

  it("reports whether anything changed", () => {
    const s = transition(undefined, { event_type: "run_start", occurred_at: at(0) });
    expect(s.changed).toBe(true);
    expect(transition(s, { event_type: "step", occurred_at: at(1) }).changed).toBe(false);
  });
});
