-- The project a user last switched to in the dashboard (remembered per user); NULL means their personal project.
-- A user who is no longer a member of it sees their personal project (stores/accounts/current-project.ts).
ALTER TABLE users ADD COLUMN current_project_id bigint REFERENCES projects (id) ON DELETE SET NULL;
