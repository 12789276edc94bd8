-- The activation gate (docs/EVALUATION.md): per agent, the scores whose experiment mean may drop by at most max_drop
-- from the active config version's to the version being activated, on the same dataset. A forced activation is
-- recorded in the project's audit log with its reason.
CREATE TABLE agent_gate_rules (
    agent_id   bigint           NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    score_name text             NOT NULL CHECK (length(score_name) BETWEEN 1 AND 100),
    max_drop   double precision NOT NULL CHECK (max_drop >= 0 AND max_drop <= 1000000000),
    updated_by bigint           REFERENCES users (id) ON DELETE SET NULL,
    updated_at timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, score_name)
);
