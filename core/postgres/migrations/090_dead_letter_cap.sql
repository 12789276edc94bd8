-- A size cap per tenant on the records kept in dead letters (RUNWATCH_DEAD_LETTER_MAX_BYTES, stores/dead-letters.ts):
-- past it, a new dead letter keeps its owner, run, event id, type and error, but not its record (`raw` empty,
-- `raw_dropped`): it still shows on the tenant's page and counts in /healthz, and cannot be replayed. `raw_bytes` is
-- the record's size as received, kept or not.
ALTER TABLE dead_letters ADD COLUMN raw_bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE dead_letters ADD COLUMN raw_dropped boolean NOT NULL DEFAULT false;
UPDATE dead_letters SET raw_bytes = octet_length(raw);
