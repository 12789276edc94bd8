-- The order of a span's log records (stores/otel-logs.ts): `time` keeps milliseconds, and an SDK emits a span's
-- content events and its evaluation within one — the JS SDK stamps records with Date.now(), to the millisecond —
-- so they came back in the order of their ids. Kept beside it: the nanoseconds within the millisecond, as the
-- record's timestamp gives them, and the record's place in its export (`seq`: an exporter sends records in the order
-- they were emitted); reads order by time, the nanoseconds, the export's receive time, the place in it, then the id. Rows written before this migration read 0 for
-- both and keep the id order.
ALTER TABLE otel_logs ADD COLUMN IF NOT EXISTS time_sub_ns UInt32 DEFAULT 0;
ALTER TABLE otel_logs ADD COLUMN IF NOT EXISTS seq UInt32 DEFAULT 0;
