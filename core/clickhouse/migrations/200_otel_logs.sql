-- OpenTelemetry log records (docs/OTEL.md, Logs): one row per record an OTLP log export carried. A record with a
-- trace id and span id is that span's event (the span panel reads them by trace and span id, so a record that arrives
-- before its span shows up once the span does); with a trace id only it is a line of that trace's run; with neither
-- a line of the project. A row's id derives from the export's content (otlp/logs-mapping.ts), so an export record read
-- twice writes the same rows, which ReplacingMergeTree folds (reads dedupe with LIMIT 1 BY log_id until then).
-- Bounded: each text is cut when mapped (body and attributes to 16 KiB), and rows leave after 30 days.
CREATE TABLE IF NOT EXISTS otel_logs
(
    project_id      UInt64,
    user_id         UInt64,
    log_id          UUID,
    trace_id        String,
    span_id         String,
    time            DateTime64(3, 'UTC'),
    severity_number UInt8,
    severity_text   LowCardinality(String),
    event_name      LowCardinality(String),
    body            String CODEC(ZSTD(1)),
    attributes      String CODEC(ZSTD(1)),
    service_name    LowCardinality(String),
    scope           LowCardinality(String),
    received_at     DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(time)
ORDER BY (project_id, trace_id, span_id, time, log_id)
TTL toDateTime(time) + INTERVAL 30 DAY;
