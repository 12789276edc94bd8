-- Cost facts: one narrow row per run *version*, mirrored from agent_runs by a materialized view, folded to the
-- latest version per run by ReplacingMergeTree(version) and read with FINAL. Why not a SummingMergeTree per
-- (user, day, agent, model): agent_runs receives a new row on every change of a run, and the pipeline may
-- write the same version twice after a crash (at-least-once), so summing inserted rows would count a run once
-- per version and once per replay. Deduplicating per run first (key (user_id, external_id), like agent_runs)
-- makes every total exactly once whatever the number of versions, replays or backfills; the grouping values
-- (day, agent, model) are taken from the run's latest version, so a run whose start or model changes moves
-- between groups instead of being counted in both. See docs/REGISTRY-COSTS-HITL.md for the measurements.
CREATE TABLE IF NOT EXISTS run_costs
(
    user_id           UInt64,
    external_id       String,
    version           UInt64,
    day               Date,
    agent_name        LowCardinality(String),
    model             LowCardinality(String),
    status            LowCardinality(String),
    prompt_tokens     UInt64,
    completion_tokens UInt64,
    total_tokens      UInt64,
    cost_usd          Float64,
    cost_source       LowCardinality(String)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (user_id, external_id)
SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS run_costs_mv TO run_costs AS
SELECT user_id, external_id, version, toDate(ifNull(started_at, last_event_at)) AS day, agent_name, model, status,
       prompt_tokens, completion_tokens, total_tokens, cost_usd, cost_source
FROM agent_runs;

-- Runs stored before this migration. Re-running it (several processes starting at once) only inserts
-- versions that fold away.
INSERT INTO run_costs
SELECT user_id, external_id, version, toDate(ifNull(started_at, last_event_at)) AS day, agent_name, model, status,
       prompt_tokens, completion_tokens, total_tokens, cost_usd, cost_source
FROM agent_runs;
