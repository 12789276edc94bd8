-- Service level objectives per agent (docs/ALERTS.md, SLOs; stores/slos.ts): the share of an agent's ended runs that
-- must be good over a rolling window of days. A run is good when it succeeded (objective 'success_rate') or ended
-- within threshold_seconds (objective 'latency'). The error budget is the 1 − target share of runs allowed to be bad.
CREATE TABLE slos (
    id                bigserial   PRIMARY KEY,
    project_id        bigint      NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name              text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    agent_name        text        NOT NULL CHECK (char_length(agent_name) BETWEEN 1 AND 200),
    objective         text        NOT NULL CHECK (objective IN ('success_rate', 'latency')),
    target            double precision NOT NULL CHECK (target > 0 AND target < 1),
    threshold_seconds double precision CHECK (threshold_seconds IS NULL OR threshold_seconds > 0),
    window_days       integer     NOT NULL CHECK (window_days BETWEEN 1 AND 90),
    created_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, name),
    CHECK ((objective = 'latency') = (threshold_seconds IS NOT NULL))
);
