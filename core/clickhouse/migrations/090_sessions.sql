-- Sessions (docs/API.md, Sessions): the session a run belongs to, set by its first event that names one
-- ('' for none). GET /api/sessions groups a user's runs by it.
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS session_id String DEFAULT '';
