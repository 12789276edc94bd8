import type { TriggerRegistry } from "../alerts/index.js";
import type { User } from "../stores/accounts/users.js";
import type { HumanInputDeps } from "../human-input/index.js";
import type { Ports } from "../core/runtime.js";
import type { EventStore } from "../core/ports/event-store.js";
import type { Logger } from "../core/logger.js";
import type { BatchDecoder } from "./ingest/decode-thread.js";
import type { HealthView } from "./health.js";
import type { JobReportsView } from "./job-reports.js";
import type { Throttles } from "./middleware/throttles.js";
import type { HeavyReads } from "./heavy-reads.js";

/** What every web route module receives. */
export interface WebDeps {
  readonly ports: Ports;
  readonly events: EventStore;
  /** One request at a time per user for a run's trace or spans (web/heavy-reads.ts). */
  readonly heavyReads: HeavyReads;
  readonly logger: Logger;
  /** Signs session cookies and realtime (gateway) tokens; same value in web and gateway processes. */
  readonly sessionSecret: string;
  /** Decodes ingest batch bodies and OTLP exports, on threads of their own or the request's (web/ingest/decode-thread.ts). */
  readonly batchDecoder: BatchDecoder;
  /** The pipeline's progress as reported over pub/sub, for GET /healthz (web/health.ts). */
  readonly health: HealthView;
  /** The background jobs' counters as reported over pub/sub, for GET /metrics (web/job-reports.ts). */
  readonly jobs: JobReportsView;
  /** Login, registration, bad-key, test-send and /improve budgets (web/middleware/throttles.ts). */
  readonly throttles: Throttles;
  /** The alert triggers /alerts offers and validates (built-ins plus RUNWATCH_ALERT_TRIGGERS). */
  readonly triggers: TriggerRegistry;
}

/** The logged-in user, set on ctx.state.user by web/auth/session.ts requireUser. */
export type SessionUser = User;

/** What the human-input feature uses of these deps (human-input/deps.ts). */
export const humanInputDeps = (d: WebDeps): HumanInputDeps => ({
  sql: d.ports.sql, clickhouse: d.ports.clickhouse, pubsub: d.ports.pubsub, events: d.events, logger: d.logger,
});
