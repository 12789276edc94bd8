-- An instance admin may disable a user (docs/TEAMS.md, Instance admin): they can no longer log in, their sessions
-- end, and the API keys they created stop working until they are enabled again.
ALTER TABLE users ADD COLUMN disabled_at timestamptz;
