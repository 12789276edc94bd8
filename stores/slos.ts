/**
 * Service level objectives (Postgres slos, migrations 170, 191) and the counts they are judged by (ClickHouse
 * agent_runs and scores, both modes): an objective is the share of an agent's ended production runs that must be
 * good over a rolling window of days, or the least mean of one of its scores (score_mean). What an input may hold is checked here (an effect Schema naming the field it refuses); the
 * budget and burn-rate arithmetic is alerts/slos/.
 */
import { Either, Schema } from "effect";
import { NotFound, ValidationError } from "../core/errors.js";
import { toValidationError } from "../core/events/schema.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { Sql } from "../core/ports/sql.js";
import { RUN_DURATION_MS, RUN_ENDED_AT, toChTime } from "./runs/run-query.js";

export const MAX_SLOS_PER_PROJECT = 200;
export const SLO_OBJECTIVES = ["success_rate", "latency", "score_mean"] as const;
export type SloObjective = (typeof SLO_OBJECTIVES)[number];

export interface Slo {
  readonly id: number;
  readonly name: string;
  readonly agent_name: string;
  readonly objective: SloObjective;
  /** The share of runs that must be good, e.g. 0.99. */
  readonly target: number;
  /** latency: a run is good when it ended within this many seconds; null otherwise. */
  readonly threshold_seconds: number | null;
  /** score_mean: the score whose mean must stay at or above the target; null otherwise. */
  readonly score_name: string | null;
  readonly window_days: number;
  readonly created_at: string;
}

const text = (max: number) => Schema.String.pipe(Schema.filter((s) => (s.trim().length >= 1 && s.length <= max && !/[\u0000-\u001f\u007f]/.test(s)) || `must be 1 to ${max} characters without control characters`));

const SloInput = Schema.Struct({
  name: text(100),
  agent_name: text(200),
  objective: Schema.Literal(...SLO_OBJECTIVES).annotations({ message: () => ({ message: 'must be "success_rate", "latency" or "score_mean"', override: true }) }),
  target: Schema.Number.pipe(Schema.filter((n) => (Number.isFinite(n) && n > 0 && n < 1) || "must be a share between 0 and 1 (exclusive), e.g. 0.99")),
  threshold_seconds: Schema.optional(Schema.NullOr(Schema.Number.pipe(Schema.filter((n) => (Number.isFinite(n) && n > 0 && n <= 86_400) || "must be seconds, more than 0 and at most 86400")))),
  score_name: Schema.optional(Schema.NullOr(text(200))),
  window_days: Schema.Number.pipe(Schema.filter((n) => (Number.isInteger(n) && n >= 1 && n <= 90) || "must be whole days from 1 to 90")),
});
const decode = Schema.decodeUnknownEither(SloInput, { errors: "first", onExcessProperty: "error" });

const fromRow = (r: Record<string, unknown>): Slo => ({
  id: Number(r.id), name: String(r.name), agent_name: String(r.agent_name), objective: r.objective as SloObjective, target: Number(r.target),
  threshold_seconds: r.threshold_seconds === null ? null : Number(r.threshold_seconds),
  score_name: r.score_name === null || r.score_name === undefined ? null : String(r.score_name), window_days: Number(r.window_days),
  created_at: new Date(r.created_at as string).toISOString(),
});

export async function createSlo(sql: Sql, projectId: number, body: unknown): Promise<Slo> {
  const input = decode(body);
  if (Either.isLeft(input)) throw toValidationError(input.left);
  const v = input.right;
  if (v.objective === "latency" && (v.threshold_seconds === undefined || v.threshold_seconds === null)) {
    throw new ValidationError({ field: "threshold_seconds", message: "threshold_seconds is required with objective latency (runs that end within it are good)" });
  }
  if (v.objective !== "latency" && v.threshold_seconds != null) {
    throw new ValidationError({ field: "threshold_seconds", message: "threshold_seconds applies to objective latency only" });
  }
  if (v.objective === "score_mean" && (v.score_name === undefined || v.score_name === null)) {
    throw new ValidationError({ field: "score_name", message: "score_name is required with objective score_mean (the score whose mean must stay at or above the target)" });
  }
  if (v.objective !== "score_mean" && v.score_name != null) {
    throw new ValidationError({ field: "score_name", message: "score_name applies to objective score_mean only" });
  }
  return sql.transaction(async (tx) => {
    const [count] = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM slos WHERE project_id = $1`, [projectId]);
    if (Number(count?.n ?? 0) >= MAX_SLOS_PER_PROJECT) throw new ValidationError({ message: `a project may keep at most ${MAX_SLOS_PER_PROJECT} SLOs` });
    const rows = await tx.query<Record<string, unknown>>(
      `INSERT INTO slos (project_id, name, agent_name, objective, target, threshold_seconds, score_name, window_days)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (project_id, name) DO NOTHING RETURNING *`,
      [projectId, v.name.trim(), v.agent_name, v.objective, v.target, v.threshold_seconds ?? null, v.score_name ?? null, v.window_days],
    );
    if (rows.length === 0) throw new ValidationError({ field: "name", message: `an SLO named ${JSON.stringify(v.name.trim())} exists already` });
    return fromRow(rows[0]!);
  });
}

export async function listSlos(sql: Sql, projectId: number): Promise<Slo[]> {
  return (await sql.query<Record<string, unknown>>(`SELECT * FROM slos WHERE project_id = $1 ORDER BY name`, [projectId])).map(fromRow);
}

export async function getSlo(sql: Sql, projectId: number, id: number): Promise<Slo> {
  const [row] = await sql.query<Record<string, unknown>>(`SELECT * FROM slos WHERE project_id = $1 AND id = $2`, [projectId, id]);
  if (!row) throw new NotFound({ resource: "slo", message: `no SLO ${id} in this project` });
  return fromRow(row);
}

export async function deleteSlo(sql: Sql, projectId: number, id: number): Promise<void> {
  const rows = await sql.query(`DELETE FROM slos WHERE project_id = $1 AND id = $2 RETURNING id`, [projectId, id]);
  if (rows.length === 0) throw new NotFound({ resource: "slo", message: `no SLO ${id} in this project` });
}

/** Good and bad runs of a window (scores and their shortfall for score_mean). */
export interface RunTally {
  readonly total: number;
  readonly bad: number;
}

type TalliedSlo = Pick<Slo, "agent_name" | "objective" | "threshold_seconds" | "score_name">;

/**
 * The SLO's counts in each window ending at `now` (each given in seconds), read from the runs and scores alone, in one
 * read bounded by the longest window (over 90 days of runs at most). The product reads budgets from hours instead
 * (stores/slo-hours.ts, alerts/slos/tallies.ts); this read is the reference they must equal
 * (alerts/slos/tallies.test.ts compares the two; bench:slo-costs times both). It counts ended production runs and the
 * bad ones among them; for score_mean, the agent's scores of that name and their shortfall sum(1 − value), each value clamped to [0, 1]. The mean is at or above the target exactly when the
 * shortfall is within total × (1 − target), so a score's mean has an error budget and burn rates like a success rate
 * (a boolean score's mean is its success rate).
 */
export async function sloTallies(ch: ClickHouse, slo: TalliedSlo, projectId: number, now: Date, windowsSeconds: readonly number[]): Promise<RunTally[]> {
  const longest = Math.max(...windowsSeconds);
  const src = source(slo);
  const after = (sec: number) => `${src.at} >= {now:DateTime64(3, 'UTC')} - INTERVAL ${Math.floor(sec)} SECOND`;
  const cols = windowsSeconds.map((sec, i) => `countIf(${after(sec)}) AS t${i}, sumIf(${src.bad}, ${after(sec)}) AS b${i}`).join(",\n");
  const [row] = await ch.query<Record<string, string | number>>(`SELECT ${cols} ${src.from}`, params(slo, projectId, now, longest));
  return windowsSeconds.map((_, i) => ({ total: Number(row?.[`t${i}`] ?? 0), bad: Number(row?.[`b${i}`] ?? 0) }));
}


const params = (slo: TalliedSlo, projectId: number, now: Date, longestSeconds: number) => ({
  pid: projectId, agent: slo.agent_name, now: toChTime(now.toISOString()), since: toChTime(new Date(now.getTime() - longestSeconds * 1000).toISOString()),
  threshold_ms: (slo.threshold_seconds ?? 0) * 1000, score: slo.score_name ?? "",
});

/**
 * What an SLO counts, from `since` to `now`: its rows (FROM … WHERE), when each happened (`at`) and how bad it is
 * (`bad`: 1 or 0 for a run, the shortfall 1 − value for a score). A score on a run is activity on it, so a run scored
 * since `since` was last active at or after it (the read is bounded by agent_runs' minmax index on last_event_at).
 */
function source(slo: TalliedSlo): { from: string; at: string; bad: string } {
  if (slo.objective === "score_mean") {
    return {
      at: "s.created_at",
      bad: "1 - least(greatest(s.value_number, 0), 1)",
      from: `FROM (SELECT run_id, created_at, value_number FROM scores FINAL
              WHERE project_id = {pid:UInt64} AND name = {score:String} AND value_type IN ('number', 'boolean')
                AND created_at >= {since:DateTime64(3, 'UTC')} AND created_at <= {now:DateTime64(3, 'UTC')}) AS s
      INNER JOIN (SELECT run_id FROM agent_runs FINAL
              WHERE project_id = {pid:UInt64} AND agent_name = {agent:String} AND experiment_id = ''
                AND last_event_at >= {since:DateTime64(3, 'UTC')}) AS r ON s.run_id = r.run_id`,
    };
  }
  return {
    at: RUN_ENDED_AT,
    bad: slo.objective === "latency"
      ? `toUInt8(${RUN_DURATION_MS} > {threshold_ms:Float64})`
      : "toUInt8(status = 'error')",
    from: `FROM agent_runs FINAL
      WHERE project_id = {pid:UInt64} AND agent_name = {agent:String} AND status IN ('success', 'error') AND experiment_id = ''
        AND last_event_at >= {since:DateTime64(3, 'UTC')}
        AND ${RUN_ENDED_AT} >= {since:DateTime64(3, 'UTC')} AND ${RUN_ENDED_AT} <= {now:DateTime64(3, 'UTC')}`,
  };
}
