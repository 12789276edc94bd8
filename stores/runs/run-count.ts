/**
 * How many of a project's runs a filter matches, counted up to a cap (an export says whether it was cut:
 * web/runs/export-api.ts), so a count over a project's whole history stops reading at the cap.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { RunsFilter } from "../../core/runs-filter/index.js";
import { runsFilterSql, SqlParams } from "./runs-filter-sql.js";

/** The number of runs matching `filter`, or `cap + 1` when there are more than `cap`. */
export async function countRunsUpTo(ch: ClickHouse, projectId: number, filter: RunsFilter, cap: number): Promise<number> {
  const p = new SqlParams();
  const { where } = runsFilterSql(projectId, [filter], p);
  const rows = await ch.query<{ n: number | string }>(
    `SELECT count() AS n FROM (SELECT 1 FROM agent_runs FINAL WHERE ${where.join(" AND ")} LIMIT ${p.bind("UInt32", cap + 1)})`,
    p.values,
  );
  return Number(rows[0]?.n ?? 0);
}
