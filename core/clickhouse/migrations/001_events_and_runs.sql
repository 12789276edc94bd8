-- Events and runs. Every statement is idempotent (IF NOT EXISTS) so that several processes starting at
-- once may all run it; see core/clickhouse/migrate.ts.

-- One row per accepted event. Replays (pipeline restart, client retry with the same event_id) insert the
-- same key again; ReplacingMergeTree folds them in background merges and every read dedupes by event_id,
-- so a duplicate is never shown even before a merge.
-- Partitioned by the server-assigned received_at month (bounded, unlike a client's occurred_at), which is
-- the unit for retention (ALTER TABLE ... DROP PARTITION).
CREATE TABLE IF NOT EXISTS agent_events
(
    event_id       UUID,
    user_id        UInt64,
    run_id         UUID,
    sdk_run_id     String,
    event_type     LowCardinality(String),
    agent_name     String,
    payload        String CODEC(ZSTD(1)),
    occurred_at    DateTime64(3, 'UTC'),
    received_at    DateTime64(3, 'UTC'),
    config_version Nullable(UInt32)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(received_at)
ORDER BY (user_id, run_id, event_id)
-- A retried insert of an identical block (same batch after a crash) is dropped at insert time as well.
SETTINGS non_replicated_deduplication_window = 1000;

-- One row per run *version*: the pipeline writes a full row whenever a run changes, and the highest
-- version per (user_id, external_id) is the run. Not partitioned: every version of a run must meet in
-- the same partition to be folded, and a run has no immutable time to partition on.
CREATE TABLE IF NOT EXISTS agent_runs
(
    user_id           UInt64,
    external_id       String,
    run_id            UUID,
    agent_name        String,
    status            LowCardinality(String),
    status_at         DateTime64(3, 'UTC'),
    started_at        Nullable(DateTime64(3, 'UTC')),
    ended_at          Nullable(DateTime64(3, 'UTC')),
    last_event_at     DateTime64(3, 'UTC'),
    model             LowCardinality(String),
    prompt_tokens     UInt64,
    completion_tokens UInt64,
    total_tokens      UInt64,
    cost_usd          Float64,
    cost_source       LowCardinality(String),
    framework         LowCardinality(String),
    config_version    Nullable(UInt32),
    event_count       UInt32,
    error_count       UInt32,
    last_error        String CODEC(ZSTD(1)),
    pending_question  String CODEC(ZSTD(1)),
    version           UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (user_id, external_id)
SETTINGS non_replicated_deduplication_window = 1000;
