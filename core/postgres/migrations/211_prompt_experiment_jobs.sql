-- A prompt page's "Run experiment" (docs/PROMPTS.md, Experiments over prompt versions; stores/prompt-experiment-jobs.ts):
-- the background work that runs a dataset through a prompt version, one row per experiment it fills. A worker claims a
-- row with a lease it renews as items finish; a row whose lease ran out (its process ended) is claimed again and
-- resumes, at most a few times, after which it says so in `message`.
CREATE TABLE prompt_experiment_jobs (
    experiment_id  uuid        PRIMARY KEY REFERENCES experiments (id) ON DELETE CASCADE,
    project_id     bigint      NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    prompt_name    text        NOT NULL,
    prompt_version integer     NOT NULL CHECK (prompt_version > 0),
    created_by     bigint      REFERENCES users (id) ON DELETE SET NULL,
    status         text        NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'stopped', 'failed')),
    total          integer     NOT NULL CHECK (total >= 0),
    done           integer     NOT NULL DEFAULT 0,
    failed         integer     NOT NULL DEFAULT 0,
    message        text        NOT NULL DEFAULT '',
    attempts       integer     NOT NULL DEFAULT 0,
    locked_until   timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX prompt_experiment_jobs_due ON prompt_experiment_jobs (locked_until) WHERE status IN ('queued', 'running');
