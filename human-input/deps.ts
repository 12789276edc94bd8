/** What the human-input feature's actions use (a web process's deps give it: web/deps.ts humanInputDeps). */
import type { Logger } from "../core/logger.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { EventStore } from "../core/ports/event-store.js";
import type { PubSub } from "../core/ports/pubsub.js";
import type { Sql } from "../core/ports/sql.js";

export interface HumanInputDeps {
  readonly sql: Sql;
  readonly clickhouse: ClickHouse;
  readonly pubsub: PubSub;
  /** The run's status: an ended run is not waiting for input. */
  readonly events: EventStore;
  readonly logger: Logger;
}
