-- Experiments (docs/EVALUATION.md): an agent version run over a pinned version of a dataset. Each item × repetition
-- executes as an ordinary run that names the experiment (ClickHouse agent_runs.experiment_id); its results and their
-- aggregates are read from there. This row is what the experiment is: its dataset version, what it ran (agent and
-- config version) and whether its runner said it finished.
CREATE TABLE experiments (
    id              uuid PRIMARY KEY,
    project_id      bigint      NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    dataset_id      bigint      NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    dataset_version integer     NOT NULL CHECK (dataset_version > 0),
    name            text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    description     text        NOT NULL DEFAULT '',
    metadata        jsonb       NOT NULL DEFAULT '{}',
    agent_name      text,
    config_version  integer CHECK (config_version > 0),
    repetitions     integer     NOT NULL DEFAULT 1 CHECK (repetitions BETWEEN 1 AND 100),
    -- Active items of the dataset version: the experiment expects item_count × repetitions results.
    item_count      integer     NOT NULL CHECK (item_count >= 0),
    status          text        NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed')),
    created_by      bigint      REFERENCES users (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    completed_at    timestamptz,
    UNIQUE (dataset_id, name)
);
CREATE INDEX experiments_dataset_idx ON experiments (dataset_id, created_at DESC);
CREATE INDEX experiments_agent_idx ON experiments (project_id, agent_name, config_version);
