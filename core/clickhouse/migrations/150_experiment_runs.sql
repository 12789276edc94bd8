-- Experiments (docs/EVALUATION.md): a run that executes a dataset item of an experiment names the experiment, the
-- item and the repetition in its run_start. An experiment's results are its runs: read by experiment_id, which a
-- bloom filter per granule finds among a project's other runs.
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS experiment_id String DEFAULT '';
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS dataset_item_id String DEFAULT '';
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS repetition UInt16 DEFAULT 0;
ALTER TABLE agent_runs ADD INDEX IF NOT EXISTS experiment_id_bloom experiment_id TYPE bloom_filter(0.001) GRANULARITY 1;
