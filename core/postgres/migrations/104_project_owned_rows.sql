-- Projects own what users owned (docs/TEAMS.md): agents (and with them their configs and counted runs), alert rules
-- and their notification jobs, human-input answers, dead letters, and the settings (provider, retention). The
-- column that named the owning user names the owning project; its values stay, since a user's personal project
-- has the user's id (migration 100), so every existing row lands in its owner's personal project.
-- Who did something stays recorded where it was: agent_configs.created_by, human_inputs.responder_id.

ALTER TABLE user_settings RENAME TO project_settings;
ALTER TABLE project_settings RENAME COLUMN user_id TO project_id;
ALTER TABLE project_settings DROP CONSTRAINT IF EXISTS user_settings_user_id_fkey;
ALTER TABLE project_settings ADD CONSTRAINT project_settings_project_id_fkey FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE;

ALTER TABLE agents RENAME COLUMN user_id TO project_id;
ALTER TABLE agents DROP CONSTRAINT IF EXISTS agents_user_id_fkey;
ALTER TABLE agents ADD CONSTRAINT agents_project_id_fkey FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE;

ALTER TABLE agent_run_starts RENAME COLUMN user_id TO project_id;

ALTER TABLE alert_rules RENAME COLUMN user_id TO project_id;
ALTER TABLE alert_rules DROP CONSTRAINT IF EXISTS alert_rules_user_id_fkey;
ALTER TABLE alert_rules ADD CONSTRAINT alert_rules_project_id_fkey FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE;

ALTER TABLE notification_jobs RENAME COLUMN user_id TO project_id;
ALTER TABLE notification_jobs DROP CONSTRAINT IF EXISTS notification_jobs_user_id_fkey;
ALTER TABLE notification_jobs ADD CONSTRAINT notification_jobs_project_id_fkey FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE;

ALTER TABLE human_inputs RENAME COLUMN user_id TO project_id;
ALTER TABLE human_inputs DROP CONSTRAINT IF EXISTS human_inputs_user_id_fkey;
ALTER TABLE human_inputs ADD CONSTRAINT human_inputs_project_id_fkey FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE;

-- A dead letter's project is its event's (NULL when the record named none); like before, not a foreign key: a
-- dead letter outlives nothing it points to, and the sweep bounds the table (migration 090).
ALTER TABLE dead_letters RENAME COLUMN user_id TO project_id;
