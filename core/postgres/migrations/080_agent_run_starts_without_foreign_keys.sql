-- agent_run_starts gets one row per run the pipeline counts (010): thousands a second under OTLP load. Its two
-- foreign keys made each insert look up and lock the user's and the agent's rows, about a third of the cost of
-- counting a run (46-57 against 33-36 µs of CPU per run on PGlite). The insert joins
-- agents, which belong to their user, so neither key can be wrong when a row is written. What the keys' ON DELETE
-- CASCADE did is kept by a trigger: deleting an agent (and so deleting a user, whose agents cascade) deletes its rows.
ALTER TABLE agent_run_starts DROP CONSTRAINT IF EXISTS agent_run_starts_user_id_fkey;
ALTER TABLE agent_run_starts DROP CONSTRAINT IF EXISTS agent_run_starts_agent_id_fkey;

-- On one line: the migration runner splits statements at a ";" that ends a line (migration-files.ts).
CREATE FUNCTION agent_run_starts_forget_agent() RETURNS trigger LANGUAGE plpgsql
    AS $$ BEGIN DELETE FROM agent_run_starts WHERE agent_id = OLD.id; RETURN OLD; END $$;

CREATE TRIGGER agents_forget_run_starts AFTER DELETE ON agents
    FOR EACH ROW EXECUTE FUNCTION agent_run_starts_forget_agent();
