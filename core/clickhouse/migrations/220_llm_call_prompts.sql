-- The prompt version an LLM call used (docs/PROMPTS.md): named by the client's LLM-call API and LangChain handlers
-- (payload prompt_name / prompt_version), or by OTLP attributes (runwatch.prompt.*, langfuse.observation.prompt.*).
-- '' and 0 for a call that names none, and for every row written before this migration.
ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS prompt_name String DEFAULT '';
ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS prompt_version UInt32 DEFAULT 0;
