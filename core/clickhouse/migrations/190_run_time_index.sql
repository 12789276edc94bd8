-- A minmax index on a run's last event time (docs/STORAGE.md, "How reads dedupe"). agent_runs is ordered by run id,
-- not by time, but a part holds the runs that were active when it was written (and merges join neighbouring parts),
-- so the times within a granule stay close: `since:24h` and `from:` (last_event_at >= …) and the runs list's first
-- read of the newest runs (stores/runs/run-list.ts) skip the granules of runs last active before the bound, instead of
-- reading the whole project's runs. Parts written before this migration get the index when they are merged; until
-- then they are read as before.
ALTER TABLE agent_runs ADD INDEX IF NOT EXISTS last_event_at_minmax last_event_at TYPE minmax GRANULARITY 1;
