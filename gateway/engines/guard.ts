/**
 * What both engines do the same way (types.ts contract): run a handler on an open socket, where a throw is
 * reported to `handlers.error` and answered by closing that socket with 1011, so it never reaches the process; and
 * the JSON bodies of their HTTP answers.
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

export const answers = {
  upgradeFailed: { error: { code: "internal_error", message: "the gateway could not open this socket; try again" } },
  healthFailed: { error: { code: "internal_error", message: "health check failed" } },
  notFound: (path: string) => ({ error: { code: "not_found", message: `the realtime endpoint is ${path}` } }),
} as const;
