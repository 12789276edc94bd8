/**
 * Applies users' data retention every `intervalMs` (RUNWATCH_RETENTION_SWEEP_MS, 1 h) beside each pipeline process;
 * a lease row in Postgres lets one of them sweep per interval (stores/retention.ts sweepRetention). The first sweep
 * runs a minute after start (or one interval, when shorter), so a restart loop does not sweep on every start.
 */
import { JobCounters } from "../core/jobs.js";
import type { Logger } from "../core/logger.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { Sql } from "../core/ports/sql.js";
import { leaseHolder } from "../core/postgres/lease.js";
import { sweepRetention } from "../stores/retention.js";

export interface RetentionSweeper {
  close(): Promise<void>;
}

/** `counters` counts its sweeps, the runs they deleted and the sweeps that failed (its background job, deploy/jobs.ts). */
export function startRetentionSweeper(ports: { sql: Sql; ch: ClickHouse }, intervalMs: number, logger: Logger, counters = new JobCounters()): RetentionSweeper {
  if (intervalMs <= 0) return { close: async () => {} };
  const holder = leaseHolder();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;

  const tick = async (): Promise<void> => {
    try {
      await counters.pass(async () => {
        const outcomes = await sweepRetention(ports, holder, intervalMs);
        const deleted = outcomes?.reduce((n, o) => n + o.deleted_runs, 0) ?? 0;
        if (deleted > 0) logger.info("retention: deleted expired runs", { runs: deleted, users: outcomes!.filter((o) => o.deleted_runs > 0).length });
        return deleted;
      });
    } catch (err) {
      logger.error("retention sweep failed; retried next interval", { err });
    }
  };
  const schedule = (ms: number) => {
    if (closed) return;
    timer = setTimeout(() => {
      running = tick().finally(() => schedule(intervalMs));
    }, ms);
    timer.unref();
  };
  schedule(Math.min(60_000, intervalMs));
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
