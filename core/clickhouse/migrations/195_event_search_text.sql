-- Free text in the events' own rows: the text an event gives its run for search (a run_start's input, a run_end's
-- output, an error's message, a span's name the first time its run has it; lower-cased, at most 4,096 characters;
-- pipeline/search-text.ts), '' for every other event. A search is
-- `external_id IN (SELECT sdk_run_id FROM agent_events WHERE project_id = … AND search_text LIKE '%…%')`.
-- Written with the event, it costs ingest no insert of its own: the run_text table's insert per part, on the one
-- writing session, held each part's runs back by an insert (docs/BENCHMARKS.md, "npm run bench:e2e"). No skip
-- index: run_text's trigram filter skipped under a tenth of the granules for common terms and made the read slower.
-- run_text is no longer written; rows written before this migration are still searched there until retention
-- removes them with their runs.
ALTER TABLE agent_events ADD COLUMN IF NOT EXISTS search_text String DEFAULT '' CODEC(ZSTD(1));
