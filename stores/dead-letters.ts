/**
 * Dead letters: acknowledged events the pipeline could not store (docs/PIPELINE.md, "Failure isolation").
 * A Postgres table in both modes (PGlite embedded, PostgreSQL in scale mode): durable, written in the same
 * round trip that decides it, and queryable per tenant for the dashboard and the CLI. The pipeline adds a dead
 * letter before it commits the batch, so a crash in between redelivers the batch and the same record is
 * dead-lettered again, which the dedup key folds into one row (attempts + 1).
 *
 * Replaying them (back into the event log) is dead-letters/, the feature; here are the rows it reads and marks.
 */
import { createHash } from "node:crypto";
import type { LoggedEvent } from "../core/events/schema.js";
import { repairString } from "../core/events/storable.js";
import type { Sql } from "../core/ports/sql.js";

/** Longest error text kept per dead letter. */
const MAX_ERROR_CHARS = 2_000;

/** Default of RUNWATCH_DEAD_LETTER_MAX_BYTES: the most bytes of records kept in one tenant's pending dead letters. */
export const DEFAULT_DEAD_LETTER_MAX_BYTES = 64 * 1024 * 1024;

export interface NewDeadLetter {
  /** The log record as the log held it. */
  readonly raw: Uint8Array;
  /** The decoded event, when the record was one. */
  readonly event?: Pick<LoggedEvent, "project_id" | "user_id" | "run_id" | "sdk_run_id" | "event_id" | "event_type">;
  /** The project of a record that is not one event (an OTLP export record): its page lists it, its replay finds it. */
  readonly projectId?: number;
  readonly error: string;
  /** Where it was thrown, if known (stack frames). */
  readonly errorAt?: string;
}

export interface DeadLetter {
  readonly id: number;
  /** The project of the dead event (NULL for a record that is not a decodable event). */
  readonly project_id: number | null;
  readonly sdk_run_id: string | null;
  readonly event_id: string | null;
  readonly event_type: string | null;
  readonly error: string;
  readonly error_at: string;
  /** The record as text (invalid UTF-8 shown as U+FFFD); empty when it was not kept (raw_dropped). */
  readonly raw: string;
  /** The record's size as received. */
  readonly raw_bytes: number;
  /** The record was not kept: its tenant's dead letters held RUNWATCH_DEAD_LETTER_MAX_BYTES already. */
  readonly raw_dropped: boolean;
  readonly attempts: number;
  readonly created_at: string;
  readonly last_failed_at: string;
  readonly replayed_at: string | null;
}

const dedupKey = (d: NewDeadLetter): string =>
  d.event && typeof d.event.project_id === "number" && typeof d.event.event_id === "string"
    ? `event:${d.event.project_id}:${d.event.run_id}:${d.event.event_id.toLowerCase()}`
    : `raw:${createHash("sha256").update(d.raw).digest("hex")}`;

/** Text a Postgres text column takes, whatever the source. */
const storableText = (s: unknown, max: number): string | null =>
  typeof s === "string" ? repairString(s.length > max ? s.slice(0, max) : s) : null;

const ownerOf = (d: NewDeadLetter): number | null =>
  d.event && Number.isSafeInteger(d.event.project_id) ? d.event.project_id : Number.isSafeInteger(d.projectId) ? d.projectId! : null;

/** The bytes of records each owner's pending dead letters hold now (owners without a user: key -1). */
async function heldBytes(sql: Sql, owners: readonly (number | null)[]): Promise<Map<number, number>> {
  const ids = [...new Set(owners.filter((o): o is number => o !== null))];
  const rows = await sql.query<{ project_id: string | number | null; bytes: string | number }>(
    `SELECT project_id, COALESCE(sum(raw_bytes), 0) AS bytes FROM dead_letters
      WHERE replayed_at IS NULL AND raw_dropped = false AND (project_id = ANY($1::bigint[]) OR ($2 AND project_id IS NULL))
      GROUP BY project_id`,
    [ids, owners.includes(null)],
  );
  return new Map(rows.map((r) => [r.project_id === null ? -1 : Number(r.project_id), Number(r.bytes)]));
}

/**
 * Adds (or, for a record already dead-lettered, counts another failure of) each dead letter. A record that would take
 * its owner's pending dead letters past `maxBytesPerOwner` is not kept: the dead letter keeps everything else.
 */
export async function addDeadLetters(sql: Sql, letters: readonly NewDeadLetter[], maxBytesPerOwner = DEFAULT_DEAD_LETTER_MAX_BYTES): Promise<void> {
  // One statement per chunk; a key twice in one statement cannot be upserted twice, so the last one wins here.
  const byKey = new Map<string, NewDeadLetter>();
  for (const d of letters) byKey.set(dedupKey(d), d);
  const rows = [...byKey];
  const held = await heldBytes(sql, rows.map(([, d]) => ownerOf(d)));
  for (let i = 0; i < rows.length; i += 200) {
    const params: unknown[] = [];
    const values = rows.slice(i, i + 200).map(([key, d]) => {
      const e = d.event;
      const owner = ownerOf(d);
      const used = held.get(owner ?? -1) ?? 0;
      const keep = used + d.raw.byteLength <= maxBytesPerOwner;
      if (keep) held.set(owner ?? -1, used + d.raw.byteLength);
      const at = params.length;
      params.push(
        key,
        owner,
        storableText(e?.sdk_run_id, 256),
        storableText(e?.event_id, 64),
        storableText(e?.event_type, 64),
        storableText(d.error, MAX_ERROR_CHARS) ?? "unknown error",
        storableText(d.errorAt ?? "", MAX_ERROR_CHARS) ?? "",
        keep ? Buffer.from(d.raw.buffer, d.raw.byteOffset, d.raw.byteLength).toString("hex") : "",
        d.raw.byteLength,
        !keep,
      );
      return `($${at + 1}, $${at + 2}::bigint, $${at + 3}, $${at + 4}, $${at + 5}, $${at + 6}, $${at + 7}, decode($${at + 8}, 'hex'), $${at + 9}::bigint, $${at + 10}::boolean)`;
    });
    await sql.query(
      `INSERT INTO dead_letters (dedup_key, project_id, sdk_run_id, event_id, event_type, error, error_at, raw, raw_bytes, raw_dropped)
       VALUES ${values.join(", ")}
       ON CONFLICT (dedup_key) DO UPDATE
         SET attempts = dead_letters.attempts + 1, error = EXCLUDED.error, error_at = EXCLUDED.error_at,
             last_failed_at = now(), replayed_at = NULL`,
      params,
    );
  }
}

export interface DeadLetterFilter {
  /** Only this project's dead letters (the dashboard always sets it; the CLI may not). */
  readonly projectId?: number;
  /** Only these ids. */
  readonly ids?: readonly number[];
  /** Include dead letters already replayed (default: only pending ones). */
  readonly includeReplayed?: boolean;
}

function where(f: DeadLetterFilter, params: unknown[]): string {
  const cond: string[] = [];
  if (!f.includeReplayed) cond.push("replayed_at IS NULL");
  if (f.projectId !== undefined) cond.push(`project_id = $${params.push(f.projectId)}`);
  if (f.ids) cond.push(`id = ANY($${params.push(f.ids)}::bigint[])`);
  return cond.length ? `WHERE ${cond.join(" AND ")}` : "";
}

/** Pending dead letters (not replayed), all tenants or one. */
export async function countDeadLetters(sql: Sql, f: DeadLetterFilter = {}): Promise<number> {
  const params: unknown[] = [];
  const [row] = await sql.query<{ n: string | number }>(`SELECT count(*) AS n FROM dead_letters ${where(f, params)}`, params);
  return Number(row?.n ?? 0);
}

const utf8 = new TextDecoder("utf-8", { fatal: false });

/** Newest first; `maxRawChars` cuts each raw record for display. */
export async function listDeadLetters(sql: Sql, f: DeadLetterFilter & { limit?: number; maxRawChars?: number } = {}): Promise<DeadLetter[]> {
  const params: unknown[] = [];
  const limit = Math.min(Math.max(1, f.limit ?? 100), 1_000);
  const rows = await sql.query<Omit<DeadLetter, "raw" | "id" | "project_id" | "created_at" | "last_failed_at" | "replayed_at" | "raw_bytes"> & {
    id: string | number; project_id: string | number | null; raw_hex: string; created_at: Date | string; last_failed_at: Date | string; replayed_at: Date | string | null;
    raw_bytes: string | number;
  }>(
    `SELECT id, project_id, sdk_run_id, event_id, event_type, error, error_at, encode(raw, 'hex') AS raw_hex, attempts,
            created_at, last_failed_at, replayed_at, raw_bytes, raw_dropped
       FROM dead_letters ${where(f, params)} ORDER BY last_failed_at DESC, id DESC LIMIT ${limit}`,
    params,
  );
  const iso = (d: Date | string) => new Date(d).toISOString();
  return rows.map((r) => {
    const raw = utf8.decode(Buffer.from(r.raw_hex, "hex"));
    const max = f.maxRawChars ?? Infinity;
    return {
      id: Number(r.id),
      project_id: r.project_id === null ? null : Number(r.project_id),
      sdk_run_id: r.sdk_run_id,
      event_id: r.event_id,
      event_type: r.event_type,
      error: r.error,
      error_at: r.error_at,
      raw: raw.length > max ? `${raw.slice(0, max)}…` : raw,
      raw_bytes: Number(r.raw_bytes),
      raw_dropped: Boolean(r.raw_dropped),
      attempts: Number(r.attempts),
      created_at: iso(r.created_at),
      last_failed_at: iso(r.last_failed_at),
      replayed_at: r.replayed_at === null ? null : iso(r.replayed_at),
    };
  });
}

/** Deletes dead letters (pending ones unless includeReplayed); returns how many. */
export async function purgeDeadLetters(sql: Sql, f: DeadLetterFilter = {}): Promise<number> {
  const params: unknown[] = [];
  const rows = await sql.query<{ id: string }>(`DELETE FROM dead_letters ${where(f, params)} RETURNING id`, params);
  return rows.length;
}

export interface PendingRecord {
  readonly id: number;
  /** The record as the log held it; empty when it was not kept. */
  readonly raw: Buffer;
  /** The record was not kept (raw_dropped): there is nothing to replay. */
  readonly dropped: boolean;
}

/** The records of the pending dead letters `f` selects, in the order they were first dead-lettered. */
export async function pendingRecords(sql: Sql, f: DeadLetterFilter = {}): Promise<PendingRecord[]> {
  const params: unknown[] = [];
  const rows = await sql.query<{ id: string | number; raw_hex: string; raw_dropped: boolean }>(
    `SELECT id, encode(raw, 'hex') AS raw_hex, raw_dropped FROM dead_letters ${where({ ...f, includeReplayed: false }, params)} ORDER BY id`,
    params,
  );
  return rows.map((r) => ({ id: Number(r.id), raw: Buffer.from(r.raw_hex, "hex"), dropped: Boolean(r.raw_dropped) }));
}

/** Marks dead letters replayed (they leave the pending ones), or, with `replayed` false, pending again. */
export async function markReplayed(sql: Sql, ids: readonly number[], replayed = true): Promise<void> {
  await sql.query(`UPDATE dead_letters SET replayed_at = ${replayed ? "now()" : "NULL"} WHERE id = ANY($1::bigint[])`, [ids]);
}
