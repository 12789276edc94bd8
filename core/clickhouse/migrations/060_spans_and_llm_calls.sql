-- Spans (docs/API.md, Spans; docs/STORAGE.md). Every statement is idempotent, see core/clickhouse/migrate.ts.

-- The span an event belongs to and the span it nests in; '' for events sent without them.
ALTER TABLE agent_events ADD COLUMN IF NOT EXISTS span_id String DEFAULT '';
ALTER TABLE agent_events ADD COLUMN IF NOT EXISTS parent_span_id String DEFAULT '';

-- How many LLM-call spans a run has: with any, its tokens and cost are their sum (the totals rule).
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS llm_calls UInt32 DEFAULT 0;

-- One row per LLM call (a `step` of kind "llm", written when its end event is stored), for analysts and for
-- costs by model. The pipeline writes the row again when a batch is replayed; ReplacingMergeTree folds the
-- copies (call_id is the span id, or the end event's id for a call sent without one), and reads use FINAL.
CREATE TABLE IF NOT EXISTS llm_calls
(
    user_id            UInt64,
    run_id             UUID,
    sdk_run_id         String,
    call_id            String,
    span_id            String,
    parent_span_id     String,
    event_id           UUID,
    agent_name         LowCardinality(String),
    config_version     Nullable(UInt32),
    name               String,
    model              LowCardinality(String),
    provider           LowCardinality(String),
    prompt_tokens      UInt64,
    completion_tokens  UInt64,
    total_tokens       UInt64,
    cached_tokens      UInt64,
    cache_write_tokens UInt64,
    reasoning_tokens   UInt64,
    cost_usd           Float64,
    cost_source        LowCardinality(String),
    status             LowCardinality(String),
    started_at         DateTime64(3, 'UTC'),
    ended_at           DateTime64(3, 'UTC'),
    duration_ms        UInt64,
    day                Date
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (user_id, day, run_id, call_id)
SETTINGS non_replicated_deduplication_window = 1000;
