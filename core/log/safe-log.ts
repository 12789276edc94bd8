import type { Logger } from "../logger.js";

/** Logs without ever throwing: a logger failing (e.g. on a value JSON cannot encode) must not stop a log's loop. */
export function safeLog(logger: Logger, level: "warn" | "error", msg: string, fields: Record<string, unknown>): void {
  try {
    logger[level](msg, fields);
  } catch {
    try {
      const err = fields.err;
      logger[level](msg, { ...fields, err: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    } catch {
      // Nothing left to report with.
    }
  }
}
