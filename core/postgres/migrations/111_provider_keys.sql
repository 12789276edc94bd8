-- A project's own LLM provider settings for its judges (stores/evaluation/provider-keys.ts): the API key, sealed
-- (AES-256-GCM under a key derived from SESSION_SECRET: core/sealed.ts), its last four characters to recognise it
-- by, an optional server (an OpenAI-compatible base URL) and default model. Used instead of agents-service's.
CREATE TABLE project_provider_keys (
    project_id    bigint      NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    provider      text        NOT NULL CHECK (provider IN ('openai', 'anthropic', 'gemini')),
    api_key       text        NOT NULL,
    key_hint      text        NOT NULL,
    base_url      text,
    default_model text,
    updated_by    bigint      REFERENCES users (id) ON DELETE SET NULL,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, provider)
);
