-- The prompt version an experiment ran (docs/PROMPTS.md, Experiments over prompt versions): a prompt's page lists each
-- version's experiments, and moving its `production` label compares them (prompts/gate.ts). Kept by name, like
-- agent_name, so that an experiment outlives a prompt deleted and made again; both or neither.
ALTER TABLE experiments
    ADD COLUMN prompt_name    text    CHECK (char_length(prompt_name) BETWEEN 1 AND 100),
    ADD COLUMN prompt_version integer CHECK (prompt_version > 0),
    ADD CONSTRAINT experiments_prompt_both CHECK ((prompt_name IS NULL) = (prompt_version IS NULL));
CREATE INDEX experiments_prompt_idx ON experiments (project_id, prompt_name, prompt_version, created_at DESC) WHERE prompt_name IS NOT NULL;
