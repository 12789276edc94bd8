-- Fewer, later merges for the tables the pipeline writes every batch (docs/STORAGE.md, "Merges").
--
-- Each pipeline part inserts one part into each of these tables, several a second under load, and ClickHouse's
-- default merge selector (base 5) merged them as soon as a few of similar size had gathered: in 20 s at 20,000
-- OTLP spans/s it rewrote 2.9 times the bytes inserted, and merges were a third of the engine's CPU. With base 20 a
-- merge waits until its parts add up to about 20 times its largest one (older parts still merge sooner: the
-- selector lowers the base with a part's age), which rewrote 1.1 times the bytes inserted.
--
-- Parts stay compact (one data file for all columns) up to 128 MiB instead of 10 MiB: a merged part of a wide
-- table (llm_calls has 25 columns) was ~55 files to create and later delete, and on a filesystem without a journal
-- each file created looks through the inodes deleted in the last minutes (ext4's recently_deleted), which made a
-- part's files cost more than its data. Reads of a compact part still read only the columns they name.
--
-- Storage tuning only: a server that does not know a setting keeps its defaults (core/clickhouse/migrate.ts).
-- @requires-merge-tree-setting merge_selector_base
-- @requires-merge-tree-setting min_bytes_for_wide_part
ALTER TABLE agent_events MODIFY SETTING merge_selector_base = 20, min_bytes_for_wide_part = 134217728;
ALTER TABLE agent_runs MODIFY SETTING merge_selector_base = 20, min_bytes_for_wide_part = 134217728;
ALTER TABLE llm_calls MODIFY SETTING merge_selector_base = 20, min_bytes_for_wide_part = 134217728;
ALTER TABLE run_costs MODIFY SETTING merge_selector_base = 20, min_bytes_for_wide_part = 134217728;
