-- SLO budgets read from hours (docs/ALERTS.md, "SLOs"; stores/slo-hours.ts): one row per project, agent and UTC hour
-- of the production runs that ended in it (kind 'runs': how many, how many failed, and each run's duration in
-- milliseconds, sorted, so a latency SLO counts the runs over its own threshold, whatever it is and however often it
-- changes), and one per agent, score name and hour of the scores created in it (kind 'score': how many, and their
-- shortfall sum(1 − value) with each value clamped to [0, 1]). An SLO's window is read from these rows for its whole
-- hours that ended more than 6 hours ago, and from the runs themselves after that.
-- A re-rolled hour is a new row with a later rolled_at: ReplacingMergeTree keeps the latest, reads use FINAL.
-- Rows older than the longest SLO window (90 days) and a day's margin expire with the TTL.
CREATE TABLE IF NOT EXISTS slo_hours
(
    project_id UInt64,
    agent_name String,
    kind       LowCardinality(String),
    score_name String,
    hour       DateTime('UTC'),
    total      UInt32,
    bad        Float64,
    latency_ms Array(Int64) CODEC(ZSTD(1)),
    rolled_at  DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(rolled_at)
ORDER BY (project_id, agent_name, kind, score_name, hour)
TTL hour + INTERVAL 91 DAY;
