/**
 * The agent page's "Usual and changed" card: per metric, the band learned for this hour of the week (or "learning"),
 * the last 30 minutes, and the metric in the 24 hours before and after the agent's latest change point (a config
 * activation, a new release; for an activation, the two versions' own bands where both have one), and the band of
 * each environment and recent config version, from the same numbers /api/baselines opens (alerts/baselines/explain.ts).
 */
import { BASELINE_METRICS, BASELINE_METRIC_NAMES, agentReads, explainBaseline, outsideBand, type Band } from "../../alerts/index.js";
import type { WebDeps } from "../deps.js";

export interface BaselineRow {
  readonly label: string;
  /** "4.6 s (up to 5.52 s) for Tuesdays 14:00", or "learning: 5 of 24 hours". */
  readonly usual: string;
  readonly now: string;
  /** The last 30 minutes are outside the band on the metric's worse side (the card marks them). */
  readonly outside: boolean;
  readonly change: string | null;
  /** Each environment's and recent config version's band: "production", "4.6 s (up to 5.52 s)". */
  readonly dimensions: readonly { readonly name: string; readonly usual: string }[];
}

export async function agentBaselines(deps: WebDeps, projectId: number, agent: string, now = new Date()): Promise<BaselineRow[]> {
  // A score's mean is one baseline per score name: /api/baselines opens those, the card shows the agent's own metrics.
  // The change points and the run metrics' window are read once for every metric.
  const shared = agentReads(deps.ports, { projectId, agent, windowMinutes: 30, now });
  return Promise.all(BASELINE_METRIC_NAMES.filter((m) => m !== "score_mean").map(async (metric) => {
    const x = await explainBaseline(deps.ports, { projectId, agent, metric, windowMinutes: 30, now }, shared);
    const fmt = BASELINE_METRICS[metric].format;
    const band = x.bands.medium;
    const usual = band.state === "learning" ? learning(band) : `${bandInWords(band, fmt)} ${band.basis === "slot" ? `for ${x.hour_of_week}` : "any hour"}`;
    const last = x.changes.at(-1);
    const change = last ? changeInWords(last, fmt) : null;
    const dimension = (b: Band): string => (b.state === "learning" ? learning(b) : `${bandInWords(b, fmt)}${b.basis === "slot" ? "" : " any hour"}`);
    const dimensions = [
      ...x.environments.map((e) => ({ name: e.environment!, usual: dimension(e.bands.medium) })),
      ...x.config_versions.map((v) => ({ name: `v${v.version}`, usual: dimension(v.bands.medium) })),
    ];
    const volume = metric === "tool_error_rate" ? "tool calls" : "runs";
    const measured = x.window.runs > 0 && x.window.value !== null;
    const outside = measured && band.state === "ready" && outsideBand(band, metric, x.window.value!);
    return { label: x.label, usual, now: measured ? `${fmt(x.window.value!)} (${x.window.runs} ${volume})` : "no runs", outside, change, dimensions };
  }));
}

const learning = (b: Extract<Band, { state: "learning" }>): string => `learning: ${b.hours} of ${b.needed} hours`;
const bandInWords = (b: Extract<Band, { state: "ready" }>, fmt: (v: number) => string): string => `${fmt(b.median)} (up to ${fmt(b.upper)})`;

type ChangeSeen = Awaited<ReturnType<typeof explainBaseline>>["changes"][number];

/**
 * "config v2 (2026-12-01 14:00 UTC): 4.6 s before → 6.1 s after, +2.3 spreads"; a side without runs (no whole hour
 * with runs before or since) is said in words instead of "no runs → no runs".
 */
function changeInWords(c: ChangeSeen, fmt: (v: number) => string): string {
  const has = (v: number | null): v is number => v !== null && !Number.isNaN(v);
  const head = `${c.label} (${c.at.slice(0, 16).replace("T", " ")} UTC)`;
  // A config activation whose two versions each have a band of their own: those bands, not the hours around it.
  const v = c.versions;
  if (v && v.from_version !== null && v.before?.state === "ready" && v.after?.state === "ready") {
    return `${head}: v${v.from_version} usually ${fmt(v.before.median)} → v${v.to_version} usually ${fmt(v.after.median)} (each version's own baseline)`;
  }
  const young = v?.after?.state === "learning" ? `; v${v.to_version}'s own baseline ${learning(v.after)}` : "";
  return hoursInWords(c, head, fmt, has) + young;
}

function hoursInWords(c: ChangeSeen, head: string, fmt: (v: number) => string, has: (v: number | null) => v is number): string {
  const { value: before } = c.before, { value: after } = c.after;
  if (!has(before) && !has(after)) return `${head}: no runs in the 24 h before or after it yet`;
  if (!has(after)) return `${head}: ${fmt(before as number)} before it, no whole hour with runs since yet`;
  if (!has(before)) return `${head}: ${fmt(after)} since, no runs in the 24 h before it`;
  const shift = c.shift_in_spreads === null ? "" : `, ${c.shift_in_spreads >= 0 ? "+" : ""}${c.shift_in_spreads.toFixed(1)} spreads`;
  return `${head}: ${fmt(before)} before → ${fmt(after)} after${shift}`;
}
