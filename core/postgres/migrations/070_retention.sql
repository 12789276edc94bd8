-- Data retention (stores/retention.ts): a user's runs whose last activity is older than retention_days are deleted
-- (NULL = keep forever, the default). The sweep records when it last ran for the user and how many runs it deleted.
ALTER TABLE user_settings ADD COLUMN retention_days integer CHECK (retention_days BETWEEN 1 AND 3650);
ALTER TABLE user_settings ADD COLUMN retention_swept_at timestamptz;
ALTER TABLE user_settings ADD COLUMN retention_deleted_runs bigint NOT NULL DEFAULT 0;

-- One retention sweeper per interval across pipeline processes (like alert_sweep_lease).
CREATE TABLE retention_sweep_lease (
    id         integer     PRIMARY KEY CHECK (id = 1),
    held_until timestamptz NOT NULL DEFAULT '-infinity',
    holder     text        NOT NULL DEFAULT ''
);
INSERT INTO retention_sweep_lease (id) VALUES (1);
