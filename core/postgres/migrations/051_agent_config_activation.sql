-- When a config version became the active one (NULL: never activated). Served by GET /api/agents/{name}/config
-- and part of its ETag, so re-activating an old version changes the ETag even though the content is the same.
ALTER TABLE agent_configs ADD COLUMN activated_at timestamptz;
