/**
 * The engines' one way to run a handler on an open socket (types.ts contract): a throw is reported to
 * `handlers.error` and answered by closing that socket with 1011, so it never reaches the process.
 */
import type { EngineHandlers, EngineSocket } from "./types.js";

export const INTERNAL_ERROR = 1011;

export function guarded<D>(handlers: EngineHandlers<D>, where: string, socket: EngineSocket<D> | undefined, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    handlers.error(where, err);
    try { socket?.close(INTERNAL_ERROR, "internal_error"); } catch { /* closed meanwhile */ }
  }
}
