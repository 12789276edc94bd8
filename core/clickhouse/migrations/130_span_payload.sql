-- span_payload: what a run's spans are read from (EventStore.listSpanEvents), for events whose payload is longer than
-- 2,001 characters: the payload with every top-level value longer than that cut (a string to its first 2,001
-- characters, an object or array to the first 2,001 characters of its JSON, as a string); '' for every other event,
-- which is read from payload as it is. Cutting at read time cost 1.3-1.6 s of ClickHouse CPU for each read of a run
-- of 20,000 spans with 10 KiB errors; at insert it costs that once, and nothing for the small payloads most events
-- have. 2,001 is core/clickhouse/event-store.ts SPAN_VALUE_CHARS. Rows written before this migration compute it
-- when read.
ALTER TABLE agent_events ADD COLUMN IF NOT EXISTS span_payload String MATERIALIZED
  if(length(payload) <= 2001, '', concat('{', arrayStringConcat(arrayMap(kv -> concat(toJSONString(kv.1), ':',
    if(length(kv.2) <= 2001, kv.2, toJSONString(substringUTF8(if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2), 1, 2001)))),
  JSONExtractKeysAndValuesRaw(payload)), ','), '}')) CODEC(ZSTD(1));
