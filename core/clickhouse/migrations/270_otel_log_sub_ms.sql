-- A log record's time below the millisecond (stores/otel-logs.ts): `time` keeps milliseconds, and an SDK emits a
-- span's content events and its evaluation within one, so a span's records were ordered by their ids, not as they
-- were emitted. The nanoseconds within the millisecond, as the record's timestamp gives them, order them; rows
-- written before this migration read 0 and keep the id order.
ALTER TABLE otel_logs ADD COLUMN IF NOT EXISTS time_sub_ns UInt32 DEFAULT 0;
