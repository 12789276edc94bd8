-- A prompt's gate rules (docs/PROMPTS.md, The gate; stores/prompt-gate-rules.ts): the same form as an agent's
-- (108_activation_gate.sql), held against the experiments of the version its `production` label moves to.
CREATE TABLE prompt_gate_rules (
    prompt_id  bigint           NOT NULL REFERENCES prompts (id) ON DELETE CASCADE,
    score_name text             NOT NULL CHECK (length(score_name) BETWEEN 1 AND 100),
    max_drop   double precision NOT NULL CHECK (max_drop >= 0 AND max_drop <= 1000000000),
    updated_by bigint           REFERENCES users (id) ON DELETE SET NULL,
    updated_at timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (prompt_id, score_name)
);
