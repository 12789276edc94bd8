/**
 * scores: stores the scores that events carry in `payload.scores` (docs/API.md, Scores): an OpenTelemetry span's
 * `gen_ai.evaluation.result` events (otlp/mapping.ts puts them there, source "otel"), or any ingest event's
 * list of {name, value, comment?, source?}. Each belongs to the event's run and span. A score id is derived from
 * the event id and the score's place in the list, so a replayed part or a resent export writes the same rows
 * (ReplacingMergeTree folds them). A score that breaks the rules of POST /api/scores is logged and left out: the
 * event itself is stored either way.
 */
import { Either } from "effect";
import { eventIdFor } from "../core/ids.js";
import { insertScoreRows, MAX_SCORES_PER_EVENT, parseScore, scoreRow } from "../stores/scores.js";
import type { Plugin, PluginContext } from "./plugin.js";

export const scores = (): Plugin => {
  let ctx: PluginContext | undefined;
  return {
    name: "scores",
    init(c) {
      ctx = c;
    },
    async afterEventsStored(part) {
      if (!ctx) return;
      const rows: Record<string, unknown>[] = [];
      // Duplicates included: the rows may be missing if the last attempt died after storing the events.
      for (const e of part.events) {
        const list = e.payload.scores;
        if (!Array.isArray(list)) continue;
        if (list.length > MAX_SCORES_PER_EVENT) ctx.logger.warn("scores beyond the first 100 of an event left out", { user_id: e.user_id, event_id: e.event_id, count: list.length });
        list.slice(0, MAX_SCORES_PER_EVENT).forEach((item, i) => {
          const parsed = parseScore({ ...(typeof item === "object" && item !== null && !Array.isArray(item) ? item : { value: item }), sdk_run_id: e.sdk_run_id, ...(e.span_id ? { span_id: e.span_id } : {}) });
          if (Either.isLeft(parsed)) {
            ctx!.logger.warn("a score in an event was left out", { user_id: e.user_id, event_id: e.event_id, index: i, error: parsed.left.message });
            return;
          }
          const run = { project_id: e.project_id, user_id: e.user_id, run_id: e.run_id, external_id: e.sdk_run_id };
          rows.push(scoreRow(run, parsed.right, eventIdFor(`score:${e.event_id}:${i}`, Date.parse(e.occurred_at)), e.occurred_at));
        });
      }
      if (rows.length > 0) await insertScoreRows(ctx.clickhouse, rows);
    },
  };
};

export default scores;
