-- Learned baselines per environment and per config version (docs/ALERTS.md, "Baselines per environment and config
-- version"): the hourly values of agent_metric_hours (migration 210), split by one dimension of the runs they were
-- computed from — `dimension` is 'environment' (agent_runs.environment) or 'config_version' (the run's config version,
-- as text) and `dimension_value` its value; '' is a run that named none. The agent-wide rows stay in
-- agent_metric_hours. One INSERT … SELECT per roll-up writes every dimension of an hour (stores/baselines/
-- dimension-hours.ts); a re-rolled hour is a newer row (ReplacingMergeTree by rolled_at, reads use FINAL), the same
-- TTL expires rows past the 28 days a baseline reads. An install that had agent_metric_hours before this table is
-- filled by the first roll-up of each project, which re-rolls 28 days of its runs (alerts/baselines/rollup.ts).
CREATE TABLE IF NOT EXISTS agent_metric_hours_by_dimension
(
    project_id      UInt64,
    agent_name      String,
    dimension       LowCardinality(String),
    dimension_value String,
    metric          LowCardinality(String),
    hour            DateTime('UTC'),
    runs            UInt32,
    value           Float64,
    rolled_at       DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(rolled_at)
ORDER BY (project_id, metric, agent_name, dimension, dimension_value, hour)
TTL hour + INTERVAL 35 DAY;
