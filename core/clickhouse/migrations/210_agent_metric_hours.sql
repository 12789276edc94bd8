-- Learned baselines (docs/ALERTS.md, "Anomaly alerts"): one row per project, agent, metric and UTC hour, the hour's
-- value of the metric over the runs that ended in it (error rate, p50/p95 latency in seconds, cost and tokens per
-- run) and how many runs it was computed from. The anomaly trigger's sweep rolls up the hours that ended since its
-- last roll-up (stores/baselines/metric-hours.ts), re-rolling the latest one for runs that ended late; a baseline is
-- then read from at most four weeks of these rows, never from the runs themselves.
-- A re-rolled hour is a new row with a later rolled_at: ReplacingMergeTree keeps the latest, reads use FINAL.
-- Rows older than the history a baseline reads (28 days) and a week's margin expire with the TTL.
CREATE TABLE IF NOT EXISTS agent_metric_hours
(
    project_id UInt64,
    agent_name String,
    metric     LowCardinality(String),
    hour       DateTime('UTC'),
    runs       UInt32,
    value      Float64,
    rolled_at  DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(rolled_at)
ORDER BY (project_id, metric, agent_name, hour)
TTL hour + INTERVAL 35 DAY;
