/**
 * What the pipeline's components (plugins, alert triggers) may use: the ports, the config, a logger and the
 * event store. On the pipeline thread the ports call back to the host (pipeline/thread/remote-ports.ts).
 */
import type { EventStore } from "./ports/event-store.js";
import type { Config } from "./config.js";
import type { Logger } from "./logger.js";
import type { ClickHouse } from "./ports/clickhouse.js";
import type { PubSub } from "./ports/pubsub.js";
import type { Sql } from "./ports/sql.js";

export interface PipelineContext {
  readonly config: Config;
  readonly logger: Logger;
  readonly sql: Sql;
  readonly clickhouse: ClickHouse;
  readonly pubsub: PubSub;
  readonly store: EventStore;
}
