/**
 * An engine error of a member's query, as QueryRefused or QueryLimitHit with the engine's words cleaned of its
 * internals: no stack trace, no query text (which would show the server's CTEs), no database name. An error that is
 * not the query's (the engine unreachable) is not mapped: undefined, and the caller fails as on any storage error.
 */
import { QueryLimitHit, QueryRefused } from "./types.js";
import { MAX_EXECUTION_SECONDS, MAX_MEMORY_BYTES, MAX_RESULT_BYTES, OVER_BYTES } from "./bounds.js";

/** Engine codes that say the engine, not the query, failed (network, shutdown): never answered as a refusal. */
const NOT_THE_QUERY = new Set([209, 210, 394, 999, 1000, 1001, 32, 24]);

export function engineCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e?.code === "string" && /^\d+$/.test(e.code)) return Number(e.code);
  const m = /Code: (\d+)\./.exec(String(e?.message ?? ""));
  return m ? Number(m[1]) : undefined;
}

const MB = (n: number) => `${Math.round(n / (1024 * 1024))} MiB`;

/** The engine's message for a person: its first sentence of substance, without internals. */
export function cleanMessage(message: string, databases: readonly string[]): string {
  let m = message.replace(/^Code: \d+\.\s*/, "").replace(/^DB::Exception:\s*/, "");
  // The first line only (a stack trace follows), and nothing from where the engine starts quoting the query.
  m = m.split("\n")[0]!;
  for (const cut of [" In scope ", " in scope ", ". While processing", ": While executing", " (version ", ". Stack trace", ": while executing", " in query: "]) {
    const at = m.indexOf(cut);
    if (at > 0) m = m.slice(0, at);
  }
  m = m.replace(/\s*\([A-Z_]+\)\s*$/, "");
  for (const db of databases) m = m.split(`\`${db}\`.`).join("").split(`${db}.`).join("").split(db).join("");
  m = m.trim();
  return m.length > 400 ? `${m.slice(0, 400)}…` : m || "the query failed";
}

export function toQueryError(err: unknown, databases: readonly string[]): QueryRefused | QueryLimitHit | undefined {
  const code = engineCode(err);
  if (code === undefined || NOT_THE_QUERY.has(code)) return undefined;
  const words = cleanMessage(String((err as Error).message ?? err), databases);
  if (code === 395 && String((err as Error).message).includes(OVER_BYTES)) return bytesHit();
  // EXPLAIN (query/run.ts reads the query's tree with it) refuses a FORMAT or INTO OUTFILE inside it.
  if (code === 36 && /cannot have output options/.test(words)) return new QueryRefused({ field: "sql", message: "FORMAT and INTO OUTFILE are not allowed: the answer is JSON" });
  switch (code) {
    case 159:
      return new QueryLimitHit({ limit: "time", message: `the query ran past the time limit of ${MAX_EXECUTION_SECONDS} s: narrow it (a WHERE on time, fewer joins) and run it again` });
    case 241:
    case 191:
      return new QueryLimitHit({ limit: "memory", message: `the query needs more than the memory limit of ${MB(MAX_MEMORY_BYTES)} (a join, a GROUP BY or a sort too big): narrow it or aggregate first (${words})` });
    case 396:
    case 307:
      return bytesHit();
    case 158:
      return new QueryLimitHit({ limit: "rows", message: `the query reads more rows than the sandbox allows: narrow it with a WHERE (${words})` });
    case 164:
      return new QueryRefused({ field: "sql", message: "the sandbox only reads: the query may not change data or settings" });
    default:
      return new QueryRefused({ field: "sql", message: words });
  }
}

const bytesHit = () =>
  new QueryLimitHit({ limit: "bytes", message: `the answer is larger than ${MB(MAX_RESULT_BYTES)}: select fewer or shorter columns, or fewer rows` });
