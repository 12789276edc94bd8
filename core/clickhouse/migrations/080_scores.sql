-- Scores (docs/API.md, Scores): one row per score given to a run or one of its spans: user feedback, an
-- evaluation, an OpenTelemetry gen_ai.evaluation.result. A score is written once by its id (a retried POST makes a
-- new score; ReplacingMergeTree folds a re-written row of the same id). The value keeps its JSON type: numbers and
-- booleans (1/0) in value_number, strings in value_string, the type in value_type. Partitioned by month of
-- creation, the unit of retention.
CREATE TABLE IF NOT EXISTS scores
(
    score_id     UUID,
    user_id      UInt64,
    run_id       UUID,
    sdk_run_id   String,
    span_id      String,
    name         String,
    value_type   LowCardinality(String),
    value_number Float64,
    value_string String,
    comment      String CODEC(ZSTD(1)),
    source       LowCardinality(String),
    created_at   DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(created_at)
ORDER BY (user_id, run_id, score_id);
