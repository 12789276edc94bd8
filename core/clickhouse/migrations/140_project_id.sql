-- Projects (docs/TEAMS.md): every row belongs to a project, and every read is scoped by project_id; user_id stays
-- the user whose key sent the row. A row stored before projects existed belongs to its user's personal project,
-- which has the user's id. Every statement is idempotent and safe to run from several processes at once
-- (core/clickhouse/migrate.ts).
--
-- Events, LLM calls and scores: their rows are told apart by run_id, which is derived from the project
-- (core/ids.ts runIdFor), so project_id is an ordinary column whose DEFAULT gives an old row its user's project
-- without a rewrite (ClickHouse computes a missing column's default when an old part is read).
ALTER TABLE agent_events ADD COLUMN IF NOT EXISTS project_id UInt64 DEFAULT user_id AFTER user_id;
ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS project_id UInt64 DEFAULT user_id AFTER user_id;
ALTER TABLE scores ADD COLUMN IF NOT EXISTS project_id UInt64 DEFAULT user_id AFTER user_id;

-- Runs and their cost rows are keyed by (user_id, external_id): one user may send the same sdk_run_id to two
-- projects, so project_id must join the sort key, or ReplacingMergeTree would fold the two runs into one. A column
-- added to a sort key may have no DEFAULT expression: it is added as 0, old rows are copied once with their user's
-- project (the copy of a copy folds: same key, same version) and the zeros are deleted.
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS project_id UInt64 AFTER user_id, MODIFY ORDER BY (user_id, external_id, project_id);
ALTER TABLE run_costs ADD COLUMN IF NOT EXISTS project_id UInt64 AFTER user_id, MODIFY ORDER BY (user_id, external_id, project_id);
INSERT INTO agent_runs SELECT * REPLACE (user_id AS project_id) FROM (SELECT * FROM agent_runs WHERE project_id = 0);
INSERT INTO run_costs SELECT * REPLACE (user_id AS project_id) FROM (SELECT * FROM run_costs WHERE project_id = 0);
DELETE FROM agent_runs WHERE project_id = 0;
DELETE FROM run_costs WHERE project_id = 0;

-- The sort keys lead with user_id (a sort key cannot be rebuilt in place). A minmax index on project_id lets a
-- project's reads skip other projects' granules: a project's rows come from its members, who sit together in
-- user_id order.
ALTER TABLE agent_events ADD INDEX IF NOT EXISTS project_id_minmax project_id TYPE minmax GRANULARITY 1;
ALTER TABLE agent_runs ADD INDEX IF NOT EXISTS project_id_minmax project_id TYPE minmax GRANULARITY 1;
ALTER TABLE run_costs ADD INDEX IF NOT EXISTS project_id_minmax project_id TYPE minmax GRANULARITY 1;
ALTER TABLE llm_calls ADD INDEX IF NOT EXISTS project_id_minmax project_id TYPE minmax GRANULARITY 1;
ALTER TABLE scores ADD INDEX IF NOT EXISTS project_id_minmax project_id TYPE minmax GRANULARITY 1;
ALTER TABLE agent_events MATERIALIZE INDEX project_id_minmax;
ALTER TABLE llm_calls MATERIALIZE INDEX project_id_minmax;
ALTER TABLE scores MATERIALIZE INDEX project_id_minmax;
