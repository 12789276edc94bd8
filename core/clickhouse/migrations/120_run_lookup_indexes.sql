-- Bloom-filter skip indexes for the pipeline's run look-ups (docs/PIPELINE.md).
--
-- Every part of new OTLP traces asks whether its ~500 runs are stored: agent_runs by external_id (EventStore.loadRuns)
-- and agent_events by run_id (pipeline/stored-events.ts findRunsWithEvents). Trace ids are random, so 500 of them fall
-- in nearly every granule of the primary key, and each look-up read about the whole key column: on chDB, 13 ms of CPU
-- per look-up at 50,000 stored runs, 52 ms at 800,000, and 81 ms for agent_events at 2 M events. A bloom filter per
-- granule with a 1-in-10,000 false positive rate lets 500 absent keys skip ~95 % of the granules: 13-17 ms at
-- 800,000 runs and 31 ms at 2 M events, for no measurable cost to the inserts (index files of ~20 KB per granule).
-- Parts written before this migration get the index when they are merged; until then they are read as before.
ALTER TABLE agent_runs ADD INDEX IF NOT EXISTS external_id_bloom external_id TYPE bloom_filter(0.0001) GRANULARITY 1;
ALTER TABLE agent_events ADD INDEX IF NOT EXISTS run_id_bloom run_id TYPE bloom_filter(0.0001) GRANULARITY 1;
