/**
 * Change points of an agent: a config version activated (agent_config_activations, Postgres), a new release in its
 * runs (the first run carrying it; the earliest release of the look-back is where it starts, not a change), and a
 * move of the `production` label of a prompt its LLM calls used in the look-back (project_audit_log). An
 * anomaly names the nearest one before it; the baseline explanation shows each metric before and after each one.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { Sql } from "../../core/ports/sql.js";
import { activationsBetween } from "../../stores/config-activations.js";
import { promptsUsed, releasesSeen, type HourValue } from "../../stores/baselines/history.js";
import { PRODUCTION_LABEL, productionLabelMoves } from "../../stores/baselines/prompt-moves.js";

export interface ChangePoint {
  readonly kind: "config_activation" | "release" | "prompt_label";
  /** "config v7", "release 2.4.1", "prompt refund-answer v4". */
  readonly label: string;
  readonly at: string;
  /** The config version activated, or the prompt version the label moved to. */
  readonly version?: number;
  readonly release?: string;
  /** prompt_label: the prompt, and the version its label left (null: the label was new). */
  readonly prompt?: string;
  readonly from_version?: number | null;
}

/** The agent's change points in [since, until), oldest first. */
export async function changePoints(ports: { readonly sql: Sql; readonly clickhouse: ClickHouse }, projectId: number, agent: string, since: Date, until: Date): Promise<ChangePoint[]> {
  const [activations, releases, moves] = await Promise.all([
    activationsBetween(ports.sql, projectId, since.toISOString(), until.toISOString(), [agent]),
    releasesSeen(ports.clickhouse, { projectId, agent, since }),
    promptsUsed(ports.clickhouse, { projectId, agent, since }).then((prompts) => productionLabelMoves(ports.sql, projectId, prompts, since, until)),
  ]);
  const out: ChangePoint[] = activations.map((a) => ({ kind: "config_activation", label: `config v${a.version}`, at: a.at, version: a.version }));
  for (const m of moves) out.push({ kind: "prompt_label", label: `prompt ${m.prompt} v${m.version}`, at: m.at, version: m.version, prompt: m.prompt, from_version: m.from });
  for (const r of releases.slice(1)) {
    if (Date.parse(r.first_seen) < until.getTime()) out.push({ kind: "release", label: `release ${r.release}`, at: r.first_seen, release: r.release });
  }
  return out.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}

const VERBS: Readonly<Record<ChangePoint["kind"], string>> = {
  config_activation: "was activated", release: "first ran", prompt_label: `became ${PRODUCTION_LABEL}`,
};

/** "since config v7 was activated 40 min ago", "since release 2.4.1 first ran 2 h ago", "since prompt answer v4 became production 3 h ago". */
export const changeInWords = (c: ChangePoint, now: Date): string =>
  `since ${c.label} ${VERBS[c.kind]} ${durationInWords(now.getTime() - Date.parse(c.at))} ago`;

/** "40 min", "3 h", "2 days". */
export function durationInWords(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min`;
  if (s < 48 * 3600) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} days`;
}

export interface Side {
  /** Whole hours with runs on this side. */
  readonly hours: number;
  readonly runs: number;
  /** The runs-weighted mean of those hours' values (NaN without any). */
  readonly value: number;
}

const HOUR_MS = 3_600_000;

/**
 * A metric in the `hours` whole hours before a change and after it (the hour it happened in belongs to neither):
 * each side the mean of its hourly values weighted by their runs.
 */
export function beforeAfter(history: readonly HourValue[], at: string, hours = 24): { before: Side; after: Side } {
  const changeHour = Math.floor(Date.parse(at) / HOUR_MS) * HOUR_MS;
  const side = (from: number, to: number): Side => {
    let runs = 0, sum = 0, n = 0;
    for (const h of history) {
      const t = Date.parse(h.hour);
      if (t < from || t >= to) continue;
      n++; runs += h.runs; sum += h.value * h.runs;
    }
    return { hours: n, runs, value: runs > 0 ? sum / runs : NaN };
  };
  return { before: side(changeHour - hours * HOUR_MS, changeHour), after: side(changeHour + HOUR_MS, changeHour + (hours + 1) * HOUR_MS) };
}
