-- Run attributes (docs/API.md, "Tags, metadata, end user, environment, release"): what a client or an OTLP exporter
-- says about a run, folded by the pipeline into each run version, and the previews the runs table shows.
-- Every column has a default, so rows written before this migration read as a run without them.
--
-- metadata values are JSON text ("acme", 42, true) so that a value keeps its JSON type; keys and tags are plain.
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS tags Array(String) DEFAULT [];
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS metadata Map(String, String) DEFAULT map() CODEC(ZSTD(1));
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS end_user String DEFAULT '';
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS environment LowCardinality(String) DEFAULT '';
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS release String DEFAULT '';
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS input_preview String DEFAULT '' CODEC(ZSTD(1));
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS output_preview String DEFAULT '' CODEC(ZSTD(1));

-- Filters on them skip the granules that cannot match: has(tags, 'vip'), mapContains(metadata, 'customer') and
-- metadata['customer'] = '"acme"', end_user = 'cust-42', session_id = 'abc' (a bloom filter per granule each).
-- Parts written before this migration get the indexes when they are merged; until then they are read as before.
ALTER TABLE agent_runs ADD INDEX IF NOT EXISTS tags_bloom tags TYPE bloom_filter(0.01) GRANULARITY 1;
ALTER TABLE agent_runs ADD INDEX IF NOT EXISTS metadata_keys_bloom mapKeys(metadata) TYPE bloom_filter(0.01) GRANULARITY 1;
ALTER TABLE agent_runs ADD INDEX IF NOT EXISTS metadata_values_bloom mapValues(metadata) TYPE bloom_filter(0.01) GRANULARITY 1;
ALTER TABLE agent_runs ADD INDEX IF NOT EXISTS end_user_bloom end_user TYPE bloom_filter(0.001) GRANULARITY 1;
ALTER TABLE agent_runs ADD INDEX IF NOT EXISTS session_id_bloom session_id TYPE bloom_filter(0.001) GRANULARITY 1;

-- Free text: one row per text worth finding a run by (a run_start's input, a run_end's output, an error's message, a
-- span's name), its first 4 KiB lower-cased, written by the pipeline (plugins/run-text.ts). A search is
-- `external_id IN (SELECT sdk_run_id FROM run_text WHERE project_id = … AND text LIKE '%…%')`: the trigram bloom
-- filter lets LIKE skip the granules that lack one of the query's trigrams, instead of reading every payload.
-- Small granules keep each granule's trigrams few enough for a 64 KiB filter to tell them apart.
-- A row is keyed by the event it came from, so a part written again (a replay) folds into the same rows; retention
-- deletes a run's rows with its other rows (stores/runs/expired-runs.ts).
CREATE TABLE IF NOT EXISTS run_text
(
    project_id UInt64,
    run_id     UUID,
    sdk_run_id String,
    event_id   UUID,
    at         DateTime64(3, 'UTC'),
    text       String CODEC(ZSTD(1)),
    INDEX text_ngrams text TYPE ngrambf_v1(3, 65536, 2, 0) GRANULARITY 1
)
ENGINE = ReplacingMergeTree
ORDER BY (project_id, at, event_id)
SETTINGS index_granularity = 2048;
