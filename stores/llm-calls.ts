/**
 * LLM calls (ClickHouse `llm_calls`, docs/STORAGE.md): one row per ended call, keyed so that a row written again (a
 * replayed part) folds away. plugins/llm-calls.ts makes the rows.
 */
import type { ClickHouse } from "../core/ports/clickhouse.js";

/** Stores llm_calls rows. */
export const insertLlmCallRows = (ch: ClickHouse, rows: readonly Record<string, unknown>[]): Promise<void> => ch.insert("llm_calls", rows);
