/** What the evaluation feature's request-time actions use (a web process's deps satisfy it). */
import type { Logger } from "../core/logger.js";
import type { EventStore } from "../core/ports/event-store.js";
import type { Ports } from "../core/runtime.js";

export interface EvaluationDeps {
  readonly ports: Ports;
  readonly events: EventStore;
  readonly logger: Logger;
  /** The instance's session secret: provider keys are sealed with a key derived from it. */
  readonly sessionSecret: string;
}
