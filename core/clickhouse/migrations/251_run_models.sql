-- The models a run's LLM calls named, in each run version (plugins/llm-calls.ts folds them like tags: the union over
-- every call, across batches). `model:gpt-4o` reads this column instead of building the set of the project's
-- llm_calls rows of that model for every query (docs/EXPLORER.md; ~400 ms on 10 M calls). The bloom filter lets
-- has(models, …) skip the granules without the model.
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS models Array(LowCardinality(String)) DEFAULT [];
ALTER TABLE agent_runs ADD INDEX IF NOT EXISTS models_bloom models TYPE bloom_filter(0.01) GRANULARITY 1;

-- Rows written before this migration have no models. Rather than rewrite every run version, the filter still looks
-- up the llm_calls of those older calls, and of those only: this table keeps the end time of the newest call stored
-- when the column was added, and the filter's llm_calls subquery reads only calls ended at or before it
-- (stores/runs/runs-filter-sql.ts; `day` bounds the partitions and the key). A fresh install has no calls then: the
-- table stays empty, max() reads 1970-01-01, and the subquery reads no part of llm_calls. A calls' row stored later
-- with an older time is read too, which only repeats what its run's models say. If several processes apply this at
-- once, each adds its row and the latest is kept: a later bound reads more calls, never fewer.
CREATE TABLE IF NOT EXISTS run_models_backfill
(
    calls_until DateTime64(3, 'UTC')
)
ENGINE = MergeTree
ORDER BY tuple();
INSERT INTO run_models_backfill (calls_until) SELECT max(ended_at) FROM llm_calls HAVING count() > 0;
