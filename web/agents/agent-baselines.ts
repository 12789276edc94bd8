/**
 * The agent page's "Usual and changed" card: per metric, the band learned for this hour of the week (or "learning"),
 * the last 30 minutes, and the metric in the 24 hours before and after the agent's latest change point (a config
 * activation, a new release), from the same numbers /api/baselines opens (alerts/baselines/explain.ts).
 */
import { BASELINE_METRICS, BASELINE_METRIC_NAMES, explainBaseline, outsideBand } from "../../alerts/index.js";
import type { WebDeps } from "../deps.js";

export interface BaselineRow {
  readonly label: string;
  /** "4.6 s (up to 5.52 s) for Tuesdays 14:00", or "learning: 5 of 24 hours". */
  readonly usual: string;
  readonly now: string;
  /** The last 30 minutes are outside the band on the metric's worse side (the card marks them). */
  readonly outside: boolean;
  readonly change: string | null;
}

export async function agentBaselines(deps: WebDeps, projectId: number, agent: string, now = new Date()): Promise<BaselineRow[]> {
  // A score's mean is one baseline per score name: /api/baselines opens those, the card shows the agent's own metrics.
  return Promise.all(BASELINE_METRIC_NAMES.filter((m) => m !== "score_mean").map(async (metric) => {
    const x = await explainBaseline(deps.ports, { projectId, agent, metric, windowMinutes: 30, now });
    const fmt = BASELINE_METRICS[metric].format;
    const band = x.bands.medium;
    const usual = band.state === "learning"
      ? `learning: ${band.hours} of ${band.needed} hours`
      : `${fmt(band.median)} (up to ${fmt(band.upper)}) ${band.basis === "slot" ? `for ${x.hour_of_week}` : "any hour"}`;
    const last = x.changes.at(-1);
    const side = (v: number | null) => (v === null || Number.isNaN(v) ? "no runs" : fmt(v));
    const change = last
      ? `${last.label} (${last.at.slice(0, 16).replace("T", " ")} UTC): ${side(last.before.value)} before → ${side(last.after.value)} after` +
        (last.shift_in_spreads === null ? "" : `, ${last.shift_in_spreads >= 0 ? "+" : ""}${last.shift_in_spreads.toFixed(1)} spreads`)
      : null;
    const volume = metric === "tool_error_rate" ? "tool calls" : "runs";
    const measured = x.window.runs > 0 && x.window.value !== null;
    const outside = measured && band.state === "ready" && outsideBand(band, metric, x.window.value!);
    return { label: x.label, usual, now: measured ? `${fmt(x.window.value!)} (${x.window.runs} ${volume})` : "no runs", outside, change };
  }));
}
