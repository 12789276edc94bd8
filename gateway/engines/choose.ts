/**
 * Picks the gateway's WebSocket engine (types.ts): RUNWATCH_GATEWAY_ENGINE=auto (the default) takes `uws` where a
 * native uWebSockets.js build for the running Node.js loads and `ws` otherwise; `uws` or `ws` forces one. Forcing
 * `uws` where it does not load is a start-up error that says why.
 */
import type { Logger } from "../../core/logger.js";
import type { Engine, EngineChoice } from "./types.js";

/** The engine RUNWATCH_GATEWAY_ENGINE asks for, loaded. */
export async function loadEngine(choice: EngineChoice, logger: Logger): Promise<Engine> {
  if (choice === "ws") return (await import("./ws.js")).wsEngine;
  const { loadNativeUws } = await import("./uws-native.js");
  const native = loadNativeUws();
  if (native.ok) return (await import("./uws.js")).uwsEngine(native.uws);
  if (choice === "uws") {
    throw new Error(`RUNWATCH_GATEWAY_ENGINE=uws, but ${native.why}. Install the official uWebSockets.js build for this Node.js (docs/REALTIME.md) or unset RUNWATCH_GATEWAY_ENGINE.`);
  }
  logger.info(`gateway engine: ws (${native.why}; docs/REALTIME.md says how to install the native build)`);
  return (await import("./ws.js")).wsEngine;
}
