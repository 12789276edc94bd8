/**
 * Change points of an agent: a config version activated (agent_config_activations, Postgres) and a new release in
 * its runs (the first run carrying it; the earliest release of the look-back is where it starts, not a change). An
 * anomaly names the nearest one before it; the baseline explanation shows each metric before and after each one.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { Sql } from "../../core/ports/sql.js";
import { activationsBetween } from "../../stores/config-activations.js";
import { releasesSeen, type HourValue } from "../../stores/baselines/history.js";

export interface ChangePoint {
  readonly kind: "config_activation" | "release";
  /** "config v7", "release 2.4.1". */
  readonly label: string;
  readonly at: string;
  readonly version?: number;
  readonly release?: string;
}

/** The agent's change points in [since, until), oldest first. */
export async function changePoints(ports: { readonly sql: Sql; readonly clickhouse: ClickHouse }, projectId: number, agent: string, since: Date, until: Date): Promise<ChangePoint[]> {
  const [activations, releases] = await Promise.all([
    activationsBetween(ports.sql, projectId, since.toISOString(), until.toISOString(), [agent]),
    releasesSeen(ports.clickhouse, { projectId, agent, since }),
  ]);
  const out: ChangePoint[] = activations.map((a) => ({ kind: "config_activation", label: `config v${a.version}`, at: a.at, version: a.version }));
  for (const r of releases.slice(1)) {
    if (Date.parse(r.first_seen) < until.getTime()) out.push({ kind: "release", label: `release ${r.release}`, at: r.first_seen, release: r.release });
  }
  return out.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}

/** "since config v7 was activated 40 min ago", "since release 2.4.1 first ran 2 h ago". */
export const changeInWords = (c: ChangePoint, now: Date): string =>
  `since ${c.label} ${c.kind === "release" ? "first ran" : "was activated"} ${durationInWords(now.getTime() - Date.parse(c.at))} ago`;

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
