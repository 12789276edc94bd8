-- Runs already counted in agents.total_runs, so that a batch the pipeline processes again after a crash
-- (at-least-once delivery) never counts a run twice: the pipeline inserts here ON CONFLICT DO NOTHING and
-- adds to total_runs only the rows it actually inserted, in the same transaction (plugins/cost-aggregation.ts).
CREATE TABLE agent_run_starts (
    user_id     bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    external_id text        NOT NULL,
    agent_id    bigint      NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    started_at  timestamptz NOT NULL,
    PRIMARY KEY (user_id, external_id)
);
CREATE INDEX agent_run_starts_agent_idx ON agent_run_starts (agent_id, started_at DESC);
