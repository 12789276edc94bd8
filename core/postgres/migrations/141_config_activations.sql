-- Every activation of an agent's config version, in order (stores/config-activations.ts): agent_configs.activated_at
-- keeps only a version's latest one, so a roll back and forth loses the earlier switches. The runs charts mark each
-- (docs/DASHBOARD.md, Charts). The activations known so far are each version's latest.
CREATE TABLE agent_config_activations (
    agent_id     bigint      NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    version      integer     NOT NULL,
    activated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_config_activations_at_idx ON agent_config_activations (agent_id, activated_at);
INSERT INTO agent_config_activations (agent_id, version, activated_at)
    SELECT agent_id, version, activated_at FROM agent_configs WHERE activated_at IS NOT NULL;
