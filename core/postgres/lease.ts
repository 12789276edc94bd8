/**
 * Interval leases in Postgres: one row per lease table (`id = 1`), so that of many processes running the same timer
 * (the alert sweep, the retention sweep) one does the work per interval. A process takes the lease when it has run
 * out, and keeps renewing it while it holds it.
 */
import { hostname } from "node:os";
import type { Sql } from "../ports/sql.js";

/** The lease tables (migrations 040 and 070); the name is part of the SQL, so only these are accepted. */
export type LeaseTable = "alert_sweep_lease" | "retention_sweep_lease";

/** This process's holder name: host, pid and a random tag (two servers in one process stay apart). */
export const leaseHolder = (): string => `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;

/** True when `holder` now holds the lease for `seconds` (taken because it ran out, or renewed because it held it). */
export async function takeLease(sql: Sql, table: LeaseTable, holder: string, seconds: number): Promise<boolean> {
  const won = await sql.query(
    `UPDATE ${table} SET held_until = now() + make_interval(secs => $1::double precision), holder = $2
     WHERE id = 1 AND (held_until <= now() OR holder = $2) RETURNING id`,
    [seconds, holder],
  );
  return won.length > 0;
}
