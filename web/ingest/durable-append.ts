import { Unavailable } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";

/**
 * Runs a log append for a receiver about to acknowledge: resolves once the events are durable. A log that cannot
 * take them is Unavailable (503 / gRPC UNAVAILABLE: retry, nothing was acknowledged); anything else is logged and
 * reported as Unavailable too, never as an acknowledgement.
 */
export async function appendDurably(write: () => Promise<void>, count: number, logger: Logger): Promise<void> {
  try {
    await write();
  } catch (err) {
    if ((err as { _tag?: string })._tag === "Unavailable") throw err;
    logger.error("event log append failed", { err, events: count });
    throw new Unavailable({ service: "event log", message: "the event could not be stored", cause: err });
  }
}
